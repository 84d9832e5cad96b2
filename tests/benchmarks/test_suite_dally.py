"""The ``dally`` reproduction suite: its case grid, the baselines it includes only when registered, its
reproduction rows (paper values beside ours) and the utilisation / jobs-remaining curves."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.harness import run_replay
from schedlab.benchmarks.harness.suites import SUITES
from schedlab.benchmarks.harness.suites import dally as suite
from schedlab.benchmarks.registry import all_policies
from schedlab.topology.errors import SpecError


def test_grid_and_baselines_by_registration():
    s = SUITES["dally"]()
    labels = {c.label for c in s.cases}
    known = all_policies()
    for r in suite.RACKS:
        for a in ("batch", "poisson"):
            for p in ("dally", "dally-manual", "yarn-cs"):
                assert suite.label(p, r, a) in labels
            for p in suite.BASELINES.values():   # Tiresias / Gandiva: present iff registered, never faked
                assert (suite.label(p, r, a) in labels) == (p in known)
    assert {c.source.cluster for c in s.cases} == {f"dally-{r}" for r in suite.RACKS}
    sweeps = [c for c in s.cases if "window=" in c.label or "timers=" in c.label]
    assert len(sweeps) == 2 * (len(suite.WINDOWS_H) + len(suite.MANUAL_TIMERS_H))
    ablation = [c for c in s.cases if c.label.endswith(suite.NO_PREEMPT) and c not in sweeps]
    assert len(ablation) == 2 * len(suite.RACKS) * 2 and all(not c.params["preemption"] for c in ablation)
    ours = [c for c in s.cases if any(c.label.endswith(t) for t in suite.ADDITIONS)]
    assert len(ours) == len(suite.ADDITIONS) * len(suite.RACKS) * 2 and {c.policy for c in ours} == {"dally"}
    assert all(c.params == suite.ADDITIONS[c.label[c.label.index("["):]] for c in ours)
    assert all(c.policy in known for c in s.cases)


@pytest.mark.parametrize(("opts", "field"), [({"racks": [3]}, "racks"), ({"arrivals": ["bursty"]}, "arrivals"),
                                             ({"seed": -1}, "seed"), ({"load": 0}, "load")])
def test_bad_options_name_the_option(opts, field):
    with pytest.raises(SpecError) as ei:
        suite.build(**opts)
    assert ei.value.field == field


def test_reproduce_rows_carry_paper_values_and_mark_missing_baselines():
    m = {"avg_jct": 100.0, "median_jct": 50.0, "p95_jct": 300.0, "p99_jct": 400.0, "makespan": 1000.0,
         "p95_queue": 20.0, "p99_queue": 30.0, "p95_waiting": 40.0, "p99_waiting": 60.0, "comm_overhead": 0.1}
    results = {suite.label("dally", 8, "batch"): m,
               suite.label("dally-manual", 8, "batch"): {**m, "avg_jct": 125.0},
               suite.label("yarn-cs", 8, "batch"): {**m, "avg_jct": 200.0, "comm_overhead": 0.4}}
    rows = {r.quantity: r for r in suite.reproduce(results)}
    t2 = rows["Table 2 avg_jct Dally (8 racks, batch)"]
    assert t2.paper == 2828955 and t2.ours == 100.0
    tir = rows["Table 2 avg_jct Tiresias (8 racks, batch)"]
    assert tir.ours is None and "not registered" in tir.note
    with_tir = {**results, suite.label("2d-las", 8, "batch"): {**m, "p95_queue": 10.0, "p95_waiting": 80.0}}
    rows_t = {r.quantity: r for r in suite.reproduce(with_tir)}
    # first-start delay and all time queued can disagree in sign: 1 - 20/10 = -100 %, 1 - 40/80 = +50 %
    assert rows_t[">P95 queueing delay: Dally vs Tiresias, 8 racks, batch"].ours == pytest.approx(-100.0)
    assert rows_t[">P95 waiting (all time queued): Dally vs Tiresias, 8 racks, batch"].ours == pytest.approx(50.0)
    assert rows["average JCT: Dally vs Dally-manual, 8 racks, batch"].ours == pytest.approx(20.0)   # 1 - 100/125
    assert rows["average JCT: Dally vs Dally-manual, 8 racks, batch"].paper == pytest.approx(9.58, abs=0.01)
    assert rows["communication overhead: Dally vs YARN-CS, 8 racks, batch"].ours == pytest.approx(75.0)
    assert rows["makespan: Dally vs Tiresias, 8 racks, batch"].paper == "up to 69 %"


def test_curves_step_function():
    series = [(0.0, 8, 3, 2), (10.0, 4, 1, 1), (20.0, 0, 0, 0)]
    c = suite.curves(series, total_gpus=8, points=5)   # t = 0, 5, 10, 15, 20
    assert c["time"] == [0.0, 5.0, 10.0, 15.0, 20.0]
    assert c["utilization"] == [1.0, 1.0, 0.5, 0.5, 0.0]
    assert c["jobs_remaining"] == [5.0, 5.0, 2.0, 2.0, 0.0]


def test_one_case_runs_end_to_end():
    s = suite.build(racks=[2], arrivals=["batch"], sweep=False, reference=False)
    case = next(c for c in s.cases if c.policy == "dally")
    out = run_replay(case)
    assert out.metrics["unfinished"] == 0 and out.metrics["jobs"] == 500
    rows = s.reproduce({case.label: out.metrics})
    assert any(r.quantity.startswith("Table 2") for r in rows)
