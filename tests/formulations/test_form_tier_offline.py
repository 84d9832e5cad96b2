"""Tier-aware placement (Dally's decision) and the offline schedule bound: hand optima, modes, limits."""

from __future__ import annotations

import pytest

from schedlab.formulations import SolveParams, Status, load_instance, save_instance, solve
from schedlab.formulations.backends import BACKENDS
from schedlab.formulations.offline import OfflineFormulation, OfflineInstance, generate_offline
from schedlab.formulations.tier import TierFormulation, TierInstance, TierMode, generate_tier, tier_objective
from schedlab.scheduling import Instance, Job, Resources, validate_allocation
from schedlab.topology import preset
from schedlab.topology.errors import SolverError, SpecError

P = SolveParams(threads=1, time_limit_s=30, seed=0, work_limit=30)


def tier_instance(cluster, mode=TierMode.MAX_THROUGHPUT, extra=True):
    """2 racks x 2 machines x 2 GPUs. J4 (4 GPUs; 0/50/100 %) fits a rack, not a machine: 4/1.5;
    J2 (0.1/0.2/0.3) on a machine: 2/1.1; J2b (no overhead): 2; J1 (1 GPU) finds no GPU left."""
    jobs = [Job("J4", Resources(4)), Job("J2", Resources(2)), Job("J2b", Resources(2))]
    ov = {"J4": (0.0, 0.5, 1.0), "J2": (0.1, 0.2, 0.3), "J2b": (0.0, 0.0, 0.0)}
    if extra:
        jobs.append(Job("J1", Resources(1)))
        ov["J1"] = (0.0, 0.0, 0.0)
    return TierInstance(Instance(cluster, tuple(jobs)), ov, mode)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_tier_max_throughput_hand_optimum(backend, make_cluster, need_backend):
    need_backend(backend)
    inst = tier_instance(make_cluster(machines=2, gpus=2, racks=2))
    r = solve(TierFormulation(), inst, backend, P)
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(4 / 1.5 + 2 / 1.1 + 2.0)
    assert r.bounds.primal == pytest.approx(r.objective)
    assert set(r.allocation.assignments) == {"J4", "J2", "J2b"}
    nodes = inst.base.cluster.graph.nodes
    assert len({nodes[m]["rack"] for m in r.allocation["J4"].placement}) == 1
    assert validate_allocation(inst.base, r.allocation) == [] and r.verified


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_tier_min_overhead_place_all(backend, make_cluster, need_backend):
    # all of J4, J2, J2b: 4 * 0.5 (J4 inside a rack) + 2 * 0.1 + 0 = 2.2. With J1 (9 GPUs on 8) one job
    # stays out; unplaced GPUs cost W = floor(4*1.0 + 2*0.3 + 0 + 0) + 1 = 5 each, so the fewest GPUs
    # out (J1's 1) wins and the rest is the place-all optimum: 5 + 2.2 = 7.2 (issue 20.4; was infeasible)
    need_backend(backend)
    cl = make_cluster(machines=2, gpus=2, racks=2)
    r = solve(TierFormulation(), tier_instance(cl, TierMode.MIN_OVERHEAD, extra=False), backend, P)
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(2.2) and r.verified
    inst = tier_instance(cl, TierMode.MIN_OVERHEAD, extra=True)
    r = solve(TierFormulation(), inst, backend, P)
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(7.2) and r.verified
    assert set(r.allocation.assignments) == {"J4", "J2", "J2b"}
    assert tier_objective(inst, r.allocation) == pytest.approx(7.2)


def test_tier_rejects_non_monotone_overheads(make_cluster):
    with pytest.raises(SpecError, match="non-decreasing"):
        TierInstance(Instance(make_cluster(), (Job("x", Resources(1)),)), {"x": (0.5, 0.1, 0.2)})


def test_tier_generated_dally_backends_agree_and_json(tmp_path):
    inst = generate_tier(preset("dally-2"), 16, seed=7)
    save_instance(inst, tmp_path / "t.json")
    assert load_instance(tmp_path / "t.json").to_dict() == inst.to_dict()
    vals = []
    for be in ("cpsat", "highs", "scip"):
        r = solve(TierFormulation(), inst, be, P)
        assert r.status is Status.OPTIMAL and r.verified
        assert tier_objective(inst, r.allocation) == pytest.approx(r.objective)
        vals.append(r.objective)
    assert max(vals) - min(vals) < 1e-6


def offline_instance(cluster, jobs, objective="avg-jct", mode="machine"):
    return OfflineInstance(Instance(cluster, tuple(jobs)), objective, mode)


@pytest.mark.parametrize("mode", ["machine", "total"])
def test_offline_hand_optimum(mode, make_cluster, need_backend):
    # one machine with 2 GPUs: A (2 GPUs, 10 s), B and C (1 GPU, 5 s), all at 0.
    # B+C first then A: JCTs 5, 5, 15 -> 25/3; A first: 10, 15, 15 -> 40/3. Makespan 15 either way.
    need_backend("cpsat")
    cl = make_cluster(machines=1, gpus=2)
    jobs = [Job("A", Resources(2), duration=10.0), Job("B", Resources(1), duration=5.0),
            Job("C", Resources(1), duration=5.0)]
    # total mode is a relaxation: it reports its bound only, never a relaxed "schedule" as an objective
    value = (lambda r: r.objective) if mode == "machine" else (lambda r: r.bounds.dual)
    r = solve(OfflineFormulation(), offline_instance(cl, jobs, mode=mode), "cpsat", P)
    assert r.status is Status.OPTIMAL and value(r) == pytest.approx(25 / 3) and r.verified
    assert (r.objective is None) == (mode == "total")
    r = solve(OfflineFormulation(), offline_instance(cl, jobs, "makespan", mode), "cpsat", P)
    assert r.status is Status.OPTIMAL and value(r) == pytest.approx(15.0)


def test_offline_clairvoyant_idles_for_a_short_job(make_cluster):
    # A (2 GPUs, 10 s) at 0, B (1 GPU, 5 s) at 1: waiting for B gives JCTs 16 + 5 -> 10.5 (< 12 greedy)
    cl = make_cluster(machines=1, gpus=2)
    jobs = [Job("A", Resources(2), duration=10.0), Job("B", Resources(1), arrival=1.0, duration=5.0)]
    r = solve(OfflineFormulation(), offline_instance(cl, jobs), "cpsat", P)
    assert r.objective == pytest.approx(10.5) and r.solution.start == {"A": 6, "B": 1} and r.verified


def test_offline_relaxation_is_a_lower_bound(make_cluster):
    cl = make_cluster(machines=2, gpus=4)
    exact = generate_offline(cl, 5, seed=3, mean_gap=200)
    relax = OfflineInstance(exact.base, exact.objective, "total")
    re_ = solve(OfflineFormulation(), exact, "cpsat", P)
    rt = solve(OfflineFormulation(), relax, "cpsat", P)
    assert re_.status is rt.status is Status.OPTIMAL
    assert re_.verified and rt.verified and rt.solution.placement is None
    assert rt.bounds.dual <= re_.objective + 1e-6
    assert re_.objective >= sum(j.duration for j in exact.base.jobs) / len(exact.base.jobs) - 1e-9


def test_offline_needs_intervals_backend(make_cluster):
    cl = make_cluster(machines=1, gpus=2)
    inst = offline_instance(cl, [Job("A", Resources(1), duration=3.0)])
    with pytest.raises(SolverError, match="intervals"):
        solve(OfflineFormulation(), inst, "highs", P)


def test_offline_validates_durations(make_cluster):
    with pytest.raises(SpecError, match="duration"):
        offline_instance(make_cluster(), [Job("A", Resources(1), duration=2.5)])
