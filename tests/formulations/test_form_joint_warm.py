"""Warm starts of the exact joint solves (a heuristic's allocation as the first incumbent, reported in
``SolveResult.provenance.warm_start_used``) and the two-stage solve's repair of choices that did not fit."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.registry import all_policies
from schedlab.formulations import METHODS, JobOption, JointInstance, SolveParams, Status
from schedlab.formulations.joint import pooled_ok
from schedlab.formulations.joint_options import generate_joint
from schedlab.formulations.joint_pack import pack_greedy
from schedlab.formulations.joint_rules import joint_objective
from schedlab.formulations.joint_twostage import FASTEST_EXACT, JointTwoStage
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources, validate_allocation

P = SolveParams(threads=1, time_limit_s=30, seed=0, work_limit=30)


@pytest.fixture(scope="module")
def busy():
    """A perf-model instance on a fragmented cluster (the pooled model takes it; ``joint-machines`` is the
    per-machine model), and Rubick's and FIFO's decisions on it."""
    from schedlab.topology import preset

    inst = generate_joint(preset("rubick-64"), 12, seed=0, source="perfmodel", busy=0.3)
    reg = all_policies()
    return inst, reg["rubick"].decide(inst.base, seed=0), reg["fifo"].decide(inst.base, seed=0)


@pytest.mark.parametrize("backend", ["highs", "cpsat", "scip"])
@pytest.mark.parametrize("method", ["joint", "joint-machines", "joint-2stage"])
def test_a_valid_start_is_used_and_reported(backend, method, busy, need_backend):
    need_backend(backend)
    inst, rubick, fifo = busy
    for start in (rubick, fifo):
        value = joint_objective(inst, start)
        r = METHODS[method].solve(inst, backend, P.with_(warm_start=start))
        assert r.provenance.warm_start_used is True, r.notes
        assert any(n.startswith("warm start used") for n in r.notes), r.notes
        assert r.objective >= value - 1e-9 and r.verified
    plain = METHODS[method].solve(inst, backend, P)
    assert plain.provenance.warm_start_used is None and not any("warm start" in n for n in plain.notes)
    assert plain.objective == pytest.approx(r.objective, rel=1e-6)


def test_a_backend_without_starts_says_so(busy, need_backend):
    need_backend("scipy")
    inst, rubick, _ = busy
    r = METHODS["joint-machines"].solve(inst, "scipy", P.with_(warm_start=rubick))
    assert r.provenance.warm_start_used is False and any("scipy takes no start" in n for n in r.notes)


@pytest.mark.parametrize("method", ["joint", "joint-machines", "joint-2stage"])
def test_a_start_outside_the_model_is_not_used(method, busy):
    # two jobs on one machine's 8 GPUs, 8 each: breaks a capacity row (and does not verify)
    inst, _, _ = busy
    m = next(m for m in inst.base.cluster.machines if inst.base.capacity(m).gpus == 8)
    jobs = inst.base.jobs[:2]
    bad = Allocation.of([JobAllocation(j.id, ExecutionPlan(dp=8), {m: Resources(8, 64, 400.0)}) for j in jobs])
    assert validate_allocation(inst.base, bad)
    r = METHODS[method].solve(inst, "highs", P.with_(warm_start=bad))
    assert r.provenance.warm_start_used is False and r.status is Status.OPTIMAL


def test_highs_receives_the_start(busy, capfd):
    # HiGHS logs whether the MIP start MathOpt hands it is feasible (its own check)
    inst, rubick, _ = busy
    r = METHODS["joint-machines"].solve(inst, "highs", P.with_(warm_start=rubick, verbose=True))
    assert r.provenance.warm_start_used is True
    assert "MIP start solution is feasible" in capfd.readouterr().out


def test_fastest_exact_names_a_registered_method():
    assert FASTEST_EXACT["joint"] in METHODS and METHODS[FASTEST_EXACT["joint"]].kind == "joint"


# ----------------------------------------------------------------- the two-stage repair
def _opt(g: int, t: float, spread: bool = False) -> JobOption:
    return JobOption(g, g, 2 if spread else 1, t, ExecutionPlan(dp=g), float(g), 1 if spread else 0)


def repair_instance(cluster) -> JointInstance:
    """2 machines x 4 GPUs. A and B: 3 GPUs on one machine (3.0 each); C: 2 GPUs on one machine (2.5)
    or spread 1 + 1 (2.0). The class MIP picks A + B + C-on-one-machine (8.5), which does not pack (3 + 2
    > 4); the repair gives C its spread option on the two leftover GPUs: 8.0, the optimum."""
    jobs = tuple(Job(j, Resources(g, g, 0.0), reconfigurable=True) for j, g in (("A", 3), ("B", 3), ("C", 2)))
    options = {"A": (_opt(3, 3.0),), "B": (_opt(3, 3.0),), "C": (_opt(2, 2.5), _opt(2, 2.0, spread=True))}
    return JointInstance(Instance(cluster, jobs), options, {"A": 1.0, "B": 1.0, "C": 1.0})


def test_repair_places_the_choice_that_did_not_fit(make_cluster):
    inst = repair_instance(make_cluster())
    chosen = {j: inst.options[j][0] for j in ("A", "B", "C")}
    plain = pack_greedy(inst, chosen)
    assert sorted(ja.job_id for ja in plain) == ["A", "B"] and joint_objective(inst, plain) == pytest.approx(6.0)
    fixed = pack_greedy(inst, chosen, repair=True)
    assert validate_allocation(inst.base, fixed) == []
    assert sorted(fixed["C"].placement[m].gpus for m in fixed["C"].placement) == [1, 1]
    assert joint_objective(inst, fixed) == pytest.approx(8.0)


@pytest.mark.parametrize("backend", ["highs", "cpsat"])
def test_two_stage_reports_the_repair_and_proves_it_optimal(backend, make_cluster):
    inst = repair_instance(make_cluster())
    assert not pooled_ok(inst)[0]
    r = JointTwoStage().solve(inst, backend, P)
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(8.0) and r.verified
    rep = next(n for n in r.notes if n.startswith("stage 2b"))
    assert "1 of 1 unplaced jobs placed" in rep and "objective 8" in rep
