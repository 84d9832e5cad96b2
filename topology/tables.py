"""The one CSV reader of schedlab (trace tables, cluster-spec tables, perf-model samples).

:func:`read_table` reads the file through :func:`schedlab.topology.files.read_text` (missing, binary,
UTF-16-without-BOM and empty files are errors naming the file) and tokenises it with pandas' C engine
into string columns, keeping each row's 1-based line, so that every later error can name the file, the
line and the column. A wrong number of fields is an error naming the line (or, leniently, the row is
dropped and listed). Rows whose fields are all empty are skipped. Typed, validated access to the columns
is the caller's (traces: :mod:`schedlab.benchmarks.workloads.csvio`).

Why pandas' C engine rather than the stdlib ``csv`` module: on the 82,247-row Philly table it tokenises
and converts typed columns faster (see ``docs/workloads.md``, *Performance*). pandas is imported when a
table is read, so importing this module stays cheap.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from schedlab.topology.errors import SpecError, TraceError
from schedlab.topology.files import read_text

if TYPE_CHECKING:
    import pandas as pd

_BAD_LINE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_SKIP_LINE = re.compile(r"Skipping line (\d+): expected (\d+) fields, saw (\d+)")


@dataclass(frozen=True)
class Table:
    """A CSV file as string columns: ``data[column]`` (a pandas Series of ``str``), ``lines[i]`` the
    1-based line of row ``i``. Blank rows are already removed; ``malformed`` rows (a wrong number of
    fields, dropped in lenient mode) are ``(line, message)``."""

    source: str
    columns: tuple[str, ...]
    data: pd.DataFrame
    lines: np.ndarray
    malformed: tuple[tuple[int, str], ...] = ()

    def __len__(self) -> int:
        return len(self.lines)

    def records(self):
        """``(line, {column: stripped text})`` per row, for readers that go row by row (small files)."""
        cols = list(self.data.columns)
        for ln, values in zip(self.lines.tolist(), self.data.itertuples(index=False, name=None), strict=True):
            yield ln, {c: str(v).strip() for c, v in zip(cols, values, strict=True)}


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
    import pandas as pd

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
    return Table(source, cols, df, lines, tuple(skipped))


__all__ = ["Table", "read_table"]
