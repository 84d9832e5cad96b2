r"""Placement instances from a scheduling state: a decision state a replay met (queued and running jobs, the
running allocation, progress, capacity held outside the decision) as the instance of the ``tiresias-placement``
and ``tier-placement`` kinds, so those kinds' policies are scored on states they really meet
(``benchmarks.harness.states``), beside the generators' instances.

Both converters keep the same reading of the state:

* the jobs to place are the **queued** ones (not in ``current``), rigid at their request, with their progress
  (a preempted job's remaining run time is what is left of it);
* every **running** job keeps its resources (they join ``reserved``: neither kind moves a running job) and
  frees its GPUs when it ends: ``releases`` = (its remaining run time at the request, its GPUs; tier: at the
  speed its current tier gives, :func:`~formulations.tier.tier_rate`), read only by the neutral objective's
  first-fit estimate of a queued job's wait;
* capacity already ``reserved`` in the state (jobs writing a checkpoint, work outside the view) stays reserved,
  with no release time (unknown).

Tiresias: each job's parameter servers come from its model's tensors (:func:`~perfmodel.network.tensor_sizes`,
largest first onto ``max(1, W // 8)`` PS, as the generator), one worker per requested GPU with the request's CPUs
per GPU, PS that take no CPU (the workloads state none); the running jobs' Appendix D traffic, their PS placed by
the completion rule, is the nodes' existing ``traffic``. A model the perf model does not know gets one PS of
:data:`UNKNOWN_MODEL_MB` and no skew slowdown. Tier: the overheads of Dally's Table 1
(:func:`~perfmodel.network.comm_overhead`), or 0 at every tier for a model it cannot price.
"""

from __future__ import annotations

from collections.abc import Callable

from schedlab.formulations.neutral import remaining_time
from schedlab.formulations.tier import TierInstance, TierMode, tier_rate
from schedlab.formulations.tiresias import PSJob, TiresiasInstance, complete, node_traffic
from schedlab.formulations.tiresias_gen import split_tensors
from schedlab.perfmodel.network import comm_overhead, tensor_sizes
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.errors import SpecError
from schedlab.topology.tiers import Tier

#: the PS size (MB) of a job whose model the perf model does not know
UNKNOWN_MODEL_MB = 100


def split_state(base: Instance) -> tuple[tuple[Job, ...], tuple[JobAllocation, ...], dict[str, Resources]]:
    """``(queued jobs, running allocations, reserved)``: the state's reserved capacity plus every running job's
    resources (neither placement kind moves a running job)."""
    running = tuple(base.current)
    held = {ja.job_id for ja in running}
    reserved = dict(base.reserved)
    for ja in running:
        for m, r in ja.placement.items():
            reserved[m] = reserved.get(m, Resources()) + r
    return tuple(j for j in base.jobs if j.id not in held), running, reserved


def _placement_base(base: Instance, queued: tuple[Job, ...], reserved: dict[str, Resources]) -> Instance:
    ids = {j.id for j in queued}
    return Instance(base.cluster, queued, reserved=reserved, time=base.time, quotas=base.quotas,
                    progress={k: v for k, v in base.progress.items() if k in ids})


def _releases(base: Instance, running: tuple[JobAllocation, ...], speed: Callable[[JobAllocation], float]
              ) -> tuple[tuple[float, int], ...]:
    out = []
    for ja in running:
        d = remaining_time(base, base.job_by_id[ja.job_id])
        out.append((round(d / max(speed(ja), 1e-12), 6), ja.gpus))
    return tuple(sorted(out))


def _ps_job(job: Job) -> tuple[PSJob, bool]:
    """A job's parameter servers and whether its model was known."""
    g = max(1, job.requested.gpus)
    cpw = job.requested.cpus // g
    try:
        sizes = split_tensors(tuple(t / 1e6 for t in tensor_sizes(job.model)), max(1, g // 8))
        return PSJob(sizes, cpw, 0), True
    except (SpecError, KeyError, ValueError):
        return PSJob((UNKNOWN_MODEL_MB,), cpw, 0), False


def tiresias_from_state(base: Instance) -> TiresiasInstance:
    """The ``tiresias-placement`` instance of a scheduling state (module docstring)."""
    queued, running, reserved = split_state(base)
    ps, spread = {}, {}
    for j in (*queued, *(base.job_by_id[ja.job_id] for ja in running)):
        ps[j.id], known = _ps_job(j)
        if not known:
            spread[j.id] = 0.0
    # the running jobs' traffic as it is: their own instance, their PS placed by the completion rule
    run_jobs = tuple(base.job_by_id[ja.job_id] for ja in running)
    traffic: dict[str, int] = {}
    if run_jobs:
        now = TiresiasInstance(Instance(base.cluster, run_jobs, reserved=dict(base.reserved)),
                               {j.id: ps[j.id] for j in run_jobs})
        for m, t in node_traffic(now, complete(now, Allocation.of(running), allow_missing=True)).items():
            if t > 0:
                traffic[m] = int(round(t))
    inst_base = _placement_base(base, queued, reserved)
    return TiresiasInstance(inst_base, {j.id: ps[j.id] for j in queued}, traffic,
                            spread={k: v for k, v in spread.items() if k in inst_base.job_by_id},
                            releases=_releases(base, running, lambda ja: 1.0))


def _overheads(job: Job) -> tuple[float, float, float]:
    try:
        o = tuple(comm_overhead(job.model, t) for t in (Tier.MACHINE, Tier.RACK, Tier.NETWORK))
    except (SpecError, KeyError, ValueError):
        return (0.0, 0.0, 0.0)
    m, r, n = o
    return (m, max(m, r), max(m, r, n))  # non-decreasing, as the kind requires


def tier_from_state(base: Instance, mode: TierMode = TierMode.MAX_THROUGHPUT) -> TierInstance:
    """The ``tier-placement`` instance of a scheduling state (module docstring)."""
    queued, running, reserved = split_state(base)
    ov = {j.id: _overheads(j) for j in base.jobs}
    inst_base = _placement_base(base, queued, reserved)
    probe = TierInstance(Instance(base.cluster, tuple(base.job_by_id[ja.job_id] for ja in running)),
                         {ja.job_id: ov[ja.job_id] for ja in running})
    return TierInstance(inst_base, {j.id: ov[j.id] for j in queued}, mode,
                        releases=_releases(base, running, lambda ja: tier_rate(probe, ja)))


__all__ = ["UNKNOWN_MODEL_MB", "split_state", "tier_from_state", "tiresias_from_state"]
