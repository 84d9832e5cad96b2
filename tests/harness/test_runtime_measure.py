"""Issue 21.7: what a runtime means in the harness — a heuristic's warm ``decide()`` timed inside the worker
(its first call and the process start kept apart), runtime exponents only from >= 4 sizes spanning >= 8x
with R^2 and a 95 % interval (flagged when R^2 < 0.8), summaries that never mix kinds, decision sets or
objectives, and gap notes printed from the Kind."""

from __future__ import annotations

import math

import numpy as np
import pytest

from schedlab.benchmarks.harness.analysis import fit_admissible, fit_power_law, frame, scale_fits
from schedlab.benchmarks.harness.cases import GapCase
from schedlab.benchmarks.harness.gap import DECIDE_REPEATS, run_gap, time_decide


def test_a_policy_record_times_warm_decide_calls_and_keeps_the_first_apart():
    out = run_gap(GapCase("joint", "rubick-64", 4, "fifo", seed=0))
    assert out.status == "ok" and out.extra["first_call_s"] > 0 and out.solve_s > 0
    assert 1 <= out.extra["decide_repeats"] <= DECIDE_REPEATS


def test_time_decide_builds_a_fresh_policy_per_call():
    built: list[object] = []

    class Policy:
        def decide(self, snap, seed=0):
            return []

    class Spec:
        def build(self, params, seed=0, source=""):
            built.append(Policy())
            return built[-1]

    class Inst:
        base = None

    median, n = time_decide(Spec(), GapCase("joint", "rubick-64", 4, "fifo"), Inst())
    assert n == DECIDE_REPEATS == len(built) and len({id(p) for p in built}) == n and median >= 0


def test_power_law_fit_has_a_95_percent_interval():
    n = np.array([8, 16, 32, 64, 128], float)
    f = fit_power_law(n, 0.002 * n**1.5)
    assert f["exponent"] == pytest.approx(1.5) and f["r2"] == pytest.approx(1.0)
    assert f["ci_low"] == pytest.approx(1.5) and f["ci_high"] == pytest.approx(1.5)
    # noise: log t = log 0.01 + 2 log n + e, e = +-0.3 alternating; hand check of the interval's half-width
    e = np.array([0.3, -0.3, 0.3, -0.3, 0.3])
    t = 0.01 * n**2 * np.exp(e)
    f = fit_power_law(n, t)
    x, y = np.log(n), np.log(t)
    b, a = np.polyfit(x, y, 1)
    se = math.sqrt(((y - a - b * x) ** 2).sum() / 3 / ((x - x.mean()) ** 2).sum())
    assert f["exponent"] == pytest.approx(b)
    assert f["ci_high"] - f["exponent"] == pytest.approx(3.182446 * se, rel=1e-5)  # t(0.975, 3 dof)
    assert f["ci_low"] < 2.0 < f["ci_high"]


@pytest.mark.parametrize(("sizes", "ok"), [([8, 16], False), ([8, 16, 32], False), ([8, 10, 12, 16], False),
                                           ([8, 16, 32, 64], True)])
def test_an_exponent_needs_four_sizes_spanning_eight_times(sizes, ok):
    f = fit_power_law(sizes, [0.1 * s for s in sizes])
    assert (fit_admissible(f) is None) is ok


def _run(kind, who, jobs, t, *, gpus=64, seed=0):
    return {"case_type": "gap", "current": True, "kind": kind, "method": who, "who": who, "backend": "highs",
            "jobs": jobs, "gpus": gpus, "seed": seed, "status": "optimal", "build_s": 0.0, "solve_s": t,
            "time_limit_s": 60.0, "instance": f"{kind}/{jobs}/{seed}", "objective": 1.0, "bound": 1.0,
            "sense": "max", "role": "exact", "verified": True, "label": f"{who}-{jobs}-{seed}",
            "finished_at": "2026-01-01T00:00:00", "suite": "s"}


def test_scale_fits_refuse_narrow_sweeps_and_flag_poor_fits():
    narrow = [_run("joint", "a", n, 0.01 * n) for n in (8, 16)]
    # four sizes spanning 8x, times that do not follow a power law (R^2 well below 0.8)
    poor = [_run("joint", "b", n, t) for n, t in ((8, 1.0), (16, 0.1), (32, 1.0), (64, 0.1))]
    good = [_run("joint", "c", n, 0.001 * n**2) for n in (8, 16, 32, 64)]
    fits = scale_fits(frame(narrow + poor + good))
    fits = fits.assign(method=fits["method"].str.removesuffix("@highs")).set_index("method")
    fits = fits[fits["axis"] == "jobs"]
    assert math.isnan(fits.loc["a", "exponent"]) and fits.loc["a", "flag"].startswith("not fitted: 2 sizes")
    assert fits.loc["b", "r2"] < 0.8 and fits.loc["b", "flag"].startswith("poor fit")
    assert fits.loc["c", "exponent"] == pytest.approx(2.0) and fits.loc["c", "flag"] == ""
    assert fits.loc["c", "ci_low"] == pytest.approx(2.0) and fits.loc["c", "sizes"] == "8-64 (4 sizes)"


def test_summary_rows_name_their_decision_set_and_objective_and_never_mix_them():
    from schedlab.benchmarks.harness.report.tables import summary

    a = {**_run("joint", "fifo", 8, 0.1), "role": "policy", "backend": None, "bound": None, "objective": 7.0,
         "extra": {"decision_set": "joint-rigid", "objective_name": "normalised throughput"}}
    b = {**_run("joint", "joint", 8, 0.1), "objective": 10.0, "bound": 10.0,
         "extra": {"decision_set": "joint", "objective_name": "normalised throughput"}}
    c = {**_run("tier-placement", "fifo", 8, 0.1), "role": "policy", "backend": None, "bound": None,
         "objective": 3.0, "instance": "J", "label": "tier-fifo", "extra": {"decision_set": "tier-placement", "objective_name": "tier"}}
    s = summary(frame([a, b, c])).set_index(["kind", "method"])
    assert s.loc[("joint", "fifo"), "decision set"] == "joint-rigid"
    assert s.loc[("joint", "fifo"), "objective"] == "normalised throughput"
    assert s.loc[("tier-placement", "fifo"), "decision set"] == "tier-placement" and len(s) == 3


def test_bench_prints_each_kinds_gap_note_from_the_kind():
    from schedlab.benchmarks.cli.bench_cmd import gap_notes
    from schedlab.benchmarks.registry import all_kinds

    lines = gap_notes(frame([_run("joint", "joint", 8, 0.1)]))
    k = all_kinds()["joint"]
    assert len(lines) == 1 and lines[0].startswith(f"joint: objective {k.objective_name}")
    assert "joint-rigid = {" in lines[0] and k.gap_note in lines[0]


def test_a_slow_first_decision_is_the_runtime_itself(monkeypatch):
    import schedlab.benchmarks.harness.gap as gap

    monkeypatch.setattr(gap, "SLOW_DECIDE_S", 0.0)  # every first call counts as slow
    rec = run_gap(GapCase("joint", "rubick-64", 4, "fifo", seed=0)).flat()
    assert rec["decide_repeats"] == 0 and rec["solve_s"] == rec["first_call_s"]
