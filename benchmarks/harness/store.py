"""The results store: one SQLite file per results directory (stdlib ``sqlite3``, WAL journal, one
transaction per record), so an interrupted sweep (Ctrl-C, ``kill -9``) loses no completed record and
a rerun skips what is done.

Tables: ``records`` (one row per run, columns :data:`~schedlab.benchmarks.harness.record.FIELDS`, keyed
by suite + case key + code version), ``sessions`` (one row per ``schedlab bench`` invocation: options,
environment, counts, skipped cases) and ``repro`` (a suite's paper-vs-ours rows of its latest session).
Only the runner writes; reports and ``compare`` read, and reading never needs write access: a store
opened with ``create=False`` is a read-only connection (``file:...?mode=ro``, no pragma, no schema); in
a folder the reader cannot write (where SQLite cannot make the WAL index) it is opened ``immutable``.
A folder that cannot be written, a store that cannot be opened: :class:`SpecError` naming the path.

One writer at a time: ``schedlab bench`` holds :class:`BenchLock` (``flock`` on ``DIR/bench.lock``,
released by the kernel when the process dies, ``kill -9`` included) while it runs. A session still
``running`` in the store while nobody holds the lock was killed: :meth:`Store.sessions` shows it as
``interrupted`` with the counts of what it stored (records of its suite finished after it started and
before the next session), and the next writer stores that.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import sqlite3
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.cases import ReproRow
from schedlab.benchmarks.harness.record import FAILED, FIELDS, Record, from_row, to_row
from schedlab.topology.errors import SpecError

STORE_NAME = "results.sqlite"
LOCK_NAME = "bench.lock"
#: what a session killed before it could say so is shown as
KILLED_SESSION = "interrupted"

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
        self.readonly = not create
        if not create:
            if not self.path.is_file():
                raise SpecError(f"no results store in {self.dir} (expected {STORE_NAME}; run schedlab bench "
                                f"--out {self.dir} first)", source=str(self.dir), field="DIR")
            self.conn = _open_readonly(self.path)
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            for stmt in _SCHEMA:
                self.conn.execute(stmt)
            have = {r["name"] for r in self.conn.execute("PRAGMA table_info(records)")}
            for k, t in FIELDS.items():  # a store written before a field existed gains its column
                if k not in have:
                    self.conn.execute(f"ALTER TABLE records ADD COLUMN {k} {t}")
        except (OSError, sqlite3.OperationalError) as e:
            raise SpecError(f"cannot write the results store {self.path}: {_reason(e)} (give a writable --out "
                            "folder)", source=str(self.dir), field="out") from None

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

    def put(self, record: Record | Mapping[str, Any]) -> None:
        """Insert (or replace, for a retried failure) one record in its own transaction."""
        row = record.row() if isinstance(record, Record) else to_row(record)
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
    def begin_session(self, suite: str, options: Mapping[str, Any], environment: Mapping[str, Any],
                      counts: Mapping[str, int] | None = None) -> int:
        """A new ``running`` session; ``counts`` known at the start (total, stored before) are stored at
        once, so a session killed later still says how large it was."""
        with self._tx():
            cur = self.conn.execute("INSERT INTO sessions (suite, started_at, status, options, environment, counts) "
                                    "VALUES (?, ?, 'running', ?, ?, ?)",
                                    (suite, _now(), json.dumps(dict(options), default=str),
                                     json.dumps(dict(environment), default=str),
                                     json.dumps(dict(counts or {}))))
        return int(cur.lastrowid)

    def end_session(self, session: int, status: str, counts: Mapping[str, int], skipped: Sequence[str]) -> None:
        with self._tx():
            self.conn.execute("UPDATE sessions SET finished_at = ?, status = ?, counts = ?, skipped = ? WHERE id = ?",
                              (_now(), status, json.dumps(dict(counts)), json.dumps(list(skipped)), session))

    def sessions(self, *, writer_alive: bool | None = None) -> list[dict[str, Any]]:
        """Every session, oldest first. A ``running`` one whose writer is gone (``writer_alive``; by
        default: nobody holds the folder's :class:`BenchLock`) is shown ``interrupted``, its counts
        completed from the records it stored (``ran``, ``failed``) and ``finished_at`` its last record."""
        out = []
        for r in self.conn.execute("SELECT * FROM sessions ORDER BY id"):
            d = dict(r)
            for k in ("options", "environment", "counts", "skipped"):
                d[k] = json.loads(d[k]) if d[k] else None
            out.append(d)
        if any(d["status"] == "running" for d in out):
            alive = lock_held(self.dir) if writer_alive is None else writer_alive
            if not alive:
                for i, d in enumerate(out):
                    if d["status"] == "running":
                        self._as_killed(d, [x for x in out[i + 1:] if x["suite"] == d["suite"]])
        return out

    def _as_killed(self, d: dict[str, Any], later: list[dict[str, Any]]) -> None:
        q = "SELECT status, finished_at FROM records WHERE suite = ? AND finished_at >= ?"
        args: list[Any] = [d["suite"], d["started_at"]]
        if later:
            q, args = q + " AND finished_at < ?", [*args, later[0]["started_at"]]
        rows = self.conn.execute(q, args).fetchall()
        counts = dict(d["counts"] or {})
        counts.update(ran=len(rows), failed=sum(r["status"] in FAILED for r in rows), skipped=0)
        d.update(status=KILLED_SESSION, counts=counts, skipped=d["skipped"] or [],
                 finished_at=max((r["finished_at"] for r in rows), default=None))
        d["note"] = "killed: the process ended without closing its session (counts: the runs it stored)"

    def close_killed_sessions(self) -> int:
        """Store the view of :meth:`sessions` for sessions whose writer died (call with the lock held)."""
        n = 0
        for d in self.sessions(writer_alive=False):
            if d.get("note") and d["status"] == KILLED_SESSION:
                with self._tx():
                    self.conn.execute("UPDATE sessions SET finished_at = ?, status = ?, counts = ?, skipped = ? "
                                      "WHERE id = ? AND status = 'running'",
                                      (d["finished_at"], d["status"], json.dumps(d["counts"]),
                                       json.dumps(d["skipped"]), d["id"]))
                n += 1
        return n

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


class BenchLock:
    """An exclusive ``flock`` on ``DIR/bench.lock`` (holder's pid, host and start inside): a second
    writer into the same folder is refused with a :class:`SpecError` naming the holder."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / LOCK_NAME
        self.fd: int | None = None

    def __enter__(self) -> BenchLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise SpecError(f"cannot write into {self.path.parent}: {_reason(e)} (give a writable --out folder)",
                            source=str(self.path.parent), field="out") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 512).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise SpecError(f"{self.path.parent} is in use by another schedlab bench ({holder}); wait for it to "
                            "finish or give another --out", source=str(self.path.parent), field="out") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {platform.node()}, started {_now()}\n".encode())
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def lock_held(directory: str | Path) -> bool:
    """Whether a live process holds ``directory``'s :class:`BenchLock` (readable without write access)."""
    path = Path(directory) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _reason(e: BaseException) -> str:
    return getattr(e, "strerror", None) or str(e)


def _open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection; ``immutable=1`` where ``mode=ro`` cannot read a WAL store (an unwritable
    folder: SQLite cannot create the ``-shm`` index there, and nobody can be writing to it either)."""
    uri = "file:" + urllib.parse.quote(str(path.resolve()))
    last: Exception | None = None
    for query in ("mode=ro", "mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(f"{uri}?{query}", uri=True, isolation_level=None, timeout=30.0)
            conn.row_factory = sqlite3.Row
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.Error as e:
            last = e
    raise SpecError(f"cannot read the results store {path}: {last}", source=str(path.parent), field="DIR")


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *exc: object) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


__all__ = ["KILLED_SESSION", "LOCK_NAME", "STORE_NAME", "BenchLock", "Store", "lock_held"]
