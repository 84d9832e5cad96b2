"""Joint plan + allocation: hand-worked optima on every backend, infeasibility, variants, cross-checks."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.formulations import (
    JobOption,
    JointFormulation,
    JointInstance,
    JointObjective,
    SolveParams,
    Termination,
    solve,
)
from schedlab.formulations.backends import BACKENDS
from schedlab.formulations.io import load_instance, save_instance
from schedlab.formulations.joint import pooled_ok as aggregation_ok
from schedlab.formulations.joint import relaxation_bound
from schedlab.formulations.joint_instance import joint_objective
from schedlab.formulations.joint_options import generate_joint
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
from schedlab.scheduling.state import ClusterState
from schedlab.topology.errors import SolverError

P = SolveParams(threads=1, time_limit_s=30, seed=0, deterministic_limit=30)


def opt(g, c, n, t):
    return JobOption(g, c, n, t, ExecutionPlan(dp=g), mem_gb=float(g))


def hand_instance(cluster, objective=JointObjective.SUM, weights=None, guaranteed_a=False, quota=None,
                  current=None, penalty=0.0):
    """2 machines x 4 GPUs / 16 CPUs. a: ref 10 -> options 1g:6 (below SLO), 2g:10, 4g:16, 8g(2 machines):24.
    b: ref 5 -> 1g:5, 2g:9, 4g:12. Normalised a: 0.6, 1, 1.6, 2.4; b: 1, 1.8, 2.4."""
    a = Job("a", Resources(2, 4, 2.0), tenant="T", reconfigurable=True,
            job_class=JobClass.GUARANTEED if guaranteed_a else JobClass.BEST_EFFORT,
            min_resources=Resources(2, 4, 0.0) if guaranteed_a else None)
    b = Job("b", Resources(1, 2, 1.0), reconfigurable=True)
    options = {"a": (opt(1, 2, 1, 6.0), opt(2, 4, 1, 10.0), opt(4, 8, 1, 16.0), opt(8, 16, 2, 24.0)),
               "b": (opt(1, 2, 1, 5.0), opt(2, 4, 1, 9.0), opt(4, 8, 1, 12.0))}
    base = Instance(cluster, (a, b), current=current or Allocation(), quotas=quota or {})
    return JointInstance(base, options, {"a": 10.0, "b": 5.0}, weights or {}, objective, penalty)


def check(inst, r, expected, form=None):
    assert r.termination is Termination.OPTIMAL, r.message
    assert r.objective == pytest.approx(expected, abs=1e-6)
    assert r.primal_bound == pytest.approx(r.objective, abs=1e-6)  # recomputed == solver's
    assert r.dual_bound is None or r.dual_bound == pytest.approx(expected, abs=1e-5)
    assert validate_allocation(inst.base, r.allocation) == []
    assert r.verified


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("aggregate", [None, False])
def test_sum_objective_hand_optimum(backend, aggregate, make_cluster, need_backend):
    # best: a 4 GPUs on one machine (1.6) + b 4 GPUs on the other (2.4) = 4.0 (a on 8 GPUs alone: 2.4)
    need_backend(backend)
    inst = hand_instance(make_cluster())
    r = solve(JointFormulation(aggregate), inst, backend, P)
    check(inst, r, 4.0)
    assert {ja.job_id: ja.gpus for ja in r.allocation} == {"a": 4, "b": 4}


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_weighted_objective_hand_optimum(backend, make_cluster, need_backend):
    # w_a = 2: a8 -> 4.8; a4 + b4 -> 3.2 + 2.4 = 5.6 (best); a4 + b2 -> 5.0
    need_backend(backend)
    inst = hand_instance(make_cluster(), JointObjective.WEIGHTED, {"a": 2.0, "b": 1.0})
    check(inst, solve(JointFormulation(), inst, backend, P), 5.6)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "cpsat"])
def test_maxmin_objective_hand_optimum(backend, make_cluster, need_backend):
    # min(a, b): a4 + b4 -> 1.6, a4 + b2 -> 1.6, a2 + b4 -> 1.0, a8 alone -> 0: optimum 1.6
    need_backend(backend)
    inst = hand_instance(make_cluster(), JointObjective.MAXMIN)
    check(inst, solve(JointFormulation(), inst, backend, P), 1.6)


def test_maxmin_needs_continuous_backend(make_cluster):
    with pytest.raises(SolverError, match="continuous"):
        solve(JointFormulation(), hand_instance(make_cluster(), JointObjective.MAXMIN), "cpsat", P)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_quota_blocks_guaranteed_job(backend, make_cluster, need_backend):
    # a guaranteed, minRes 2 GPUs, tenant quota 1 GPU: a cannot run; b alone on 4 GPUs: 2.4
    need_backend(backend)
    inst = hand_instance(make_cluster(), guaranteed_a=True, quota={"T": Resources(1, 0, 0.0)})
    r = solve(JointFormulation(), inst, backend, P)
    check(inst, r, 2.4)
    assert "a" not in r.allocation


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_guaranteed_slo_excludes_slow_option(backend, make_cluster, need_backend):
    # with 1 GPU free per machine a guaranteed can only take its 1-GPU option (0.6 < SLO): not placed;
    # b takes 1 GPU -> 1.0 (the 1g option); a best-effort a would have added 0.6
    need_backend(backend)
    cl = make_cluster()
    reserved = {m: Resources(3, 0, 0.0) for m in cl.machines}
    for guaranteed, expected in ((True, 1.0), (False, 1.6)):
        inst = hand_instance(cl, guaranteed_a=guaranteed)
        inst = JointInstance(Instance(cl, inst.base.jobs, reserved=reserved), inst.options, inst.ref_throughput)
        check(inst, solve(JointFormulation(), inst, backend, P), expected)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_infeasible_when_guaranteed_must_be_placed(backend, make_cluster, need_backend):
    need_backend(backend)
    cl = make_cluster()
    big = Job("big", Resources(16, 16, 0.0), reconfigurable=True, job_class=JobClass.GUARANTEED,
              min_resources=Resources(16, 16, 0.0))
    inst = JointInstance(Instance(cl, (big,)), {"big": (opt(16, 32, 4, 50.0),)}, {"big": 50.0},
                         place_guaranteed=True)
    r = solve(JointFormulation(), inst, backend, P)
    assert r.termination is Termination.INFEASIBLE and r.allocation is None


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_reconfiguration_penalty_keeps_running_job(backend, make_cluster, need_backend):
    # b runs 1 GPU on m0; penalty 3: keep b (1.0) + a 4 GPUs on m1 (1.6) = 2.6 beats a4 + b4 - 3 = 1.0
    need_backend(backend)
    cl = make_cluster()
    m0 = cl.machines[0]
    cur = Allocation.of([JobAllocation("b", ExecutionPlan(dp=1), {m0: Resources(1, 2, 1.0)})])
    inst = hand_instance(cl, current=cur, penalty=3.0)
    assert not aggregation_ok(inst)[0]
    r = solve(JointFormulation(), inst, backend, P)
    check(inst, r, 2.6)
    assert dict(r.allocation["b"].placement) == {m0: Resources(1, 2, 1.0)}


def first_fit(inst: JointInstance) -> Allocation:
    """A feasible allocation built without the solver: each job's requested option, first fit."""
    state = ClusterState(inst.base.cluster, inst.base.reserved)
    out = []
    quota_used: dict[str, int] = {}
    for job in inst.base.jobs:
        cands = [o for _, o in inst.admissible(job) if o.gpus == job.requested.gpus]
        for o in cands:
            if job.guaranteed and job.tenant in inst.base.quotas:
                if quota_used.get(job.tenant, 0) + job.quota_usage.gpus > inst.base.quotas[job.tenant].gpus:
                    break
            ms = [m for m in inst.eligible_machines if o.share <= state.free(m)][: o.machines]
            if len(ms) == o.machines:
                pl = {m: o.share for m in ms}
                state.allocate(job.id, pl)
                out.append(JobAllocation(job.id, o.plan, pl))
                if job.guaranteed:
                    quota_used[job.tenant] = quota_used.get(job.tenant, 0) + job.quota_usage.gpus
                break
    return Allocation.of(out)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(2, 14), guaranteed=st.sampled_from([0.0, 0.4]))
def test_optimum_dominates_first_fit_and_aggregation_is_exact(seed, n, guaranteed, make_cluster):
    cl = make_cluster(machines=4, gpus=8, cpus=96, mem=1600.0)
    inst = generate_joint(cl, n, seed=seed, guaranteed_frac=guaranteed, max_gpus=16)
    ff = first_fit(inst)
    assert validate_allocation(inst.base, ff) == []
    ff_obj = joint_objective(inst, ff)
    agg = solve(JointFormulation(), inst, "highs", P)
    per = solve(JointFormulation(aggregate=False), inst, "highs", P)
    assert agg.termination is per.termination is Termination.OPTIMAL
    assert agg.objective == pytest.approx(per.objective, abs=1e-6)
    assert agg.objective >= ff_obj - 1e-9 and agg.dual_bound >= ff_obj - 1e-9
    assert relaxation_bound(inst) >= agg.objective - 1e-6
    assert agg.verified and per.verified


def test_warm_start_from_first_fit(make_cluster):
    cl = make_cluster(machines=4, gpus=8, cpus=96, mem=1600.0)
    inst = generate_joint(cl, 12, seed=5)
    ff = first_fit(inst)
    r = solve(JointFormulation(aggregate=False), inst, "cpsat",
              SolveParams(threads=1, deterministic_limit=20, seed=1, warm_start=ff))
    assert r.termination.has_solution and r.objective >= joint_objective(inst, ff) - 1e-9 and r.verified


def test_objective_function_rejects_unknown_shapes(make_cluster):
    inst = hand_instance(make_cluster())
    m0 = inst.base.cluster.machines[0]
    bad = Allocation.of([JobAllocation("a", ExecutionPlan(dp=3), {m0: Resources(3, 6, 0.0)})])
    with pytest.raises(SolverError, match="no option"):
        joint_objective(inst, bad)


def test_json_round_trip(tmp_path, make_cluster):
    inst = generate_joint(make_cluster(machines=3, gpus=8, cpus=96, mem=1600.0), 6, seed=2, guaranteed_frac=0.5,
                          running_frac=0.5, reconfig_penalty=0.5)
    save_instance(inst, tmp_path / "j.json")
    back = load_instance(tmp_path / "j.json")
    assert back.to_dict() == inst.to_dict()
    a = solve(JointFormulation(), inst, "highs", P)
    b = solve(JointFormulation(), back, "highs", P)
    assert a.objective == pytest.approx(b.objective)


def test_generator_is_seeded(make_cluster):
    cl = make_cluster(machines=2, gpus=8, cpus=96)
    assert generate_joint(cl, 5, seed=3).to_dict() == generate_joint(cl, 5, seed=3).to_dict()
    assert generate_joint(cl, 5, seed=3).to_dict() != generate_joint(cl, 5, seed=4).to_dict()


def test_perfmodel_options_fall_back_to_exact_per_machine_model(make_cluster):
    cl = make_cluster(machines=3, gpus=8, cpus=96, mem=1600.0)
    inst = generate_joint(cl, 8, seed=4, source="perfmodel", max_gpus=8)
    ok, why = aggregation_ok(inst)
    agg = solve(JointFormulation(), inst, "highs", P)
    per = solve(JointFormulation(aggregate=False), inst, "highs", P)
    assert agg.termination is per.termination is Termination.OPTIMAL
    assert agg.objective == pytest.approx(per.objective, abs=1e-6) and agg.verified and per.verified
    assert ok or why  # a reason is always given when the aggregation is not exact


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_two_stage_recovers_when_pooled_capacity_lies(backend, make_cluster, need_backend):
    # 2 machines x 4 GPUs; A and B need 3 GPUs (value 3 each), C 2 GPUs (2.5). Pooled: all three fit
    # (8 GPUs, 8.5) but no machine holds 3 + 2, so the optimum is A + B = 6.0 (stage 3 must find it).
    from schedlab.formulations import JointTwoStage

    need_backend(backend)
    cl = make_cluster()
    jobs = tuple(Job(j, Resources(g, g, 0.0), reconfigurable=True) for j, g in (("A", 3), ("B", 3), ("C", 2)))
    options = {"A": (opt(3, 3, 1, 3.0),), "B": (opt(3, 3, 1, 3.0),), "C": (opt(2, 2, 1, 2.5),)}
    inst = JointInstance(Instance(cl, jobs), options, {"A": 1.0, "B": 1.0, "C": 1.0})
    assert not aggregation_ok(inst)[0]
    r = JointTwoStage().solve(inst, backend, P)
    assert r.termination is Termination.OPTIMAL and r.objective == pytest.approx(6.0)
    assert r.dual_bound == pytest.approx(6.0, abs=1e-6) and r.verified
    assert any("stage 3" in n for n in r.notes)


def test_two_stage_matches_per_machine_optimum_on_perfmodel_options(make_cluster):
    from schedlab.formulations import JointTwoStage

    cl = make_cluster(machines=4, gpus=8, cpus=96, mem=1600.0)
    inst = generate_joint(cl, 12, seed=9, source="perfmodel", max_gpus=16)
    per = solve(JointFormulation(aggregate=False), inst, "highs", P)
    two = JointTwoStage().solve(inst, "highs", P)
    assert per.termination is two.termination is Termination.OPTIMAL
    assert two.objective == pytest.approx(per.objective, abs=1e-6) and two.verified
