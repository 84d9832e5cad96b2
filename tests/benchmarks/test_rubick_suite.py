"""The Rubick reproduction suite: its cases, and how ``reproduce`` turns runs into rows."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.harness.suites import SUITES
from schedlab.benchmarks.harness.suites.rubick import TABLE4, micro_benchmark, reproduce, rubick_suite


def test_generator_cases_without_traces():
    s = rubick_suite(traces=None)
    labels = [c.label for c in s.cases]
    assert SUITES["rubick"] is rubick_suite and len(labels) == len(set(labels))
    assert {f"{v}-gen/{p}" for v, ps in TABLE4.items() for p in ps} <= set(labels)
    assert not any("trace" in lab for lab in labels) and "generator workloads only" in s.description
    assert {"load=2/rubick", "load=2/synergy", "large=0.75/rubick", "large=0.75/synergy"} <= set(labels)
    assert all(c.source.workload and c.source.workload.startswith("rubick-") for c in s.cases)


def test_trace_cases_with_traces(traces_dir):
    s = rubick_suite(traces=str(traces_dir), sweeps=False)
    by = {c.label: c for c in s.cases}
    assert by["mt-trace/antman"].source.trace.endswith("workload-mt.csv")
    assert by["base-trace/rubick-n"].source.trace_format == "rubick"


def test_reproduce_rows_from_runs():
    m = {"avg_jct": 3600.0, "p99_jct": 7200.0, "makespan": 36000.0, "guarantee_violations": 0,
         "classes": {"guaranteed": {"avg_jct": 1800.0, "p99_jct": 3600.0}, "best-effort": {"avg_jct": 5400.0,
                                                                                          "p99_jct": 9000.0}}}
    results = {"mt-gen/rubick": m, "mt-gen/antman": {**m, "avg_jct": 7200.0}, "large=0.5/rubick": m,
               "large=0.5/synergy": {**m, "avg_jct": 10800.0}}
    rows = {r.quantity: r for r in reproduce(results)}
    r = rows["MT (generator) rubick avg JCT"]
    assert (r.paper, r.ours, r.unit) == (1.1, 1.0, "h")
    assert rows["MT (generator) rubick guaranteed avg JCT"].ours == 0.5
    assert rows["MT (generator) avg JCT antman / Rubick"].ours == 2.0
    assert rows["MT (generator) avg JCT antman / Rubick"].paper == pytest.approx(1.59, abs=0.01)
    assert rows["avg JCT Synergy / Rubick, large = 0.5"].ours == 3.0
    assert rows["micro-benchmark total normalised speedup, rubick"].paper == 1.44


def test_micro_benchmark_runs_rubick_on_four_gpus():
    """With the perf model's numbers of the day (they change with its fits; the hand-worked allocation
    is ``tests/heuristics/test_rubick_by_hand.py``): Rubick's total normalised speedup is at least the
    equal split's."""
    out = micro_benchmark()
    assert out["equal split"] > 0 and out["paper allocation"] > 0
    assert out["rubick"] >= out["equal split"] - 1e-9
    assert "GPUs" in out["allocation rubick"]
