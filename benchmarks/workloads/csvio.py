"""Validated CSV reading: every bad value raises :class:`TraceError` naming the file, the 1-based
line and the column; lenient reading skips bad rows and counts them instead."""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from schedlab.benchmarks.workloads.trace import TraceJob
from schedlab.topology.errors import TraceError

MAX_ERRORS_KEPT = 20


class Row:
    """One CSV row with typed, validated accessors."""

    __slots__ = ("source", "line", "_values")

    def __init__(self, source: str, line: int, values: dict[str, str]) -> None:
        self.source = source
        self.line = line
        self._values = values

    def error(self, column: str | None, message: str) -> TraceError:
        return TraceError(message, source=self.source, line=self.line, column=column)

    def raw(self, column: str, *, optional: bool = False) -> str | None:
        v = self._values.get(column)
        if v is None or v.strip() == "":
            if optional:
                return None
            raise self.error(column, "missing value")
        return v.strip()

    def str(self, column: str, *, optional: bool = False) -> str | None:
        return self.raw(column, optional=optional)

    def float(self, column: str, *, optional: bool = False, min_value: float | None = None,
              positive: bool = False) -> float | None:
        v = self.raw(column, optional=optional)
        if v is None:
            return None
        try:
            x = float(v)
        except ValueError:
            raise self.error(column, f"not a number: {v!r}") from None
        if not math.isfinite(x):
            raise self.error(column, f"not a finite number: {v!r}")
        if positive and not x > 0:
            raise self.error(column, f"must be > 0, got {v}")
        if min_value is not None and x < min_value:
            raise self.error(column, f"must be >= {min_value:g}, got {v}")
        return x

    def int(self, column: str, *, optional: bool = False, min_value: int | None = None) -> int | None:
        x = self.float(column, optional=optional)
        if x is None:
            return None
        if x != int(x):
            raise self.error(column, f"not an integer: {self._values[column]!r}")
        i = int(x)
        if min_value is not None and i < min_value:
            raise self.error(column, f"must be >= {min_value}, got {i}")
        return i

    def time(self, column: str, *, optional: bool = False) -> float | None:
        """Seconds: a number, or an ISO date-time (``YYYY-MM-DD HH:MM:SS``, read as UTC)."""
        v = self.raw(column, optional=optional)
        if v is None:
            return None
        try:
            return float(v)
        except ValueError:
            pass
        return parse_datetime(v, self, column)

    def bool(self, column: str, *, optional: bool = False) -> bool | None:
        v = self.raw(column, optional=optional)
        if v is None:
            return None
        low = v.lower()
        if low in ("1", "1.0", "true", "yes", "y", "t"):
            return True
        if low in ("0", "0.0", "false", "no", "n", "f"):
            return False
        raise self.error(column, f"not a boolean: {v!r}")


def parse_datetime(value: str, row: Row | None = None, column: str | None = None) -> float:
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        if row is None:
            raise TraceError(f"not a date-time: {value!r}", source="<input>", column=column) from None
        raise row.error(column, f"not a number nor a date-time (YYYY-MM-DD HH:MM:SS): {value!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def iter_rows(path: str | Path, *, required: Sequence[str] = (),
              header: Sequence[str] | None = None) -> Iterator[Row]:
    """Rows of ``path``. With ``header`` the file has no header row and these are its columns.
    Missing required columns raise :class:`TraceError` at line 1."""
    p = Path(path)
    source = str(p)
    if not p.is_file():
        raise TraceError("no such trace file", source=source)
    with open(p, newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f)
        if header is None:
            try:
                cols = [c.strip() for c in next(reader)]
            except StopIteration:
                raise TraceError("empty file (no header row)", source=source, line=1) from None
            first = 2
        else:
            cols = list(header)
            first = 1
        missing = [c for c in required if c not in cols]
        if missing:
            raise TraceError(f"missing column(s) {', '.join(missing)}; found {', '.join(cols)}",
                             source=source, line=1 if header is None else None, column=missing[0])
        n = len(cols)
        for i, values in enumerate(reader, start=first):
            if not values or (len(values) == 1 and not values[0].strip()):
                continue
            if len(values) != n:
                yield Row(source, i, {"__bad__": f"{len(values)} fields, expected {n}"})
                continue
            yield Row(source, i, dict(zip(cols, values, strict=True)))


def read_jobs(path: str | Path, convert: Callable[[Row], TraceJob | None], *, required: Sequence[str],
              lenient: bool, header: Sequence[str] | None = None) -> tuple[list[TraceJob], int, int, list[str]]:
    """Apply ``convert`` to every row; returns (jobs, skipped bad rows, filtered rows, first errors).
    ``convert`` returns ``None`` for rows a selection drops."""
    jobs: list[TraceJob] = []
    skipped = filtered = 0
    errors: list[str] = []
    for row in iter_rows(path, required=required, header=header):
        try:
            bad = row._values.get("__bad__")
            if bad is not None:
                raise row.error(None, f"malformed row: {bad}")
            job = convert(row)
        except TraceError as e:
            if not lenient:
                raise
            skipped += 1
            if len(errors) < MAX_ERRORS_KEPT:
                errors.append(str(e))
            continue
        if job is None:
            filtered += 1
        else:
            jobs.append(job)
    return jobs, skipped, filtered, errors
