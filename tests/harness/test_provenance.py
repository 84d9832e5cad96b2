"""The generated runs table beside the reproduction tables (``schedlab report --reproduction --runs``):
one row per stored ``schedlab bench`` session, its records found by time, the replays stopped at the
limit counted, and the per-suite sums."""

from __future__ import annotations

from datetime import UTC, datetime

from schedlab.benchmarks.harness.report.provenance import render_provenance, session_rows, wall_by_suite
from schedlab.benchmarks.harness.store import Store


def _rec(label: str, finished: str, status: str = "ok", suite: str = "tiresias") -> dict:
    return {"key": f"{suite}:{label}", "suite": suite, "label": label, "case_type": "replay", "method": "x",
            "status": status, "finished_at": finished, "code_version": "0.1.0+abc", "metrics": {"avg_jct": 1.0}}


SESSIONS = [
    {"suite": "tiresias", "started_at": "2026-01-01T10:00:00+00:00", "finished_at": "2026-01-01T10:02:30+00:00",
     "status": "done", "options": {"time_limit_s": "None", "workers": "1"},
     "environment": {"load_avg": [3.5, 2.0, 1.0], "git": "abc123"}, "counts": {"total": 3, "ran": 3}},
    {"suite": "tiresias", "started_at": "2026-01-01T11:00:00+00:00", "finished_at": None, "status": "running",
     "options": {"time_limit_s": "20.0"}, "environment": {}, "counts": {"total": 4}},
]
RECORDS = [_rec("testbed/tiresias/2d-las", "2026-01-01T10:01:00"),
           _rec("testbed/tiresias/yarn-cs@seed=1", "2026-01-01T10:02:00"),
           _rec("philly/tiresias/srtf", "2026-01-01T10:02:20", status="killed"),
           _rec("philly/tiresias/2d-las", "2026-01-01T11:30:00"),
           _rec("dally/dally-8/batch", "2026-01-01T10:01:00", suite="dally")]  # another suite: not this session's


def test_session_rows_by_hand():
    first, second = session_rows("runs/a", SESSIONS, RECORDS)
    assert first["wall_s"] == 150.0 and first["killed"] == 1 and first["time_limit"] is None
    assert dict(first["groups"]) == {"testbed": 2, "philly": 1} and first["load"] == 3.5 and first["git"] == "abc123"
    assert second["wall_s"] is None and second["time_limit"] == "20.0" and dict(second["groups"]) == {"philly": 1}
    table = wall_by_suite([first, second])
    assert table[-1] == "| tiresias | 150 s | 3 | 1 |"


def test_render_from_a_store(tmp_path):
    with Store(tmp_path) as store:
        sid = store.begin_session("tiresias", {"time_limit_s": "None"}, {"load_avg": [1.0, 1.0, 1.0], "git": "c0ffee"},
                                  {"total": 2})
        store.put(_rec("testbed/tiresias/2d-las", "2999-01-01T00:00:00"))
        store.put(_rec("testbed/tiresias/yarn-cs", "2999-01-01T00:00:01"))
        store.end_session(sid, "done", {"total": 2, "ran": 2, "failed": 0}, [])
    text = render_provenance([tmp_path], commit="deadbeef", now=datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
                             load=(0.5, 0.25, 0.125), cores=2)
    assert text.startswith("Generated 2026-01-02 03:04 UTC from the code at commit `deadbeef` (the records' code "
                           "versions: tiresias: `0.1.0+abc` (2)); load average now 0.50 0.25 0.12 on 2 cores.")
    row = next(line for line in text.splitlines() if line.startswith(f"| `{tmp_path}`"))
    assert "| tiresias |" in row and "| done | 2 / 2 / 0 | — | 1.00 | `c0ffee` | testbed (2) |" in row
