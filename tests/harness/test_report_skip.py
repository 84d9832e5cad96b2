"""``schedlab bench`` keeps a report rendered from the same store content (issue 25: a rerun with nothing
left to run redrew every plot): ``report.digest`` names the content digest a report was rendered from."""

from __future__ import annotations

import json

from schedlab.benchmarks.harness.report import (
    DIGEST_NAME,
    content_digest,
    existing_report,
    render_if_changed,
)
from schedlab.benchmarks.harness.store import Store


def _record(key: str, objective: float) -> dict:
    return {"key": key, "suite": "t", "label": key, "case_type": "replay", "method": "fifo", "status": "ok",
            "objective": objective, "finished_at": "2026-01-01T00:00:00"}


def test_digest_follows_records_not_sessions(tmp_path):
    with Store(tmp_path) as store:
        empty = content_digest(tmp_path)
        store.end_session(store.begin_session("t", {}, {}), "done", {"total": 0}, [])
        assert content_digest(tmp_path) == empty  # a session that ran nothing changes no result
        store.put(_record("a", 1.0))
        one = content_digest(tmp_path)
        assert one != empty
        store.put(_record("a", 2.0))  # a retried run replaced with another value
        assert content_digest(tmp_path) not in (empty, one)


def test_render_only_when_the_content_changed(tmp_path):
    Store(tmp_path).close()
    rep, rendered = render_if_changed(tmp_path)
    assert rendered and rep.html.is_file() and rep.markdown.is_file()
    stamp = json.loads((tmp_path / DIGEST_NAME).read_text())
    assert stamp["digest"] == content_digest(tmp_path)

    rep.markdown.write_text("kept\n")  # a skipped render leaves the files as they are
    again, rendered = render_if_changed(tmp_path)
    assert not rendered and again.html == rep.html and again.markdown.read_text() == "kept\n"

    forced, rendered = render_if_changed(tmp_path, force=True)
    assert rendered and forced.markdown.read_text() != "kept\n"

    with Store(tmp_path) as store:  # a new record: the stamp no longer matches
        store.put(_record("a", 1.0))
    assert existing_report(tmp_path) is None


def test_a_missing_file_or_stamp_renders_again(tmp_path):
    Store(tmp_path).close()
    rep, _ = render_if_changed(tmp_path)
    rep.html.unlink()
    assert existing_report(tmp_path) is None
    _, rendered = render_if_changed(tmp_path)
    assert rendered
    (tmp_path / DIGEST_NAME).write_text("not json")
    assert existing_report(tmp_path) is None
