"""The formulation-side policy helpers (view -> Instance, target -> decision, rounds) and the Sia-like
policy's per-round MIP on scenarios worked out by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from schedlab.benchmarks.simulator import simulate
from schedlab.formulations import POLICIES
from schedlab.formulations.policies import SiaPolicy, decision_to, view_instance
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources, validate_allocation
from schedlab.scheduling.instance import JobProgress
from schedlab.scheduling.snapshot import snapshot_view
from schedlab.topology.cluster import Cluster
from schedlab.topology.loaders import spec_from_dict


def server(machines: int = 1, gpus: int = 4) -> Cluster:
    return Cluster(spec_from_dict({
        "name": "srv", "defaults": {"gpus": gpus, "gpu_model": "A800-80GB", "gpu_memory_gb": 80, "cpus": 48,
                                    "host_memory_gb": 800, "pcie_gbps": 32},
        "links": {"machine": {"bandwidth_gbps": 400, "latency_us": 1}, "rack": {"bandwidth_gbps": 100, "latency_us": 2}},
        "racks": 1, "machines_per_rack": machines}))


def job(jid, gpus, arrival=0.0):
    return Job(jid, Resources(gpus, gpus), iterations=1000.0, arrival=arrival, model="no-such-model",
               reconfigurable=True, attrs={"iter_time": 1.0, "rates": "reference"})


def test_view_instance_inverts_the_snapshot_view():
    cluster = server(2)
    a, b = job("a", 2), job("b", 4)
    cur = Allocation({"a": JobAllocation("a", ExecutionPlan(dp=2), {cluster.machines[0]: Resources(2, 2)})})
    inst = Instance(cluster, (a, b), current=cur, time=50.0, progress={"a": JobProgress(progress=7.0, executed=7.0)})
    snap = view_instance(snapshot_view(inst))
    assert snap.instance.jobs == (b, a)  # the queue first, then the running jobs
    assert snap.instance.current == cur and snap.instance.time == 50.0 and snap.frozen == ()
    assert snap.instance.progress["a"].progress == pytest.approx(7.0)
    target = Allocation({"b": JobAllocation("b", ExecutionPlan(dp=4), {cluster.machines[1]: Resources(4, 4)})})
    d = decision_to(snap.instance, target)
    assert set(d.start) == {"b"} and d.preempt == ("a",)


def _goodputs(table):
    def configs(self, j, cluster):
        self._bind(cluster)
        self._rigid[(j.model, j.global_batch, j.requested, j.requested_plan, j.reconfigurable)] = False
        return tuple(("A800-80GBx4", g, ExecutionPlan(dp=g), t) for g, t in table[j.id].items())
    return configs


def test_sia_round_mip_by_hand(monkeypatch):
    """4 GPUs, two jobs, goodputs normalised by the 1-GPU value: A {1: 1, 2: 1.9, 4: 3.6}, B {1: 1, 2: 1.9}.
    Cost round(G^-0.5, 2) per chosen configuration (the artifact's rounding), 1.1 per job left out:
    A4 + nothing = .53 + 1.1 = 1.63; A2 + B2 = .73 + .73 = 1.46; A2 + B1 = 1.73; A1 + B2 = 1.73.
    Optimum: 2 GPUs each."""
    monkeypatch.setattr(SiaPolicy, "configs", _goodputs({"a": {1: 1.0, 2: 1.9, 4: 3.6}, "b": {1: 1.0, 2: 1.9}}))
    cluster = server()
    inst = Instance(cluster, (job("a", 4), job("b", 2)))
    alloc = SiaPolicy().decide(inst)
    assert {ja.job_id: ja.gpus for ja in alloc} == {"a": 2, "b": 2}
    assert validate_allocation(inst, alloc) == []
    monkeypatch.setattr(SiaPolicy, "configs", _goodputs({"a": {1: 1.0, 2: 1.9, 4: 3.6}, "b": {1: 1.0, 2: 1.05}}))
    alloc = SiaPolicy().decide(inst)  # B barely scales: A2 + B2 = .73 + .98 = 1.71 > A4 + 1.1 = 1.63
    assert {ja.job_id: ja.gpus for ja in alloc} == {"a": 4}


def test_sia_restart_factor_keeps_a_running_configuration(monkeypatch):
    """A runs on 2 GPUs, age 100 s, never restarted: r = (100 - 0) / (100 + 78) = .562, so A4 is worth
    3.6 x .562 = 2.02 -> cost .70 against .73 for staying on 2: it moves only because 2.02 > 1.9;
    after one restart r = (100 - 78)/178 = .124 -> A4 costs (3.6 x .124)^-.5 = 1.50: it stays."""
    monkeypatch.setattr(SiaPolicy, "configs", _goodputs({"a": {1: 1.0, 2: 1.9, 4: 3.6}}))
    cluster = server()
    a = job("a", 2)
    cur = Allocation({"a": JobAllocation("a", ExecutionPlan(dp=2), {cluster.machines[0]: Resources(2, 2)})})
    fresh = Instance(cluster, (a,), current=cur, time=100.0)
    assert SiaPolicy().decide(fresh)["a"].gpus == 4
    restarted = Instance(cluster, (a,), current=cur, time=100.0, progress={"a": JobProgress(preemptions=1)})
    assert SiaPolicy().decide(restarted)["a"].gpus == 2


def test_sia_is_round_based():
    """Rounds every 60 s from the first arrival. A (4 GPUs, 1,000 s; a model outside the zoo runs rigid)
    takes the server at 0; B arrives at 10 and is left out by every round until A ends at 1,000; the
    next round, at 1,020, starts it."""
    cluster = server()
    pol = POLICIES.build("sia")
    res = simulate(cluster, (job("a", 4), job("b", 2, arrival=10.0)), pol)
    r = {x.job_id: x for x in res.jobs}
    assert (r["a"].first_start, r["a"].end) == (0.0, pytest.approx(1000.0))
    assert r["b"].first_start == pytest.approx(1020.0)
    assert pol.counters["unknown-model-rigid"] == 2


def test_sia_configurations_per_gpu_type_are_the_artifacts():
    """Two types: 3 machines x 8 A800 and 2 machines x 4 V100 (CONFIGS_8GPU / CONFIGS_4GPU cut at the
    type's machines): A800 1, 2, 4, 8, 16, 24; V100 1, 2, 4, 8. The request (6 GPUs) is not one of
    them unless ``request_config`` (ours) adds it."""
    spec = {"name": "mix", "defaults": {"gpus": 8, "gpu_model": "A800-80GB", "gpu_memory_gb": 80, "cpus": 96,
                                        "host_memory_gb": 800, "pcie_gbps": 32},
            "links": {"machine": {"bandwidth_gbps": 400, "latency_us": 1},
                      "rack": {"bandwidth_gbps": 100, "latency_us": 2},
                      "network": {"bandwidth_gbps": 100, "latency_us": 5}},
            "racks": [{"name": "a", "machine_count": 3},
                      {"name": "v", "machine_count": 2,
                       "defaults": {"gpus": 4, "gpu_model": "V100-32GB", "gpu_memory_gb": 32}}]}
    cluster = Cluster(spec_from_dict(spec))
    assert SiaPolicy.sizes(8, 3) == [1, 2, 4, 8, 16, 24] and SiaPolicy.sizes(4, 2) == [1, 2, 4, 8]
    types = SiaPolicy.gpu_types(cluster)
    assert {t: len(ms) for t, ms in types.items()} == {"A800-80GBx8": 3, "V100-32GBx4": 2}
    j = Job("r", Resources(6, 6), iterations=10.0, model="resnet50", reconfigurable=True, global_batch=96)
    got = {(t, g) for t, g, _, _ in SiaPolicy().configs(j, cluster)}
    assert got == {("A800-80GBx8", g) for g in (1, 2, 4, 8, 16, 24)} | {("V100-32GBx4", g) for g in (1, 2, 4, 8)}
    # the batch rule (scheduling.feasible.plan_runs): 24 replicas cannot split resnet50's default batch of 256
    default = replace(j, global_batch=None)
    assert 24 not in {g for _, g, _, _ in SiaPolicy().configs(default, cluster)}
    assert 6 in {g for _, g, _, _ in SiaPolicy(request_config=True).configs(j, cluster)}


def test_sia_capacity_is_per_gpu_type(monkeypatch):
    """One 4-GPU A800 machine and one 4-GPU V100 machine; two scaling jobs whose goodput is linear
    (G = GPUs) on both. Per-type capacity: each type holds at most 4 GPUs, so the optimum is 4 + 4 on
    different types (cost 2 x .5 = 1.0), never 8 GPUs of one type, and every placement stays on
    machines of its type."""
    spec = {"name": "two", "defaults": {"gpus": 4, "gpu_model": "A800-80GB", "gpu_memory_gb": 80, "cpus": 48,
                                        "host_memory_gb": 800, "pcie_gbps": 32},
            "links": {"machine": {"bandwidth_gbps": 400, "latency_us": 1},
                      "rack": {"bandwidth_gbps": 100, "latency_us": 2},
                      "network": {"bandwidth_gbps": 100, "latency_us": 5}},
            "racks": [{"name": "a", "machine_count": 1},
                      {"name": "v", "machine_count": 1, "defaults": {"gpu_model": "V100-32GB", "gpu_memory_gb": 32}}]}
    cluster = Cluster(spec_from_dict(spec))

    def configs(self, j, cl):
        self._bind(cl)
        self._rigid[(j.model, j.global_batch, j.requested, j.requested_plan, j.reconfigurable)] = False
        return tuple((t, g, ExecutionPlan(dp=g), float(g)) for t in ("A800-80GBx4", "V100-32GBx4") for g in (1, 2, 4))

    monkeypatch.setattr(SiaPolicy, "configs", configs)
    inst = Instance(cluster, (job("a", 4), job("b", 4)))
    alloc = SiaPolicy().decide(inst)
    assert {ja.job_id: ja.gpus for ja in alloc} == {"a": 4, "b": 4}
    models = {ja.job_id: {cluster.machine(m).gpu_model for m in ja.gpu_counts} for ja in alloc}
    assert sorted(next(iter(v)) for v in models.values()) == ["A800-80GB", "V100-32GB"]
    assert validate_allocation(inst, alloc) == []
