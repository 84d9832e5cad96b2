"""``schedlab bench SUITE --option k=v``: options of a registered suite's builder from the command line.

Each key must be a keyword of the suite's builder (``schedlab.benchmarks.harness.suites.SUITES``); an
unknown key is an error naming the valid ones. A value is read by the type of the builder's default:
``true``/``false`` (also ``1``/``0``, ``yes``/``no``) for a bool, an integer, a number, a string, or a
comma-separated list for a tuple/list default (``parts=testbed,reference``, ``racks=2,4``); for
``seeds`` (count or list) one integer is a count, several are the seeds."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from schedlab.topology.errors import SpecError

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def _scalar(text: str, like: Any, key: str, suite: str) -> Any:
    src = f"--option {key}={text}"
    try:
        if isinstance(like, bool):
            low = text.strip().lower()
            if low in _TRUE | _FALSE:
                return low in _TRUE
            raise ValueError
        if isinstance(like, int):
            return int(text)
        if isinstance(like, float):
            return float(text)
    except ValueError:
        raise SpecError(f"suite {suite!r}: option {key} wants a {type(like).__name__}, got {text!r}",
                        source=src, field=key) from None
    return text


def _guess(text: str) -> Any:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_suite_options(builder: Callable[..., Any], suite: str, pairs: Iterable[str]) -> dict[str, Any]:
    """``k=v`` strings -> keyword arguments of ``builder``, typed by its defaults."""
    params = {n: p for n, p in inspect.signature(builder).parameters.items()
              if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SpecError(f"--option wants KEY=VALUE, got {pair!r}", source="--option", field="option")
        if key not in params:
            raise SpecError(f"suite {suite!r} has no option {key!r}; valid: {', '.join(sorted(params)) or '(none)'}",
                            source=f"--option {pair}", field=key)
        if key in out:
            raise SpecError(f"--option {key} given twice", source=f"--option {pair}", field=key)
        default = params[key].default
        if isinstance(default, (tuple, list)):
            like = default[0] if default else None
            items = [t.strip() for t in text.split(",") if t.strip()]
            out[key] = tuple(_guess(t) if like is None else _scalar(t, like, key, suite) for t in items)
        elif key == "seeds":
            items = [int(t) if t.strip().isdigit() else t for t in text.split(",")]
            if any(not isinstance(t, int) for t in items):
                raise SpecError(f"seeds wants a count or comma-separated seeds, got {text!r}",
                                source=f"--option {pair}", field=key)
            out[key] = items[0] if len(items) == 1 else tuple(items)
        elif default is None or default is inspect.Parameter.empty:
            out[key] = None if text.strip().lower() == "none" else _guess(text)
        else:
            out[key] = _scalar(text, default, key, suite)
    return out


__all__ = ["parse_suite_options"]
