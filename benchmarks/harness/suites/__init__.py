"""Built-in suites: ``SUITES`` maps a suite name to its builder ``(**options) -> Suite``.

The harness's own suites (``quick``, ``gap``, ``scale``) live in :mod:`.builtin`; each paper's
experiments live in their own module here (``tiresias``, ``dally``, ``rubick``); ``all`` runs every
registered suite. Plugins add theirs through the ``schedlab.suites`` entry point or a ``--plugin``
module's ``SUITES``: :func:`all_suites` merges them with ``SUITES`` (plain data: it loads nothing)."""

from __future__ import annotations

from schedlab.benchmarks.harness.casebase import Suite, SuiteBuilder
from schedlab.benchmarks.harness.plugins import PLUGIN_SUITES, SUITE_ORIGINS
from schedlab.benchmarks.harness.suites import dally
from schedlab.benchmarks.harness.suites.builtin import BUILTIN
from schedlab.benchmarks.harness.suites.rubick import rubick_suite
from schedlab.benchmarks.harness.suites.tiresias import tiresias_suite
from schedlab.topology.errors import SpecError


def every_suite() -> Suite:
    """Every registered suite, one after the other, each under its own name."""
    parts = tuple(builder() for name, builder in all_suites().items() if name != "all")
    return Suite("all", "every registered suite", (), parts=parts)


SUITES: dict[str, SuiteBuilder] = {
    "quick": BUILTIN["quick"],
    "gap": BUILTIN["gap"],
    "scale": BUILTIN["scale"],
    "dally": dally.build,
    "rubick": rubick_suite,
    "tiresias": tiresias_suite,
    "all": every_suite,
}


def all_suites() -> dict[str, SuiteBuilder]:
    """The built-in suites and the plugins' (a plugin suite named like a built-in one is an error)."""
    for name in PLUGIN_SUITES.keys() & SUITES.keys():
        origin = SUITE_ORIGINS.get(name, "<plugin>")
        raise SpecError(f"plugin {origin}: suite {name!r} is already registered", source=origin, field=name)
    return {**SUITES, **PLUGIN_SUITES}


__all__ = ["SUITES", "all_suites", "every_suite"]
