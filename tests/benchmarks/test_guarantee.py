"""The guarantee check every simulated run makes: a guaranteed job never runs below the throughput of
its request (violations counted in the metrics)."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.registry import all_policies
from schedlab.benchmarks.simulator import simulate
from schedlab.benchmarks.simulator.guarantee import GuaranteeCheck
from schedlab.benchmarks.workloads import get_workload
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Job, JobAllocation, JobClass, Resources
from schedlab.scheduling.policy import Decision, EventKind
from schedlab.topology import preset


class Halve:
    """Starts every job on half its requested GPUs of the first machine (reconfigurable jobs may)."""

    name = "halve"

    def schedule(self, view):
        if not any(e.kind is EventKind.ARRIVAL for e in view.events):
            return Decision()
        m = view.cluster.machines[0]
        return Decision(start={jv.id: JobAllocation(jv.id, ExecutionPlan(dp=jv.job.requested.gpus // 2),
                                                    {m: Resources(jv.job.requested.gpus // 2)})
                               for jv in view.queue()})


def test_slower_than_the_request_is_a_counted_violation():
    """Reference rates: 1 s per iteration at the 4 requested GPUs, 4/2 = 2 s on 2: the guaranteed job runs
    100 % slower than its SLO (one violation, worst slowdown 1.0); the best-effort job is not checked."""
    cluster = preset("tiresias-60")
    g = Job("g", Resources(4), iterations=10, tenant="A", job_class=JobClass.GUARANTEED, reconfigurable=True,
            attrs={"iter_time": 1.0})
    b = Job("b", Resources(2), iterations=10, reconfigurable=True, attrs={"iter_time": 1.0})
    res = simulate(cluster, (g, b), Halve(), quotas={"A": Resources(8)}, semantics="tiresias")
    m = res.metrics
    assert (m["guarantee_checks"], m["guarantee_violations"], m["guarantee_jobs_violated"]) == (1, 1, 1)
    assert m["guarantee_worst"] == pytest.approx(1.0)
    assert {r.job_id: r.end for r in res.jobs} == {"g": pytest.approx(20.0), "b": pytest.approx(20.0)}


def test_the_slo_is_the_request_on_its_most_consolidated_placement():
    cluster = preset("rubick-64")
    job = Job("j", Resources(16, 128), model="gpt2", plan=ExecutionPlan(dp=16), job_class=JobClass.GUARANTEED)
    seen = []

    def speed(j, plan, placement):
        seen.append({m: r.gpus for m, r in placement.items()})
        return 2.0

    chk = GuaranteeCheck(cluster, speed)
    chk.observe(job, 2.0)
    chk.observe(job, 2.0 * (1 + 1e-9))  # within the tolerance
    assert seen == [{"rack0-m0": 8, "rack0-m1": 8}]
    assert chk.metrics() == {"guarantee_checks": 2, "guarantee_violations": 0, "guarantee_jobs_violated": 0,
                             "guarantee_worst": 0.0}


@pytest.mark.parametrize("name", ["rubick", "antman"])
def test_no_violation_on_the_multi_tenant_smoke_workload(name):
    cluster = preset("rubick-64")
    w = get_workload("smoke-mt").build(cluster, seed=3)
    res = simulate(cluster, w.jobs, all_policies().build(name), quotas=w.quotas)
    assert res.unfinished == ()
    assert res.metrics["guarantee_checks"] >= sum(j.guaranteed for j in w.jobs) > 0
    assert res.metrics["guarantee_violations"] == 0
