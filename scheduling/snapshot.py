"""Snapshot form: one decision of an online policy on an :class:`~schedlab.scheduling.Instance`.

The harness scores a heuristic against the exact formulation of the same decision. To make that a
measurement of *the* heuristic and not of a second copy of it, the snapshot form runs the policy's
own ``schedule`` on a :class:`~schedlab.scheduling.policy.ClusterView` built from the instance:

* the jobs of ``instance.current`` are RUNNING with their allocation, the others QUEUED (queue order =
  the instance's job order);
* free resources per machine = ``instance.capacity(m)`` (capacity minus ``reserved``) minus what the
  current allocation uses there;
* each job's accumulators (progress, attained service, waiting time...) come from
  ``instance.progress`` (zero when absent), the clock is ``instance.time``;
* the returned :class:`~schedlab.scheduling.policy.Decision` is applied to ``instance.current``:
  ``result = current - preempt + start``. Timers are ignored (a snapshot has no later decision point);
  jobs a policy chose to hold back stay queued.

``estimate(job, plan, placement)`` (seconds per iteration) defaults to the perf model for the jobs it
knows, else the job's reference time ``duration / iterations`` scaled by ``requested GPUs / GPUs``,
else 1 s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from schedlab.perfmodel.params import DEFAULT_CALIBRATION
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import ClusterView, FreeIndex, JobRuntime, JobStatus, JobView, Policy
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import AllocationError, CapacityError, PolicyError

Estimate = Callable[[Job, ExecutionPlan, Mapping[str, Resources]], float]


def default_estimate(cluster: Cluster, calibration: str = DEFAULT_CALIBRATION) -> Estimate:
    """Seconds per iteration: the perf model (under ``calibration``) for zoo models, else
    ``duration / iterations`` scaled linearly by GPUs, else 1 s."""
    from schedlab.perfmodel.facade import PerfModel
    from schedlab.perfmodel.zoo import resolve_name

    pm: list[PerfModel] = []

    def estimate(job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> float:
        counts = {m: r.gpus for m, r in placement.items() if r.gpus > 0}
        g = sum(counts.values())
        name = resolve_name(job.model)
        if name is not None and g > 0:
            if not pm:
                pm.append(PerfModel(cluster, calibration=calibration))
            cpus = sum(r.cpus for r in placement.values())
            try:
                t = pm[0].iteration_time(name, plan, counts, cpus)
                if t > 0:
                    return float(t)
            except (ValueError, LookupError):
                pass
        if job.duration is not None and g > 0:
            return job.duration / job.iterations * job.requested.gpus / g
        return 1.0

    return estimate


def snapshot_view(instance: Instance, *, estimate: Estimate | None = None,
                  semantics: str = "realistic", calibration: str = DEFAULT_CALIBRATION) -> ClusterView:
    """The read-only view a policy would see at ``instance.time`` (see the module docstring), with the
    perf model's ``calibration`` (the default estimate's and the view's)."""
    cluster = instance.cluster
    est = estimate if estimate is not None else default_estimate(cluster, calibration)
    now = instance.time
    free = {m: instance.capacity(m) for m in cluster.machines}
    for ja in instance.current:
        for m, r in ja.placement.items():
            left = free[m] - r
            if not left.is_nonnegative():
                raise CapacityError(f"instance's current allocation over-uses machine {m!r} "
                                    f"(job {ja.job_id!r}, {', '.join((r).exceeded(free[m]))})")
            free[m] = left
    queue: dict[str, JobRuntime] = {}
    holding: dict[str, JobRuntime] = {}
    views: dict[str, JobView] = {}
    clock = lambda: now  # noqa: E731 - the view's clock is frozen at the snapshot time
    for seq, job in enumerate(instance.jobs):
        rt = JobRuntime(job, seq)
        p = instance.progress.get(job.id)
        if p is not None:
            rt.progress, rt.attained, rt.executed, rt.waited = p.progress, p.attained, p.executed, p.waited
            rt.preemptions, rt.reconfigurations = p.preemptions, p.reconfigurations
            rt.last_change = p.last_change
        rt.t_mark = now
        ja = instance.current.get(job.id)
        if ja is None:
            rt.status = JobStatus.QUEUED
            queue[job.id] = rt
        else:
            rt.status = JobStatus.RUNNING
            rt.alloc = ja
            rt.gpus = ja.gpus
            rt.iter_time = est(job, ja.plan, ja.placement)
            rt.rate = 1.0 / rt.iter_time if rt.iter_time > 0 else 0.0
            rt.first_start = rt.last_start = rt.last_change if rt.last_change is not None else now
            holding[job.id] = rt
        views[job.id] = JobView(rt, clock)
    index = FreeIndex(cluster, {m: r.gpus for m, r in free.items()})
    view = ClusterView(cluster=cluster, queue=queue, holding=holding, views=views, free=free, index=index,
                       quotas=instance.quotas, estimate=est, semantics=semantics, calibration=calibration)
    view._now = now
    return view


def apply_decision(instance: Instance, decision) -> Allocation:
    """``instance.current`` minus the preempted jobs plus the started/changed ones."""
    out: dict[str, JobAllocation] = dict(instance.current.assignments)
    for jid in decision.preempt:
        if jid not in out:
            raise AllocationError(f"decision preempts job {jid!r}, which is not running in the instance")
        del out[jid]
    for jid, ja in decision.start.items():
        if jid not in instance.job_by_id:
            raise AllocationError(f"decision starts job {jid!r}, not in the instance")
        out[jid] = ja
    return Allocation(out)


def snapshot_decide(policy: Policy, instance: Instance, *, estimate: Estimate | None = None,
                    semantics: str = "realistic") -> Allocation:
    """One decision of ``policy`` on ``instance``, by its own ``schedule`` (no second copy), checked by
    the one verifier (:func:`scheduling.verify.validate_allocation`): a violation is a
    :class:`PolicyError` naming the policy and every violated rule."""
    view = snapshot_view(instance, estimate=estimate, semantics=semantics)
    alloc = apply_decision(instance, policy.schedule(view))
    bad = validate_allocation(instance, alloc)
    if bad:
        name = getattr(policy, "name", type(policy).__name__)
        raise PolicyError(f"policy {name!r} decided an invalid allocation: " + "; ".join(str(v) for v in bad[:5])
                          + (f" (+{len(bad) - 5} more)" if len(bad) > 5 else ""))
    return alloc


class PolicyBase:
    """Base of the built-in policies: a name, the oracle flag, the seed, and the snapshot form.

    ``decide(instance, *, seed)`` answers one decision with the policy's own ``schedule``; a policy
    with internal state (queues, wait-time histories) answers from that state, so build a fresh one
    (``PolicySpec.decide``) to score a snapshot in isolation. Subclasses with randomness draw from a
    generator seeded in :meth:`reseed`.
    """

    name: str = "policy"
    oracle: bool = False

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed

    def reseed(self, seed: int) -> None:
        self.seed = seed

    def decide(self, instance: Instance, *, seed: int | None = None) -> Allocation:
        if seed is not None and seed != self.seed:
            self.reseed(seed)
        return snapshot_decide(self, instance)


__all__ = ["Estimate", "PolicyBase", "apply_decision", "default_estimate", "snapshot_decide", "snapshot_view"]
