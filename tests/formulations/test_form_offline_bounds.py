"""Offline bounds: the non-preemptive optimum is not a bound for preemptive schedules; the preemptive
bound is, and every simulated policy's metric lies on the right side of the bound for its preemption
model (``PolicySpec.preemptive``)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.registry import all_policies
from schedlab.benchmarks.simulator import simulate
from schedlab.formulations import BOUND_METHOD, METHODS, OfflineInstance, SolveParams, Status
from schedlab.formulations.offline_bounds import preemptive_bound, srpt_completions
from schedlab.scheduling import Instance, Job, Resources

P = SolveParams(threads=1, seed=0, work_limit=10)


def test_srpt_by_hand():
    # A (0, 10), B (1, 1) on one machine: A 0-1, B 1-2, A 2-11
    assert srpt_completions([(0.0, 10.0), (1.0, 1.0)], 1.0) == [11.0, 2.0]
    # speed 2: the same work in half the time; an idle gap before a late job
    assert srpt_completions([(0.0, 4.0), (10.0, 2.0)], 2.0) == [2.0, 11.0]


def test_non_preemptive_bound_is_beaten_by_preemptive_srpt(make_cluster):
    # regression (issue 11.5): one GPU, A arrives 0 and runs 10, B arrives 1 and runs 1. The best
    # non-preemptive schedule (B first: A waits) has average JCT (12 + 1) / 2 = 6.5; preemptive SRPT
    # (A 0-1, B 1-2, A 2-11) reaches (11 + 1) / 2 = 6.0, so 6.5 bounds non-preemptive policies only
    cl = make_cluster(machines=1, gpus=1)
    inst = OfflineInstance(Instance(cl, (Job("A", Resources(1), arrival=0.0, duration=10.0),
                                         Job("B", Resources(1), arrival=1.0, duration=1.0))))
    non = METHODS["offline-nonpreemptive"].solve(inst, "cpsat", P)
    pre = METHODS["offline-preemptive"].solve(inst, "cpsat", P)
    assert non.status is Status.OPTIMAL and non.objective == pytest.approx(6.5)
    assert pre.status is Status.OPTIMAL and pre.objective is None
    assert pre.bounds.dual == pytest.approx(6.0) and pre.bounds.dual <= 6.0 < non.objective
    assert BOUND_METHOD == {True: "offline-preemptive", False: "offline-nonpreemptive"}


def test_preemptive_bound_parts_by_hand():
    # 2 GPUs; A (2 GPUs, 10 s), B and C (1 GPU, 5 s), all at 0. Fluid: work 20, 5, 5 on speed 2,
    # SRPT: B 2.5, C 5, A 15 -> 22.5 / 3 = 7.5; per job: 20 / 3; A alone never overlaps another
    # 2-GPU job: (10 + 5 + 5) / 3. The best preemptive schedule (B, C then A) has 25 / 3 >= 7.5.
    b = preemptive_bound([(0, 10, 2), (0, 5, 1), (0, 5, 1)], 2)
    assert b.parts["fluid"] == pytest.approx(7.5) and b.parts["per-job"] == pytest.approx(20 / 3)
    assert b.value == pytest.approx(7.5) and b.value <= 25 / 3
    m = preemptive_bound([(0, 10, 2), (0, 5, 1), (0, 5, 1)], 2, "makespan")
    assert m.value == pytest.approx(15.0)  # fluid: 30 GPU-seconds on 2 GPUs


def test_total_mode_under_contention_reports_a_real_bound_not_an_objective(make_cluster):
    # regression (issue 11.5): in total-GPU mode with 10 jobs on 8 GPUs the dual bound stayed trivial
    # (4,697 vs FIFO's 10,943) and the relaxed solution's "objective" (24,323) exceeded FIFO's makespan
    from schedlab.formulations import generate_offline

    cl = make_cluster(machines=2, gpus=4)
    inst = generate_offline(cl, 10, seed=4, mean_gap=60, objective="makespan", mode="total")
    r = METHODS["offline-nonpreemptive"].solve(inst, "cpsat", SolveParams(threads=1, seed=0, work_limit=2))
    assert r.objective is None and r.bounds.dual is not None
    pre = METHODS["offline-preemptive"].solve(inst, "cpsat", P)
    assert r.bounds.dual >= pre.bounds.dual - 1e-9
    fifo = simulate(cl, inst.base.jobs, all_policies().build("fifo", seed=0))
    assert max(rec.end for rec in fifo.jobs) >= r.bounds.dual - 1e-6


def _workload(seed: int) -> tuple[Job, ...]:
    rng = random.Random(seed)
    t, jobs = 0, []
    for i in range(rng.randint(3, 6)):
        jobs.append(Job(f"w{i}", Resources(rng.choice([1, 1, 2, 4])), arrival=float(t),
                        duration=float(rng.randint(5, 60))))
        t += rng.randint(0, 20)
    return tuple(jobs)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), objective=st.sampled_from(["avg-jct", "makespan"]))
def test_every_simulated_policy_respects_its_bound(seed, objective, make_cluster):
    # rigid jobs of an unknown model (the simulator runs them at their reference speed): no policy can
    # beat the bound of its preemption model. Every registered policy is simulated.
    cl = make_cluster(machines=2, gpus=4)
    jobs = _workload(seed)
    inst = OfflineInstance(Instance(cl, jobs), objective)
    bounds = {pre: METHODS[BOUND_METHOD[pre]].solve(inst, "cpsat", P).bounds.dual for pre in (True, False)}
    assert bounds[True] <= bounds[False] + 1e-6
    reg = all_policies()
    for name, spec in reg.items():
        only = getattr(spec.factory, "semantics_only", None)  # an artifact's policy runs under its semantics
        res = simulate(cl, jobs, reg.build(name, seed=0), **({"semantics": only} if only else {}))
        assert not res.unfinished
        ends = {rec.job_id: rec.end for rec in res.jobs}
        metric = (max(ends.values()) if objective == "makespan"
                  else sum(ends[j.id] - j.arrival for j in jobs) / len(jobs))
        assert metric >= bounds[spec.preemptive] - 1e-6, (name, metric, bounds)
