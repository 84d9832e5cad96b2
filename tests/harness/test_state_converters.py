"""Replay states for the placement kinds (issue 21, item 3): a scheduling state (queued and running jobs, the
running allocation, progress, reserved capacity) becomes a ``tiresias-placement`` and a ``tier-placement``
instance (formulations.from_state), checked on a hand-made state, and a gap case answers a state sampled
from a real replay."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.harness.cases import GapCase
from schedlab.benchmarks.harness.gap import run_gap
from schedlab.benchmarks.harness.suites.builtin import BUSY_CLUSTER, QUICK_STATES
from schedlab.formulations import SolveParams
from schedlab.formulations.builtin_kinds import TIER, TIRESIAS
from schedlab.formulations.from_state import (
    UNKNOWN_MODEL_MB,
    split_state,
    tier_from_state,
    tiresias_from_state,
)
from schedlab.formulations.tier import TierMode, tier_neutral
from schedlab.perfmodel.network import comm_overhead, skew
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources
from schedlab.scheduling.instance import JobProgress
from schedlab.topology.tiers import Tier

from ..formulations.conftest import tiny_cluster


def _state() -> Instance:
    """Two machines of 4 GPUs. R (vgg16, 2 GPUs, 100 s, half done) runs on m0; m1 has 1 GPU reserved (a job
    writing its checkpoint). Queued: Q1 (alexnet, 2 GPUs, 40 s, never run) and Q2 (an unknown model, 4 GPUs,
    200 s, preempted after a quarter)."""
    cl = tiny_cluster(machines=2, gpus=4)
    m0, m1 = cl.machines
    jobs = (Job("R", Resources(2, 4), iterations=10.0, model="vgg16", duration=100.0),
            Job("Q1", Resources(2, 4), iterations=4.0, model="alexnet", duration=40.0),
            Job("Q2", Resources(4, 8), iterations=8.0, model="mystery", duration=200.0))
    run = JobAllocation("R", ExecutionPlan(dp=2), {m0: Resources(2, 4)})
    return Instance(cl, jobs, current=Allocation.of([run]), reserved={m1: Resources(1, 2)}, time=500.0,
                    progress={"R": JobProgress(progress=5.0), "Q2": JobProgress(progress=2.0)})


def test_split_state_holds_the_running_jobs():
    queued, running, reserved = split_state(_state())
    m0, m1 = _state().cluster.machines
    assert [j.id for j in queued] == ["Q1", "Q2"] and [ja.job_id for ja in running] == ["R"]
    assert reserved == {m0: Resources(2, 4), m1: Resources(1, 2)}


def test_tiresias_instance_of_a_state():
    inst = tiresias_from_state(_state())
    m0, m1 = inst.base.cluster.machines
    assert [j.id for j in inst.base.jobs] == ["Q1", "Q2"] and not inst.base.current
    assert inst.base.capacity(m0).gpus == 2 and inst.base.capacity(m1).gpus == 3
    # R frees its 2 GPUs after what is left of it: 100 s x (1 - 5/10) = 50 s
    assert inst.releases == ((50.0, 2),)
    # its PS (one, the whole vgg16 model, beside its workers) makes no cross-machine traffic: m0's existing
    # traffic is 0 and no node carries any
    assert inst.traffic == {}
    assert inst.spread["Q1"] == pytest.approx(skew("alexnet")) and inst.spread["Q2"] == 0.0
    assert inst.ps["Q2"].ps_sizes == (UNKNOWN_MODEL_MB,) and inst.ps["Q1"].cpus_per_worker == 2
    # neutral terms: d_Q1 = 40, d_Q2 = 200 x 0.75 = 150; d_min = 40. Q1 fits now (5 free): C = 40 + 40;
    # Q2 (4 GPUs) fits now too: C = 40 + 150. Nothing placed: (80 + 190) / 2 = 135
    assert TIRESIAS.neutral.fn(inst, Allocation()) == pytest.approx(135.0)
    r = TIRESIAS.exact_method().solve(TIRESIAS.neutral.exact_instance(inst), "highs",
                                      SolveParams(threads=1, time_limit_s=30, seed=0))
    # both do not fit (6 > 5 free GPUs). The optimum places one: Q2 over both machines (2 + 3 free; slowdown 0,
    # unknown model: 150 s) with Q1 charged C = 80 -> (150 + 80) / 2 = 115; or Q1 consolidated with its PS on
    # m1 (40 s) with Q2 charged 190: 115 as well (the first-fit wait counts free GPUs in aggregate)
    assert r.objective == pytest.approx(115.0) and len(r.allocation) == 1


def test_tier_instance_of_a_state():
    inst = tier_from_state(_state())
    assert [j.id for j in inst.base.jobs] == ["Q1", "Q2"] and inst.mode is TierMode.MAX_THROUGHPUT
    assert inst.overhead["Q1"] == tuple(comm_overhead("alexnet", t) for t in (Tier.MACHINE, Tier.RACK, Tier.NETWORK))
    assert inst.overhead["Q2"] == (0.0, 0.0, 0.0)
    assert inst.releases == ((50.0, 2),)  # R runs on one machine: at its request's speed
    m0, m1 = inst.base.cluster.machines
    # Q1 on m1 (machine tier, 40 s), Q2 charged d_min + 150 = 190 (its 4 GPUs fit in the 5 free now): 115
    q1 = Allocation.of([JobAllocation("Q1", ExecutionPlan(dp=2), {m1: Resources(2)})])
    assert tier_neutral(inst, q1) == pytest.approx(115.0)
    # with m1 fully reserved instead, Q2 (4 GPUs, 2 free) first fits when R ends at 50 s: C = 50 + 150
    full = tier_from_state(Instance(_state().cluster, _state().jobs, current=_state().current,
                                    reserved={m1: Resources(4, 8)}, progress=_state().progress))
    assert tier_neutral(full, Allocation()) == pytest.approx((80.0 + 200.0) / 2)
    assert tier_from_state(_state(), TierMode.MIN_OVERHEAD).mode is TierMode.MIN_OVERHEAD
    assert TIER.objective(inst, q1) == pytest.approx(2 / 1.02)  # max-throughput: 2 GPUs at alexnet's 2 % (machine)


@pytest.mark.parametrize("kind", ["tiresias-placement", "tier-placement"])
def test_a_gap_case_answers_a_replay_state_of_a_placement_kind(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_INSTANCE_CACHE", str(tmp_path))
    state = {**QUICK_STATES[kind], "index": 0}
    fifo = run_gap(GapCase(kind, BUSY_CLUSTER, 1, "fifo", state=state)).flat()
    opt = run_gap(GapCase(kind, BUSY_CLUSTER, 1, "tiresias-ilp" if kind.startswith("tiresias") else "tier-ilp",
                          "highs", state=state, solver_params={"objective": "neutral"}, time_limit_s=30)).flat()
    assert fifo["instance_source"] == opt["instance_source"] == "replay"
    assert fifo["origin"].startswith(f"smoke under {state['policy']} (seed 0)") and fifo["origin"] == opt["origin"]
    assert fifo["status"] == "ok" and opt["status"] == "optimal" and opt["neutral_proven"]
    assert opt["neutral_objective"] == pytest.approx(opt["neutral_bound"], rel=1e-6)
    assert fifo["neutral_objective"] >= opt["neutral_bound"] - 1e-6
