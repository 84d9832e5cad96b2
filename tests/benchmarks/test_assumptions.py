"""Nothing assumed silently: every assumption a load makes is counted with examples (job, line, field),
shown in the summaries, and --strict turns each into an error naming job, line and field."""

from __future__ import annotations

import json

import pytest

from schedlab.benchmarks.workloads.models import TRACE_ALIASES, UNSERVED, resolve_trace_model
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.topology.errors import SchedlabError, SpecError, TraceError

PHILLY = ("timestamp,duration,num_gpus,gpu_time,cluster\n"
          "2017-10-09 06:00:00,600,1,600,vcA\n"
          "2017-10-09 06:01:00,900,2,1800,vcB\n"
          "2017-10-09 06:02:00,300,4,1200,vcA\n")


def write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def generic(tmp_path, rows: str, header: str = "id,t,n,d,m") -> str:
    return write(tmp_path, "g.csv", header + "\n" + rows)


def build(path, **kw):
    return WorkloadSource(trace=path, **kw).build()[0]


def test_pool_is_named_with_its_seed_and_examples(tmp_path):
    w = build(write(tmp_path, "p.csv", PHILLY), seed=7)
    (note,) = w.assumptions.get("model-pool")
    assert note.count == 3 and note.assumption
    assert "tiresias" in note.what and "vgg11" in note.what and "seed 7" in note.what
    assert [(e.job, e.line, e.field) for e in note.examples] == [("philly-2", 2, "model"), ("philly-3", 3, "model"),
                                                                 ("philly-4", 4, "model")]
    assert note.examples[0].detail in w.jobs[0].model  # the model drawn is named
    # the tiresias format names models: --models dally replaces them, and says so
    tir = write(tmp_path, "t.csv", "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                                   "0,1,0,606,vgg19,164,30\n")
    (note,) = build(tir, models="dally").assumptions.get("model-pool")
    assert "in place of the trace's" in note.what and note.examples[0].detail.startswith("vgg19 -> ")


def test_model_names_aliases_and_unknown_names(tmp_path):
    path = generic(tmp_path, "a,0,1,60,ResNet-50\nb,1,1,60,cifar10\nc,2,1,60,deepspeech2\nd,3,2,60,mystery-net\n"
                             "e,4,1,60,DeepSpeech2\n")
    w = build(path, columns="id=id,submit=t,gpus=n,duration=d,model=m", cluster="tiresias-60")
    models = {j.id: j.model for j in w.jobs}
    assert models == {"a": "resnet50", "b": "resnet18", "c": "deepspeech2", "d": "mystery-net", "e": "DeepSpeech2"}
    names = {n.examples[0].job: n for n in w.assumptions.get("model-name")}
    assert set(names) == {"a", "b"} and not names["a"].assumption  # mappings are documented, not assumed
    unknown = {n.what.split("'")[1]: n for n in w.assumptions.get("model-unknown")}
    assert set(unknown) == {"deepspeech2", "mystery-net", "DeepSpeech2"}
    assert "DeepSpeech2 (speech recognition" in unknown["deepspeech2"].what
    assert "not in the zoo" in unknown["mystery-net"].what and "reference rate" in unknown["mystery-net"].what
    rates = {j.id: j.attrs["rates"] for j in w.jobs}
    assert rates["c"] == rates["d"] == "reference" and rates["a"] == "tier"


def test_alias_table_is_documented_and_never_guesses():
    doc = open("docs/workloads.md").read()
    for name, (target, _) in TRACE_ALIASES.items():
        assert resolve_trace_model(name) == (target, "alias")
        assert f"`{name}`" in doc
    for name in UNSERVED:
        assert resolve_trace_model(name) == (None, "unserved") and f"`{name}`" in doc
    assert resolve_trace_model("resnet-50")[0] == "resnet50" and resolve_trace_model("INCEPTION3")[0] == "inception3"
    assert resolve_trace_model("resnet")[0] is None  # no guess from a prefix


def test_resize_plan_cpus_batch_reported(tmp_path):
    # LLaMA-7B on one 16 GB GPU: no plan fits -> resized (to 16 GPUs, pipeline-parallel); plan chosen; CPUs
    # and batch assumed
    path = generic(tmp_path, "big,0,1,600,llama7\nsmall,5,2,60,vgg16\n")
    w = build(path, columns="id=id,submit=t,gpus=n,duration=d,model=m", cluster="tiresias-60")
    kinds = {n.kind: n for n in w.assumptions}
    assert {"gpus-resized", "plan-chosen", "cpus-default", "batch-default"} <= set(kinds)
    ex = kinds["gpus-resized"].examples[0]
    assert (ex.job, ex.line, ex.field) == ("big", 2, "gpus") and ex.detail.startswith("1 -> ")
    assert "no plan of llama7 fits in GPU memory on 1 GPUs" in kinds["gpus-resized"].what
    big = next(j for j in w.jobs if j.id == "big")
    assert big.duration == pytest.approx(600 * 1 / big.requested.gpus)  # GPU-hours kept
    assert kinds["cpus-default"].examples[0].job == "big"
    batch = {n.examples[0].job: n for n in w.assumptions.get("batch-default")}
    assert "32 per GPU" in batch["small"].what and "zoo's default" in batch["big"].what


STRICT_CASES = [
    ("pool", PHILLY, {}, "philly-2", 2, "model"),
    ("unknown", "id,t,n,d,m\nx,0,1,60,mystery\n", {"columns": "id=id,submit=t,gpus=n,duration=d,model=m"},
     "x", 2, "model"),
    ("resize", "id,t,n,d,m,b\nx,0,1,60,llama7,16\n", {"columns": "id=id,submit=t,gpus=n,duration=d,model=m,batch=b"},
     "x", 2, "gpus"),
    ("cpus", "id,t,n,d,m,p,b\nx,0,2,60,bert,zero-dp,32\n",
     {"columns": "id=id,submit=t,gpus=n,duration=d,model=m,plan=p,batch=b", "cluster": "rubick-64"}, "x", 2, "cpus"),
    ("batch", "id,t,n,d,m\nx,0,2,60,vgg16\n", {"columns": "id=id,submit=t,gpus=n,duration=d,model=m"}, "x", 2,
     "batch"),
    ("plan", "id,t,n,d,m,b,c\nx,0,2,60,bert,32,16\n",
     {"columns": "id=id,submit=t,gpus=n,duration=d,model=m,batch=b,cpus=c", "cluster": "rubick-64"}, "x", 2, "plan"),
    ("perf-duration", "id,t,n,i,m,b\nx,0,2,100,vgg16,64\n",
     {"columns": "id=id,submit=t,gpus=n,iterations=i,model=m,batch=b"}, "x", 2, "duration"),
]


@pytest.mark.parametrize("name,text,kw,job,line,field", STRICT_CASES, ids=[c[0] for c in STRICT_CASES])
def test_strict_rejects_each_assumption_naming_job_line_field(tmp_path, name, text, kw, job, line, field):
    path = write(tmp_path, "s.csv", text)
    kw = {"cluster": "tiresias-60", **kw}
    build(path, **kw)  # accepted (and reported) without --strict
    with pytest.raises(TraceError) as ei:
        build(path, strict=True, **kw)
    e = ei.value
    assert (e.line, e.column) == (line, field) and f"job {job!r}" in str(e) and "--strict" in str(e)
    assert e.source == path


def test_strict_accepts_a_trace_that_states_everything_and_keeps_selections(tmp_path):
    path = generic(tmp_path, "x,0,2,60,bert,zero-dp,32,16\ny,5,1,30,bert,ga,32,8\n", "id,t,n,d,m,p,b,c")
    w = build(path, columns="id=id,submit=t,gpus=n,duration=d,model=m,plan=p,batch=b,cpus=c", cluster="rubick-64",
              strict=True)
    assert len(w.jobs) == 2 and not [n for n in w.assumptions if n.assumption]
    w = build(write(tmp_path, "p.csv", PHILLY), vc="vcA", models="trace", seed=1)
    (sel,) = w.assumptions.get("selection")
    assert not sel.assumption and sel.count == 1 and "--vc vcA" in sel.what


def test_lenient_drops_by_reason_with_lines(tmp_path):
    path = write(tmp_path, "l.csv", PHILLY + "2017-10-09 06:03:00,-5,1,0,vcA\n2017-10-09 06:04:00,nan,1,0,vcA\n"
                                             "2017-10-09 06:05:00,60,1.5,0,vcA\n2017-10-09 06:06:00,60,1\n"
                                             "2017-10-09 06:07:00,-1,1,0,vcA\n")
    w = build(path, lenient=True)
    drops = {n.what: n for n in w.assumptions.get("rows-dropped")}
    assert drops["rows dropped (--lenient): duration: must be > 0"].count == 2
    assert [e.line for e in drops["rows dropped (--lenient): duration: must be > 0"].examples] == [5, 9]
    assert drops["rows dropped (--lenient): duration: not a finite number"].examples[0].line == 6
    assert drops["rows dropped (--lenient): num_gpus: not an integer"].examples[0].line == 7
    assert drops["rows dropped (--lenient): cluster: missing value"].examples[0].line == 8  # a short row
    assert w.skipped == 5 and len(w.jobs) == 3
    with pytest.raises(SpecError, match="exclude each other"):
        build(path, lenient=True, strict=True)


def test_cli_summaries_show_the_report(cli, tmp_path):
    path = write(tmp_path, "p.csv", PHILLY)
    code, out, _ = cli("simulate", "--trace", path, "-q")
    assert code == 0 and "assumed (--strict rejects these):" in out
    assert "3 x model drawn from the tiresias" in out and "job philly-2 line 2" in out
    code, out, _ = cli("simulate", "--trace", path, "-q", "--format", "json")
    d = json.loads(out)
    a = {x["kind"]: x for x in d["workload"]["assumptions"]}
    assert set(a) == {"model-pool", "batch-default"}  # CNNs drawn from the pool, their batch assumed
    assert a["model-pool"]["count"] == 3 and a["model-pool"]["examples"][0] == {
        "job": "philly-2", "line": 2, "field": "model", "detail": a["model-pool"]["examples"][0]["detail"]}
    assert d["policies"]["fifo"]["assumed_jobs"] == {"model-pool": 3, "batch-default": 3}
    code, _, err = cli("simulate", "--trace", path, "-q", "--strict")
    assert code == 2 and err.startswith("error: ") and "line 2" in err and "job 'philly-2'" in err
    assert len(err.strip().splitlines()) == 1


def test_unconvertible_jobs_skipped_leniently(tmp_path):
    path = generic(tmp_path, "a,0,1,,mystery,100\nb,1,1,60,vgg16,\n", "id,t,n,d,m,i")
    cols = "id=id,submit=t,gpus=n,duration=d,model=m,iterations=i"
    with pytest.raises(SchedlabError, match="no model 'mystery' to time them"):
        build(path, columns=cols, cluster="tiresias-60")
    w = build(path, columns=cols, cluster="tiresias-60", lenient=True)
    (n,) = w.assumptions.get("job-skipped")
    assert n.examples[0].job == "a" and n.examples[0].line == 2 and [j.id for j in w.jobs] == ["b"]


def test_lenient_skips_aggregate_by_reason(tmp_path, cli):
    """Issue 26 item 11: 42 separate "1 x jobs skipped" lines before (the job id was in the reason);
    now one line per reason with its count and examples."""
    rows = "".join(f"j{i},{i},1,,mystery,100\n" for i in range(5)) + "k,9,1,,enigma,100\nok,10,1,60,vgg16,\n"
    path = generic(tmp_path, rows, "id,t,n,d,m,i")
    cols = "id=id,submit=t,gpus=n,duration=d,model=m,iterations=i"
    w = build(path, columns=cols, cluster="tiresias-60", lenient=True)
    notes = {n.what: n for n in w.assumptions.get("job-skipped")}
    assert len(notes) == 2 and sorted(n.count for n in notes.values()) == [1, 5]
    five = next(n for n in notes.values() if n.count == 5)
    assert "'mystery'" in five.what and "j0" not in five.what
    assert [e.job for e in five.examples[:3]] == ["j0", "j1", "j2"] and five.examples[0].line == 2
    code, out, err = cli("simulate", "--trace", path, "--columns", cols, "--cluster", "tiresias-60", "--lenient")
    assert code == 0, err
    skipped = [x for x in (out + err).splitlines() if "jobs skipped" in x]
    assert len(skipped) == 2 and skipped[0].strip().startswith("5 x jobs skipped"), skipped
    assert "e.g. job j0 line 2, job j1 line 3, job j2 line 4" in skipped[0]
