"""Harness building blocks: case labels and keys, suite validation, one replay through the registry."""

import pytest

from schedlab.benchmarks.harness import GapCase, ReplayCase, ReproRow, Suite, run_replay, run_suite_replays
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.topology.errors import SpecError

SMOKE = WorkloadSource(workload="smoke", seed=1)


def test_labels_and_keys():
    a = ReplayCase(SMOKE, "fifo", {"blocking": False})
    assert a.label == "fifo[blocking=False]"
    b = ReplayCase(SMOKE, "fifo", {"blocking": False}, label="other name")
    assert a.key() == b.key()  # the label is not part of what determines the result
    assert ReplayCase(SMOKE, "fifo", seed=2).key() != ReplayCase(SMOKE, "fifo", seed=3).key()
    g = GapCase("joint", "rubick-64", 10, "joint", "highs", seed=4)
    assert g.label == "joint/rubick-64/n=10/s=4/joint@highs"
    with pytest.raises(SpecError):
        GapCase("joint", "rubick-64", 0, "joint")
    with pytest.raises(SpecError):
        GapCase("joint", "rubick-64", 3, "joint", time_limit_s=0)
    with pytest.raises(SpecError):
        Suite("s", "dup", (a, b.__class__(SMOKE, "fifo", {"blocking": False})))


def test_replay_case_and_reproduction_rows(tmp_path):
    def repro(results):
        return [ReproRow("avg JCT, backfill / blocking", 1.0,
                         results["fifo-backfill"]["avg_jct"] / results["yarn-cs"]["avg_jct"], "x")]

    suite = Suite("mini", "two FIFO flavours", (ReplayCase(SMOKE, "yarn-cs"), ReplayCase(SMOKE, "fifo-backfill")),
                  reproduce=repro)
    results, rows = run_suite_replays(suite)
    assert set(results) == {"yarn-cs", "fifo-backfill"}
    assert results["yarn-cs"]["jobs"] == 24 and results["yarn-cs"]["params"] == {"blocking": True}
    assert rows[0].ours == pytest.approx(results["fifo-backfill"]["avg_jct"] / results["yarn-cs"]["avg_jct"])
    out = run_replay(ReplayCase(SMOKE, "fifo"), out_dir=tmp_path / "r")
    assert (tmp_path / "r" / "metrics.json").exists() and (tmp_path / "r" / "jobs.csv").exists()
    assert out.metrics["unfinished"] == 0


def test_source_refuses_flags_that_do_not_apply():
    with pytest.raises(SpecError) as ei:
        WorkloadSource(workload="smoke", window=12).build()
    assert ei.value.field == "window"
    with pytest.raises(SpecError):
        WorkloadSource(trace="x.csv", params={"large_share": 0.5}).build()
