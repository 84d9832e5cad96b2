"""The exact-in-the-loop policy ``exact-joint``: hand-worked rounds, the reconfiguration penalty, its
parameters, its fallbacks, a replay, and its snapshot decision against the joint model's optimum."""

from __future__ import annotations

import dataclasses

import pytest

from schedlab.benchmarks.simulator import simulate
from schedlab.formulations import OBJECTIVES, POLICIES, SolveParams, Status, Termination
from schedlab.formulations.base import solve
from schedlab.formulations.joint import JointFormulation
from schedlab.formulations.joint_options import PerfOptions, generate_joint
from schedlab.formulations.policies import ExactJointPolicy, exact_joint, joint_snapshot, view_instance
from schedlab.formulations.policies.joint_snapshot import OptionTables, holding, quota_left
from schedlab.perfmodel.environment import shape_placements
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import (
    Allocation,
    Instance,
    Job,
    JobAllocation,
    JobClass,
    Resources,
    validate_allocation,
)
from schedlab.scheduling.snapshot import snapshot_view
from schedlab.topology.errors import SolverError, SpecError

SPEC = POLICIES["exact-joint"]
FAST = {"threads": 1, "node_limit": 10_000}


def rigid(jid: str, gpus: int, arrival: float = 0.0, iterations: float = 1000.0) -> Job:
    """A job outside the perf model's zoo: only its requested option, valued 1 (placement-blind)."""
    return Job(jid, Resources(gpus, gpus), iterations=iterations, arrival=arrival, model="no-such-model",
               attrs={"iter_time": 1.0, "rates": "reference"})


def decide(inst: Instance, **params) -> tuple[Allocation, ExactJointPolicy]:
    pol = SPEC.build({**FAST, **params}, seed=0)
    return pol.decide(inst, seed=0), pol


def test_unknown_models_place_the_most_jobs_by_hand(make_cluster):
    """One 4-GPU machine; A wants 4 GPUs, B and C 2 each, none known to the perf model (each worth 1
    when placed). A alone = 1; B + C = 2: the optimum places B and C, A waits."""
    cl = make_cluster(machines=1)
    inst = Instance(cl, (rigid("a", 4), rigid("b", 2), rigid("c", 2)))
    alloc, pol = decide(inst)
    assert sorted(alloc.assignments) == ["b", "c"]
    assert validate_allocation(inst, alloc) == []
    assert pol.last_result.status is Status.OPTIMAL and pol.last_result.objective == pytest.approx(2.0)
    assert pol.counters["fallback:unknown-model:request-only"] == 3


@pytest.mark.parametrize("penalty,kept", [(1.5, True), (0.5, False)])
def test_reconfiguration_penalty_by_hand(make_cluster, penalty, kept):
    """A (4 GPUs) runs on the only machine, B and C (2 GPUs each) wait. Preempting A for B + C is worth
    2 - pi (one running job changed), keeping A is worth 1: A stays iff pi > 1. A preempted job holds
    its GPUs until its checkpoint is saved; with ``preemption=re-solve`` the round is solved again with A
    out and its GPUs held: B and C cannot start in the decision that preempts A (they start at a later
    round)."""
    cl = make_cluster(machines=1)
    m = cl.machines[0]
    cur = Allocation({"a": JobAllocation("a", ExecutionPlan(dp=4), {m: Resources(4, 4)})})
    inst = Instance(cl, (rigid("a", 4), rigid("b", 2), rigid("c", 2)), current=cur, time=100.0)
    alloc, pol = decide(inst, reconfig_penalty=penalty, preemption="re-solve")
    assert sorted(alloc.assignments) == (["a"] if kept else [])
    assert pol.counters["re-solved:preemption"] == (0 if kept else 1)
    assert pol.counters["solves"] == (1 if kept else 2)
    if kept:
        assert pol.last_result.objective == pytest.approx(1.0)


@pytest.mark.parametrize("penalty", [1.5, 0.5])
def test_the_holding_rule_in_the_model_keeps_a_rigid_job(make_cluster, penalty):
    """The same snapshot under ``preemption=hold`` (default): the rule is in the model, where preempting
    A frees nothing within the decision (A holds its 4 GPUs), so B + C cannot start: preempting is worth
    -pi, keeping A 1. One solve, A kept, whatever the penalty; the solved instance carries the rule."""
    cl = make_cluster(machines=1)
    m = cl.machines[0]
    cur = Allocation({"a": JobAllocation("a", ExecutionPlan(dp=4), {m: Resources(4, 4)})})
    inst = Instance(cl, (rigid("a", 4), rigid("b", 2), rigid("c", 2)), current=cur, time=100.0)
    alloc, pol = decide(inst, reconfig_penalty=penalty)
    assert sorted(alloc.assignments) == ["a"]
    assert pol.counters["solves"] == 1 and pol.counters["re-solved:preemption"] == 0
    assert pol.last_result.status is Status.OPTIMAL and pol.last_result.objective == pytest.approx(1.0)
    assert pol.last_instance.hold_preempted is True


def test_preempted_jobs_resources_wait_for_the_checkpoint_in_a_replay(make_cluster):
    """A (4 GPUs, 1,000 s) starts at 0 alone; B and C (2 GPUs each, 600 s) arrive at 10. Under
    ``preemption=re-solve`` the 60 s round preempts A (2 - 0.05 > 1); B and C start once A's checkpoint is
    saved, and A resumes after them. Under ``hold`` (the rule in the model) no round gains by preempting
    A, so A runs to its end and B and C start after it."""
    cl = make_cluster(machines=1)
    jobs = (rigid("a", 4), rigid("b", 2, arrival=10.0, iterations=600.0), rigid("c", 2, arrival=10.0, iterations=600.0))
    pol = SPEC.build({**FAST, "preemption": "re-solve"}, seed=0)
    res = simulate(cl, jobs, pol)
    r = {x.job_id: x for x in res.jobs}
    assert res.unfinished == () and r["a"].preemptions == 1
    assert r["b"].first_start > 60.0 and r["b"].first_start == r["c"].first_start
    assert r["a"].end > r["b"].end
    assert pol.counters["re-solved:preemption"] == 1
    pol = SPEC.build(FAST, seed=0)
    res = simulate(cl, jobs, pol)
    r = {x.job_id: x for x in res.jobs}
    assert res.unfinished == () and r["a"].preemptions == 0
    assert r["b"].first_start >= r["a"].end and pol.counters["re-solved:preemption"] == 0


def test_two_perf_model_jobs_split_one_machine_by_hand(make_cluster):
    """ViT and RoBERTa, each requesting 1 GPU (data parallel), share a 4-GPU machine with CPUs and
    memory to spare. Best single-machine throughput per GPU count (perf model, samples/s), normalised
    by the 1-GPU request: ViT 1: 400.0 (1), 2: 643.3 (1.608), 4: 924.4 (2.311), 3: no valid plan;
    RoBERTa 1: 50.7 (1), 2: 94.4 (1.861), 4: 164.7 (3.248), 3: none. Splits g_vit + g_rob <= 4:
    (2, 2) = 3.469 > (0, 4) = 3.248 > (1, 2) = 2.861 > (2, 1) = 2.608 > (4, 0) = 2.311 > (1, 1) = 2:
    two GPUs each."""
    cl = make_cluster(machines=1, gpus=4, cpus=48, mem=512.0)
    jobs = tuple(Job(m, Resources(1, 8), iterations=1e6, model=m, plan=ExecutionPlan(dp=1), reconfigurable=True)
                 for m in ("vit", "roberta"))
    po = PerfOptions(cl, 4)
    norm = {}
    for j in jobs:  # the hand table above, recomputed from the perf model
        ref = po.pm.throughput(j.model, ExecutionPlan(dp=1), shape_placements(cl, 1)[0], 8)
        best: dict[int, float] = {0: 0.0}
        for o in po.options(j.model, None):
            if o.single:
                best[o.gpus] = max(best.get(o.gpus, 0.0), o.throughput / ref)
        norm[j.id] = best
    assert norm["vit"][2] == pytest.approx(1.608, abs=2e-3) and norm["roberta"][4] == pytest.approx(3.248, abs=2e-3)
    split = max(((a, b) for a in norm["vit"] for b in norm["roberta"] if a + b <= 4),
                key=lambda s: norm["vit"][s[0]] + norm["roberta"][s[1]])
    assert split == (2, 2)
    inst = Instance(cl, jobs)
    alloc, pol = decide(inst)
    assert {ja.job_id: ja.gpus for ja in alloc} == {"vit": 2, "roberta": 2}
    assert validate_allocation(inst, alloc) == []
    assert pol.last_result.objective == pytest.approx(norm["vit"][2] + norm["roberta"][2], rel=1e-3)


def test_snapshot_decision_reaches_the_proven_optimum_of_a_generated_instance(make_cluster):
    inst = generate_joint(make_cluster(machines=2, gpus=4, cpus=64, mem=512.0), 5, seed=4, source="perfmodel")
    alloc, pol = decide(inst.base)
    assert pol.last_result.status is Status.OPTIMAL
    opt = solve(JointFormulation(), inst, "highs", SolveParams(threads=1, node_limit=10_000))
    assert opt.status is Status.OPTIMAL
    assert OBJECTIVES["joint"](inst, alloc) == pytest.approx(opt.objective, rel=1e-6)


def test_quota_held_by_restoring_jobs_is_not_given_again(make_cluster):
    """Tenant T's quota is 4 GPUs; a restoring guaranteed job holds 2 (not in the decision): a queued
    guaranteed job asking for 4 must wait, one asking for 2 may start; with all 4 held, it waits too."""
    cl = make_cluster(machines=2)

    def g(jid, gpus):
        return dataclasses.replace(rigid(jid, gpus), tenant="T", job_class=JobClass.GUARANTEED)

    inst = Instance(cl, (g("big", 4), g("small", 2)), quotas={"T": Resources(4)})
    quotas, out = quota_left(inst, (g("held", 2),))
    assert quotas["T"] == Resources(2) and out == set()
    quotas, out = quota_left(inst, (g("held", 4),))
    assert out == {"big", "small"}
    tables = OptionTables(cl)
    snap = view_instance(snapshot_view(inst))
    frozen = dataclasses.replace(snap, frozen=(g("held", 2),))
    j = joint_snapshot(frozen, tables, 0.0)
    assert j.base.quotas["T"] == Resources(2)
    res = solve(JointFormulation(), j, "highs", SolveParams(threads=1))
    assert sorted(res.allocation.assignments) == ["small"]
    # a preempted guaranteed job keeps its GPUs and its quota charge until its checkpoint is saved
    m = cl.machines[0]
    cur = Allocation({"run": JobAllocation("run", ExecutionPlan(dp=2), {m: Resources(2, 2)})})
    inst = Instance(cl, (g("run", 2), g("big", 4)), current=cur, quotas={"T": Resources(4)})
    h = holding(joint_snapshot(view_instance(snapshot_view(inst)), tables, 0.0), {"run"})
    assert [x.id for x in h.base.jobs] == ["big"] and len(h.base.current) == 0
    assert h.base.quotas["T"] == Resources(2) and h.base.reserved[m] == Resources(2, 2)
    assert solve(JointFormulation(), h, "highs", SolveParams(threads=1)).allocation.assignments == {}


def test_bad_parameters_name_the_field():
    cases = {"time_limit_s": 0, "reconfig_penalty": -1, "backend": "gurobi", "method": "pop-joint", "threads": 0,
             "interval_s": -5, "source": "oracle", "max_gpus": -1}
    for name, value in cases.items():
        with pytest.raises(SpecError) as ei:
            SPEC.validate({name: value})
        assert ei.value.field == f"exact-joint.{name}", name
    with pytest.raises(SpecError) as ei:
        SPEC.validate({"backend": "cpsat", "node_limit": 5})
    assert ei.value.field == "exact-joint.node_limit" and "work_limit" in str(ei.value)
    with pytest.raises(SpecError) as ei:
        SPEC.validate({"backend": "highs", "work_limit": 1.0})
    assert ei.value.field == "exact-joint.work_limit"
    assert SPEC.validate({"backend": "cpsat", "work_limit": 1.0})["work_limit"] == 1.0


def _raising(*_a, **_k):
    raise SolverError("backend crashed")


def _no_solution(inst, backend, params):
    res = solve(JointFormulation(), inst, backend, params)
    return dataclasses.replace(res, termination=Termination.of(Status.NO_SOLUTION_AT_LIMIT), allocation=None, solution=None)


@pytest.mark.parametrize("solver,counter", [(_raising, "kept-current:solver-error"),
                                            (_no_solution, "kept-current:no-solution-at-limit")])
def test_a_failed_round_keeps_the_running_allocation_and_is_counted(make_cluster, monkeypatch, solver, counter):
    monkeypatch.setattr(exact_joint, "solver_of", lambda method: solver)
    cl = make_cluster(machines=1)
    m = cl.machines[0]
    cur = Allocation({"a": JobAllocation("a", ExecutionPlan(dp=2), {m: Resources(2, 2)})})
    inst = Instance(cl, (rigid("a", 2), rigid("b", 2)), current=cur, time=60.0)
    alloc, pol = decide(inst)
    assert dict(alloc.assignments) == dict(cur.assignments)
    assert pol.counters[counter] == 1
    assert pol.limit_log == [(60.0, counter.split(":", 1)[1])]  # which round did not prove optimality


def test_replay_finishes_every_job_same_seed_same_records(make_cluster):
    """Two machines of 4 GPUs, five jobs arriving over two minutes (three the perf model knows, two
    it does not): every job finishes, rounds answer from the steady state when nothing changed, and
    the same seed gives the same records."""
    cl = make_cluster(machines=2, gpus=4, cpus=64, mem=512.0)
    known = [Job(f"k{i}", Resources(g, 8 * g), iterations=3000.0, arrival=30.0 * i, model=m,
                 plan=ExecutionPlan(dp=g), reconfigurable=True)
             for i, (m, g) in enumerate((("vit", 2), ("roberta", 4), ("bert", 1)))]
    jobs = tuple(known) + (rigid("u0", 2, arrival=45.0, iterations=600.0), rigid("u1", 4, arrival=120.0,
                                                                                  iterations=300.0))
    runs = []
    for _ in range(2):
        pol = SPEC.build(FAST, seed=3)
        res = simulate(cl, jobs, pol)
        assert res.unfinished == ()
        assert {r.job_id for r in res.jobs} == {j.id for j in jobs}
        runs.append(repr([dataclasses.asdict(r) for r in res.jobs]))  # repr: ideal_duration may be nan
        assert pol.counters["solves"] >= 2 and pol.counters["rounds-unchanged"] >= 1
        assert res.metrics["policy_counters"] == dict(pol.counters)
    assert runs[0] == runs[1]


def test_capacity_held_outside_the_jobs_stays_held():
    # a snapshot whose instance reserves 6 of rack0-m5's 8 GPUs (work outside the decision): the view
    # shows that only as less free capacity; view_instance must give it back as reserved, and the
    # policy's decision must fit in what is left (it once placed 14 GPUs on that machine)
    from schedlab.scheduling.verify import validate_allocation
    from schedlab.topology import preset

    inst = generate_joint(preset("rubick-64"), 8, seed=0, source="perfmodel", busy=0.3)
    assert dict(inst.base.reserved) == {"rack0-m5": Resources(6, 72, 1200.0)}
    assert dict(view_instance(snapshot_view(inst.base)).instance.reserved) == dict(inst.base.reserved)
    alloc = POLICIES.build("exact-joint", {}, seed=0).decide(inst.base, seed=0)
    assert validate_allocation(inst.base, alloc) == []
