"""``schedlab solve``: JSON keys, save/load round trip, errors."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("kind,method,cluster,backend,jobs", [
    ("joint", "joint", "rubick-64", "highs", 6),
    ("tiresias-placement", "tiresias-ilp", "philly", "cpsat", 1),
    ("tier-placement", "tier-placement", "dally-2", "scip", 6),
    ("offline", "offline-bound", "tiresias-60", "cpsat", 4),
    ("joint", "pop-joint", "rubick-64", "scipy", 6),
])
def test_json_output(kind, method, cluster, backend, jobs, tmp_path, cli):
    path = tmp_path / "inst.json"
    r = cli("solve", *["--generate", kind, "--jobs", str(jobs), "--cluster", cluster, "--method", method, "--backend", backend,
             "--time-limit", "20", "--format", "json", "--save", str(path)])
    assert r.code == 0, r.out
    out = json.loads(r.out)
    for key in ("status", "objective", "bound", "gap", "build_s", "solve_s", "backend", "verified"):
        assert key in out
    assert out["verified"] is True and out["backend"] == backend
    r2 = cli("solve", *["--instance", str(path), "--method", method, "--backend", backend, "--time-limit", "20",
              "--format", "json"])
    assert r2.code == 0
    assert json.loads(r2.out)["objective"] == pytest.approx(out["objective"])


def test_errors_name_the_problem(tmp_path, cli):
    r = cli("solve", *["--generate", "joint", "--method", "nope"])
    assert r.code == 2 and "unknown method" in r.err
    r = cli("solve", *["--generate", "joint", "--method", "tier-placement"])
    assert r.code == 2 and "solves" in r.err
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "joint",\n "base": }')
    r = cli("solve", *["--instance", str(bad), "--method", "joint"])
    assert r.code == 2 and "line 2" in r.err
