"""Issue 26 items 10 and 11: plausibility warnings on traces (counted in the assumption report,
``--strict`` makes them errors), semicolon CSVs said so, and ``workload stats`` stating an enlarged
cluster's real load."""

from __future__ import annotations

import re

import pytest

from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.topology.errors import TraceError

# 12 jobs, one every 2 h, 1-8 GPUs, 1-4 h each (seconds)
ROWS = [(f"j{i}", 7200 * i, (1, 2, 4, 8)[i % 4], 3600 * (1 + i % 4)) for i in range(12)]


def _csv(tmp_path, rows, name="t.csv", header="id,t,n,d", scale=1) -> str:
    p = tmp_path / name
    p.write_text(header + "\n" + "".join(f"{a},{b * scale},{c},{d * scale}\n" for a, b, c, d in rows))
    return str(p)


def _implausible(w) -> list:
    return [n for n in w.assumptions if n.kind == "implausible"]


def test_swapped_gpu_and_duration_columns(tmp_path, cli):
    path = _csv(tmp_path, ROWS)
    swapped = "id=id,submit=t,gpus=d,duration=n"
    tr, _ = WorkloadSource(trace=path, columns=swapped).load_trace()
    notes = {n.what: n for n in tr.notes if n.kind == "implausible"}
    big = next(n for w, n in notes.items() if "GPU requests above 4,096" in w)
    # durations 3,600-14,400 s read as GPUs: the 9 jobs of 2, 3 and 4 h exceed 4,096 "GPUs"; j1 (line 3) first
    assert big.count == 9 and "largest 14,400" in big.what and big.examples[0].line == 3
    shape = next(n for w, n in notes.items() if "median GPU request" in w)
    assert shape.count == 12  # median "GPUs" 9,000 (between 7,200 and 10,800) and median "duration" 3 s
    assert not [n for n in WorkloadSource(trace=path, columns="id=id,submit=t,gpus=n,duration=d").load_trace()[0]
                .notes if n.kind == "implausible"]
    code, out, err = cli("workload", "stats", path, "--columns", swapped)
    assert code == 0 and "assumed: 9 x implausible: GPU requests above 4,096" in out, out + err
    code, out, err = cli("simulate", "--trace", path, "--columns", swapped, "--strict", "-q")
    assert code == 2 and err.startswith("error: ") and "line 3" in err and "swapped" in err
    assert len(err.strip().splitlines()) == 1


def test_milliseconds_read_as_seconds(tmp_path, cli):
    path = _csv(tmp_path, ROWS, scale=1000)  # the same trace in ms
    tr, _ = WorkloadSource(trace=path, columns="id=id,submit=t,gpus=n,duration=d").load_trace()
    whats = [n.what for n in tr.notes if n.kind == "implausible"]
    # arrivals 79,200,000 "s" = 2.5 years: within 5 years; median duration 2.5 h x 1000 = 104 days > 30
    assert len(whats) == 1 and "median duration 104.2 days" in whats[0] and "--time-unit ms" in whats[0]
    rows = [(a, b * 3, c, d) for a, b, c, d in ROWS]  # one every 6 h: 7.5 "years" of arrivals
    tr, _ = WorkloadSource(trace=_csv(tmp_path, rows, "u.csv", scale=1000),
                           columns="id=id,submit=t,gpus=n,duration=d").load_trace()
    assert any("arrivals span 7.5 years" in n.what for n in tr.notes if n.kind == "implausible")
    tr, _ = WorkloadSource(trace=path, columns="id=id,submit=t,gpus=n,duration=d", time_unit="ms").load_trace()
    assert not [n for n in tr.notes if n.kind == "implausible"]
    with pytest.raises(TraceError, match="milliseconds"):
        WorkloadSource(trace=path, columns="id=id,submit=t,gpus=n,duration=d", strict=True).load_trace()


def test_durations_far_from_iterations_times_the_perf_model(tmp_path):
    """ElasticFlow: the trace's durations and iterations x the perf model's iteration time differ 2-217x,
    and the replay silently ran at the perf model's speed (average JCT 310 h against 8.9 h)."""
    cols = "id=id,submit=t,gpus=n,duration=d,model=m,iterations=i"
    p = tmp_path / "a.csv"
    p.write_text("id,t,n,d,m,i\nref,0,1,,gpt2,1000\n")
    (ref,) = WorkloadSource(trace=str(p), columns=cols, cluster="rubick-64").build()[0].jobs
    derived = ref.duration  # 1000 x the perf model's gpt2 iteration time on 1 GPU
    q = tmp_path / "b.csv"
    q.write_text(f"id,t,n,d,m,i\nnear,0,1,{1.5 * derived},gpt2,1000\nfar,10,1,{3 * derived},gpt2,1000\n"
                 f"short,20,1,{derived / 2.5},gpt2,1000\n")
    w = WorkloadSource(trace=str(q), columns=cols, cluster="rubick-64").build()[0]
    (note,) = _implausible(w)
    assert note.count == 2 and [e.job for e in note.examples] == ["far", "short"]
    assert note.examples[0].detail.endswith("x3.0") and note.examples[1].detail.endswith("x2.5")
    s = tmp_path / "s.csv"  # every field given (no other assumption): --strict rejects the far job
    s.write_text(f"id,t,n,d,m,i,p,c,b\nfar,0,1,{3 * derived},gpt2,1000,dp,8,16\n")
    with pytest.raises(TraceError, match="job 'far': implausible: the trace's duration"):
        WorkloadSource(trace=str(s), columns=cols + ",plan=p,cpus=c,batch=b", cluster="rubick-64",
                       strict=True).build()


def test_semicolon_csv_is_said_so(tmp_path, cli):
    p = tmp_path / "semi.csv"
    p.write_text("id;t;n;d\nj0;0;1;3600\n")
    for argv in (["workload", "stats", p], ["workload", "stats", p, "--columns", "id=id,submit=t,gpus=n,duration=d"]):
        code, out, err = cli(*argv)
        assert code == 2 and err.startswith("error: ") and "separates its columns with semicolons (4 columns)" in err
        assert "--columns id" not in err  # no nonsense mapping suggested


def test_stats_states_the_enlarged_cluster_and_its_real_load(tmp_path, cli):
    """A 64-GPU job for 60 s among 20 one-GPU jobs of 600 s (one every 30 s from t=60): GPU-seconds
    64 x 60 + 20 x 600 = 15,840 over a span of 0..1,230 s -> mean demand 12.88 GPUs; load 70 % asks for
    18.4 GPUs, the largest job needs 64: real load 12.88 / 64 = 20 %."""
    rows = "".join(f"{i},1,{i * 30},100,resnet50,600,30\n" for i in range(2, 22))
    p = tmp_path / "big.csv"
    p.write_text("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n1,64,0,100,resnet50,60,10\n"
                 + rows)
    code, out, err = cli("workload", "stats", p)
    assert code == 0, err
    line = next(x for x in out.splitlines() if "cluster for" in x)
    assert line.strip().startswith("cluster for load 20% (asked 70%; enlarged to hold the largest job): 8 machines")
    assert "18.4 GPUs needed" in line and "the offered load on it is 20%, not 70%" in line
    code, out, _ = cli("workload", "stats", p, "--format", "json")
    assert re.search(r'"real_load": 0\.20', out)
