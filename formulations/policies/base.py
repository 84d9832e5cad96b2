"""What every round-based, model-solving policy needs: the snapshot a view shows (as an
:class:`~schedlab.scheduling.Instance`), the decision that moves the cluster to a target
:class:`~schedlab.scheduling.Allocation`, and a round clock.

* :func:`view_instance` is the inverse of :func:`scheduling.snapshot.snapshot_view`: the active jobs
  (queued in queue order, then those holding resources), the allocation of the jobs that may change
  (RUNNING) as ``current``, the resources of jobs that may not (restoring after a restart or
  reconfiguration, checkpointing before a preemption), and capacity held outside the view's jobs
  (a snapshot instance's own ``reserved``), as ``reserved`` capacity, the view's quotas
  and clock, and each job's accumulators as ``progress``. A formulation built on it (the joint
  plan + allocation model, Sia's job x configuration MIP) therefore decides exactly what the policy
  may change, and ``frozen`` lists the jobs it must leave alone.
* :func:`decision_to` turns a target allocation of that instance into the delta the simulator
  applies: starts and reconfigurations for jobs whose allocation differs, preemptions for running
  jobs the target leaves out.
* :class:`RoundClock`: decisions every ``interval_s`` (a timer chain while jobs are active); an
  arrival or completion between rounds waits for the next round, as in Sia's and Gavel's simulators.
* :class:`RoundPolicy`: the ``schedule`` of such a policy (snapshot form from
  :class:`~schedlab.scheduling.snapshot.PolicyBase`): on a round, :func:`view_instance`, the
  subclass's ``round(snap) -> Allocation``, :func:`decision_to`; ``counters`` are reported by the
  simulator as ``metrics["policy_counters"]``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from schedlab.perfmodel.params import DEFAULT_CALIBRATION
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.instance import Instance, JobProgress
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import ClusterView, Decision, EventKind, JobStatus, Timer
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.snapshot import PolicyBase
from schedlab.scheduling.state import machine_capacity


@dataclass(frozen=True)
class ViewSnapshot:
    """``instance``: what the policy may decide on; ``frozen``: the jobs holding resources that may not
    change now (their resources are ``instance.reserved``; they are not in ``instance.jobs``);
    ``calibration``: the perf-model calibration of the view (:attr:`ClusterView.calibration`)."""

    instance: Instance
    frozen: tuple[Job, ...]
    calibration: str = DEFAULT_CALIBRATION


def view_instance(view: ClusterView) -> ViewSnapshot:
    """The decision problem ``view`` shows (module docstring)."""
    jobs, current, progress = [], [], {}
    reserved: dict[str, Resources] = {}
    frozen = []
    for jv in list(view.queue()) + list(view.running()):
        if jv.status is JobStatus.RUNNING or jv.status is JobStatus.QUEUED:
            jobs.append(jv.job)
            if jv.status is JobStatus.RUNNING and jv.allocation is not None:
                current.append(jv.allocation)
            progress[jv.id] = JobProgress(progress=jv.progress, attained=jv.attained_service,
                                          executed=jv.executed_time, waited=jv.waiting_time,
                                          preemptions=jv.preemptions, last_change=jv.last_change)
        elif jv.allocation is not None:
            frozen.append(jv.job)
    # everything not free and not held by a RUNNING job is reserved: frozen jobs' resources, and capacity
    # held outside the view's jobs (a snapshot instance's own ``reserved``, seen only as less free)
    used: dict[str, Resources] = {}
    for ja in current:
        for m, r in ja.placement.items():
            used[m] = used.get(m, Resources()) + r
    for m in view.cluster.machines:
        held = machine_capacity(view.cluster, m) - view.free(m) - used.get(m, Resources())
        if held.gpus > 0 or held.cpus > 0 or held.mem_gb > 1e-9:
            reserved[m] = Resources(max(held.gpus, 0), max(held.cpus, 0), max(held.mem_gb, 0.0))
    inst = Instance(view.cluster, tuple(jobs), current=Allocation.of(current), quotas=view.quotas,
                    reserved=reserved, time=view.now, progress=progress)
    return ViewSnapshot(inst, tuple(frozen), view.calibration)


def decision_to(instance: Instance, target: Allocation, timers: tuple[Timer, ...] = ()) -> Decision:
    """The delta from ``instance.current`` to ``target``."""
    start = {ja.job_id: ja for ja in target if instance.current.get(ja.job_id) != ja}
    preempt = tuple(ja.job_id for ja in instance.current if ja.job_id not in target)
    return Decision(start=start, preempt=preempt, timers=timers)


class RoundClock:
    """A round every ``interval_s`` while jobs are active: :meth:`due` says whether this decision point
    is a round (the round timer fired, or no round is pending), :meth:`next` is the timer to ask for."""

    def __init__(self, interval_s: float, tag: str) -> None:
        self.interval_s = interval_s
        self.tag = tag
        self._pending: float | None = None

    def due(self, view: ClusterView) -> bool:
        fired = any(ev.kind is EventKind.TIMER and ev.tag == self.tag for ev in view.events)
        if fired or self._pending is None or self._pending < view.now:
            self._pending = None
            return True
        return False

    def next(self, view: ClusterView) -> tuple[Timer, ...]:
        if view.queue_length == 0 and view.running_count == 0:
            return ()
        self._pending = view.now + self.interval_s
        return (Timer(self._pending, self.tag),)


class RoundPolicy(PolicyBase):
    """A policy that decides once per round (module docstring); subclasses set ``name`` and implement
    :meth:`round`."""

    def __init__(self, interval_s: float, *, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.clock = RoundClock(interval_s, f"{self.name}-round")
        self.counters: Counter[str] = Counter()

    def schedule(self, view: ClusterView) -> Decision:
        if not self.clock.due(view):
            return Decision()
        self.counters["rounds"] += 1
        snap = view_instance(view)
        timers = self.clock.next(view)
        if not snap.instance.jobs:
            return Decision(timers=timers)
        return decision_to(snap.instance, self.round(snap), timers)

    def round(self, snap: ViewSnapshot) -> Allocation:
        """One round's target allocation of ``snap.instance``."""
        raise NotImplementedError


__all__ = ["RoundClock", "RoundPolicy", "ViewSnapshot", "decision_to", "view_instance"]
