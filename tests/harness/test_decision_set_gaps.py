"""Gaps per decision set (issue 21, items 1, 2, 6 and the results.csv columns): each run's gap is taken
against the best bound of ITS decision set (a bound of a wider set is valid too, a narrower one never), a
narrower set's optimum against the wider one is the value of flexibility, the neutral objective's gap is
to the twin's allocation, exact runs are listed apart as checks, and the export names the decision set
and the objective of every row."""

from __future__ import annotations

import pandas as pd
import pytest

from schedlab.benchmarks.harness.analysis import export, frame
from schedlab.benchmarks.harness.report import tables


def _rec(method, role, objective, bound=None, *, dset="joint", backend="highs", neutral=None, label=None):
    return {"suite": "s", "label": label or method, "case_type": "gap", "role": role, "method": method,
            "backend": backend, "instance": "I", "kind": "joint", "cluster": "c", "jobs": 4, "gpus": 8, "seed": 0,
            "status": "ok", "objective": objective, "bound": bound, "sense": "max", "proven": bound is not None,
            "verified": True, "build_s": 0.0, "solve_s": 0.0, "finished_at": "t", "time_limit_s": 10.0,
            "message": "", "extra": {"decision_set": dset, "objective_name": "normalised throughput",
                                     "neutral_name": "est-avg-jct", "neutral_objective": neutral}}


def _records():
    return [_rec("joint-2stage", "exact", 10.0, 10.0, neutral=1.0),
            _rec("joint-rigid", "exact", 6.0, 6.0, dset="joint-rigid", neutral=2.0),
            _rec("fifo", "policy", 6.0, backend=None, dset="joint-rigid", neutral=2.5),
            _rec("synergy", "policy", 4.5, backend=None, dset="joint-rigid", neutral=1.5),
            _rec("rubick", "policy", 8.0, backend=None, neutral=1.0)]


def _df():
    return frame(_records()).set_index("method")


def test_each_run_is_measured_against_its_own_sets_bound():
    df = _df()
    assert df.loc["fifo", "best_bound"] == 6.0 and df.loc["fifo", "gap"] == 0.0
    assert df.loc["synergy", "gap"] == pytest.approx(0.25)
    # the resizing policy is measured against the resizable optimum: 8 beats the rigid 6 without violating it
    assert df.loc["rubick", "best_bound"] == 10.0 and df.loc["rubick", "gap"] == pytest.approx(0.2)
    assert (df["status"] == "ok").all() and df["bound_optimal"].all()
    # neutral objective (min): vs the own set's twin allocation, a reference that may be beaten
    assert df.loc["fifo", "neutral_gap"] == pytest.approx(0.5 / 2.5)
    assert df.loc["synergy", "neutral_gap"] == pytest.approx(-0.5 / 2.0)
    assert df.loc["rubick", "neutral_gap"] == 0.0


def test_a_narrow_set_value_above_the_wider_bound_is_a_violation():
    df = frame([_rec("joint-2stage", "exact", 10.0, 10.0),
                _rec("fifo", "policy", 11.0, backend=None, dset="joint-rigid")]).set_index("method")
    assert df.loc["fifo", "status"] == "bound-violated"


def test_value_of_flexibility_and_checks_apart():
    exact_policy = _rec("exact-joint", "policy", 10.0, backend=None, neutral=1.0)
    exact_policy["extra"]["check"] = True
    df = frame([*_records(), exact_policy])
    fx = tables.flexibility(df)
    assert list(fx["decision set"]) == ["joint-rigid"]
    assert fx["value of flexibility [%]"].iloc[0] == pytest.approx(40.0)
    assert fx["neutral: twin allocations [%]"].iloc[0] == pytest.approx(50.0)  # rigid twin 2.0 vs resizable 1.0
    gt = tables.gap_table(df)
    ex = gt[gt["method"] == "exact-joint"]
    assert ex["check"].all() and (ex["mean gap [%]"] == 0).all()  # solves the twin itself: a check
    rigid = gt[gt["decision set"] == "joint-rigid"]
    assert list(rigid["method"]) == ["fifo", "synergy", "joint-rigid@highs"]  # heuristics first, then the check
    assert list(rigid["check"]) == [False, False, True]
    assert (gt.loc[gt["check"], "mean gap [%]"] == 0).all()
    assert set(gt["objective"]) == {"normalised throughput"} and set(gt["neutral objective"]) == {"est-avg-jct"}


def test_results_csv_names_the_decision_set_and_objective(tmp_path):
    export(_df().reset_index(), tmp_path, parquet=False)
    out = pd.read_csv(tmp_path / "results.csv").set_index("method")
    assert out.loc["fifo", "decision_set"] == "joint-rigid" and out.loc["rubick", "decision_set"] == "joint"
    assert (out["objective_name"] == "normalised throughput").all()
    assert {"neutral_name", "neutral_objective", "neutral_gap"} <= set(out.columns)


def test_run_gap_records_the_set_objective_and_neutral_value():
    """End to end on a gap-suite instance (joint, rubick-64, perf-model tables, busy 0.3, 16 jobs): FIFO is
    measured in joint-rigid and meets its optimum; the resizable optimum is higher (value of flexibility)."""
    from schedlab.benchmarks.harness import GapCase
    from schedlab.benchmarks.harness.gap import run_gap

    gen = {"source": "perfmodel", "busy": 0.3}
    out = {m: run_gap(GapCase("joint", "rubick-64", 16, m, b, seed=0, time_limit_s=30, generator=gen))
           for m, b in (("fifo", None), ("joint-rigid", "highs"), ("joint-2stage", "highs"))}
    ex = {m: o.extra for m, o in out.items()}
    assert ex["fifo"]["decision_set"] == "joint-rigid" and ex["fifo"]["twin"] == "joint-rigid"
    assert ex["joint-rigid"]["decision_set"] == "joint-rigid" and ex["joint-2stage"]["decision_set"] == "joint"
    assert all(e["objective_name"].startswith("normalised throughput") for e in ex.values())
    assert all(e["neutral_name"] == "est-avg-jct" and e["neutral_objective"] > 0 for e in ex.values())
    assert out["joint-rigid"].proven and out["fifo"].objective == pytest.approx(out["joint-rigid"].bound)
    assert out["joint-2stage"].bound > out["joint-rigid"].bound


def test_a_check_with_a_nonzero_gap_is_reported_as_failed():
    """A check solves the twin itself: a gap above zero is a defect and the gap table says so, while a
    heuristic's gap and a check at zero stay plain."""
    bad = _rec("exact-joint", "policy", 9.0, backend=None, neutral=1.0)
    bad["extra"]["check"] = True
    gt = tables.gap_table(frame([*_records(), bad]))
    ex = gt[gt["method"] == "exact-joint"].iloc[0]
    assert ex["check"] and ex["mean gap [%]"] == pytest.approx(10.0) and "CHECK FAILED" in ex["status"]
    assert not gt[gt["method"] != "exact-joint"]["status"].str.contains("CHECK FAILED").any()


def test_exact_joint_is_a_check_only_when_it_solved_the_twin_itself():
    """Held preempted resources (a re-solve) or a solve stopped at a limit make exact-joint a result."""
    from types import SimpleNamespace

    from schedlab.benchmarks.harness.gap import _check
    from schedlab.formulations import Status as SolveStatus
    from schedlab.scheduling.registry import PolicyFamily

    spec = SimpleNamespace(family=PolicyFamily.EXACT)
    ok = SimpleNamespace(objective_name="family", counters={"solves": 1},
                         last_result=SimpleNamespace(status=SolveStatus.OPTIMAL))
    assert _check(spec, ok) == {"check": True}
    held = SimpleNamespace(objective_name="family", counters={"re-solved:preemption": 1}, last_result=None)
    assert _check(spec, held)["check"] is False and "holding" in _check(spec, held)["notes"][0]
    limited = SimpleNamespace(objective_name="family", counters={},
                              last_result=SimpleNamespace(status=SolveStatus.FEASIBLE_AT_LIMIT))
    assert _check(spec, limited)["check"] is False
    assert _check(spec, SimpleNamespace(objective_name="neutral", counters={})) == {"check": False}
    assert _check(SimpleNamespace(family=PolicyFamily.BASELINE), ok) == {"check": False}
