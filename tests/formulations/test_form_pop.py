"""POP partitioning: merged solutions are valid on the whole instance, never beat the whole optimum,
and the reported whole-problem bound is valid."""

from __future__ import annotations

import pytest

from schedlab.formulations import POP, JointFormulation, SolveParams, Termination, solve
from schedlab.formulations.joint_options import generate_joint
from schedlab.formulations.pop import partition
from schedlab.formulations.tier import TierFormulation, generate_tier
from schedlab.formulations.tiresias import TiresiasFormulation
from schedlab.formulations.tiresias_gen import generate_tiresias
from schedlab.scheduling import validate_allocation
from schedlab.topology import preset

P = SolveParams(threads=1, time_limit_s=30, seed=0, deterministic_limit=30)


@pytest.fixture
def joint_inst(make_cluster):
    return generate_joint(make_cluster(machines=6, gpus=8, cpus=96, mem=1600.0), 24, seed=11, guaranteed_frac=0.3)


def test_partition_is_disjoint_and_covers(joint_inst):
    parts = partition(joint_inst, 3, seed=1)
    jobs = [j.id for p in parts for j in p.base.jobs]
    machines = [m for p in parts for m in p.machines]
    assert sorted(jobs) == sorted(j.id for j in joint_inst.base.jobs)
    assert sorted(machines) == sorted(joint_inst.base.cluster.machines)
    assert all(len(p.machines) == 2 for p in parts)


def test_pop_joint_valid_and_bounded(joint_inst):
    whole = solve(JointFormulation(), joint_inst, "highs", P)
    assert whole.termination is Termination.OPTIMAL
    r = POP(3).solve(joint_inst, "highs", P)
    assert r.verified and validate_allocation(joint_inst.base, r.allocation) == []
    assert r.objective <= whole.objective + 1e-9
    assert r.dual_bound >= whole.objective - 1e-6
    assert r.termination in (Termination.FEASIBLE_AT_LIMIT, Termination.OPTIMAL)
    one = POP(1).solve(joint_inst, "highs", P)
    assert one.objective == pytest.approx(whole.objective)


def test_pop_parallel_equals_sequential(joint_inst):
    seq = POP(2).solve(joint_inst, "highs", P)
    par = POP(2, parallel=True, workers=2).solve(joint_inst, "highs", P.with_(threads=2))
    assert par.objective == pytest.approx(seq.objective) and par.verified


def test_pop_tier_and_tiresias():
    tier = generate_tier(preset("dally-4"), 30, seed=2)
    whole = solve(TierFormulation(), tier, "highs", P)
    r = POP(2).solve(tier, "highs", P)
    assert r.verified and r.objective <= whole.objective + 1e-9 <= r.dual_bound + 2e-9
    tir = generate_tiresias(preset("tiresias-60"), 4, seed=3, gpus=8, busy=0.3)
    whole = solve(TiresiasFormulation(), tir, "cpsat", P)
    r = POP(2).solve(tir, "cpsat", P)
    assert r.verified and r.dual_bound is None and r.objective >= whole.objective - 1e-9
