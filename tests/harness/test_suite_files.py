"""Suite files (YAML/TOML, pydantic) and bad input: every error names the file, the field and (YAML) the
line, before anything runs; nothing already stored is touched."""

from __future__ import annotations

import hashlib

import pytest

from schedlab.benchmarks.harness.suitefile import load_suite_file
from schedlab.topology.errors import SpecError

GOOD = """\
name: mine
defaults: {seeds: [0, 1], time_limit_s: 20}
gap:
  - kind: joint
    cluster: rubick-64
    sizes: [4, 8]
    policies: [fifo, {name: fifo, params: {blocking: false}}]
    formulations: [joint, {method: pop-joint, backends: [highs]}]
    lp_bound: true
replay:
  - workload: smoke
    policies: [fifo, yarn-cs]
    source: {load: 1.5}
bound:
  - {cluster: tiresias-60, jobs: 12, policies: [fifo], generator: {mean_gap: 10}}
"""


def _write(tmp_path, text, name="suite.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_a_suite_file_expands_to_cases(tmp_path):
    s = load_suite_file(_write(tmp_path, GOOD))
    # gap: 2 sizes x 2 seeds x (2 policies + joint on cpsat, highs + pop-joint on highs + lp-bound) = 24
    # replay: 2 seeds x 2 policies = 4; bound: 2 seeds x 1 policy = 2
    assert s.name == "mine" and len(s.cases) == 30
    labels = [c.label for c in s.cases]
    assert "joint/rubick-64/n=4/s=0/fifo[blocking=False]" in labels
    assert "joint/rubick-64/n=8/s=1/pop-joint@highs" in labels
    assert "smoke[load=1.5]/realistic/s=1/yarn-cs" in labels


def test_cluster_lists(tmp_path):
    text = GOOD.replace("cluster: rubick-64", "cluster: [rubick-64, dally-2]").replace(
        "    policies: [fifo, yarn-cs]", "    cluster: [tiresias-60, dally-2]\n    policies: [fifo, yarn-cs]")
    s = load_suite_file(_write(tmp_path, text))
    assert len(s.cases) == 30 + 24 + 4
    labels = {c.label for c in s.cases}
    assert "joint/dally-2/n=8/s=1/fifo" in labels and "smoke[load=1.5]@dally-2/realistic/s=0/fifo" in labels
    with pytest.raises(SpecError) as ei:
        load_suite_file(_write(tmp_path, text.replace("[rubick-64, dally-2]", "[rubick-64, nowhere]"), "b.yaml"))
    assert ei.value.field == "gap[0].cluster[1]"


def test_toml_suite_file(tmp_path):
    toml = """name = "t"\n[[gap]]\nkind = "tier-placement"\ncluster = "dally-2"\nsizes = [4]\npolicies = ["fifo"]\n"""
    s = load_suite_file(_write(tmp_path, toml, "suite.toml"))
    assert [c.label for c in s.cases] == ["tier-placement/dally-2/n=4/s=0/fifo"]
    with pytest.raises(SpecError) as ei:
        load_suite_file(_write(tmp_path, toml.replace("[4]", "[0]"), "bad.toml"))
    assert ei.value.field == "gap[0].sizes[0]" and "bad.toml" in ei.value.source


@pytest.mark.parametrize("old,new,field,line,words", [
    ("sizes: [4, 8]", "sizes: [4, -8]", "gap[0].sizes[1]", 6, "greater than 0"),
    ("formulations: [joint,", "formulations: [nosuch,", "gap[0].formulations[0]", 8, "unknown method 'nosuch'"),
    ("time_limit_s: 20", "time_limit_s: -1", "defaults.time_limit_s", 2, "greater than 0"),
    ("backends: [highs]", "backends: [gurobi]", "gap[0].formulations[1].backends[0]", 8, "unknown backend"),
    ("blocking: false", "blockin: false", "gap[0].policies[1].params.blockin", 7, "blocking"),
    ("workload: smoke", "workload: smok", "replay[0].workload", 11, "unknown workload 'smok'"),
    ("cluster: rubick-64", "cluster: rubik", "gap[0].cluster", 5, "unknown cluster 'rubik'"),
    ("load: 1.5", "load: -1", "replay[0].source.load", 13, "load must be a finite number > 0"),
    ("mean_gap: 10", "mean_ga: 10", "bound[0].generator.mean_ga", 15, "no option 'mean_ga'"),
    ("policies: [fifo], gen", "policies: [fifox], gen", "bound[0].policies[0]", 15, "unknown policy 'fifox'"),
    ("kind: joint", "kind: jointt", "gap[0].kind", 4, "unknown instance kind"),
    ("kind: joint", "kind: joint\n    extra: 1", "gap[0].extra", 5, "Extra inputs"),
    # typed generator and method options (issue 20, defect 2): an enum value out of range is an error
    ("sizes: [4, 8]", "sizes: [4, 8]\n    generator: {objective: maxmin}", "gap[0].generator.objective", 7,
     "'sum', 'weighted', 'max-min' or 'est-avg-jct'"),
    ("sizes: [4, 8]", "sizes: [4, 8]\n    generator: {source: perf}", "gap[0].generator.source", 7, "'perfmodel'"),
    ("backends: [highs]}", "backends: [highs], params: {rel_gap: -1}}", "gap[0].formulations[1].params.rel_gap", 8,
     "greater than or equal to 0"),
    # issue 26 item 13: a bad default backend is reported at the defaults line
    ("time_limit_s: 20}", "time_limit_s: 20, backends: [gurobi]}", "defaults.backends[0]", 2, "unknown backend"),
    # issue 20 defect 5: the offline bound assumes rigid jobs; a resizing policy is refused
    ("policies: [fifo], gen", "policies: [rubick], gen", "bound[0].policies[0]", 15, "rigid jobs"),
])
def test_bad_suite_files_name_file_field_and_line(tmp_path, old, new, field, line, words):
    assert old in GOOD
    p = _write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(SpecError) as ei:
        load_suite_file(p)
    e = ei.value
    assert (e.source, e.field, e.line) == (str(p), field, line), str(e)
    assert words in str(e)


def test_typed_generator_options_reach_the_generator(tmp_path):
    """``objective: max-min`` used to pass through as a string and silently run the weighted sum;
    ``mode: min-overhead`` likewise. Now the options are typed and the instance has them."""
    from schedlab.benchmarks.harness.gap import make_instance
    from schedlab.formulations import JointObjective, TierMode

    s = load_suite_file(_write(tmp_path, GOOD.replace("sizes: [4, 8]", "sizes: [4]\n    generator: {objective: max-min}")))
    joint = next(c for c in s.cases if c.kind == "joint")
    assert make_instance(joint.kind, joint.cluster, joint.jobs, joint.seed, joint.generator).objective \
        is JointObjective.MAXMIN
    tier = make_instance("tier-placement", "dally-2", 4, 0, {"mode": "min-overhead"})
    assert tier.mode is TierMode.MIN_OVERHEAD


def test_bench_cli_refuses_bad_input_before_touching_the_store(tmp_path, cli, small_run):
    d, _ = small_run
    db = d / "results.sqlite"
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    bad = _write(tmp_path, GOOD.replace("formulations: [joint,", "formulations: [nosuch,"))
    cases = [
        (["bench", str(bad), "--out", str(d)], "field 'gap[0].formulations[0]'"),
        (["bench", "quick", "--out", str(d), "--time-limit", "-5"], "time limit must be > 0"),
        (["bench", "quick", "--out", str(d), "--workers", "0"], "workers must be >= 1"),
        (["bench", "no-such-suite", "--out", str(d)], "unknown suite 'no-such-suite'"),
        (["bench", str(tmp_path / "missing.yaml"), "--out", str(d)], "suite file not found"),
        (["bench", "quick", "--out", str(d), "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"],
         "cannot reach the Dask scheduler at tcp://127.0.0.1:9"),
    ]
    for argv, words in cases:
        code, out, err = cli(*argv)
        assert code == 2 and err.startswith("error: ") and words in err, (argv, err)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    for argv, words in ((["report", tmp_path / "nowhere"], "is not a directory"),
                        (["report", tmp_path], "no results store"),
                        (["compare", d, tmp_path / "nowhere"], "DIR_B")):
        code, out, err = cli(*argv)
        assert code == 2 and words in err, (argv, err)
    assert not (tmp_path / "nowhere").exists()
