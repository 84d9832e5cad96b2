"""``schedlab solve``: JSON keys, save/load round trip, errors."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("kind,method,cluster,backend,jobs", [
    ("joint", "joint", "rubick-64", "highs", 6),
    ("tiresias-placement", "tiresias-ilp", "tiresias-60", "cpsat", 1),
    ("tier-placement", "tier-ilp", "dally-2", "scip", 6),
    ("offline", "offline-nonpreemptive", "tiresias-60", "cpsat", 4),
    ("offline", "offline-preemptive", "tiresias-60", "cpsat", 4),
    ("joint", "pop-joint", "rubick-64", "scipy", 6),
    ("horizon-wait", "horizon-wait", "dally-2", "cpsat", 4),
    ("offline-ti", "offline-preemptive-ti", "rubick-64", "highs", 4),
    ("offline-resizable", "offline-resizable-ti", "rubick-64", "cpsat", 4),
    ("offline-resizable", "offline-fluid", "rubick-64", "cpsat", 4),
])
def test_json_output(kind, method, cluster, backend, jobs, tmp_path, cli):
    path = tmp_path / "inst.json"
    r = cli("solve", *["--generate", kind, "--jobs", str(jobs), "--cluster", cluster, "--method", method, "--backend", backend,
             "--time-limit", "20", "--format", "json", "--save", str(path)])
    assert r.code == 0, r.out
    out = json.loads(r.out)
    for key in ("status", "objective", "bound", "gap", "build_s", "translate_s", "solve_s", "extract_s", "verify_s",
                "other_s", "wall_s", "time_limit_s", "rel_gap_tolerance", "threads", "backend", "verified"):
        assert key in out
    assert out["instance"]["kind"] == kind and out["instance"]["jobs"] == jobs
    if method in ("offline-preemptive", "offline-fluid"):  # a bound, no schedule
        assert out["objective"] is None and out["bound"] > 0
        return
    assert out["verified"] is True and out["backend"] == backend
    r2 = cli("solve", *["--instance", str(path), "--method", method, "--backend", backend, "--time-limit", "20",
              "--format", "json"])
    assert r2.code == 0
    assert json.loads(r2.out)["objective"] == pytest.approx(out["objective"])
    assert out["status"] != "infeasible"


def test_errors_name_the_problem(tmp_path, cli):
    r = cli("solve", *["--generate", "joint", "--method", "nope"])
    assert r.code == 2 and "unknown method" in r.err
    r = cli("solve", *["--generate", "joint", "--method", "tier-ilp"])
    assert r.code == 2 and "solves" in r.err
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "joint",\n "base": }')
    r = cli("solve", *["--instance", str(bad), "--method", "joint"])
    assert r.code == 2 and "line 2" in r.err


@pytest.mark.parametrize("limit", ["0", "-1", "-5", "nan"])
def test_time_limit_must_be_positive(limit, cli):
    # regression (issue 9 / 11.6): --time-limit 0 or -1 ended in a ValueError traceback (exit 1)
    r = cli("solve", "--generate", "joint", "--jobs", "2", "--method", "joint", "--time-limit", limit)
    assert r.code == 2 and "--time-limit" in r.err and "Traceback" not in r.err


def test_text_output_names_kind_cluster_and_threads(cli):
    r = cli("solve", "--generate", "joint", "--jobs", "4", "--method", "joint", "--backend", "cpsat",
            "--threads", "1", "--time-limit", "20")
    assert r.code == 0, r.err
    assert "joint on rubick-64 (4 jobs)" in r.out and "threads 1" in r.out
    assert "build" in r.out and "translate" in r.out and "verify" in r.out


def test_list_kinds_states_the_defaults_per_kind(cli):
    text = " ".join(cli("list", "kinds").out.split())
    assert "joint [objective:" in text and "default: rubick-64, 30 jobs" in text and "default: philly, 1 jobs" in text
    assert "horizon-wait [objective:" in text and "exact twin: horizon-wait; default: dally-2, 6 jobs" in text
    assert "schedlab list kinds" in " ".join(cli("solve", "--help").out.split())


def test_solver_errors_exit_2_with_one_line(cli):
    r = cli("solve", "--generate", "offline", "--jobs", "2", "--method", "offline-nonpreemptive", "--backend", "highs")
    assert r.code == 2 and r.err.startswith("error:") and "intervals" in r.err


def test_list_marks_unavailable_backends(cli, monkeypatch):
    from schedlab.formulations import backends
    from schedlab.formulations.backends.base import Availability

    real = backends.quick_availability
    monkeypatch.setattr(backends, "quick_availability",
                        lambda name: Availability(False, "module x is not installed") if name == "scip" else real(name))
    r = cli("list", "backends")
    assert r.code == 0 and "scip  [unavailable: module x is not installed]" in r.out
    assert "cpsat\n" in r.out.replace("  cpsat\n", "cpsat\n")
    r = cli("list", "backends", "--format", "json")
    assert json.loads(r.out)["backends_unavailable"] == {"scip": "module x is not installed"}


def _doc_commands() -> list[list[str]]:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "formulations.md").read_text()
    block = text.split("## CLI", 1)[1].split("\n\n")[1]
    return [line.split()[1:] for line in block.splitlines() if line.strip().startswith("schedlab solve")]


@pytest.mark.parametrize("argv", _doc_commands(), ids=lambda a: a[a.index("--method") + 1])
def test_documented_commands_give_an_answer(argv, cli):
    # every `schedlab solve` command of docs/formulations.md runs and answers (issue 9: the documented
    # tiresias-ilp example was infeasible on tiresias-60)
    r = cli(*argv, "--format", "json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["status"] not in ("infeasible", "error", "no-solution-at-limit")
    assert out["objective"] is not None or out["bound"] is not None
