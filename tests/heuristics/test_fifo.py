"""YARN-CS FIFO: order, head-of-line blocking, consolidating best-fit placement; every allocation it
makes goes through the verifier (the simulator checks each decision), and we re-check here."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.simulator import Recorder, simulate
from schedlab.heuristics import POLICIES
from schedlab.heuristics.fifo import FifoPolicy
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources, validate_allocation
from schedlab.scheduling.policy import ClusterView, Decision
from schedlab.topology import preset
from schedlab.topology.errors import SpecError


def rjob(jid, gpus, iters, arrival=0.0, it=1.0):
    return Job(jid, Resources(gpus), iterations=iters, arrival=arrival, attrs={"iter_time": it})


class Recording:
    """Wraps FIFO and validates every start against the full cluster state."""

    name = "fifo"

    def __init__(self, cluster):
        self.inner = FifoPolicy()
        self.cluster = cluster
        self.placements: dict[str, dict[str, int]] = {}

    def schedule(self, view: ClusterView) -> Decision:
        d = self.inner.schedule(view)
        running = {jv.id: jv.allocation for jv in view.running()}
        alloc = Allocation({**running, **d.start})
        jobs = tuple(jv.job for jv in view.active())
        assert validate_allocation(Instance(self.cluster, jobs), alloc) == []
        for jid, ja in d.start.items():
            self.placements[jid] = ja.gpu_counts
        return d


def test_consolidation_and_best_fit():
    c = preset("tiresias-60")  # 15 x 4 GPUs, one rack
    jobs = [rjob("a", 3, 100), rjob("b", 2, 100, 1), rjob("c", 1, 100, 2), rjob("d", 8, 100, 3),
            rjob("e", 6, 100, 4)]
    pol = Recording(c)
    simulate(c, jobs, pol, semantics="reference")
    p = pol.placements
    assert list(p["a"].values()) == [3]
    m_a = next(iter(p["a"]))
    assert p["c"] == {m_a: 1}          # best fit: the machine with exactly 1 free GPU left
    assert list(p["b"].values()) == [2] and next(iter(p["b"])) != m_a
    assert sorted(p["d"].values()) == [4, 4]   # two whole machines, not spread over partial ones
    assert sorted(p["e"].values()) == [2, 4]   # fewest machines: a whole machine + b's half-free one
    assert next(m for m, g in p["e"].items() if g == 2) == next(iter(p["b"]))


def test_one_machine_jobs_never_split():
    c = preset("tiresias-60")
    # fill every machine to 3 of 4 GPUs: 12 free GPUs, but no machine can take a 2-GPU job
    jobs = [rjob(f"f{i}", 3, 100) for i in range(15)] + [rjob("x", 2, 10, 1), rjob("y", 1, 10, 2)]
    res = simulate(c, jobs, POLICIES.build("fifo"), semantics="reference")
    r = {x.job_id: x for x in res.jobs}
    assert r["x"].first_start == 100.0       # waits for a machine to free up
    assert r["y"].first_start == 100.0       # head-of-line blocked behind x (although it fits at t=2)
    res = simulate(c, jobs, POLICIES.build("fifo-backfill"), semantics="reference")
    r = {x.job_id: x for x in res.jobs}
    assert r["y"].first_start == 2.0 and r["x"].first_start == 100.0


def test_order_is_arrival_order():
    c = preset("tiresias-60")
    jobs = [rjob("big", 60, 10, 0), rjob("j1", 4, 5, 1), rjob("j2", 60, 5, 2), rjob("j3", 1, 5, 3)]
    res = simulate(c, jobs, POLICIES.build("fifo"), semantics="reference", recorder=Recorder())
    starts = {x.job_id: x.first_start for x in res.jobs}
    assert starts == {"big": 0.0, "j1": 10.0, "j2": 15.0, "j3": 20.0}


def test_tp_plans_keep_tp_groups_inside_machines():
    from schedlab.perfmodel.plans import ExecutionPlan

    c = preset("tiresias-60")
    j = Job("tp", Resources(8), iterations=5, plan=ExecutionPlan(dp=2, tp=4), attrs={"iter_time": 1.0})
    pol = Recording(c)
    simulate(c, [rjob("a", 1, 100), j], pol, semantics="reference")
    assert sorted(pol.placements["tp"].values()) == [4, 4]


def test_registry():
    assert {"fifo", "yarn-cs", "fifo-backfill"} <= set(POLICIES)
    assert POLICIES.build("fifo").name == "fifo" and POLICIES.build("fifo-backfill").blocking is False
    assert isinstance(JobAllocation, type)
    with pytest.raises(SpecError):
        POLICIES.build("fifo", {"bogus": 1})


def test_mixed_gpu_memory_places_jobs_where_their_plan_fits():
    """A job whose plan needs more than a small GPU's memory skips the (otherwise best-fit) small machine."""
    from schedlab.perfmodel.memory import plan_gpu_memory_gb
    from schedlab.perfmodel.plans import ExecutionPlan
    from schedlab.perfmodel.zoo import get_model
    from schedlab.topology import Cluster, spec_from_dict

    c = Cluster(spec_from_dict({
        "name": "mixed", "defaults": {"cpus": 16, "host_memory_gb": 256, "pcie_gbps": 16},
        "links": {"machine": {"bandwidth_gbps": 16, "latency_us": 2}, "rack": {"bandwidth_gbit": 100, "latency_us": 2},
                  "network": {"bandwidth_gbit": 100, "latency_us": 5}},
        "racks": [{"name": "r1", "defaults": {"gpus": 2, "gpu_model": "P100-16GB", "gpu_memory_gb": 16},
                   "machine_count": 1},
                  {"name": "r2", "defaults": {"gpus": 4, "gpu_model": "A100-80GB", "gpu_memory_gb": 80},
                   "machine_count": 1}],
    }, source="<test>"))
    need = plan_gpu_memory_gb(get_model("bert_large"), ExecutionPlan(dp=2), 128)
    assert 16 < need < 80  # hand check of the premise: too big for a P100, fine on an A100
    big = Job("big", Resources(2), iterations=5, model="bert_large", global_batch=128, attrs={"iter_time": 1.0})
    small = Job("small", Resources(2), iterations=5, arrival=1, attrs={"iter_time": 1.0})
    pol = Recording(c)
    simulate(c, [big, small], pol, semantics="reference")
    gpu_mem = {m: c.machine(m).gpu_memory_gb for m in c.machines}
    assert [gpu_mem[m] for m in pol.placements["big"]] == [80.0]
    assert [gpu_mem[m] for m in pol.placements["small"]] == [16.0]  # best fit for a job with no model


def test_best_fit_within_one_pass():
    """Jobs started in the same pass see each other's GPUs: best fit among touched machines."""
    c = preset("tiresias-60")
    jobs = [rjob("a", 3, 100), rjob("b", 2, 100), rjob("c", 1, 100), rjob("d", 1, 100), rjob("e", 2, 100)]
    pol = Recording(c)
    simulate(c, jobs, pol, semantics="reference")
    p = pol.placements
    ma, mb = next(iter(p["a"])), next(iter(p["b"]))
    assert ma != mb
    assert p["c"] == {ma: 1}   # the machine a left with 1 free GPU
    assert p["d"] == {mb: 1}   # b's machine has 2 free: better than an empty one
    me = next(iter(p["e"]))
    assert me not in (ma, mb)  # a and b's machines are full now (4 and 3 used); e needs 2


def test_multi_machine_job_takes_fewest_machines_not_the_tightest_rack(mk):
    """Issue 22: 2 racks x 3 machines x 8 GPUs; a (5) and b (5) leave rack0 with 3 + 3 + 8 = 14 free
    GPUs, rack1 has 24. A 14-GPU job fits rack0 exactly (the best-fit rack) but only on 3 machines
    (8 + 3 + 3); rack1 holds it on 2 (8 + 6). Fewest machines comes first, best fit only breaks ties."""
    c = mk.cluster(3, 8, racks=2)
    pol = Recording(c)
    simulate(c, [mk.job("a", 5, 100), mk.job("b", 5, 100), mk.job("big", 14, 10, arrival=1)], pol,
             semantics="reference")
    p = pol.placements
    assert {c.machine(m).rack for m in (*p["a"], *p["b"])} == {"rack0"} and set(p["a"]) != set(p["b"])
    assert sorted(p["big"].values()) == [6, 8]
    assert {c.machine(m).rack for m in p["big"]} == {"rack1"}


def test_fewest_machines_ties_go_to_the_best_fit_rack(mk):
    """Both racks hold a 12-GPU job on 2 machines once a (4) leaves rack0 with 4 + 8 = 12 free: the
    tighter rack (12 < 16 free) wins the tie, and inside it the job takes 8 + 4."""
    c = mk.cluster(2, 8, racks=2)
    pol = Recording(c)
    simulate(c, [mk.job("a", 4, 100), mk.job("big", 12, 10, arrival=1)], pol, semantics="reference")
    p = pol.placements
    ra = c.machine(next(iter(p["a"]))).rack
    assert sorted(p["big"].values()) == [4, 8] and {c.machine(m).rack for m in p["big"]} == {ra}
