"""The ``tiresias`` reproduction suite: its cases, options and reproduction rows (the runs themselves
are long: ``docs/REPRODUCTION.md``; the artifact figures are checked in tests/heuristics)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from schedlab.benchmarks.harness.suites import SUITES
from schedlab.benchmarks.harness.suites.tiresias import (
    GANDIVA_REFERENCE,
    POLICIES_COMPARED,
    REFERENCE,
    reproduce,
    tiresias_suite,
)
from schedlab.benchmarks.registry import all_policies
from schedlab.topology.errors import SpecError
from schedlab.topology.presets import load_cluster


def test_registered_and_cases_are_valid():
    suite = SUITES["tiresias"]()
    labels = [c.label for c in suite.cases]
    assert len(labels) == len(set(labels))
    reg = all_policies()
    for c in suite.cases:
        reg.spec(c.policy).validate(c.params)  # every case's parameters validate
    gandiva = sum(1 for vc in GANDIVA_REFERENCE if vc in REFERENCE)  # the artifact's gandiva on Philly VCs
    assert gandiva == 2 and {x for x in labels if x.endswith("/gandiva")} == {
        "reference/2869ce/gandiva", "reference/0e4a51/gandiva", "testbed/tiresias/gandiva"}
    assert sum(1 for x in labels if x.startswith("reference/")) == sum(len(f) for _, f in REFERENCE.values()) + gandiva
    assert {x.split("/")[-1] for x in labels if x.startswith("testbed/")} == {*POLICIES_COMPARED, "2d-las-learned",
                                                                              "gandiva"}
    for spec, _ in REFERENCE.values():
        assert load_cluster(next(c.source.cluster for c in suite.cases if c.source.cluster.endswith(spec))).total_gpus


def test_parts_and_options():
    s = tiresias_suite(parts=("testbed",), semantics=("tiresias",))
    assert len(s.cases) == len(POLICIES_COMPARED) + 1 and all(c.semantics == "tiresias" for c in s.cases)  # + gandiva
    las = next(c for c in s.cases if c.policy == "2d-las")
    assert las.params == {"threshold": 3200.0}
    loaded = tiresias_suite(parts=("loaded",), load=8, resample="none")  # the table as recorded
    assert all(c.source.load == 8 and c.label.startswith("philly-x8/") and c.source.resample == "none"
               for c in loaded.cases)
    # by default each seed is a bootstrap draw of the table (a fixed trace's seeds would be replicas)
    rs = tiresias_suite(parts=("loaded", "philly", "sensitivity"), load=8, seeds=2)
    by_part = {c.label.split("/")[0]: c.source.resample for c in rs.cases}
    assert by_part == {"philly-x8-rs": "bootstrap", "philly": "none", "sensitivity-x8-rs": "bootstrap"}
    # the sensitivity variants run on the loaded part's workload of the same seed (the base of their ratios)
    sens = [c for c in rs.cases if c.label.startswith("sensitivity-x8-rs/")]
    base = {c.source.seed: c.source for c in rs.cases if c.label.split("@")[0] == "philly-x8-rs/tiresias/2d-las"}
    assert sens and all(c.source == base[c.source.seed] for c in sens) and len(base) == 2
    rec = tiresias_suite(parts=("sensitivity",), load=8, resample="none")  # the table as recorded: labels as before
    assert {c.label.split("/")[0] for c in rec.cases} == {"sensitivity-x8"}
    assert all(c.source.resample == "none" and c.source.load == 8 for c in rec.cases)
    assert {c.source.seed for c in rs.cases if c.label.startswith("philly-x8-rs/")} == {0, 1}
    assert len({c.key() for c in rs.cases}) == len(rs.cases)
    with pytest.raises(SpecError) as e:
        tiresias_suite(parts=("loaded",), resample="jackknife")
    assert e.value.field == "resample"
    # the loaded oracles get a longer hard limit than the harness's default, and the planner uses it
    from schedlab.benchmarks.harness.runner import REPLAY_LIMIT_S, BenchOptions, plan
    from schedlab.benchmarks.harness.suites.tiresias import ORACLE_HARD_LIMIT_S

    hard = {t.case.label: t.hard_limit_s for t in plan(loaded, BenchOptions(out=Path("unused")))}
    assert hard["philly-x8/realistic/srsf"] == hard["philly-x8/tiresias/srtf"] == ORACLE_HARD_LIMIT_S > REPLAY_LIMIT_S
    assert hard["philly-x8/realistic/2d-las"] == REPLAY_LIMIT_S
    assert {t.case.label: t.hard_limit_s for t in plan(loaded, BenchOptions(out=Path("unused"), time_limit_s=60.0))}["philly-x8/realistic/srsf"] == 60.0
    assert loaded.cases[0].key() == replace(loaded.cases[0], hard_limit_s=99.0).key()  # the limit does not change the result
    with pytest.raises(SpecError, match="limit"):
        replace(loaded.cases[0], hard_limit_s=-1.0)
    with pytest.raises(SpecError, match="unknown part"):
        tiresias_suite(parts=("nope",))
    with pytest.raises(SpecError, match="load"):
        tiresias_suite(load=0)


def test_costs_option_adds_free_preemption_cases_beside_the_measured_cost():
    both = tiresias_suite(parts=("loaded",), semantics=("realistic", "tiresias"), costs=("tiresias", "free"),
                          policies=("2d-las", "srsf"))
    by_label = {c.label: c for c in both.cases}
    measured = tiresias_suite(parts=("loaded",), semantics=("realistic", "tiresias"), policies=("2d-las", "srsf"))
    # the default cases are untouched (labels and keys): the free ones are added beside them
    assert {c.label: c.key() for c in measured.cases}.items() <= {k: c.key() for k, c in by_label.items()}.items()
    free = {k: c for k, c in by_label.items() if "/realistic-free/" in k}
    assert set(free) == {"philly-x5-rs/realistic-free/2d-las", "philly-x5-rs/realistic-free/srsf"}  # no learned variant
    for label, c in free.items():
        twin = by_label[label.replace("/realistic-free/", "/realistic/")]
        assert c.costs == "free" and twin.costs == "tiresias" and c.semantics == twin.semantics == "realistic"
        assert c.source == twin.source and c.params == twin.params and c.key() != twin.key()
        assert c.hard_limit_s == twin.hard_limit_s
    assert all(c.costs is None for c in both.cases if "/tiresias/" in c.label)  # free already under tiresias
    only = tiresias_suite(parts=("testbed", "loaded-paper"), semantics=("realistic",), costs=("free",))
    assert only.cases and all("/realistic-free/" in c.label and c.costs == "free" for c in only.cases)
    for bad in (("none",), (), ("free", "free")):
        with pytest.raises(SpecError) as e:
            tiresias_suite(parts=("loaded",), costs=bad)
        assert e.value.field == "costs"
    from schedlab.benchmarks.cli.suite_options import parse_suite_options
    assert parse_suite_options(tiresias_suite, "tiresias", ["costs=tiresias,free"]) == {"costs": ("tiresias", "free")}


def test_reproduction_rows_put_ours_beside_the_paper():
    res = {"reference/2869ce/fifo": {"avg_jct": 220_700.31},
           "testbed/realistic/yarn-cs": {"avg_jct": 20_000.0, "median_jct": 20_000.0, "makespan": 60_000.0},
           "testbed/realistic/2d-las": {"avg_jct": 10_000.0, "median_jct": 2_000.0, "makespan": 50_000.0}}
    rows = {r.quantity: r for r in reproduce(res)}
    ref = rows["artifact avg JCT, VC 2869ce, fifo"]
    assert ref.paper == 220_700.31 and ref.ours == 220_700.31 and "0.0000% off" in ref.note
    ratio = rows["testbed, realistic: avg JCT YARN-CS / 2D-LAS"]
    assert ratio.paper == 5.5 and ratio.ours == 2.0
    assert rows["testbed, realistic: median JCT YARN-CS / 2D-LAS"].ours == 10.0
    assert rows["testbed, realistic: avg JCT SRTF / 2D-LAS"].ours is None  # not run
    assert rows["testbed, realistic: 2d-las makespan"].paper == 27400.0


def test_reproduction_rows_of_the_resampled_sensitivity_and_free_preemption():
    res = {"philly-x5-rs/tiresias/2d-las": {"avg_jct": 1000.0}, "sensitivity-x5-rs/2d-las/K=3": {"avg_jct": 900.0},
           "philly-x5/tiresias/2d-las": {"avg_jct": 2000.0}, "sensitivity-x5/2d-las/K=3": {"avg_jct": 1000.0},
           "philly-x5-rs/realistic-free/2d-gittins": {"avg_jct": 1500.0},
           "philly-x5-rs/realistic-free/srsf": {"avg_jct": 1000.0}}
    rows = {r.quantity: r for r in reproduce(res)}
    assert rows["sensitivity-x5-rs, 2d-las K=3: avg JCT / (K=2, 1 h, no knob)"].ours == 0.9  # over the same draw
    assert rows["sensitivity-x5, 2d-las K=3: avg JCT / (K=2, 1 h, no knob)"].ours == 0.5  # over the table as recorded
    assert rows["Philly x5 load, resampled, realistic-free: avg JCT 2D-Gittins / SRSF"].ours == 1.5
