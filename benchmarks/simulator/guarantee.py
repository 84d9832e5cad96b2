"""The performance guarantee, checked in every simulated run (Rubick Sec. 5.2).

A guaranteed job's SLO is the throughput of its requested resources and plan: the rate model's
iteration time of ``job.requested_plan`` on the most consolidated placement of the requested GPUs
(one machine if one is large enough, else one rack; CPUs and memory split in proportion to GPUs),
the placement the workload conversion times jobs on. Whenever a guaranteed job is given resources
(start, restart, reconfiguration), the simulator reports the iteration time it will run at; a run is
a *violation* when that is slower than the SLO by more than ``tolerance`` (relative). Between
allocations a job's speed is constant, so checking at every allocation covers all of its running.

Metrics: ``guarantee_checks`` (allocations of guaranteed jobs), ``guarantee_violations``,
``guarantee_jobs_violated`` (distinct jobs) and ``guarantee_worst`` (the largest relative slowdown
``t_iter / t_slo - 1`` seen, 0 when none).
"""

from __future__ import annotations

from collections.abc import Callable

from schedlab.benchmarks.simulator.rates import consolidated_counts
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import split_resources
from schedlab.topology.cluster import Cluster


class GuaranteeCheck:
    """Counts guaranteed jobs running below their SLO (see the module docstring)."""

    def __init__(self, cluster: Cluster, iteration_time: Callable, *, tolerance: float = 1e-6) -> None:
        self.cluster = cluster
        self._iteration_time = iteration_time  # (job, plan, placement) -> seconds per iteration
        self.tolerance = tolerance
        self._slo: dict[str, float] = {}
        self.checks = 0
        self.violations = 0
        self.jobs_violated: set[str] = set()
        self.worst = 0.0

    def slo_iteration_time(self, job: Job) -> float:
        """Seconds per iteration at the job's request (its SLO), cached per job."""
        t = self._slo.get(job.id)
        if t is None:
            placement = split_resources(job, consolidated_counts(self.cluster, job.requested.gpus))
            t = self._slo[job.id] = float(self._iteration_time(job, job.requested_plan, placement))
        return t

    def observe(self, job: Job, iteration_time: float) -> None:
        """A guaranteed job starts running at ``iteration_time`` seconds per iteration."""
        if not job.guaranteed:
            return
        self.checks += 1
        slowdown = iteration_time / self.slo_iteration_time(job) - 1.0
        if slowdown > self.tolerance:
            self.violations += 1
            self.jobs_violated.add(job.id)
            self.worst = max(self.worst, slowdown)

    def forget(self, job_id: str) -> None:
        self._slo.pop(job_id, None)

    def metrics(self) -> dict[str, float | int]:
        return {"guarantee_checks": self.checks, "guarantee_violations": self.violations,
                "guarantee_jobs_violated": len(self.jobs_violated), "guarantee_worst": self.worst}


__all__ = ["GuaranteeCheck"]
