"""Trace tables: :func:`~schedlab.topology.tables.read_table` (schedlab's one CSV reader: text through
:func:`schedlab.topology.files.read_text`, tokenised by pandas' C engine into string columns) and
:class:`Rows`, vectorised typed accessors that validate every value.

Why pandas' C engine: on the 82,247-row Philly table, tokenising plus typed, validated columns takes
about 0.10-0.29 s with it against 0.22 s + per-value Python checks with the stdlib ``csv`` module, and
date-times parse vectorised (``pd.to_datetime``) instead of row by row
(``python -m schedlab.benchmarks.bench_workloads``; docs/workloads.md has the measurements).

Every bad value is an error naming the file, the 1-based line and the column: a :class:`TraceError`
raised for the first bad row, or, leniently, the row dropped and counted by reason in an
:class:`~schedlab.benchmarks.workloads.assumptions.AssumptionLog`. Numbers must be finite and within
stated bounds (``MAX_SECONDS``, ``MAX_GPUS``, ...), so NaN, infinities and absurd magnitudes never reach
the simulator.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from schedlab.benchmarks.workloads.assumptions import AssumptionLog
from schedlab.topology.errors import SpecError, TraceError
from schedlab.topology.tables import Table, read_table

MAX_ERRORS_KEPT = 20
MAX_SECONDS = 1e10     # submit times and durations (s): about 317 years; larger values are refused
MAX_GPUS = 1_000_000   # GPUs of one job
MAX_COUNT = 1e15       # iterations, CPUs, batch sizes, memory (GB)
TIME_UNITS: dict[str, float] = {"s": 1.0, "ms": 1e-3, "min": 60.0, "h": 3600.0}


def time_unit(unit: str | float) -> float:
    """Seconds per unit of ``unit`` (``s``, ``ms``, ``min``, ``h``, or a positive number of seconds)."""
    if isinstance(unit, int | float) and not isinstance(unit, bool):
        if not (unit > 0 and np.isfinite(unit)):
            raise SpecError(f"time unit must be a positive number of seconds, got {unit!r}", source="<trace>",
                            field="time_unit")
        return float(unit)
    if unit not in TIME_UNITS:
        raise SpecError(f"unknown time unit {unit!r}; use one of {', '.join(TIME_UNITS)}", source="<trace>",
                        field="time_unit")
    return TIME_UNITS[unit]


_PLAIN_DATES = re.compile(r"(?:\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}:\d{2})?\n)*")


def _seconds(values: np.ndarray) -> np.ndarray:
    """Seconds since the epoch of ISO date-times (UTC unless they say); NaN where not a date-time.

    Cells that are all ``YYYY-MM-DD[ HH:MM:SS]`` (no zone: UTC) and valid dates are read by numpy
    (``datetime64[s]``, the same seconds as pandas gives them; a date numpy rejects, e.g. day 30 of
    February, sends the whole column to pandas); anything else by pandas' ISO 8601 reader."""
    cells = values.tolist()
    try:
        plain = _PLAIN_DATES.fullmatch("\n".join(cells) + "\n") is not None  # one pass over every cell
    except TypeError:  # a cell that is not a string
        plain = False
    if plain:
        try:
            return np.array(cells, dtype="datetime64[s]").astype(np.int64).astype(float)
        except ValueError:
            pass
    import pandas as pd

    ts = pd.to_datetime(pd.Series(values, dtype=object), format="ISO8601", utc=True, errors="coerce")
    arr = ts.dt.tz_localize(None).to_numpy(dtype="datetime64[s]")
    out = arr.astype(np.int64).astype(float)
    out[np.isnat(arr)] = np.nan
    return out


class Rows:
    """Validated, typed columns of a :class:`Table`. Each accessor checks every row not yet found bad
    and marks the bad ones (first problem per row wins); :meth:`finish` raises the first bad row's
    error, or (lenient) drops bad rows and reports them by reason."""

    def __init__(self, table: Table, *, lenient: bool = False, log: AssumptionLog | None = None,
                 tag: str = "") -> None:
        self.table = table
        self.tag = tag
        self.source = table.source
        self.lenient = lenient
        self.log = log if log is not None else AssumptionLog(source=table.source)
        self.n = len(table)
        self.lines = table.lines
        self.bad = np.zeros(self.n, dtype=bool)
        self._reason = np.full(self.n, -1, dtype=np.int32)
        self._reasons: list[tuple[str | None, str, Callable[[int], str]]] = []
        self._strip: dict[str, np.ndarray] = {}

    # ----------------------------------------------------------------- raw
    def has(self, column: str) -> bool:
        return column in self.table.data

    def require(self, columns: Sequence[str]) -> None:
        missing = [c for c in columns if not self.has(c)]
        if missing:
            raise TraceError(f"missing column(s) {', '.join(missing)}; found {', '.join(self.table.columns)}",
                             source=self.source, line=int(self.lines[0]) - 1 if self.n else 1, column=missing[0])

    def raw(self, column: str) -> np.ndarray:
        """Stripped strings of ``column`` (object array)."""
        s = self._strip.get(column)
        if s is None:
            if not self.has(column):
                self.require([column])
            col = self.table.data[column]
            s = self._strip[column] = col if column in self.table.stripped else np.array(
                [x.strip() if type(x) is str else x for x in col.tolist()], dtype=object)
        return s

    def fail(self, mask: np.ndarray, column: str | None, kind: str, message: Callable[[int], str]) -> None:
        """Mark rows in ``mask`` (not already bad) bad: ``kind`` groups them in reports, ``message(i)`` is
        row ``i``'s full message."""
        new = mask & ~self.bad
        if new.any():
            self._reasons.append((column, kind, message))
            self._reason[new] = len(self._reasons) - 1
            self.bad |= new

    def _missing(self, column: str, v: np.ndarray, optional: bool) -> np.ndarray:
        empty = v == ""
        if not optional:
            self.fail(empty, column, "missing value", lambda i: "missing value")
        return empty

    # --------------------------------------------------------------- typed
    def str(self, column: str, *, optional: bool = False) -> np.ndarray:
        v = self.raw(column)
        self._missing(column, v, optional)
        return v

    @staticmethod
    def _numbers(v: np.ndarray) -> np.ndarray:
        """Floats of ``v`` (NaN where not a number); numpy's conversion first (fast on clean columns)."""
        try:
            return v.astype(float)
        except (ValueError, TypeError):
            import pandas as pd

            return pd.to_numeric(pd.Series(v, dtype=object), errors="coerce").to_numpy(
                dtype=float, na_value=np.nan, copy=True)

    def _nonfinite(self, column: str, v: np.ndarray, x: np.ndarray, empty: np.ndarray) -> np.ndarray:
        """Mark literal NaN / infinities; returns the rows that are not numbers at all."""
        nan = np.isnan(x) & ~empty
        if nan.any():
            idx = np.flatnonzero(nan)
            lit = np.zeros(self.n, dtype=bool)
            lit[idx] = np.isin(np.char.lower(v[idx].astype(str)), ("nan", "+nan", "-nan"))
            self.fail(lit, column, "not a finite number", lambda i: f"not a finite number: {v[i]!r}")
            nan &= ~lit
        self.fail(np.isinf(x), column, "not a finite number", lambda i: f"not a finite number: {v[i]!r}")
        return nan

    def float(self, column: str, *, optional: bool = False, min_value: float | None = None,
              positive: bool = False, max_value: float = MAX_COUNT, unit: float = 1.0,
              unit_name: str = "") -> np.ndarray:
        """Finite numbers (x ``unit``); NaN where an optional value is missing or the row is bad."""
        v = self.raw(column)
        empty = self._missing(column, v, optional)
        x = self._numbers(v)
        notnum = self._nonfinite(column, v, x, empty)
        self.fail(notnum, column, "not a number", lambda i: f"not a number: {v[i]!r}")
        if unit != 1.0:
            x = x * unit
        with np.errstate(invalid="ignore"):
            big = np.abs(x) > max_value
        self.fail(big, column, "too large", lambda i: f"too large: {v[i]}{unit_name} (at most {max_value:.3g}"
                                                      f"{' s' if unit_name else ''})")
        if positive:
            self.fail(~(x > 0) & ~empty, column, "must be > 0", lambda i: f"must be > 0, got {v[i]}")
        if min_value is not None:
            self.fail((x < min_value) & ~empty, column, f"must be >= {min_value:g}",
                      lambda i: f"must be >= {min_value:g}, got {v[i]}")
        x[self.bad] = np.nan
        return x

    def int(self, column: str, *, optional: bool = False, min_value: int | None = None,
            max_value: float = MAX_COUNT) -> np.ndarray:
        """Whole numbers as float (NaN where missing/bad; ``.astype(int)`` after :meth:`finish`)."""
        v = self.raw(column)
        x = self.float(column, optional=optional, min_value=min_value, max_value=max_value)
        with np.errstate(invalid="ignore"):
            frac = np.isfinite(x) & (x != np.floor(x))
        self.fail(frac, column, "not an integer", lambda i: f"not an integer: {v[i]!r}")
        x[self.bad] = np.nan
        return x

    def time(self, column: str, *, optional: bool = False, unit: float = 1.0, min_value: float | None = None,
             unit_name: str = "") -> np.ndarray:
        """Seconds: numbers (x ``unit``) or ISO date-times (``YYYY-MM-DD[ HH:MM:SS]``, UTC unless they say)."""
        v = self.raw(column)
        empty = self._missing(column, v, optional)
        try:
            x = v.astype(float) * unit
        except (ValueError, TypeError):  # date-times, or a mix: date-looking cells first, numbers for the rest
            x = np.full(self.n, np.nan)
            datey = np.fromiter((("-" in c[1:]) or (":" in c) for c in v), dtype=bool, count=self.n)
            idx = np.flatnonzero(datey)
            if idx.size:
                x[idx] = _seconds(v[idx])
            rest = np.flatnonzero(np.isnan(x) & ~empty)
            if rest.size:
                x[rest] = self._numbers(v[rest]) * unit
        notnum = self._nonfinite(column, v, x, empty)
        self.fail(notnum, column, "not a number nor a date-time",
                  lambda i: f"not a number nor a date-time (YYYY-MM-DD HH:MM:SS): {v[i]!r}")
        with np.errstate(invalid="ignore"):
            big = np.abs(x) > MAX_SECONDS
        self.fail(big, column, "too large", lambda i: f"too large: {v[i]}{unit_name} (at most {MAX_SECONDS:.3g} s)")
        if min_value is not None:
            self.fail((x < min_value) & ~empty, column, f"must be >= {min_value:g}",
                      lambda i: f"must be >= {min_value:g}, got {v[i]}")
        x[self.bad] = np.nan
        return x

    def bool(self, column: str, *, optional: bool = False) -> np.ndarray:
        v = self.raw(column)
        empty = self._missing(column, v, optional)
        low = np.char.lower(v.astype(str))
        true = np.isin(low, ("1", "1.0", "true", "yes", "y", "t"))
        false = np.isin(low, ("0", "0.0", "false", "no", "n", "f"))
        self.fail(~(true | false | empty), column, "not a boolean", lambda i: f"not a boolean: {v[i]!r}")
        return true

    # -------------------------------------------------------------- finish
    def message(self, i: int) -> tuple[str | None, str]:
        column, _, msg = self._reasons[self._reason[i]]
        return column, msg(i)

    def finish(self) -> np.ndarray:
        """Rows to keep. Raises the first bad row's error unless lenient; lenient drops are reported
        (``rows-dropped`` notes by column and reason, with lines) and counted in :attr:`skipped`."""
        malformed = self.table.malformed
        if not self.lenient:
            if self.bad.any():
                i = int(np.flatnonzero(self.bad)[0])
                column, msg = self.message(i)
                raise TraceError(msg, source=self.source, line=int(self.lines[i]), column=column)
            return np.ones(self.n, dtype=bool)
        self.errors: list[str] = []
        for ln, msg in malformed[:MAX_ERRORS_KEPT]:
            self.errors.append(str(TraceError(msg, source=self.source, line=ln)))
        if malformed:
            self.log.add("rows-dropped", f"rows dropped (--lenient){self.tag}: malformed row (wrong number of fields)",
                         line=malformed[0][0], detail=malformed[0][1], count=1)
            for ln, msg in malformed[1:]:
                self.log.add("rows-dropped", f"rows dropped (--lenient){self.tag}: malformed row (wrong number of "
                             "fields)", line=ln, detail=msg)
        for k, (column, kind, _) in enumerate(self._reasons):
            mask = self._reason == k
            idx = np.flatnonzero(mask)[:5]
            self.log.add_rows("rows-dropped", f"rows dropped (--lenient){self.tag}: {column}: {kind}", mask, lines=self.lines,
                              field=column, details=[self.message(int(i))[1] for i in idx])
        for i in np.flatnonzero(self.bad)[:max(0, MAX_ERRORS_KEPT - len(self.errors))]:
            column, msg = self.message(int(i))
            self.errors.append(str(TraceError(msg, source=self.source, line=int(self.lines[i]), column=column)))
        return ~self.bad

    @property
    def skipped(self) -> int:
        return int(self.bad.sum()) + len(self.table.malformed)


__all__ = ["MAX_GPUS", "MAX_SECONDS", "TIME_UNITS", "Rows", "Table", "read_table", "time_unit"]
