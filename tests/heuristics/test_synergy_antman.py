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
