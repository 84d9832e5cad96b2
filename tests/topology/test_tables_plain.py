"""``read_table``'s plain-table path (``str.split``, no pandas) gives what pandas' C engine gives:
the same columns, values and lines, on every table it accepts; the others go to pandas."""

from __future__ import annotations

import numpy as np
import pytest

from schedlab.topology import tables
from schedlab.topology.errors import TraceError
from schedlab.topology.tables import read_table

PLAIN = [
    "a,b,c\n1,2,3\n4,5,6\n",
    "a,b,c\n1,2,3\n4,5,6",
    "\n\na, b ,c\n1, 2 ,3\n\n4,5,6\n\n",
    "a,b\n1,2\n,\n3,4\n , \n",
    "x\n1\n\n2\n  \n3\n",
    "t,d,g\n2017-10-09 07:01:55,66.0,1\n2017-10-09 06:13:03,2951.0,1\n",
    "a,b\n",
    "a,b,c\n1,,3\n,,x\n",
    "name,v\n\u00f1and\u00fa,1\n\u00fc,2\n\u00e9t\u00e9,3",
    "a,b\n1,2\n , \n3,4\n",
    "a,b\n1,2\n\u00a0,\u00a0\n3,4\n",
    "a,b\n 1 ,\t2\n3,4\n",
    "a,b\n1,2\n3,4\n\n\n",
    "a\n1\n2",
]
NOT_PLAIN = [
    'a,b\n"1,5",2\n',          # quoted field
    "a,b,c\n1,2\n",             # too few fields (pandas pads)
    "a,,c\n1,2,3\n",            # empty header name
    "a,a\n1,2\n",               # duplicate header
    "a,b\n  \n1,2\n",           # whitespace-only line with several columns
]


def _both(text: str, monkeypatch, header=None):
    plain = read_table("<t>", text=text, header=header)
    with monkeypatch.context() as m:
        m.setattr(tables, "_plain_table", lambda *a, **k: None)
        ref = read_table("<t>", text=text, header=header)
    return plain, ref


@pytest.mark.parametrize("text", PLAIN)
@pytest.mark.parametrize("header", [None, ("p", "q", "r")])
def test_plain_path_equals_pandas(text, header, monkeypatch):
    if header is not None:
        first = text.lstrip("\n").split("\n", 1)[0]
        header = header[:len(first.split(","))]
    assert tables._plain_table(text.lstrip("\n"), header, 2, "<t>") is not None or text.count('"')
    plain, ref = _both(text, monkeypatch, header)
    assert plain.columns == ref.columns
    assert plain.lines.tolist() == ref.lines.tolist()
    assert plain.malformed == ref.malformed
    for c in ref.columns:
        assert plain.data[c].dtype == object and plain.data[c].tolist() == ref.data[c].tolist(), c
    assert list(plain.records()) == list(ref.records())
    for c in plain.columns:
        if c in plain.stripped:
            assert all(v == v.strip() for v in plain.data[c].tolist()), c


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_other_tables_go_to_pandas(text):
    assert tables._plain_table(text, None, 2, "<t>") is None


def test_ragged_row_error_unchanged():
    with pytest.raises(TraceError) as ei:
        read_table("<t>", text="a,b\n1,2\n1,2,3\n")
    assert ei.value.line == 3 and "3 fields, expected 2" in str(ei.value)
    assert isinstance(read_table("<t>", text="a,b\n1,2\n").lines, np.ndarray)


@pytest.mark.parametrize("cells", [
    ["2017-10-09 07:01:55", "2017-10-09T07:01:55", "2017-10-09", "1970-01-01 00:00:00"],
    ["2017-10-09 07:01:55", "2017-02-30 00:00:00"],      # an impossible day: NaN (pandas)
    ["2017-10-09 24:00:00", "2017-10-09 07:01:55+02:00"],  # hour 24, a zone: pandas
    ["2017-10-09\n2017-10-10", "2017-10-09"],              # a newline inside a cell
])
def test_date_times_read_as_pandas_reads_them(cells, monkeypatch):
    from schedlab.benchmarks.workloads import csvio

    v = np.array(cells, dtype=object)
    fast = csvio._seconds(v)
    with monkeypatch.context() as m:
        m.setattr(csvio, "_PLAIN_DATES", __import__("re").compile(r"(?!)"))
        ref = csvio._seconds(v)
    assert np.array_equal(fast, ref, equal_nan=True)
