"""exact-joint as a mirror (issue 21 item 6): its decision set (resizable joint twin or the
``joint-rigid`` restriction), its objective (the family's or the neutral ``est-avg-jct``, solved
exactly), a warm start from a named heuristic, parameter validation and determinism."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from schedlab.benchmarks.registry import all_policies
from schedlab.benchmarks.simulator import simulate
from schedlab.formulations import POLICIES, SolveParams
from schedlab.formulations.base import solve
from schedlab.formulations.builtin_kinds import KINDS
from schedlab.formulations.joint import JointFormulation
from schedlab.formulations.joint_instance import JointInstance, JointObjective
from schedlab.formulations.joint_rigid import rigid_instance
from schedlab.formulations.joint_rules import joint_objective
from schedlab.formulations.policies import view_instance
from schedlab.formulations.policies.joint_snapshot import OptionTables, joint_snapshot, rigid_snapshot
from schedlab.formulations.result import Status
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources, validate_allocation
from schedlab.scheduling.snapshot import snapshot_view
from schedlab.topology.errors import SpecError

SPEC = POLICIES["exact-joint"]
FAST = {"threads": 1, "node_limit": 10_000}


def rigid(jid: str, gpus: int, iterations: float, arrival: float = 0.0) -> Job:
    """A job outside the perf model's zoo: its requested option only, valued 1; its remaining run
    time at the request is ``iterations`` seconds (reference rate 1)."""
    return Job(jid, Resources(gpus, gpus), iterations=iterations, arrival=arrival, model="no-such-model",
               attrs={"iter_time": 1.0, "rates": "reference"})


def preempt_case(make_cluster) -> Instance:
    """One 4-GPU machine. X (2 GPUs, 30 s left) runs; A (4 GPUs, 10 s) and B (2 GPUs, 1,000 s) wait.

    Family objective (placed jobs, each worth 1): {X, B} = 2 beats {A} = 1: keep X, start B.
    Neutral (est-avg-jct x 3, d_min = 10): X placed 30, queued 10 + 30 = 40 (2 GPUs free now);
    A placed 10, queued 30 + 10 = 40 (4 GPUs fit once X ends at 30); B placed 1,000, queued 1,010.
    {X, B}: 30 + 40 + 1,000 = 1,070; {A}: 40 + 10 + 1,010 = 1,060; {X}: 1,080; {B}: 1,080; {}: 1,090.
    The optimum without the holding rule preempts X for A. X holds its GPUs until its checkpoint, so
    under ``preemption=re-solve`` the round is solved again with X's 2 GPUs held: A cannot fit (wait
    1,000 = the longest run time, as no running job frees GPUs), B can: the decision preempts X and
    starts B (1,080). Under ``preemption=hold`` (the rule in the model) {A} is infeasible (X's GPUs are
    held) and the optimum is {X, B} (1,070): one solve, and a better decision than the re-solve's."""
    cl = make_cluster(machines=1)
    m = cl.machines[0]
    cur = Allocation({"x": JobAllocation("x", ExecutionPlan(dp=2), {m: Resources(2, 2)})})
    return Instance(cl, (rigid("x", 2, 30.0), rigid("a", 4, 10.0), rigid("b", 2, 1000.0)), current=cur, time=0.0)


@pytest.mark.parametrize("objective,mode,placed,solves", [
    ("family", "hold", ["b", "x"], 1), ("family", "re-solve", ["b", "x"], 1),
    ("neutral", "re-solve", ["b"], 2), ("neutral", "hold", ["b", "x"], 1)])
def test_rigid_neutral_decision_by_hand(make_cluster, objective, mode, placed, solves):
    inst = preempt_case(make_cluster)
    pol = SPEC.build({**FAST, "decisions": "rigid", "objective": objective, "reconfig_penalty": 0.0,
                      "preemption": mode}, seed=0)
    alloc = pol.decide(inst, seed=0)
    assert sorted(alloc.assignments) == placed
    assert validate_allocation(inst, alloc) == []
    assert pol.counters["solves"] == solves and pol.last_result.status is Status.OPTIMAL


def test_neutral_model_optimum_is_the_est_avg_jct_minimum_by_enumeration(make_cluster):
    """On the hand case's joint instance the NEUTRAL model's optimum is the allocation of least
    est-avg-jct among every feasible one (1,060 / 3), and ``joint_objective`` is the affine map of
    est-avg-jct the model maximises: est = (sum_j C^q_j - s * objective) / |J|."""
    inst = preempt_case(make_cluster)
    snap = view_instance(snapshot_view(inst))
    jinst = joint_snapshot(snap, OptionTables(inst.cluster), 0.0, objective=JointObjective.NEUTRAL)
    neutral = KINDS["joint"].neutral.fn
    res = solve(JointFormulation(), jinst, "highs", SolveParams(threads=1))
    assert res.status is Status.OPTIMAL and sorted(res.allocation.assignments) == ["a"]
    assert neutral(jinst, res.allocation) == pytest.approx(1060 / 3)
    m = inst.cluster.machines[0]
    place = {"x": JobAllocation("x", ExecutionPlan(dp=2), {m: Resources(2, 2)}),
             "a": JobAllocation("a", ExecutionPlan(dp=4), {m: Resources(4, 4)}),
             "b": JobAllocation("b", ExecutionPlan(dp=2), {m: Resources(2, 2)})}
    best = min(neutral(jinst, Allocation.of(place[j] for j in s)) for k in range(4)
               for s in itertools.combinations(place, k) if sum(place[j].gpus for j in s) <= 4)
    assert best == pytest.approx(1060 / 3)
    terms, d = jinst.neutral_terms, [30.0, 10.0, 1000.0]
    s = sum(d) / 3
    assert terms["x"] == pytest.approx((40 / s, 30 / s)) and terms["a"] == pytest.approx((40 / s, 10 / s))
    for k in range(4):
        for sub in itertools.combinations(place, k):
            if sum(place[j].gpus for j in sub) > 4:
                continue
            a = Allocation.of(place[j] for j in sub)
            assert neutral(jinst, a) == pytest.approx((1090 - s * joint_objective(jinst, a)) / 3)


def _perf_jobs(n: int = 4) -> tuple[Job, ...]:
    models = ("vit", "roberta", "bert", "vit")
    return tuple(Job(f"j{i}", Resources(g, 8 * g), iterations=3000.0, model=models[i % 4],
                     plan=ExecutionPlan(dp=g), reconfigurable=True)
                 for i, g in zip(range(n), (1, 2, 1, 2), strict=False))


def test_rigid_snapshot_is_the_joint_rigid_twin(make_cluster):
    """The rigid configuration's model is ``joint-rigid``'s restriction of the resizable snapshot (same
    options, pricing, fixed plans, no reconfigurable job), built from tables cached across rounds."""
    cl = make_cluster(machines=2, gpus=4, cpus=64, mem=512.0)
    snap = view_instance(snapshot_view(Instance(cl, _perf_jobs())))
    wide = joint_snapshot(snap, OptionTables(cl), 0.05)
    twin, wider = rigid_instance(wide)
    req = OptionTables(cl, source="request")
    mine = rigid_snapshot(joint_snapshot(snap, req, 0.05), req)
    assert wider == 0 and mine.pricing == twin.pricing == "perfmodel" and mine.fixed_plans and twin.fixed_plans
    assert {j: set(o) for j, o in mine.options.items()} == {j: set(o) for j, o in twin.options.items()}
    assert dict(mine.ref_throughput) == dict(twin.ref_throughput)
    assert not any(j.reconfigurable for j in mine.base.jobs)


def test_rigid_decisions_keep_every_request_resizable_ones_need_not(make_cluster):
    cl = make_cluster(machines=1, gpus=4, cpus=64, mem=512.0)
    jobs = _perf_jobs(2)
    inst = Instance(cl, jobs)
    rig = SPEC.build({**FAST, "decisions": "rigid"}, seed=0)
    alloc = rig.decide(inst, seed=0)
    assert rig.decisions == frozenset(
        {"admission", "placement", "preemption", "waiting"}) and rig.last_result.status is Status.OPTIMAL
    assert {ja.job_id: (ja.gpus, ja.plan) for ja in alloc} == {j.id: (j.requested.gpus, j.requested_plan) for j in jobs}
    wide = SPEC.build(FAST, seed=0).decide(inst, seed=0)
    assert sum(ja.gpus for ja in wide) == 4 > sum(ja.gpus for ja in alloc)  # resizing uses the idle GPUs


def test_bad_mode_parameters_name_the_field():
    for name, value in {"decisions": "elastic", "objective": "jct", "warm_start": "exact-joint",
                        "interval_s": 0, "rel_gap": 1.0}.items():
        with pytest.raises(SpecError) as ei:
            SPEC.validate({name: value})
        assert ei.value.field == f"exact-joint.{name}", name
    with pytest.raises(SpecError) as ei:  # formulations cannot resolve a name: the merged registry does
        SPEC.build({"warm_start": "rubick"})
    assert ei.value.field == "exact-joint.warm_start" and "all_policies" in str(ei.value)
    with pytest.raises(SpecError) as ei:
        all_policies().build("exact-joint", {"warm_start": "rubik"})
    assert ei.value.field == "exact-joint.warm_start" and "rubick" in str(ei.value)
    names = {p["name"] for p in all_policies()["exact-joint"].describe()["params"]}
    assert {"decisions", "objective", "warm_start", "interval_s"} <= names  # what `schedlab list policies` shows


def test_warm_start_from_rubick_is_used_and_changes_nothing(make_cluster):
    """Rubick's decision on the same snapshot is the MIP start (the backend takes it: it is feasible);
    the optimum is the same with and without it."""
    cl = make_cluster(machines=2, gpus=4, cpus=64, mem=512.0)
    inst = Instance(cl, _perf_jobs())
    warm = all_policies().build("exact-joint", {**FAST, "warm_start": "rubick"}, seed=0)
    cold = all_policies().build("exact-joint", FAST, seed=0)
    a, b = warm.decide(inst, seed=0), cold.decide(inst, seed=0)
    assert warm.last_result.provenance.warm_start_used is True and warm.counters["warm-start:used"] == 1
    assert cold.counters["warm-start:used"] == 0
    assert warm.last_result.status is cold.last_result.status is Status.OPTIMAL
    assert warm.last_result.objective == pytest.approx(cold.last_result.objective, rel=1e-9)
    assert dict(a.assignments) == dict(b.assignments)


def test_modes_replay_deterministically(make_cluster):
    cl = make_cluster(machines=2, gpus=4, cpus=64, mem=512.0)
    jobs = tuple(dataclasses.replace(j, arrival=40.0 * i) for i, j in enumerate(_perf_jobs())) + (
        rigid("u", 2, 300.0, arrival=70.0),)
    params = {**FAST, "decisions": "rigid", "objective": "neutral", "warm_start": "rubick"}
    runs = []
    for _ in range(2):
        pol = all_policies().build("exact-joint", params, seed=1)
        res = simulate(cl, jobs, pol)
        assert res.unfinished == ()
        runs.append(repr([dataclasses.asdict(r) for r in res.jobs]))
        assert pol.counters["warm-start:used"] + pol.counters["warm-start:not-used"] == pol.counters["solves"]
    assert runs[0] == runs[1]


def test_gap_harness_lists_a_rigid_exact_joint_as_a_check_of_joint_rigid():
    from schedlab.benchmarks.harness import GapCase
    from schedlab.benchmarks.harness.gap import run_gap

    gen = {"source": "perfmodel"}
    out = {p.get("decisions", "resizable") + "/" + p.get("objective", "family"):
           run_gap(GapCase("joint", "rubick-64", 4, "exact-joint", None, seed=0, policy_params=p, generator=gen)).flat()
           for p in ({"node_limit": 10_000}, {"decisions": "rigid", "node_limit": 10_000},
                     {"objective": "neutral", "node_limit": 10_000})}
    assert out["resizable/family"]["twin"] == "joint-2stage" and out["resizable/family"]["check"]
    assert out["rigid/family"]["twin"] == "joint-rigid" and out["rigid/family"]["check"]
    assert out["resizable/neutral"]["check"] is False  # another objective: a result, not a check
    assert all(o["verified"] for o in out.values())


def test_jointinstance_neutral_objective_round_trips():
    from schedlab.formulations.joint_options import generate_joint
    from schedlab.topology import preset

    inst = dataclasses.replace(generate_joint(preset("rubick-64"), 4, seed=0), objective=JointObjective.NEUTRAL)
    back = JointInstance.from_dict(inst.to_dict())
    assert back.objective is JointObjective.NEUTRAL and dict(back.neutral_terms) == dict(inst.neutral_terms)


def test_settled_rounds_change_no_record(make_cluster, monkeypatch):
    """Rounds answered without solving (the previous optimum provably still optimal) give the same
    replay, record for record, as solving every round."""
    from schedlab.formulations.policies.exact_joint import ExactJointPolicy

    cl = make_cluster(machines=2, gpus=4, cpus=64, mem=512.0)
    jobs = tuple(dataclasses.replace(j, arrival=200.0 * i) for i, j in enumerate(_perf_jobs())) + (
        rigid("u", 2, 900.0, arrival=100.0),)

    def run():
        pol = SPEC.build(FAST, seed=0)
        res = simulate(cl, jobs, pol)
        return repr([dataclasses.asdict(r) for r in res.jobs]), pol.counters

    fast, counters = run()
    assert counters["rounds-settled"] >= 1
    monkeypatch.setattr(ExactJointPolicy, "_settled", lambda self, inst: None)
    slow, every = run()
    assert every["rounds-settled"] == every["rounds-unchanged"] == 0 and every["solves"] > counters["solves"]
    assert fast == slow
