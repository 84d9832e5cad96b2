"""The one file reader: every unreadable file is a SpecError naming it; BOM-marked encodings decode."""

import codecs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.topology.errors import SpecError
from schedlab.topology.files import read_text

TEXT = "a,b\n1,ü\n"


@pytest.mark.parametrize("data", [
    TEXT.encode("utf-8"), codecs.BOM_UTF8 + TEXT.encode("utf-8"), TEXT.encode("utf-16"),
    codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), TEXT.encode("utf-32"),
])
def test_encodings_with_a_mark_decode(tmp_path, data):
    p = tmp_path / "t.csv"
    p.write_bytes(data)
    assert read_text(p) == TEXT


@pytest.mark.parametrize("data,needle", [
    (TEXT.encode("utf-16-le"), "UTF-16 (little-endian)"),
    (TEXT.encode("utf-16-be"), "UTF-16 (big-endian)"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    (b"a,b\n\xff\xfe\xfa,1\n", "not valid UTF-8"),
    (b"", "empty"),
    (b"  \n\n", "empty"),
])
def test_unreadable_content_names_the_file(tmp_path, data, needle):
    p = tmp_path / "bad.csv"
    p.write_bytes(data)
    with pytest.raises(SpecError) as ei:
        read_text(p, what="trace")
    assert needle in str(ei.value) and str(p) in str(ei.value)


def test_missing_and_directory(tmp_path):
    with pytest.raises(SpecError, match="not found"):
        read_text(tmp_path / "nope.yaml")
    with pytest.raises(SpecError, match="directory"):
        read_text(tmp_path)
    (tmp_path / "e").write_text("")
    assert read_text(tmp_path / "e", allow_empty=True) == ""


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_give_text_or_a_spec_error(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("f") / "x"
    p.write_bytes(data)
    try:
        assert isinstance(read_text(p), str)
    except SpecError as e:
        assert str(p) in str(e)
