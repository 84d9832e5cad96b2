"""The one CSV reader of schedlab (trace tables, cluster-spec tables, perf-model samples).

:func:`read_table` reads the file through :func:`schedlab.topology.files.read_text` (missing, binary,
UTF-16-without-BOM and empty files are errors naming the file) and tokenises it with pandas' C engine
into string columns, keeping each row's 1-based line, so that every later error can name the file, the
line and the column. A wrong number of fields is an error naming the line (or, leniently, the row is
dropped and listed). Rows whose fields are all empty are skipped. Typed, validated access to the columns
is the caller's (traces: :mod:`schedlab.benchmarks.workloads.csvio`).

Two tokenisers, one result. A plain table (no quote character, every non-blank line with the header's
number of fields, unique column names) is split with ``str.split`` -- there is nothing for a CSV
parser to interpret in it, and that skips importing pandas (and pyarrow, which it loads), which costs
more than reading the 82,247-row Philly table. Every other table goes through pandas' C engine
(quoted fields, ragged rows and their error messages). Either way ``data`` holds one ``object`` array of
``str`` per column.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from schedlab.topology.errors import SpecError, TraceError
from schedlab.topology.files import read_text

_BAD_LINE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_SKIP_LINE = re.compile(r"Skipping line (\d+): expected (\d+) fields, saw (\d+)")


@dataclass(frozen=True)
class Table:
    """A CSV file as string columns: ``data[column]`` (an ``object`` array of ``str``), ``lines[i]`` the
    1-based line of row ``i``. Blank rows are already removed; ``malformed`` rows (a wrong number of
    fields, dropped in lenient mode) are ``(line, message)``."""

    source: str
    columns: tuple[str, ...]
    data: Mapping[str, np.ndarray]
    lines: np.ndarray
    malformed: tuple[tuple[int, str], ...] = ()
    stripped: frozenset[str] = frozenset()  # columns where ``str.strip`` leaves every value as it is

    def __len__(self) -> int:
        return len(self.lines)

    def records(self):
        """``(line, {column: stripped text})`` per row, for readers that go row by row (small files)."""
        cols = list(self.data)
        for i, ln in enumerate(self.lines.tolist()):
            yield ln, {c: str(self.data[c][i]).strip() for c in cols}


def _record_lines(text: str, first: int) -> np.ndarray:
    """Line of each record when some quoted field spans lines (structure only; values come from pandas)."""
    starts = []
    reader = csv.reader(io.StringIO(text))
    prev = 0
    for _ in reader:
        starts.append(prev + 1)
        prev = reader.line_num
    return np.asarray(starts[first - 1:], dtype=np.int64) if first > 1 else np.asarray(starts, dtype=np.int64)


def read_table(path: str | Path, *, what: str = "trace", header: Sequence[str] | None = None,
               lenient: bool = False, text: str | None = None, error: type[SpecError] = TraceError) -> Table:
    """Read ``path`` (or ``text``). With ``header`` the file has no header row and these are its columns.
    A wrong number of fields is an ``error`` naming the line (dropped and listed with ``lenient``)."""
    source = str(path)
    if text is None:
        text = read_text(path, what=what)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lead = len(text) - len(text.lstrip("\n"))  # leading blank lines
    body = text[lead:]
    if not body.strip():
        raise error(f"{what} is empty", source=source)
    first = lead + (1 if header is None else 0) + 1  # line of the first data row
    plain = _plain_table(body, header, first, source)
    if plain is not None:
        return plain
    import pandas as pd

    skipped: list[tuple[int, str]] = []
    kw = dict(dtype=str, keep_default_na=False, na_filter=False, skip_blank_lines=False, engine="c")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if header is None:
                df = pd.read_csv(io.StringIO(body), header=0, on_bad_lines="warn" if lenient else "error", **kw)
            else:
                df = pd.read_csv(io.StringIO(body), header=None, names=list(header),
                                 on_bad_lines="warn" if lenient else "error", **kw)
    except pd.errors.ParserError as e:
        m = _BAD_LINE.search(str(e))
        if m:
            raise error(f"malformed row: {m.group(3)} fields, expected {m.group(1)}", source=source,
                             line=int(m.group(2)) + lead) from None
        raise error(f"not a readable CSV table: {str(e).splitlines()[0]}", source=source) from None
    except (ValueError, pd.errors.EmptyDataError) as e:
        raise error(f"not a readable CSV table: {e}", source=source) from None
    for w in caught:
        for m in _SKIP_LINE.finditer(str(w.message)):
            skipped.append((int(m.group(1)) + lead, f"malformed row: {m.group(3)} fields, expected {m.group(2)}"))
    cols = tuple(str(c).strip() for c in df.columns)
    if header is None:
        seen: set[str] = set()
        for c in cols:
            if c in seen:
                raise error(f"duplicate column {c!r} in the header", source=source, line=lead + 1, column=c)
            seen.add(c)
        df.columns = list(cols)
    n_lines = body.count("\n") + (0 if body.endswith("\n") else 1)
    expected = n_lines - (1 if header is None else 0) - len(skipped)
    if len(df) == expected:
        lines = np.arange(first, first + n_lines - (1 if header is None else 0), dtype=np.int64)
        if skipped:
            lines = lines[~np.isin(lines, [ln for ln, _ in skipped])]
        lines = lines[:len(df)]
    else:  # a quoted field spans lines: number the records from the tokenizer's view of the text
        lines = _record_lines(body, 2 if header is None else 1) + lead
        if skipped:
            lines = lines[~np.isin(lines, [ln for ln, _ in skipped])]
        lines = lines[:len(df)]
    if len(df.columns):
        blank = np.ones(len(df), dtype=bool)
        for c in df.columns:
            blank &= (df[c].str.strip() == "").to_numpy()
        if blank.any():
            df = df.loc[~blank].reset_index(drop=True)
            lines = lines[~blank]
    data = {c: df[c].to_numpy(dtype=object) for c in df.columns}
    return Table(source, cols, data, lines, tuple(skipped))


#: bytes that are neither whitespace for ``str.strip`` (ASCII ones; every non-ASCII byte counts as
#: possibly whitespace) nor a comma
_CONTENT = np.ones(256, dtype=np.int64)
_CONTENT[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 44]] = 0
_CONTENT[128:] = 0
#: bytes that may be whitespace for ``str.strip`` inside a line
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 11, 12, 13, 28, 29, 30, 31, 32]] = True
_SPACE[128:] = True
_SEP = np.zeros(256, dtype=bool)
_SEP[[10, 44]] = True


def _plain_table(body: str, header: Sequence[str] | None, first: int, source: str) -> Table | None:
    """The table of ``body`` when it is plain (no quote character; every line blank or with exactly the
    header's number of fields; unique column names), else ``None`` (pandas reads it). Blank lines are
    dropped, as pandas' rows of empty fields are below."""
    if '"' in body:
        return None
    parts = body.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    if header is None:
        names = parts[0].split(",")
        rows = parts[1:]
    else:
        names = list(header)
        rows = parts
    cols = tuple(str(c).strip() for c in names)
    if len(set(names)) != len(names) or len(set(cols)) != len(cols):
        return None  # pandas' duplicate handling and its error message
    if not all(cols):
        return None  # pandas names an empty header "Unnamed: i"
    n = len(names)
    core = body.rstrip("\n")  # trailing empty lines are blank rows: dropped
    k = core.count("\n") + 1  # lines up to the last non-empty one
    head = len(parts) - len(rows)  # 1 with a header row, else 0
    if k > head and "\n\n" not in core:
        # the usual table: count each line's commas and content at once (bytes; UTF-8 never puts an
        # ASCII byte inside a multi-byte character)
        data_rows = rows[:k - head]
        b = np.frombuffer(core.encode("utf-8"), dtype=np.uint8)
        ends = np.append(np.flatnonzero(b == 10), len(b))
        starts = np.concatenate(([0], ends[:-1] + 1))[head:]
        ends = ends[head:]
        commas = np.concatenate(([0], np.cumsum(b == 44)))
        # bytes that are surely neither whitespace (str.strip) nor commas: a line with one is not blank
        content = np.concatenate(([0], np.cumsum(_CONTENT[b])))
        if np.all(commas[ends] - commas[starts] == n - 1) and np.all(content[ends] - content[starts] > 0):
            flat = ",".join(data_rows).split(",")
            arr = np.empty(len(flat), dtype=object)
            arr[:] = flat
            arr = arr.reshape(len(data_rows), n)
            data = {c: arr[:, j].copy() for j, c in enumerate(cols)}
            # each field's first and last byte: whitespace there means the column needs stripping
            seps = starts[0] + np.flatnonzero(_SEP[b[starts[0]:]])
            f0 = np.concatenate(([starts[0]], seps + 1))
            f1 = np.append(seps, len(b))
            full = f1 > f0
            last = np.minimum(f1 - 1, len(b) - 1)
            spaced = (full & (_SPACE[b[np.minimum(f0, len(b) - 1)]] | _SPACE[b[last]])).reshape(len(data_rows), n)
            clean = frozenset(c for c, sp in zip(cols, spaced.any(axis=0).tolist(), strict=True) if not sp)
            return Table(source, cols, data, np.arange(first, first + len(data_rows), dtype=np.int64),
                         stripped=clean)
    fields: list[list[str]] = []
    keep: list[int] = []
    for i, line in enumerate(rows):
        if not line:
            continue  # an empty line: pandas' row of empty fields, dropped as blank below
        f = line.split(",")
        if len(f) != n:
            return None
        if not any(x.strip() for x in f):
            continue  # every field blank: dropped, as below
        fields.append(f)
        keep.append(first + i)
    if fields:
        data = {c: np.array(col, dtype=object) for c, col in zip(cols, zip(*fields, strict=True), strict=True)}
    else:
        data = {c: np.array([], dtype=object) for c in cols}
    return Table(source, cols, data, np.asarray(keep, dtype=np.int64))


__all__ = ["Table", "read_table"]
