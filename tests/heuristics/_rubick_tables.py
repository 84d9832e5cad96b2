"""Hand-written curve tables for the Rubick tests (``test_rubick*.py``): the A800 testbed cluster, a
:class:`CurveBook` and simulator rates read from ``tables[model][gpus]`` (samples/s), so hand
computations do not move when the perf model is refitted; the policy code is the real one
(``RubickPolicy.use_curves``). Slopes are normalised by the SLO throughput ``T_ref`` (the table at the
request): ``gain(a) = max_k (E(a+k) - E(a)) / (k T_ref)``, ``loss(a) = min_k (E(a) - E(a-k)) / (k T_ref)``.
"""

from __future__ import annotations

import numpy as np

from schedlab.heuristics.rubick import RubickPolicy
from schedlab.heuristics.rubick.curves import CurveBook, PlanChoice, hull_slopes
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.loaders import spec_from_dict


def a800_cluster(machines: int, gpus: int = 8, cpus: int = 96) -> Cluster:
    """``machines`` A800-80GB servers in one rack (Rubick's testbed machine, ``gpus`` GPUs each)."""
    return Cluster(spec_from_dict({
        "name": f"a800-{machines}x{gpus}",
        "defaults": {"gpus": gpus, "gpu_model": "A800-80GB", "gpu_memory_gb": 80, "cpus": cpus,
                     "host_memory_gb": 1600, "pcie_gbps": 32},
        "links": {"machine": {"bandwidth_gbps": 400, "latency_us": 1},
                  "rack": {"bandwidth_gbps": 100, "latency_us": 2}},
        "racks": 1, "machines_per_rack": machines}))


class TableBook(CurveBook):
    """``tables[model][g]`` = samples/s at ``g`` GPUs (index 0 unused, 0 = no plan), any placement;
    one CPU per GPU is enough (CPUs speed nothing up); plans are plain DP (``dp = g``)."""

    def __init__(self, cluster: Cluster, tables: dict[str, list[float]]) -> None:
        super().__init__(cluster)
        top = cluster.total_gpus + 1
        self.tables = {m: [0.0, *t[1:]] + [0.0] * (top - len(t)) for m, t in tables.items()}

    def knows(self, model):
        return model in self.tables

    def request_throughput(self, job):
        t = self.tables[job.model][job.requested.gpus]
        return (t, job.requested_plan) if t > 0 else None

    def _best_at_request(self, job):
        return self.tables[job.model][job.requested.gpus] or None

    def gpu_slopes(self, job, mode, family):
        return hull_slopes(np.array(self.tables[job.model][1:]))

    def cpu_slopes(self, jm, g):
        t = self.tables[jm.job.model][g]
        return hull_slopes(np.array([t if c >= g else 0.0 for c in range(1, self.cpus_per_machine + 1)]))

    def min_resources(self, jm):
        t = self.tables[jm.job.model]
        g = next(g for g in range(1, len(t)) if t[g] >= jm.ref * (1 - 1e-9))
        return g, g

    def plan_for(self, jm, counts, cpus):
        g = sum(counts.values())
        t = self.tables[jm.job.model][g]
        if t <= 0 or cpus < g or (not jm.elastic and g != jm.job.requested.gpus):
            return None
        return PlanChoice(ExecutionPlan(dp=g), t)

    def throughput(self, job, plan, counts, cpus):
        return self.tables[job.model][plan.gpus]

    def host_memory_gb(self, job, plan):
        return 0.0


class TableRates:
    """The simulator's speed from the same tables: one iteration = one sample."""

    def __init__(self, tables):
        self.tables = tables

    def speed(self, job, plan, placement):
        return 1.0 / self.tables[job.model][sum(r.gpus for r in placement.values())], 0.0


def table_job(jid, model, gpus, cpus=None, *, guaranteed=False, tenant="B", min_gpus=None, arrival=0.0):
    return Job(jid, Resources(gpus, gpus if cpus is None else cpus), iterations=1e6, arrival=arrival, model=model,
               tenant=tenant, job_class=JobClass.GUARANTEED if guaranteed else JobClass.BEST_EFFORT,
               reconfigurable=True,
               min_resources=Resources(min_gpus, min_gpus) if min_gpus is not None else None)


def table_policy(cluster, tables, **params) -> RubickPolicy:
    p = RubickPolicy(**params)
    p.use_curves(TableBook(cluster, tables))
    return p


def placed(cluster, machine_gpus):
    return {cluster.machines[i]: Resources(g, g) for i, g in enumerate(machine_gpus) if g}
