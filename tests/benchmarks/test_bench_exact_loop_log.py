"""``bench_exact_loop --solve-log``: one JSON line per exact-joint solve, with the round's stage notes,
alongside the round checker."""

import json

from schedlab.benchmarks.bench_exact_loop import replay


def test_solve_log_has_one_line_per_solve(tmp_path):
    path = tmp_path / "solves.jsonl"
    out = replay("exact-joint", {}, jobs=12, check_method="joint", solve_log=str(path))
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == out["counters"]["solves"] == out["check"]["rounds"] > 0
    assert all(x["status"] == "optimal" and x["jobs"] >= 1 and x["cpu_s"] >= 0 for x in lines)
    assert [x["t"] for x in lines] == sorted(x["t"] for x in lines)
