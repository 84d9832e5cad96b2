"""POP partitioning: merged solutions are valid on the whole instance, never beat the whole optimum,
the reported whole-problem bound is valid, parts infeasible alone are repaired (POP is infeasible
only when the whole problem is), and POP's status is its worst part's."""

from __future__ import annotations

import pytest

from schedlab.formulations import POP, JointFormulation, SolveParams, Status, solve
from schedlab.formulations import pop as pop_mod
from schedlab.formulations.joint_options import generate_joint
from schedlab.formulations.pop import partition
from schedlab.formulations.tier import TierFormulation, TierMode, generate_tier
from schedlab.formulations.tiresias_gen import generate_tiresias
from schedlab.formulations.tiresias_ilp import TiresiasFormulation
from schedlab.scheduling import validate_allocation
from schedlab.topology import preset

P = SolveParams(threads=1, time_limit_s=30, seed=0, work_limit=30)


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
    assert whole.status is Status.OPTIMAL
    r = POP(3).solve(joint_inst, "highs", P)
    assert r.verified and validate_allocation(joint_inst.base, r.allocation) == []
    assert r.objective <= whole.objective + 1e-9
    assert r.bounds.dual >= whole.objective - 1e-6
    # no part hit its limit: never "feasible-at-limit" (issue 11.2); optimal only if it meets the bound
    assert r.status in (Status.FEASIBLE, Status.OPTIMAL)
    one = POP(1).solve(joint_inst, "highs", P)
    assert one.objective == pytest.approx(whole.objective)


def test_pop_parallel_equals_sequential(joint_inst):
    seq = POP(2).solve(joint_inst, "highs", P)
    par = POP(2, parallel=True, workers=2).solve(joint_inst, "highs", P.with_(threads=2))
    assert par.objective == pytest.approx(seq.objective) and par.verified


def test_pop_tier_and_tiresias():
    tier = generate_tier(preset("dally-2"), 12, seed=2)
    whole = solve(TierFormulation(), tier, "highs", P)
    r = POP(2).solve(tier, "highs", P)
    assert r.verified and r.objective <= whole.objective + 1e-9 <= r.bounds.dual + 2e-9
    tir = generate_tiresias(preset("tiresias-60"), 4, seed=3, gpus=8, busy=0.3)
    whole = solve(TiresiasFormulation(), tir, "cpsat", P)
    r = POP(2).solve(tir, "cpsat", P)
    assert r.verified and r.bounds.dual is None and r.objective >= whole.objective - 1e-9


def test_pop_tiresias_repairs_a_part_infeasible_alone():
    # regression (issue 11.2): `schedlab solve --generate tiresias-placement --cluster tiresias-60
    # --method pop-tiresias-ilp --backend highs` said infeasible; --method tiresias-ilp gave 12080
    inst = generate_tiresias(preset("tiresias-60"), 1, seed=0)
    whole = solve(TiresiasFormulation(), inst, "highs", P)
    r = POP(4).solve(inst, "highs", P)
    assert whole.status is Status.OPTIMAL and whole.objective == pytest.approx(12080.0)
    assert r.status.has_solution and r.verified and r.objective >= whole.objective - 1e-9
    assert any("infeasible alone" in n for n in r.notes)


@pytest.mark.parametrize("seed", range(6))
def test_pop_infeasible_only_when_the_whole_is(seed):
    # min-overhead tier instances: POP must agree with the whole problem on feasibility (checked by
    # solving it whole). Since issue 20.4 an unplaced job is priced, not infeasible, so both always
    # have a solution (a busy instance is then a real choice of the jobs left out: a node limit keeps
    # the test deterministic), and POP's merged allocation is never below the whole's proven bound
    inst = generate_tier(preset("dally-2"), 8 + 2 * seed, seed=seed, busy=0.5, mode=TierMode.MIN_OVERHEAD)
    p = P.with_(node_limit=300)
    whole = solve(TierFormulation(), inst, "highs", p)
    r = POP(4).solve(inst, "highs", p)
    assert whole.status.has_solution and r.status.has_solution
    assert r.verified and r.objective >= whole.bounds.dual - 1e-9 * abs(whole.bounds.dual)


def test_pop_status_is_its_worst_part(monkeypatch, joint_inst):
    # a part at its limit makes POP "feasible-at-limit"; a part without a solution makes POP that
    real = pop_mod._solve_part
    calls = []

    def fake(kind, sub, backend, params, term):
        out = real(kind, sub, backend, params)
        calls.append(1)
        if len(calls) == 2:
            out["termination"] = term
            if term == Status.NO_SOLUTION_AT_LIMIT.value:
                out["solution"] = None
        return out

    for term, expect in ((Status.FEASIBLE_AT_LIMIT, Status.FEASIBLE_AT_LIMIT),
                         (Status.NO_SOLUTION_AT_LIMIT, Status.NO_SOLUTION_AT_LIMIT)):
        calls.clear()
        monkeypatch.setattr(pop_mod, "_solve_part", lambda *a, term=term: fake(*a, term.value))
        r = POP(3).solve(joint_inst, "highs", P)
        assert r.status is expect


def test_a_late_part_gets_only_what_is_left_of_its_round(monkeypatch):
    # POP's rounds must not add their overruns up (20,000 jobs, k=16: 99-121 s for a 60 s budget)
    import time

    seen = []
    monkeypatch.setattr(pop_mod, "_solve_part", lambda kind, sub, backend, params: seen.append(params.time_limit_s))
    p = P.with_(time_limit_s=8.0)
    pop_mod._part_until(time.time() + 1e4, 2.0, "joint", {}, "highs", p)  # on time: its share
    pop_mod._part_until(time.time() - 1e4, 2.0, "joint", {}, "highs", p)  # its round is over: the floor
    pop_mod._part_until(None, 2.0, "joint", {}, "highs", p)  # no budget: untouched
    assert seen == [8.0, 2.0, 8.0]
