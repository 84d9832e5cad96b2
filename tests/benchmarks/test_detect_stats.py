"""Starting with an unknown trace: format detection, the guessed --columns line (that works when pasted),
new columns and time options, workload stats (hand-computed), --cluster auto, the example clusters, and
bad input for every new flag (errors before anything runs)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from schedlab.benchmarks.workloads import load_trace
from schedlab.benchmarks.workloads.detect import detect_format, guess_mapping
from schedlab.benchmarks.workloads.stats import trace_stats
from schedlab.topology.errors import SchedlabError, TraceError

HEADERS = {
    "philly": "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,vc\n",
    "tiresias": "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,1,0,606,vgg19,164,30\n",
    "rubick": "name,submission_time,duration,application,num_gpus,num_cpus,bandwidth,exec_plan,steps,is_sla\n"
              "vit-0,0,3163.1,vit,2,16,0,zero-dp,37239,1\n",
    "pollux": "name,time,application,num_replicas,batch_size\ncifar10-0,107,cifar10,6,2048\n",
    "helios": "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
              "j1,u1,vc1,8,48,1,COMPLETED,2020-04-01 00:00:10,x,y,3600,10\n",
    "alibaba": "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
               "scheduled_time\nopenb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n",
    "pai": "jobA,i1,alice,Terminated,100,400\n",
}
UNKNOWN = ("job_id,submission_time,num_iteration,model_name,batch_size,num_gpu,duration\n"
           "a,0,1000,resnet50,256,4,600\nb,10,500,vgg16,128,8,1200\nc,20,2000,cifar10,64,2,300\n")


def write(tmp_path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("fmt", list(HEADERS))
def test_known_formats_detected_from_the_header(tmp_path, fmt):
    assert detect_format(write(tmp_path, f"{fmt}.csv", HEADERS[fmt])) == fmt


def test_real_traces_detected(traces_dir):
    for rel, fmt in (("philly/sia_philly_jobs.csv", "philly"), ("tiresias/60_job.csv", "tiresias"),
                     ("rubick/workloads/workload-mt.csv", "rubick"),
                     ("philly/pollux_workloads/workload-1.csv", "pollux")):
        assert detect_format(traces_dir / rel) == fmt


def test_unknown_header_prints_columns_and_a_mapping_that_works_when_pasted(cli, tmp_path):
    p = write(tmp_path, "mine.csv", UNKNOWN)
    code, _, err = cli("simulate", "--trace", p, "--cluster", "tiresias-60", "-q")
    assert code == 2 and "columns found: job_id, submission_time, num_iteration, model_name, batch_size, num_gpu, " \
                          "duration" in err
    line = next(ln.strip() for ln in err.splitlines() if ln.strip().startswith("--columns"))
    assert line == ("--columns submit=submission_time,duration=duration,gpus=num_gpu,id=job_id,model=model_name,"
                    "iterations=num_iteration,batch=batch_size")
    code, out, err = cli("simulate", "--trace", p, "--cluster", "tiresias-60", "-q", "--format", "json",
                         *shlex.split(line))
    assert code == 0, err
    assert json.loads(out)["policies"]["fifo"]["jobs"] == 3


def test_guess_mapping_names():
    assert guess_mapping(["Submit Time", "Run Time", "Num GPUs", "JobID", "User", "Arch", "deadline"]) == {
        "submit": "Submit Time", "duration": "Run Time", "gpus": "Num GPUs", "id": "JobID", "model": "Arch",
        "tenant": "User", "deadline": "deadline"}
    assert guess_mapping(["arrival", "len", "ngpu", "steps", "bs"]) == {
        "submit": "arrival", "duration": "len", "gpus": "ngpu", "iterations": "steps", "batch": "bs"}
    assert guess_mapping(["a", "b"]) == {}


def test_new_columns_time_unit_and_origin(tmp_path):
    p = write(tmp_path, "ms.csv", "t,d,g,B,due,team\n5000,60000,2,64,125000,x\n65000,1000,1,32,,y\n")
    cols = "submit=t,duration=d,gpus=g,batch=B,deadline=due,tenant=team"
    tr = load_trace(p, mapping=cols, time_unit="ms")  # format detected: generic (a mapping is given)
    a, b = tr.jobs
    assert (a.submit, a.duration, a.batch_size, a.tenant, a.attrs["deadline"]) == (0.0, 60.0, 64, "x", 120.0)
    assert (b.submit, b.duration, b.batch_size, "deadline" in b.attrs) == (60.0, 1.0, 32, False)
    tr = load_trace(p, mapping=cols, time_unit="ms", time_origin="file")
    assert [j.submit for j in tr.jobs] == [5.0, 65.0]
    tr = load_trace(p, mapping=cols, time_unit="ms", time_origin=1000)  # 1000 ms
    assert [j.submit for j in tr.jobs] == [4.0, 64.0]
    with pytest.raises(TraceError, match="before the time origin") as ei:
        load_trace(p, mapping=cols, time_unit="ms", time_origin=10_000)
    assert ei.value.line == 2
    bad = write(tmp_path, "late.csv", "t,d,g,due\n100,10,1,50\n")
    with pytest.raises(TraceError, match="deadline") as ei:
        load_trace(bad, mapping="submit=t,duration=d,gpus=g,deadline=due")
    assert (ei.value.line, ei.value.column) == (2, "deadline")


def test_stats_hand_computed(tmp_path):
    # jobs (submit, duration, GPUs): (0, 100, 2), (50, 100, 4), (300, 100, 1)
    # demand: [0,50) 2, [50,100) 6, [100,150) 4, [150,300) 0, [300,400) 1 -> peak 6
    # mean over [0, 400): (2*50 + 6*50 + 4*50 + 0 + 1*100) / 400 = 700 / 400 = 1.75 GPUs
    # time-weighted P95: levels sorted 0 (150 s), 1 (100), 2 (50), 4 (50), 6 (50); 95 % of 400 = 380 s -> 6
    # GPU-hours 700 / 3600; cluster for load 0.5 = 3.5 GPUs -> one 8-GPU machine; 4-GPU machines: one
    # machine of 4, raised to 1 machine for the largest job (4 GPUs) anyway
    p = write(tmp_path, "s.csv", "t,d,g\n0,100,2\n50,100,4\n300,100,1\n")
    st = trace_stats(load_trace(p, mapping="submit=t,duration=d,gpus=g"))
    assert (st.jobs, st.peak_demand, st.mean_demand, st.p95_demand) == (3, 6, 1.75, 6.0)
    assert st.span_s == 400 and st.arrival_span_s == 300 and st.gpu_hours == pytest.approx(700 / 3600)
    assert st.gpu_sizes == {1: 1, 2: 1, 4: 1} and st.durations["1-10 min"] == 3
    s = st.size(0.5)
    assert (s.needed_gpus, s.gpus, s.machines, s.racks) == (3.5, 8, 1, 1)
    s = st.size(0.1, gpus_per_machine=4, machines_per_rack=2)  # 17.5 GPUs -> 5 machines of 4 in 3 racks
    assert (s.gpus, s.machines, s.racks) == (20, 5, 3)
    c = s.cluster()
    assert c.total_gpus == 20 and len(c.racks) == 3 and len(c.machines_in(c.racks[-1])) == 1


def test_workload_stats_cli_text_json_plot(cli, tmp_path):
    p = write(tmp_path, "s.csv", "t,d,g\n0,100,2\n50,100,4\n300,100,1\n")
    png = tmp_path / "demand.png"
    code, out, err = cli("workload", "stats", p, "--columns", "submit=t,duration=d,gpus=g", "--load", "0.5",
                         "--plot", png)
    assert code == 0, err
    assert "3 jobs" in out and "peak 6, mean 1.8, P95 6 GPUs" in out and "1 machines x 8 GPUs" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, _ = cli("workload", "stats", p, "--columns", "submit=t,duration=d,gpus=g", "--format", "json")
    d = json.loads(out)
    assert d["demand_if_nothing_queued"] == {"peak_gpus": 6, "mean_gpus": 1.75, "p95_gpus": 6.0}
    assert d["sizing"]["load"] == 0.7 and d["format"] == "generic"


def test_stats_and_cluster_auto_on_philly(cli, traces_dir, tmp_path):
    philly = traces_dir / "philly/sia_philly_jobs.csv"
    code, out, err = cli("workload", "stats", philly, "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    assert d["jobs"] == 82_247 and d["demand_if_nothing_queued"]["peak_gpus"] >= d["sizing"]["gpus"] > 0
    code, out, err = cli("simulate", "--trace", philly, "--window", "2", "--sample", "40", "--cluster", "auto:0.5",
                         "-q")
    assert code == 0, err
    assert "cluster auto:" in out and "sized for offered load 50%" in out and "jobs left out by --window" in out


def test_example_clusters_load_and_show(cli):
    from schedlab.topology.presets import load_cluster

    files = sorted(Path("examples/clusters").glob("*.yaml"))
    assert len(files) == 3
    for f in files:
        c = load_cluster(str(f))
        assert c.total_gpus > 0
        code, out, _ = cli("topology", f)
        assert code == 0 and f"cluster {c.name}" in out
        assert f.read_text().lstrip().startswith("#")  # commented
    tiers = {f.stem: len(load_cluster(str(f)).racks) for f in files}
    assert tiers == {"small-lab": 1, "two-rack": 2, "fat-tree": 4}


BAD = [
    (["simulate", "--trace", "{empty}", "--cluster", "tiresias-60"], "empty"),
    (["simulate", "--trace", "{header_only}", "--cluster", "tiresias-60"], "header but no rows"),
    (["simulate", "--trace", "{nohead}", "--cluster", "tiresias-60"], "not recognised"),
    (["simulate", "--trace", "{unknown}", "--cluster", "tiresias-60", "--columns", "submit=t,gpus=g,duration=nope"],
     "column 'nope', which the file does not have"),
    (["simulate", "--trace", "{unknown}", "--cluster", "tiresias-60", "--time-unit", "fortnight"], "fortnight"),
    (["simulate", "--trace", "{unknown}", "--cluster", "auto:1.5"], "(0, 1]"),
    (["simulate", "--trace", "{unknown}", "--cluster", "auto:0"], "(0, 1]"),
    (["simulate", "--trace", "{unknown}", "--cluster", "auto:x"], "auto:"),
    (["simulate", "--trace", "{unknown}", "--cluster", "tiresias-60", "--gpus-per-machine", "4"], "auto"),
    (["simulate", "--trace", "{unknown}", "--cluster", "auto", "--gpus-per-machine", "0"], "gpus-per-machine"),
    (["simulate", "--trace", "{unknown}", "--cluster", "tiresias-60", "--time-origin", "yesterday", "--columns",
      "submit=t,gpus=g,duration=d"], "time_origin"),
    (["simulate", "--trace", "{philly}", "--vc", "nope"], "no job matches --vc nope"),
    (["simulate", "--trace", "{philly}", "--start", "2017-10-10", "--end", "2017-10-09"], "not before --end"),
    (["simulate", "--trace", "{philly}", "--start", "2030-01-01"], "no job matches the selection --start"),
    (["simulate", "--trace", "{philly}", "--sample", "0"], "sample"),
    (["simulate", "--trace", "{philly}", "--sample", "-5"], "sample"),
    (["simulate", "--trace", "{philly}", "--window", "0"], "window"),
    (["simulate", "--trace", "{philly}", "--lenient", "--strict"], "exclude each other"),
    (["simulate", "--trace", "{philly}", "--out", "{philly}"], "is a file; give a folder"),
    (["simulate", "--trace", "{philly}", "--out-format", "parquet"], "--out"),
    (["simulate", "--trace", "{philly}", "--seed", "-1"], "seed"),
    (["simulate", "--workload", "smoke", "--time-origin", "file"], "time_origin"),
    (["workload", "stats", "{philly}", "--load", "0"], "(0, 1]"),
    (["workload", "stats", "{philly}", "--load", "1.01"], "(0, 1]"),
    (["workload", "stats", "{philly}", "--plot", "{tmp}/x.txt"], ".png"),
    (["workload", "stats", "{tmp}/absent.csv"], "not found"),
    (["workload", "stats", "{binary}"], "binary"),
]


@pytest.mark.parametrize("argv,needle", BAD, ids=[" ".join(a[:1] + a[3:5]) for a, _ in BAD])
def test_bad_input_is_one_clear_error_before_anything_runs(cli, tmp_path, argv, needle):
    files = {"empty": write(tmp_path, "empty.csv", ""), "header_only": write(tmp_path, "h.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n"),
             "nohead": write(tmp_path, "n.csv", "1,2,3\n4,5,6\n"),
             "unknown": write(tmp_path, "u.csv", "t,d,g\n0,60,1\n"),
             "philly": write(tmp_path, "p.csv", HEADERS["philly"]), "tmp": tmp_path,
             "binary": write(tmp_path, "b.csv", "")}
    files["binary"].write_bytes(b"\x00\x01\x02PK\x03\x04" * 20)
    args = [a.format(**files) for a in argv]
    if args[0] == "simulate" and "--cluster" not in args and "--workload" not in args:
        args += ["--cluster", "tiresias-60"]
    code, out, err = cli(*args, "-q") if args[0] == "simulate" else cli(*args)
    assert code == 2, (out, err)
    assert needle in err, err
    assert not out  # nothing ran
    assert err.startswith("error: ") or "Usage:" in err


def test_header_only_and_filters_name_the_problem(tmp_path):
    p = write(tmp_path, "h.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n")
    with pytest.raises(SchedlabError, match="header but no rows"):
        load_trace(p)
