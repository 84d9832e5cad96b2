"""Issue 21: the holding rule in the joint instance (``JointInstance.hold_preempted``, the simulator's):
a running job the decision preempts keeps its resources until its checkpoint, so no twin may start
another job on them in the same decision, and a heuristic allocation that does is judged by the same
rule (:func:`~schedlab.formulations.joint_rules.holding_violations`)."""

from __future__ import annotations

import dataclasses

import pytest

from schedlab.formulations import JobOption, JointInstance, SolveParams
from schedlab.formulations.base import solve
from schedlab.formulations.builtin_kinds import JOINT
from schedlab.formulations.joint import JointFormulation, relaxation_bound
from schedlab.formulations.joint_pack import pack_greedy
from schedlab.formulations.joint_plan import solve_plan
from schedlab.formulations.joint_pooled import pooled_ok
from schedlab.formulations.joint_rigid import solve_rigid
from schedlab.formulations.joint_rules import holding_violations, joint_objective
from schedlab.formulations.joint_twostage import JointTwoStage
from schedlab.formulations.result import Status
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources, validate_allocation
from schedlab.scheduling.job import JobClass

from .conftest import tiny_cluster

P = SolveParams(threads=1, time_limit_s=30, seed=0, work_limit=30)
DP2, DP4 = ExecutionPlan(dp=2), ExecutionPlan(dp=4)


def _o(g, t, plan):
    return JobOption(g, g, 1, t, plan)


def instance(*, hold: bool, resizable: bool = True) -> JointInstance:
    """One machine of 4 GPUs. ``a`` runs there on all 4 (ref 10: worth 1.0 at 4 GPUs; resizable to 2 GPUs
    at 6.0, worth 0.6). ``b`` and ``c`` wait, 2 GPUs each, worth 1.0 each.

    By hand, without the rule (preempted GPUs free at once): preempt ``a``, run ``b`` + ``c`` = **2.0**
    (shrinking ``a`` and starting one: 1.6; keeping ``a``: 1.0). With the rule, preempting ``a`` leaves its
    4 GPUs held for the whole decision: ``b`` and ``c`` cannot start (0.0), so the optimum shrinks ``a``
    to 2 GPUs and starts one of them: **1.6**; with ``a`` rigid it keeps ``a``: **1.0**."""
    cl = tiny_cluster(machines=1, gpus=4, cpus=16, mem=64.0)
    m = cl.machines[0]
    a = Job("a", Resources(4, 4), plan=DP4, reconfigurable=resizable)
    b = Job("b", Resources(2, 2), plan=DP2, reconfigurable=False)
    c = Job("c", Resources(2, 2), plan=DP2, reconfigurable=False)
    cur = Allocation({"a": JobAllocation("a", DP4, {m: Resources(4, 4)})})
    opts = {"a": (_o(4, 10.0, DP4), _o(2, 6.0, DP2)), "b": (_o(2, 5.0, DP2),), "c": (_o(2, 5.0, DP2),)}
    base = Instance(cl, (a, b, c), current=cur, time=100.0)
    return JointInstance(base, opts, {"a": 10.0, "b": 5.0, "c": 5.0}, hold_preempted=hold)


def test_the_rule_changes_the_hand_optimum_on_every_exact_method():
    for hold, want in ((False, 2.0), (True, 1.6)):
        inst = instance(hold=hold)
        for name, res in (("joint", solve(JointFormulation(), inst, "highs", P)),
                          ("joint-machines", solve(JointFormulation(aggregate=False), inst, "highs", P)),
                          ("joint-2stage", JointTwoStage().solve(inst, "highs", P)),
                          ("joint-2stage cpsat", JointTwoStage().solve(inst, "cpsat", P))):
            assert res.status is Status.OPTIMAL, (hold, name)
            assert res.objective == pytest.approx(want), (hold, name)
            assert res.violations == (), (hold, name)
        if hold:
            assert {ja.job_id: ja.gpus for ja in res.allocation}["a"] == 2 and len(res.allocation) == 2
        # the class relaxation stays a bound of its model
        assert relaxation_bound(inst) >= want - 1e-9


def test_the_rule_in_the_fixed_size_and_plan_twins():
    """``a`` rigid: without the rule the rigid twin preempts it for ``b`` + ``c`` (2.0); with it, keeps ``a``
    (1.0). The plan twin (GPU counts at the request) agrees."""
    for hold, want in ((False, 2.0), (True, 1.0)):
        inst = instance(hold=hold, resizable=False)
        for res in (solve_rigid(inst, "highs", P), solve_plan(inst, "highs", P), solve_rigid(inst, "cpsat", P)):
            assert res.status is Status.OPTIMAL and res.objective == pytest.approx(want), hold
    # the resizable instance's rigid twin keeps a too (it may not shrink it)
    assert solve_rigid(instance(hold=True), "highs", P).objective == pytest.approx(1.0)


def test_the_verifier_and_scorer_judge_a_heuristic_by_the_same_rule():
    """"Preempt a and start b + c in the same decision" is a point of the problem without the rule (2.0, no
    violation) and breaks it with the rule (the simulator would reject it: a's GPUs are still held)."""
    m = instance(hold=True).base.cluster.machines[0]
    greedy = Allocation({j: JobAllocation(j, DP2, {m: Resources(2, 2)}) for j in ("b", "c")})
    free = instance(hold=False)
    assert holding_violations(free, greedy) == [] and JOINT.violations(free, greedy) == []
    assert validate_allocation(free.base, greedy) == []
    assert joint_objective(free, greedy) == pytest.approx(2.0)
    held = instance(hold=True)
    wrong = JOINT.violations(held, greedy)
    assert len(wrong) == 1 and wrong[0].startswith("[hold]") and "'a'" in wrong[0]
    assert JointFormulation().verify(held, greedy) == wrong
    # preempting a and starting nothing keeps the rule (a holds its 4 GPUs); so does shrinking a and starting b
    assert JOINT.violations(held, Allocation()) == []
    shrink = Allocation({"a": JobAllocation("a", DP2, {m: Resources(2, 2)}),
                         "b": JobAllocation("b", DP2, {m: Resources(2, 2)})})
    assert JOINT.violations(held, shrink) == [] and joint_objective(held, shrink) == pytest.approx(1.6)


def test_a_preempted_guaranteed_job_keeps_its_quota_charge():
    """Tenant T's quota is 4 GPUs; ``g`` (guaranteed, 2 GPUs) runs on machine 0 of two; ``h`` (guaranteed, 4
    GPUs, worth 3) waits. Without the rule, preempting ``g`` lets ``h`` start on the free machine (3.0 >
    keeping g, 1.0); with it, g's quota charge stays, so ``h`` cannot start: keep ``g`` (1.0)."""
    cl = tiny_cluster(machines=2, gpus=4, cpus=16, mem=64.0)
    m0 = cl.machines[0]

    def g(jid, gpus):
        return Job(jid, Resources(gpus, gpus), plan=ExecutionPlan(dp=gpus), tenant="T",
                   job_class=JobClass.GUARANTEED, reconfigurable=False)

    cur = Allocation({"g": JobAllocation("g", DP2, {m0: Resources(2, 2)})})
    base = Instance(cl, (g("g", 2), g("h", 4)), current=cur, quotas={"T": Resources(4)})
    opts = {"g": (_o(2, 5.0, DP2),), "h": (_o(4, 30.0, DP4),)}
    for hold, want in ((False, 3.0), (True, 1.0)):
        inst = JointInstance(base, opts, {"g": 5.0, "h": 10.0}, hold_preempted=hold)
        for res in (solve(JointFormulation(), inst, "highs", P), JointTwoStage().solve(inst, "highs", P)):
            assert res.status is Status.OPTIMAL and res.objective == pytest.approx(want), hold
    inst = JointInstance(base, opts, {"g": 5.0, "h": 10.0}, hold_preempted=True)
    start_h = Allocation({"h": JobAllocation("h", DP4, {cl.machines[1]: Resources(4, 4)})})
    assert any("quota" in v for v in JOINT.violations(inst, start_h))


def test_pooling_and_packing_respect_the_rule():
    held = instance(hold=True)
    assert not pooled_ok(held)[0] and "holding rule" in pooled_ok(held)[1]
    # a held job's GPUs are not free to the greedy packing of stage 2
    assert len(pack_greedy(held, {"a": "hold", "b": held.option("b", 0), "c": held.option("c", 0)})) == 0
    assert len(pack_greedy(held, {"a": "keep", "b": held.option("b", 0)})) == 1


def test_the_flag_round_trips_and_survives_the_twins_restrictions():
    inst = instance(hold=True)
    assert JointInstance.from_dict(inst.to_dict()).hold_preempted is True
    assert "hold_preempted" not in instance(hold=False).to_dict()
    neutral = JOINT.neutral.exact_instance(inst)
    assert neutral.hold_preempted is True
    assert dataclasses.replace(inst, reconfig_penalty=0.5).hold_preempted is True
