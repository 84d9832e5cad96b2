"""Cheap value checks for the frozen types inside schedlab (pydantic validates at the edges).

Each check returns the value (normalised: numpy scalars become ``int``/``float``) or raises
:class:`SpecError` naming ``source`` and ``field``. Booleans are never numbers here (``True`` is not
1 GPU), NaN is never a number, and infinities only where ``allow_inf`` says so.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import operator
from types import MappingProxyType
from typing import Any

from schedlab.topology.errors import SpecError


def _kind(value: object) -> str:
    return "a boolean" if isinstance(value, bool) else f"type {type(value).__name__}"


def _bounds(v: float, field: str, source: str, ge: float | None, gt: float | None, le: float | None) -> None:
    if ge is not None and not v >= ge:
        raise SpecError(f"{field} must be >= {ge:g}, got {v!r}", source=source, field=field)
    if gt is not None and not v > gt:
        raise SpecError(f"{field} must be > {gt:g}, got {v!r}", source=source, field=field)
    if le is not None and not v <= le:
        raise SpecError(f"{field} must be <= {le:g}, got {v!r}", source=source, field=field)


def integer(value: Any, field: str, *, source: str, ge: int | None = None, le: int | None = None) -> int:
    """``value`` as an ``int`` (integers only: no booleans, no floats, not even ``4.0``)."""
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise SpecError(f"{field} must be an integer, got {value!r} ({_kind(value)})", source=source,
                            field=field)
        value = operator.index(value)
    _bounds(value, field, source, ge, None, le)
    return value


def number(value: Any, field: str, *, source: str, ge: float | None = None, gt: float | None = None,
           le: float | None = None, allow_inf: bool = False) -> float:
    """``value`` as a ``float``: a real number (no booleans), never NaN, finite unless ``allow_inf``."""
    if type(value) is not float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise SpecError(f"{field} must be a number, got {value!r} ({_kind(value)})", source=source,
                            field=field)
        value = float(value)
    if math.isnan(value):
        raise SpecError(f"{field} must be a number, got NaN", source=source, field=field)
    if not allow_inf and math.isinf(value):
        raise SpecError(f"{field} must be finite, got {value!r}", source=source, field=field)
    _bounds(value, field, source, ge, gt, le)
    return value


def text(value: Any, field: str, *, source: str, empty: bool = False) -> str:
    """``value`` as a ``str`` (non-empty unless ``empty``)."""
    if not isinstance(value, str):
        raise SpecError(f"{field} must be a string, got {value!r} ({_kind(value)})", source=source, field=field)
    if not empty and not value:
        raise SpecError(f"{field} must not be empty", source=source, field=field)
    return value


def flag(value: Any, field: str, *, source: str) -> bool:
    """``value`` as a ``bool`` (only ``True``/``False``: 0, 1 and strings are refused)."""
    if not isinstance(value, bool):
        raise SpecError(f"{field} must be true or false, got {value!r} ({_kind(value)})", source=source,
                        field=field)
    return value


def of_type(value: Any, cls: type | tuple[type, ...], field: str, *, source: str, optional: bool = False) -> Any:
    """``value`` itself when it is an instance of ``cls`` (or ``None`` when ``optional``)."""
    if (optional and value is None) or isinstance(value, cls):
        return value
    names = " or ".join(c.__name__ for c in (cls if isinstance(cls, tuple) else (cls,)))
    raise SpecError(f"{field} must be a {names}{' or None' if optional else ''}, got {value!r} ({_kind(value)})",
                    source=source, field=field)


def _rebuild(cls: type, fields: dict[str, Any]) -> Any:
    return cls(**fields)


def frozen_reduce(obj: Any) -> tuple:
    """``__reduce__`` for a frozen dataclass holding mappingproxies (which do not pickle): rebuild it
    (and so re-validate it) from its init fields, mappings as plain dicts."""
    fields = {}
    for f in dataclasses.fields(obj):
        if f.init:
            v = getattr(obj, f.name)
            fields[f.name] = dict(v) if isinstance(v, MappingProxyType) else v
    return (_rebuild, (type(obj), fields))


__all__ = ["flag", "frozen_reduce", "integer", "number", "of_type", "text"]
