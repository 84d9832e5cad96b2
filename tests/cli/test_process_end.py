"""``main()`` as the process's entry point (no ``argv``) freezes the collector's heap at its end, so that
the interpreter's exit does not collect a replay's objects; a caller passing ``argv`` keeps its collector."""

from __future__ import annotations

import contextlib
import gc

from schedlab.benchmarks.cli import main


def test_freeze_only_at_the_process_entry(monkeypatch):
    calls = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(1))
    with contextlib.suppress(SystemExit):
        main(["--help"])
    assert calls == []
    monkeypatch.setattr("sys.argv", ["schedlab", "--help"])
    with contextlib.suppress(SystemExit):
        main()
    assert calls == [1]
