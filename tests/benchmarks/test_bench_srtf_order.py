"""``bench_srtf_order`` (SRTF's ranking across decisions, issue 25) counts what it says and leaves the
policy's classes as it found them."""

from __future__ import annotations

import pytest

from schedlab.benchmarks import bench_srtf_order as bso
from schedlab.benchmarks.bench_simulator import find_trace

pytestmark = pytest.mark.slow  # two replays of 9,000 jobs of the --load 5 Philly workload (~10 s quiet)


@pytest.fixture(autouse=True)
def _trace():
    if find_trace(None) is None:
        pytest.skip("Philly trace not found")


def test_order_counts_are_consistent_and_methods_restored():
    before = {path: bso._classes()[path.split(".")[0]].__dict__[path.split(".")[1]] for path, _ in bso.PARTS}
    out = bso.measure("srtf", 9000, "order")  # the first contested decisions come after ~7,000 jobs
    o = out["order"]
    assert o["decisions"] > 0 and o["rows"] > o["decisions"]
    assert 0 < o["decisions out of order"] <= o["decisions"] <= out["passes"]
    assert o["pairs out of order"] >= o["decisions out of order"]
    kinds = [v for k, v in o.items() if k.startswith("decisions with: ")]
    assert max(kinds) <= o["decisions out of order"] <= sum(kinds)
    after = {path: bso._classes()[path.split(".")[0]].__dict__[path.split(".")[1]] for path, _ in bso.PARTS}
    assert after == before


def test_split_times_the_parts():
    out = bso.measure("srsf", 9000, "split")
    s = out["split"]
    assert set(s) <= {label for _, label in bso.PARTS} and "schedule" in s
    assert s["schedule"] <= out["cpu_s"] and s["refresh"] <= s["_sync"] <= s["schedule"]
