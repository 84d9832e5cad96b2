"""The scale-out benchmark's suite file: what ``--workload`` / ``--trace`` / ``--source`` ask for is what runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedlab.benchmarks.bench_scaleout import _source_options, parser, suite_text
from schedlab.benchmarks.harness.suitefile import load_suite_file


def _cases(tmp_path: Path, argv: list[str]):
    path = tmp_path / "suite.yaml"
    path.write_text(suite_text(parser().parse_args(argv)))
    return load_suite_file(path).cases


def test_default_suite_is_smoke_fifo_and_2d_las(tmp_path: Path) -> None:
    cases = _cases(tmp_path, ["--seeds", "3"])
    assert len(cases) == 6
    assert {c.policy for c in cases} == {"fifo", "2d-las"}
    assert {c.seed for c in cases} == {0, 1, 2}
    assert all(c.source.workload == "smoke" for c in cases)


def test_trace_and_source_options_reach_the_cases(tmp_path: Path) -> None:
    trace = tmp_path / "jobs.csv"
    trace.write_text("x\n")
    cases = _cases(tmp_path, ["--seeds", "2", "--trace", str(trace), "--trace-format", "philly", "--cluster",
                              "philly", "--source", "sample=200", "--source", "load=2.5", "--policies", "srtf"])
    assert len(cases) == 2
    src = cases[0].source
    assert (src.trace, src.trace_format, src.cluster) == (str(trace.resolve()), "philly", "philly")
    assert (src.sample, src.load) == (200, 2.5)
    assert {c.policy for c in cases} == {"srtf"}


def test_source_option_needs_key_and_value() -> None:
    assert _source_options(["sample=20000", "resample=bootstrap"]) == {"sample": 20000, "resample": "bootstrap"}
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        _source_options(["sample"])
