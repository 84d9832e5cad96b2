"""The results store: one SQLite file per results directory (stdlib ``sqlite3``, WAL journal, one
transaction per record), so an interrupted sweep (Ctrl-C, ``kill -9``) loses no completed record and
a rerun skips what is done.

Tables: ``records`` (one row per run, columns :data:`~schedlab.benchmarks.harness.record.FIELDS`, keyed
by suite + case key + code version), ``sessions`` (one row per ``schedlab bench`` invocation: options,
environment, counts, skipped cases) and ``repro`` (a suite's paper-vs-ours rows of its latest session).
Only the runner writes; reports and ``compare`` read.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.cases import ReproRow
from schedlab.benchmarks.harness.record import FIELDS, from_row, to_row
from schedlab.topology.errors import SpecError

STORE_NAME = "results.sqlite"

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS records (" + ", ".join(f"{k} {t}" for k, t in FIELDS.items()) + ")",
    "CREATE INDEX IF NOT EXISTS records_suite ON records (suite, label)",
    "CREATE TABLE IF NOT EXISTS sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, suite TEXT, started_at TEXT, "
    "finished_at TEXT, status TEXT, options TEXT, environment TEXT, counts TEXT, skipped TEXT)",
    "CREATE TABLE IF NOT EXISTS repro (suite TEXT, position INTEGER, quantity TEXT, paper TEXT, ours REAL, "
    "unit TEXT, note TEXT, session INTEGER, PRIMARY KEY (suite, position))",
]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Store:
    """``Store(directory)`` opens (creating with ``create=True``) ``directory/results.sqlite``."""

    def __init__(self, directory: str | Path, *, create: bool = True) -> None:
        self.dir = Path(directory)
        self.path = self.dir / STORE_NAME
        if not create and not self.path.is_file():
            raise SpecError(f"no results store in {self.dir} (expected {STORE_NAME}; run schedlab bench --out "
                            f"{self.dir} first)", source=str(self.dir), field="DIR")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        for stmt in _SCHEMA:
            self.conn.execute(stmt)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ records
    def statuses(self, keys: Iterable[str]) -> dict[str, str]:
        """``key -> status`` of the stored records among ``keys``."""
        keys = list(keys)
        out: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, status FROM records WHERE key IN ({','.join('?' * len(chunk))})"
            out.update({r["key"]: r["status"] for r in self.conn.execute(q, chunk)})
        return out

    def put(self, record: Mapping[str, Any]) -> None:
        """Insert (or replace, for a retried failure) one record in its own transaction."""
        row = to_row(dict(record))
        cols = list(FIELDS)
        with self._tx():
            self.conn.execute(f"INSERT OR REPLACE INTO records ({', '.join(cols)}) VALUES "
                              f"({', '.join('?' * len(cols))})", [row[c] for c in cols])

    def records(self, suite: str | None = None) -> list[dict[str, Any]]:
        q, args = "SELECT * FROM records", ()
        if suite is not None:
            q, args = q + " WHERE suite = ?", (suite,)
        return [from_row(dict(r)) for r in self.conn.execute(q + " ORDER BY finished_at, key", args)]

    def suites(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT suite FROM records ORDER BY suite")]

    # ------------------------------------------------------------------ sessions and reproduction rows
    def begin_session(self, suite: str, options: Mapping[str, Any], environment: Mapping[str, Any]) -> int:
        with self._tx():
            cur = self.conn.execute("INSERT INTO sessions (suite, started_at, status, options, environment) "
                                    "VALUES (?, ?, 'running', ?, ?)",
                                    (suite, _now(), json.dumps(dict(options), default=str),
                                     json.dumps(dict(environment), default=str)))
        return int(cur.lastrowid)

    def end_session(self, session: int, status: str, counts: Mapping[str, int], skipped: Sequence[str]) -> None:
        with self._tx():
            self.conn.execute("UPDATE sessions SET finished_at = ?, status = ?, counts = ?, skipped = ? WHERE id = ?",
                              (_now(), status, json.dumps(dict(counts)), json.dumps(list(skipped)), session))

    def sessions(self) -> list[dict[str, Any]]:
        out = []
        for r in self.conn.execute("SELECT * FROM sessions ORDER BY id"):
            d = dict(r)
            for k in ("options", "environment", "counts", "skipped"):
                d[k] = json.loads(d[k]) if d[k] else None
            out.append(d)
        return out

    def set_repro(self, suite: str, rows: Sequence[ReproRow], session: int) -> None:
        with self._tx():
            self.conn.execute("DELETE FROM repro WHERE suite = ?", (suite,))
            self.conn.executemany(
                "INSERT INTO repro VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(suite, i, r.quantity, None if r.paper is None else str(r.paper), r.ours, r.unit, r.note, session)
                 for i, r in enumerate(rows)])

    def repro(self) -> dict[str, list[ReproRow]]:
        out: dict[str, list[ReproRow]] = {}
        for r in self.conn.execute("SELECT * FROM repro ORDER BY suite, position"):
            paper: Any = r["paper"]
            try:
                paper = float(paper) if paper is not None else None
            except ValueError:
                pass
            out.setdefault(r["suite"], []).append(ReproRow(r["quantity"], paper, r["ours"], r["unit"] or "",
                                                           r["note"] or ""))
        return out

    # ------------------------------------------------------------------ plumbing
    def _tx(self):
        return _Transaction(self.conn)


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *exc: object) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


__all__ = ["STORE_NAME", "Store"]
