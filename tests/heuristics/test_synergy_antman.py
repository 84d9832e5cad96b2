"""Synergy-like and AntMan-like baselines on scenarios worked out by hand."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.simulator import simulate
from schedlab.heuristics.baselines.antman import AntManPolicy
from schedlab.heuristics.baselines.synergy import SynergyPolicy
from schedlab.scheduling import Instance, Job, JobClass, Resources, validate_allocation
from schedlab.topology.cluster import Cluster
from schedlab.topology.loaders import spec_from_dict


def server(gpus: int = 8, cpus: int = 96, machines: int = 1) -> Cluster:
    return Cluster(spec_from_dict({
        "name": "srv", "defaults": {"gpus": gpus, "gpu_model": "A800-80GB", "gpu_memory_gb": 80, "cpus": cpus,
                                    "host_memory_gb": 1600, "pcie_gbps": 32},
        "links": {"machine": {"bandwidth_gbps": 400, "latency_us": 1}, "rack": {"bandwidth_gbps": 100, "latency_us": 2}},
        "racks": 1, "machines_per_rack": machines}))


def job(jid, gpus, iters=100.0, arrival=0.0, guaranteed=False, cpus=0):
    return Job(jid, Resources(gpus, cpus), iterations=iters, arrival=arrival, model="no-such-model",
               tenant="A" if guaranteed else "B", job_class=JobClass.GUARANTEED if guaranteed else JobClass.BEST_EFFORT,
               attrs={"iter_time": 1.0, "rates": "reference"})


# ---------------------------------------------------------------------------- Synergy
def test_synergy_tunes_cpus_under_the_fair_share_floor(monkeypatch):
    """One server, 8 GPUs and 96 CPUs: the fair share is 12 CPUs per GPU. Demands (from the tuning
    grid, given here): A (2 GPUs) 32 CPUs, B (2 GPUs) 8, C (4 GPUs) 64.
    A: 6 GPUs stay free -> 72 CPUs kept for them; 96 - 72 = 24 = its own fair share: min(32, 24) = 24.
    B: 4 GPUs stay free -> 48 kept; 72 - 48 = 24 spare, it wants only 8: 8.
    C: nothing stays free; 64 CPUs free, it wants 64: 64. (24 + 8 + 64 = 96.)"""
    demand = {"a": 32, "b": 8, "c": 64}
    monkeypatch.setattr(SynergyPolicy, "demand", lambda self, j, counts: (demand[j.id], 0.0))
    cluster = server()
    inst = Instance(cluster, (job("a", 2), job("b", 2), job("c", 4)))
    alloc = SynergyPolicy().decide(inst)
    assert {ja.job_id: (ja.gpus, ja.resources.cpus) for ja in alloc} == {"a": (2, 24), "b": (2, 8), "c": (4, 64)}
    assert validate_allocation(inst, alloc) == []


def test_synergy_keeps_the_gpu_count_and_the_plan():
    cluster = server(machines=2)
    inst = Instance(cluster, (Job("t", Resources(4, 32), model="t5", reconfigurable=True),))
    alloc = SynergyPolicy().decide(inst)
    assert alloc["t"].gpus == 4 and alloc["t"].plan == inst.jobs[0].requested_plan
    assert alloc["t"].resources.cpus >= 4  # t5's plain DP gains nothing from CPUs: one per GPU is its demand


# ----------------------------------------------------------------------------- AntMan
def test_antman_preempts_best_effort_for_a_guaranteed_job_and_gives_it_its_request():
    """A best-effort job holds the 8 GPUs from t = 0 (1,000 s of work). A guaranteed 4-GPU job arrives at
    t = 10: the best-effort job is preempted (checkpoint 39 s), the guaranteed one starts at 49 with
    exactly 4 GPUs and runs 100 s to 149; the best-effort job needs all 8 back, so it restarts at 149
    (restore 39 s) and finishes its remaining 990 s at 149 + 39 + 990 = 1178."""
    cluster = server()
    be, g = job("be", 8, iters=1000.0), job("g", 4, arrival=10.0, guaranteed=True)
    res = simulate(cluster, (be, g), AntManPolicy(), quotas={"A": Resources(8)})
    r = {x.job_id: x for x in res.jobs}
    assert (r["g"].first_start, r["g"].end, r["g"].gpus) == (pytest.approx(49.0), pytest.approx(149.0), 4)
    assert r["be"].preemptions == 1 and r["be"].end == pytest.approx(1178.0)
    assert res.metrics["guarantee_violations"] == 0


def test_antman_never_preempts_for_best_effort_and_respects_the_quota():
    cluster = server()
    a, b = job("a", 8, iters=50.0), job("b", 2, arrival=5.0)
    g1, g2 = job("g1", 4, arrival=1.0, guaranteed=True), job("g2", 4, arrival=2.0, guaranteed=True)
    res = simulate(cluster, (a, b), AntManPolicy(), quotas={"A": Resources(4)})
    assert {x.job_id: x.preemptions for x in res.jobs} == {"a": 0, "b": 0}
    res = simulate(cluster, (g1, g2), AntManPolicy(), quotas={"A": Resources(4)})
    r = {x.job_id: x for x in res.jobs}  # quota 4: g2 waits for g1 although 4 GPUs are free
    assert r["g2"].first_start == pytest.approx(r["g1"].end)


# ----------------------------------------------------------------- AntMan GPU sharing
@pytest.mark.parametrize(("share", "be_end"), [(True, 110.0), (False, 160.0)])
def test_antman_best_effort_shares_a_guaranteed_jobs_gpus_at_reduced_speed(share, be_end):
    """4 GPUs: guaranteed g (4 GPUs, 100 s) and best-effort b (2 GPUs, 60 iterations of 1 s) at 0. g
    takes the GPUs; b shares them at 0.5x: 2 s per iteration, 50 iterations by t = 100, when g ends and b
    is suspended (free, no checkpoint) and restarted on 2 free GPUs (free restore under ``reference``):
    10 more seconds, end 110. g is not slowed. Without sharing b waits: 100 + 60 = 160."""
    cluster = server(gpus=4)
    g, b = job("g", 4, guaranteed=True), job("b", 2, iters=60.0)
    res = simulate(cluster, (g, b), AntManPolicy(share=share), semantics="reference")
    r = {x.job_id: x for x in res.jobs}
    assert r["g"].end == pytest.approx(100.0) and r["b"].end == pytest.approx(be_end)
    assert r["b"].first_start == pytest.approx(0.0 if share else 100.0)
    assert res.metrics.get("shared_starts", 0) == (1 if share else 0)
    if share:
        assert res.metrics["shared_suspensions"] == 1 and r["b"].preemptions == 1
        assert r["b"].gpu_seconds == pytest.approx(2 * 10.0)  # a guest holds no GPUs of its own
        assert r["b"].run_seconds == pytest.approx(110.0)


def test_antman_shares_one_guest_per_host_on_the_smallest_fitting_host():
    """8 GPUs: guaranteed g4 (4 GPUs) and g2 (2 GPUs) hold 6, best-effort b1 (2) takes the 2 free ones;
    b2 (2) shares g2 (the smaller host that fits), b3 (2) shares g4, b4 (2) finds no host and waits."""
    cluster = server()
    jobs = (job("g4", 4, guaranteed=True), job("g2", 2, guaranteed=True), job("b1", 2, arrival=1.0),
            job("b2", 2, arrival=2.0), job("b3", 2, arrival=3.0), job("b4", 2, arrival=4.0))
    res = simulate(cluster, jobs, AntManPolicy(share_speed=0.25), semantics="reference")
    r = {x.job_id: x for x in res.jobs}
    assert r["b1"].first_start == pytest.approx(1.0)
    assert (r["b2"].first_start, r["b3"].first_start) == (pytest.approx(2.0), pytest.approx(3.0))
    assert r["b4"].first_start >= 100.0 - 1e-9
    # b2 on g2 at 0.25x: 2 -> 100 gives 24.5 iterations; then 75.5 alone: end 175.5
    assert r["b2"].end == pytest.approx(100.0 + 100.0 - 98.0 * 0.25)


def test_engine_refuses_a_share_on_a_job_that_is_not_running():
    from schedlab.scheduling.policy import Decision, EventKind, Share
    from schedlab.topology.errors import PolicyError

    class Bad:
        name, oracle = "bad", False

        def schedule(self, view):
            ids = [e.job_id for e in view.events if e.kind is EventKind.ARRIVAL]
            return Decision(share={ids[0]: Share(ids[1], 0.5)}) if len(ids) == 2 else Decision()

    with pytest.raises(PolicyError, match="host is not a running job"):
        simulate(server(gpus=4), (job("a", 1), job("b", 1)), Bad(), semantics="reference")
