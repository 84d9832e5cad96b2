"""Built-in suites: ``SUITES`` maps a suite name to its builder ``(**options) -> Suite``.

The harness's own suites (``quick``, ``gap``, ``scale``, ``all``) live in :mod:`.builtin`; each paper's
experiments live in their own module here (``tiresias``, ``dally``, ``rubick``) and are added to this
dict; plugins add theirs through the ``schedlab.suites`` entry point."""

from __future__ import annotations

from schedlab.benchmarks.harness.cases import SuiteBuilder
from schedlab.benchmarks.harness.suites import dally
from schedlab.benchmarks.harness.suites.builtin import BUILTIN
from schedlab.benchmarks.harness.suites.rubick import rubick_suite
from schedlab.benchmarks.harness.suites.tiresias import tiresias_suite

SUITES: dict[str, SuiteBuilder] = {
    "quick": BUILTIN["quick"],
    "gap": BUILTIN["gap"],
    "scale": BUILTIN["scale"],
    "dally": dally.build,
    "rubick": rubick_suite,
    "tiresias": tiresias_suite,
    "all": BUILTIN["all"],
}

__all__ = ["SUITES"]
