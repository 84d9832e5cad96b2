"""``python -m schedlab.benchmarks.bench_speed`` (issue 25): valid JSON with every selected row, the load
beside each, and row selection. No timing is asserted (the machine is shared)."""

from __future__ import annotations

import json

import pytest

from schedlab.benchmarks import bench_speed


def test_list_start_quick_writes_json_with_the_expected_keys(tmp_path, capsys):
    out = tmp_path / "speed.json"
    code = bench_speed.main(["--only", "list-start", "--quick", "--runs", "1", "--out", str(out)])
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["quick"] is True and doc["complete"] is True and doc["cpu_count"] >= 1
    (row,) = doc["rows"]
    assert row["name"] == "list-start" and row["target"] == "< 0.2 s median"
    for key in ("cpu_s", "wall_s", "load_before", "load_after", "help_wall_s", "help_cpu_s", "runs", "work"):
        assert key in row, key
    assert row["cpu_s"] > 0 and row["wall_s"] > 0 and len(row["load_before"]) == 3
    printed = capsys.readouterr().out
    assert "list-start" in printed and "--help" in printed and str(out) in printed


def test_every_issue_row_is_selectable_by_name_or_group():
    names = [r.name for r in bench_speed.ROWS]
    assert len(names) == len(set(names)) == 16
    assert {r.name for r in bench_speed.select("philly")} == {n for n, _, _ in bench_speed.PHILLY}
    assert [r.name for r in bench_speed.select("cli")] == ["list-start", "bench-rerun"]
    assert [r.name for r in bench_speed.select("gittins-p99,exact-joint")] == ["exact-joint", "gittins-p99"]
    assert set(bench_speed.TARGETS) == set(names)
    with pytest.raises(SystemExit, match="unknown row 'nope'"):
        bench_speed.select("nope")


def test_a_failing_row_is_reported_not_raised(tmp_path):
    def boom(ctx):
        raise RuntimeError("no solver")

    ctx = bench_speed.Ctx(quick=True, trace=None, runs=1, repeat=1, workdir=tmp_path)
    rows = bench_speed.measure([bench_speed.Row("x", "g", "work", boom),
                                bench_speed.ROWS[0]], ctx)  # a Philly row without the trace: skipped
    assert rows[0]["error"] == "RuntimeError: no solver" and rows[0]["cpu_s"] is None
    assert "trace not found" in rows[1]["skipped"]
    text = bench_speed.table(rows)
    assert "no solver" in text and "philly-fifo" in text


def test_gittins_p99_is_taken_over_the_busy_decisions_of_a_whole_replay():
    """The P99 row times every decision of a whole replay and takes the P99 over those that saw the queue
    it asks for (here a small replay: 2,500 jobs, 100+ queued)."""
    row = bench_speed.gittins_decisions(2500, 2000.0, 100)
    assert "error" not in row, row
    busy = row["decisions_with_100_queued"]
    assert 0 < busy < row["decisions"] and row["max_queued"] >= 100 and row["jobs"] == 2500
    assert row["p99_wall_ms"] >= row["median_wall_ms"] >= 0 and row["p99_cpu_ms"] >= 0
    assert bench_speed.gittins_decisions(2000, 2000.0, 10**6)["error"].startswith("no decision saw 1000000 queued")


def test_a_command_past_the_row_limit_is_stopped_and_says_so():
    import sys

    res = bench_speed.timed_command([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert res["timed_out"] is True and res["code"] is None
    assert bench_speed._failed(res).startswith("not finished: stopped at the row limit (0.5 s wall)")
