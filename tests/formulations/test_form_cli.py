"""``schedlab solve``: JSON keys, save/load round trip, errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from schedlab.benchmarks.cli import build_app
from schedlab.topology.errors import SchedlabError


def run(args):
    return CliRunner().invoke(build_app(), ["solve", *args])


@pytest.mark.parametrize("kind,method,cluster,backend,jobs", [
    ("joint", "joint", "rubick-64", "highs", 6),
    ("tiresias-placement", "tiresias-ilp", "philly", "cpsat", 1),
    ("tier-placement", "tier-placement", "dally-2", "scip", 6),
    ("offline", "offline-bound", "tiresias-60", "cpsat", 4),
    ("joint", "pop-joint", "rubick-64", "scipy", 6),
])
def test_json_output(kind, method, cluster, backend, jobs, tmp_path):
    path = tmp_path / "inst.json"
    r = run(["--generate", kind, "--jobs", str(jobs), "--cluster", cluster, "--method", method, "--backend", backend,
             "--time-limit", "20", "--format", "json", "--save", str(path)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    for key in ("status", "objective", "bound", "gap", "build_s", "solve_s", "backend", "verified"):
        assert key in out
    assert out["verified"] is True and out["backend"] == backend
    r2 = run(["--instance", str(path), "--method", method, "--backend", backend, "--time-limit", "20",
              "--format", "json"])
    assert r2.exit_code == 0
    assert json.loads(r2.output)["objective"] == pytest.approx(out["objective"])


def test_errors_name_the_problem(tmp_path):
    r = run(["--generate", "joint", "--method", "nope"])
    assert isinstance(r.exception, SchedlabError) and "unknown method" in str(r.exception)
    r = run(["--generate", "joint", "--method", "tier-placement"])
    assert isinstance(r.exception, SchedlabError) and "solves" in str(r.exception)
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "joint",\n "base": }')
    r = run(["--instance", str(bad), "--method", "joint"])
    assert isinstance(r.exception, SchedlabError) and "line 2" in str(r.exception)
