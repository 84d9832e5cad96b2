"""Placement slowdowns: Dally's Table 1 overheads bounded at 5x compute (``rates.MAX_COMM_OVERHEAD``,
Dally §3.1), and the per-replay count of jobs slowed more than 2x by their placement.

Hand-worked on two racks of one 2-GPU machine each; a test policy places the jobs where it is told.
"""

from __future__ import annotations

import math

import pytest

from schedlab.benchmarks.simulator import simulate
from schedlab.benchmarks.simulator.engine import Simulator
from schedlab.benchmarks.simulator.rates import MAX_COMM_OVERHEAD, RealisticRates
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Job, Resources
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import Decision, EventKind
from schedlab.scheduling.snapshot import PolicyBase
from schedlab.topology import Cluster, spec_from_dict


def _cluster(racks: int, machines: int) -> Cluster:
    return Cluster(spec_from_dict({
        "name": "slow", "defaults": {"gpus": 2, "gpu_model": "P100-16GB", "gpu_memory_gb": 16, "cpus": 16,
                                     "host_memory_gb": 64, "pcie_gbps": 16},
        "links": {"machine": {"bandwidth_gbps": 40, "latency_us": 1}, "rack": {"bandwidth_gbit": 100, "latency_us": 2},
                  "network": {"bandwidth_gbit": 100, "latency_us": 5}},
        "racks": racks, "machines_per_rack": machines}, source="<test>"))


def _job(jid: str, model: str) -> Job:
    """2 GPUs, 1,000 iterations of 1 s at the request (one machine)."""
    return Job(jid, Resources(2), iterations=1000.0, model=model, duration=1000.0,
               attrs={"iter_time": 1.0, "rates": "tier"})


class Spread(PolicyBase):
    """Starts each arriving job with one GPU on each of the first two machines."""

    name = "spread"
    oracle = False

    def schedule(self, view):
        ms = view.cluster.machines[:2]
        start = {e.job_id: JobAllocation(e.job_id, ExecutionPlan(dp=2), {m: Resources(1) for m in ms})
                 for e in view.events if e.kind is EventKind.ARRIVAL}
        return Decision(start=start)


def test_bound_is_five_times_compute():
    assert MAX_COMM_OVERHEAD == 5.0


def test_cross_network_resnet18_is_bounded_and_counted():
    """ResNet18 (Table 1: machine 7 %, network 2,749 %) on one GPU of each rack: the request ran 1 s per
    iteration at 7 %, so compute = 1 / 1.07; across the network 1 / 1.07 x (1 + 5) = 5.607 s, JCT
    5,607.5 s (Table 1 as printed: x 28.49, 26,626 s). Slowed 5.6x by placement: counted."""
    res = simulate(_cluster(2, 1), [_job("a", "resnet18")], Spread(), semantics="realistic")
    assert res.jobs[0].jct == pytest.approx(1000 * 6 / 1.07)
    assert res.jobs[0].placement_slowdown == pytest.approx(6 / 1.07)
    assert res.metrics["slowed_2x_by_placement"] == 1
    assert res.metrics["max_placement_slowdown"] == pytest.approx(6 / 1.07)
    assert res.metrics["comm_overhead_capped"] == {"resnet18@network": 1}
    c = _cluster(2, 1)
    raw = Simulator(c, [_job("a", "resnet18")], Spread(), rates=RealisticRates(c, max_overhead=math.inf)).run()
    assert raw.jobs[0].jct == pytest.approx(1000 * 28.49 / 1.07) and "comm_overhead_capped" not in raw.metrics


def test_rack_spread_of_an_insensitive_model_is_not_slowed():
    """ResNet50: machine and rack both 12 %: two machines of one rack cost nothing extra (slowdown 1)."""
    res = simulate(_cluster(1, 2), [_job("a", "resnet50")], Spread(), semantics="realistic")
    assert res.jobs[0].jct == pytest.approx(1000.0)
    assert res.jobs[0].placement_slowdown == pytest.approx(1.0)
    assert res.metrics["slowed_2x_by_placement"] == 0 and "comm_overhead_capped" not in res.metrics


def test_tiresias_semantics_never_slow_by_placement():
    res = simulate(_cluster(2, 1), [_job("a", "resnet18")], Spread(), semantics="reference")
    assert res.jobs[0].jct == pytest.approx(1000.0) and res.metrics["slowed_2x_by_placement"] == 0
