"""Reusable checks for ``schedlab`` options: every number has a range, every output path is checked
when the command line is parsed, before anything runs.

Each factory returns a typer ``callback``; a bad value raises :class:`typer.BadParameter`, which the
entry point prints as one ``error: Invalid value for '--opt': ...`` line with exit status 2::

    seed: int = typer.Option(0, "--seed", min=0, max=SEED_MAX)              # integers: typer's own range
    load: float = typer.Option(1.0, "--load", callback=number(gt=0, le=1e6)) # floats: no NaN/inf either
    out: Path | None = typer.Option(None, "--out", callback=output_dir())
    graphml: Path | None = typer.Option(None, "--graphml", callback=output_file())

Typer's own ``min``/``max`` cover integers; floats need :func:`number` because a range check alone
lets ``nan`` through (every comparison with NaN is false).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer


class OutputFormat(StrEnum):
    """``--format`` of the commands that print either text or JSON."""

    text = "text"
    json = "json"


SEED_MAX = 2**31 - 1
"""Largest seed: every seeded component (NumPy generators, CP-SAT's 32-bit ``random_seed``) takes it."""

COUNT_MAX = 10**9
"""Largest count any option takes (jobs, rows, amounts): far beyond what a run can use, small enough
that nothing sized by it is allocated before the range checks of the command itself."""


def _each(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _fmt(x: float) -> str:
    return f"{x:g}"


def number(*, ge: float | None = None, gt: float | None = None, le: float | None = None,
           lt: float | None = None) -> Callable[[Any, Any, Any], Any]:
    """A callback accepting finite numbers in the given range (``None``, an unset optional, passes)."""
    bounds = [(ge, lambda v, b: v >= b), (gt, lambda v, b: v > b), (le, lambda v, b: v <= b),
              (lt, lambda v, b: v < b)]
    wanted = " and ".join(f"{op} {_fmt(b)}" for b, op in zip((ge, gt, le, lt), (">=", ">", "<=", "<"),
                                                                strict=True) if b is not None)

    def check(ctx, param, value):
        if ctx is not None and getattr(ctx, "resilient_parsing", False):
            return value
        for v in _each(value):
            if isinstance(v, float) and not math.isfinite(v):
                raise typer.BadParameter(f"must be a finite number{' ' + wanted if wanted else ''}, got {v}")
            for b, ok in bounds:
                if b is not None and not ok(v, b):
                    raise typer.BadParameter(f"must be {wanted}, got {_fmt(v)}")
        return value

    return check


def _writable_parent(path: Path) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise typer.BadParameter(f"{str(path)!r}: folder {str(parent)!r} does not exist (create it first)")
    if not parent.is_dir():
        raise typer.BadParameter(f"{str(path)!r}: {str(parent)!r} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise typer.BadParameter(f"{str(path)!r}: folder {str(parent)!r} is not writable")


def output_file(*, overwrite: bool = True) -> Callable[[Any, Any, Any], Any]:
    """A callback for a file the command will write: its folder exists and is writable, the path is not
    a folder, and (``overwrite=False``) no file is there yet."""

    def check(ctx, param, value):
        if value is None or (ctx is not None and getattr(ctx, "resilient_parsing", False)):
            return value
        p = Path(value)
        if p.is_dir():
            raise typer.BadParameter(f"{str(p)!r} is a folder; give a file name")
        if p.exists() and not overwrite:
            raise typer.BadParameter(f"{str(p)!r} already exists; give a new file name")
        if p.exists() and not os.access(p, os.W_OK):
            raise typer.BadParameter(f"{str(p)!r} is not writable")
        _writable_parent(p)
        return value

    return check


def output_dir(*, empty: bool = False) -> Callable[[Any, Any, Any], Any]:
    """A callback for a folder the command will create (with its missing parents) or write into: not an
    existing file, and its nearest existing ancestor a writable folder; ``empty=True`` also refuses a
    folder that already has files."""

    def check(ctx, param, value):
        if value is None or (ctx is not None and getattr(ctx, "resilient_parsing", False)):
            return value
        p = Path(value)
        if p.exists() and not p.is_dir():
            raise typer.BadParameter(f"{str(p)!r} is a file; give a folder (outputs are written inside it)")
        if p.is_dir():
            if not os.access(p, os.W_OK | os.X_OK):
                raise typer.BadParameter(f"folder {str(p)!r} is not writable")
            if empty and any(p.iterdir()):
                raise typer.BadParameter(f"folder {str(p)!r} is not empty")
            return value
        ancestor = p.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise typer.BadParameter(f"{str(p)!r} cannot be made: {str(ancestor)!r} is a file")
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise typer.BadParameter(f"{str(p)!r} cannot be made: folder {str(ancestor)!r} is not writable")
        return value

    return check


__all__ = ["COUNT_MAX", "SEED_MAX", "number", "output_dir", "output_file"]
