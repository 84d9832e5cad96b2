"""The rubick suite's ``calibrations`` option: Table 4 once per perf-model calibration, in the suite and in
the reproduction report; the default's cases and tables as they were."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.cli.suite_options import parse_suite_options
from schedlab.benchmarks.harness.report.reproduction import render, runs_from_records
from schedlab.benchmarks.harness.suites.rubick import TABLE4, rubick_suite
from schedlab.topology.errors import SpecError


def test_default_cases_unchanged_and_calibrated_ones_labelled():
    before = rubick_suite(traces=None)
    both = rubick_suite(traces=None, calibrations=("flat", "fitted"))
    keys = {c.label: c.key() for c in before.cases}
    assert all(c.calibration == "flat" for c in before.cases)
    extra = [c for c in both.cases if c.label not in keys]
    assert {c.label: c.key() for c in both.cases if c.label in keys} == keys
    n = sum(len(p) for p in TABLE4.values())  # Table 4's cases of one source (the generator: no traces here)
    assert len(extra) == n and all(c.calibration == "fitted" and c.label.startswith("cal=fitted/") for c in extra)
    assert {c.label for c in extra} == {f"cal=fitted/{c.label}" for c in before.cases
                                        if c.label.split("/")[0].split("-")[0] in TABLE4}


def test_calibrations_option_from_the_cli_strings():
    kw = parse_suite_options(rubick_suite, "rubick", ["calibrations=flat,fitted", "sweeps=false",
                                                      "variants=base", "sources=gen"])
    s = rubick_suite(traces=None, **kw)
    assert sorted(c.label for c in s.cases) == sorted(
        [f"base-gen/{p}" for p in TABLE4["base"]] + [f"cal=fitted/base-gen/{p}" for p in TABLE4["base"]])
    with pytest.raises(SpecError, match="known: flat, fitted, measured, artifact"):
        rubick_suite(traces=None, calibrations=("nope",))
    with pytest.raises(SpecError, match="variant"):
        rubick_suite(traces=None, variants=("xx",))


def _rec(label: str, jct: float) -> dict:
    return {"suite": "rubick", "label": label, "status": "ok", "metrics": {"avg_jct": jct}}


def test_report_shows_table4_once_per_calibration():
    recs = [_rec("base-trace/rubick", 1.0), _rec("base-trace/sia", 2.0)]
    flat_only = render(runs_from_records(recs), ("rubick",))
    assert "calibration `fitted`" not in flat_only  # no fitted run: no fitted table, not even a pending line
    recs += [_rec("cal=fitted/base-trace/rubick", 1.0), _rec("cal=fitted/base-trace/sia", 3.0)]
    both = render(runs_from_records(recs), ("rubick",))
    assert both.count("### Table 4 (the artifact trace): average JCT") == 1
    assert both.count("### Table 4 (the artifact trace, perf-model calibration `fitted`): average JCT") == 1
    assert "calibration `measured`" not in both
    flat_part, fitted_part = both.split("calibration `fitted`")
    row = lambda part: next(x for x in part.splitlines() if x.startswith("| BASE sia / rubick |"))  # noqa: E731
    assert "| 2x |" in row(flat_part) and "`base-trace/sia` / `base-trace/rubick`" in row(flat_part)
    assert "| 3x |" in row(fitted_part) and "`cal=fitted/base-trace/sia`" in row(fitted_part)
