"""The examples in the docstrings of the public API's entry points run (issue 27.8): ``solve``,
``Kind``, ``POLICIES.build`` (``PolicyRegistry.build``), ``simulate`` and ``run_bench``. Each
docstring has Parameters / Returns / Raises sections and an Examples section, as scipy's; this test
runs the examples with :mod:`doctest` (small instances, fixed seeds, no wall-clock asserts)."""

from __future__ import annotations

import doctest
import importlib

import pytest

#: entry point -> (module, dotted name of the object in it)
ENTRY_POINTS = {
    "solve": ("schedlab.formulations.base", "solve"),
    "Kind": ("schedlab.formulations.kinds", "Kind"),
    "POLICIES.build": ("schedlab.scheduling.registry", "PolicyRegistry.build"),
    "simulate": ("schedlab.benchmarks.simulator.engine", "simulate"),
    "run_bench": ("schedlab.benchmarks.harness.runner", "run_bench"),
}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _target(module: str, dotted: str):
    obj = importlib.import_module(module)
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_entry_point_docstring_has_the_sections(name):
    doc = _target(*ENTRY_POINTS[name]).__doc__ or ""
    for section in ("Parameters\n", "Raises\n", "Examples\n"):
        assert section in doc, f"{name}: no {section.strip()} section"
    assert "Returns\n" in doc or name == "Kind", f"{name}: no Returns section"


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_entry_point_examples_run(name):
    module, dotted = ENTRY_POINTS[name]
    obj = _target(module, dotted)
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(obj, dotted, globs={}) if t.examples]
    assert tests, f"{name}: its docstring has no runnable example"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (output above)"
