"""Built-in suites: ``SUITES`` maps a suite name to its builder ``(**options) -> Suite``.

Each paper's experiments live in their own module here (``tiresias``, ``dally``, ``rubick``) and are
added to this dict; the harness issue adds ``quick``, ``gap``, ``scale`` and ``all``."""

from __future__ import annotations

from schedlab.benchmarks.harness.cases import SuiteBuilder
from schedlab.benchmarks.harness.suites.tiresias import tiresias_suite

SUITES: dict[str, SuiteBuilder] = {
    "tiresias": tiresias_suite,
}

__all__ = ["SUITES"]
