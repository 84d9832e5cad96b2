"""The ``schedlab`` command line. :func:`main` is the entry point; the command tree (typer, every
command's module) is in :mod:`schedlab.benchmarks.cli.app` and is imported only for a command that needs
it: ``schedlab list`` in a fresh process without plugins prints from plain data
(:mod:`schedlab.benchmarks.cli.list_meta`) and imports neither typer nor any registry. ``COMMANDS``,
``LEAF_COMMANDS``, ``build_app`` and ``build_command`` are :mod:`.app`'s, re-exported on first use."""

from __future__ import annotations

import sys
from typing import Any

_FROM_APP = ("COMMANDS", "LEAF_COMMANDS", "RESOLVING", "build_app", "build_command", "plugin_option")


def main(argv: list[str] | None = None) -> None:
    """Entry point (``schedlab``): the listing from plain data where it is the whole truth, else
    :func:`schedlab.benchmarks.cli.app.run` (its docstring says how refusals are reported)."""
    from schedlab.benchmarks.cli.list_meta import fast_listing  # lazy: start-up

    listing = fast_listing(list(sys.argv[1:] if argv is None else argv))
    if listing is not None:
        sys.stdout.write(listing)
        sys.stdout.flush()
        return
    from schedlab.benchmarks.cli.app import run  # lazy: start-up (typer and every command)

    try:
        run(argv)
    finally:
        if argv is None:  # the process's own entry point (``schedlab``, ``python -m schedlab``): it ends here
            _ending()


def _ending() -> None:
    """The process ends with this command: every object goes to the cycle collector's permanent
    generation, so that the interpreter's last collection at exit does not traverse, and free one by one,
    what a replay left in reference cycles (a simulator and its per-job views: about 870,000 objects and
    0.7 CPU s after the Philly table; the operating system takes the memory back). Only for ``argv=None``:
    a caller that passes its arguments (tests, scripts) goes on running and keeps its collector as it was."""
    import gc

    gc.freeze()


def __getattr__(name: str) -> Any:
    if name in _FROM_APP:
        from schedlab.benchmarks.cli import app  # lazy: start-up

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["COMMANDS", "LEAF_COMMANDS", "build_app", "build_command", "main"]  # noqa: F822 (lazy)
