"""The horizon / offline limit benchmark runs end to end on a tiny size (its rows are what the docs quote)."""

from __future__ import annotations

from schedlab.benchmarks.bench_horizon import bench_horizon, bench_offline


def test_bench_rows_on_tiny_sizes():
    rows = bench_horizon([(3, 2)], slots=3, limit=30.0, seed=0)
    assert rows[0]["status"] == "optimal" and rows[0]["objective"] == rows[0]["bound"]
    rows = bench_offline([3], slot=600.0, limit=30.0, seed=0, machines=2)
    by = {r["method"]: r for r in rows}
    assert set(by) == {"nonpreemptive", "preemptive-ti-total", "preemptive-ti-machine", "resizable-ti", "fluid-bound",
                       "colgen-bound"}
    assert all(r["status"] in ("optimal", "bound") for r in rows)
    # the column-generation bound of the rigid preemptive model is below its optimum, the greedy schedule above
    cg = by["colgen-bound"]
    assert cg["bound"] <= by["preemptive-ti-total"]["objective"] + 1e-6 <= cg["objective"] + 2e-6
    # the orders of the module docstrings, on the benchmark's own data
    assert (by["fluid-bound"]["bound"] <= by["resizable-ti"]["objective"] <= by["preemptive-ti-total"]["objective"]
            <= by["preemptive-ti-machine"]["objective"] <= by["nonpreemptive"]["objective"])


def test_offline_rows_carry_cpsat_work_limit():
    """``--work-limit``: CP-SAT's deterministic budget, named in every row (the same work at any load)."""
    rows = bench_offline([3], slot=600.0, limit=30.0, seed=0, machines=2, methods=("preemptive-ti-total",),
                         work_limit=5.0)
    ti = next(r for r in rows if r["method"] == "preemptive-ti-total")
    assert ti["work_limit"] == 5.0 and ti["status"] == "optimal"
