"""The one way schedlab reads a text file (traces, cluster specs, fit samples, instances, suites).

:func:`read_text` turns every way a file can be unreadable into a :class:`SpecError` that names the
file: missing, a directory, unreadable, empty (unless allowed), binary, or bytes that are not text.
Encodings: UTF-8 (with or without a byte-order mark) and UTF-16 / UTF-32 *with* a byte-order mark are
decoded; UTF-16 without a mark is recognised and refused with advice, never mis-decoded.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from schedlab.topology.errors import SpecError

_BOMS = (  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _encoding(head: bytes) -> str | None:
    for bom, enc in _BOMS:
        if head.startswith(bom):
            return enc
    return None


def _why_not_text(data: bytes) -> str:
    head = data[:4096]
    if b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        if odd and odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.1 * len(even):
            return "it looks like UTF-16 (little-endian) without a byte-order mark; save it as UTF-8"
        if even and even.count(0) > 0.4 * len(even) and odd.count(0) < 0.1 * len(odd):
            return "it looks like UTF-16 (big-endian) without a byte-order mark; save it as UTF-8"
        return "it is a binary file (it contains NUL bytes), not text"
    return ""


def read_bytes(path: str | Path, *, what: str = "file") -> bytes:
    """The bytes of ``path``; a :class:`SpecError` naming it if it is missing, a directory or unreadable."""
    p = Path(path)
    src = str(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise SpecError(f"{what} not found", source=src) from None
    except IsADirectoryError:
        raise SpecError(f"{what} is a directory, not a file", source=src) from None
    except PermissionError:
        raise SpecError(f"{what} is not readable (permission denied)", source=src) from None
    except OSError as e:
        raise SpecError(f"{what} cannot be read: {e.strerror or e}", source=src) from None


def decode_text(data: bytes, *, source: str, what: str = "file", allow_empty: bool = False) -> str:
    """``data`` as text (see the module docstring for the encodings); errors name ``source``."""
    enc = _encoding(data[:4])
    if enc is None:
        why = _why_not_text(data)
        if why:
            raise SpecError(f"{what} cannot be read as text: {why}", source=source)
        enc = "utf-8"
    try:
        text = data.decode(enc)
    except UnicodeDecodeError as e:
        raise SpecError(f"{what} is not valid {enc.removesuffix('-sig').upper()} text (byte {data[e.start]:#04x} "
                        f"at offset {e.start}); save it as UTF-8", source=source) from None
    if not allow_empty and not text.strip():
        raise SpecError(f"{what} is empty", source=source)
    return text


def read_text(path: str | Path, *, what: str = "file", allow_empty: bool = False) -> str:
    """The text of ``path``. ``what`` names the file's role in messages ("trace", "cluster spec", ...)."""
    return decode_text(read_bytes(path, what=what), source=str(path), what=what, allow_empty=allow_empty)


__all__ = ["decode_text", "read_bytes", "read_text"]
