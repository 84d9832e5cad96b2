"""SRTF and SRSF: preemptive shortest-remaining-first oracles (the Tiresias paper's baselines).

They know every job's duration (``Job.duration`` at the requested resources; ``oracle = True``).
Remaining time = remaining iterations x (duration / iterations) seconds at the request; SRSF weighs it
by the job's GPUs (remaining *service*, GPU-seconds). At every event (the Tiresias artifact's
``shortest`` / ``shortest-gpu``, ``run_sim.py``): the list of active jobs is sorted by that key
(stable: ties keep the previous order, new jobs at the end), every GPU is released and reassigned in
that order to the jobs that fit (no head-of-line blocking), and running jobs that no longer fit are
preempted. A guaranteed job that would exceed its tenant's quota is skipped (multi-tenant workloads;
the order decides who gets the quota). Remaining times within 1e-6 s of a whole second are that second (so the artifact's integer
ties are ties here too).

Placement: consolidated when possible, else spread (:func:`heuristics.tiresias.placement.place_job`);
under ``realistic`` semantics a checkpointing job's GPUs are not reassigned until it is done, and a
job that cannot be placed yet stays queued until the next event.
"""

from __future__ import annotations

from pydantic import Field

from schedlab.heuristics.fifo import QuotaLedger, fill_pool
from schedlab.heuristics.tiresias.placement import JobTraits, Starter
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import ClusterView, Decision, EventKind, JobStatus
from schedlab.scheduling.registry import PolicyParams
from schedlab.scheduling.snapshot import PolicyBase
from schedlab.topology.errors import SpecError


class ShortestParams(PolicyParams):
    gpu_weighted: bool = Field(False, description="weigh remaining time by the job's GPUs (SRSF: remaining "
                                                  "service) instead of remaining time alone (SRTF)")


def _snap(x: float) -> float:
    r = round(x)
    return float(r) if abs(x - r) < 1e-6 else x


class ShortestRemaining(PolicyBase):
    """SRTF (``gpu_weighted=False``) / SRSF (``True``); see the module docstring."""

    oracle = True

    def __init__(self, *, seed: int = 0, gpu_weighted: bool = False, name: str | None = None) -> None:
        super().__init__(seed=seed)
        self.gpu_weighted = gpu_weighted
        self.name = name or ("srsf" if gpu_weighted else "srtf")
        self.starter = Starter(JobTraits())
        self._view: ClusterView | None = None
        self.order: list[str] = []
        self.rem: dict[str, float] = {}
        self.gpus: dict[str, int] = {}
        self.stale = False  # keys not refreshed during an uncontended spell

    def _remaining(self, view: ClusterView, jid: str) -> float:
        jv = view.job(jid)
        job = jv.job
        if job.duration is None:
            raise SpecError(f"job {jid!r} has no duration: {self.name} is an oracle and needs it",
                            source=f"<job {jid!r}>", field="duration")
        rem = _snap(jv.remaining * job.duration / job.iterations)
        return _snap(rem * job.requested.gpus) if self.gpu_weighted else rem

    def schedule(self, view: ClusterView) -> Decision:
        rem, gpus = self.rem, self.gpus
        if view is not self._view:
            self._view = view
            self.order = [jv.id for jv in view.running()] + [jv.id for jv in view.queue()]
            rem.clear()
            gpus.clear()
            for jid in self.order:
                rem[jid] = self._remaining(view, jid)
                gpus[jid] = view.job(jid).job.requested.gpus
            self.stale = False
        else:
            done = {e.job_id for e in view.events if e.kind is EventKind.COMPLETION}
            if done:
                self.order = [j for j in self.order if j not in done]
                for j in done:
                    rem.pop(j, None)
                    gpus.pop(j, None)
            for e in view.events:
                if e.kind is EventKind.ARRIVAL:
                    self.order.append(e.job_id)
                    rem[e.job_id] = self._remaining(view, e.job_id)
                    gpus[e.job_id] = view.job(e.job_id).job.requested.gpus
        if not view.quotas and sum(gpus.values()) <= view.cluster.total_gpus:
            # every active job fits: all run, nothing to sort (the order is refreshed when it matters)
            self.stale = True
            return self._start_all(view)
        if self.stale:
            for jid in self.order:  # back from an uncontended spell: every key
                rem[jid] = self._remaining(view, jid)
            self.stale = False
        else:
            for jv in view.running():  # only running jobs' remaining time changes
                rem[jv.id] = self._remaining(view, jv.id)
        self.order.sort(key=rem.__getitem__)
        ckpt = {jv.id: jv.job.requested.gpus for jv in view.running() if jv.status is JobStatus.CHECKPOINTING}
        free = view.cluster.total_gpus - sum(ckpt.values())
        # tenants' quotas (guaranteed jobs): only checkpointing jobs keep theirs, the rest is reassigned
        quota = QuotaLedger(view, (view.job(j).job for j in ckpt)) if view.quotas else None
        chosen = fill_pool(view, self.order, gpus, free, ckpt, quota)
        keep = set(chosen)
        preempt = tuple(jv.id for jv in view.running()
                        if jv.id not in keep and jv.status is not JobStatus.CHECKPOINTING)
        ps = self.starter.pass_state(view, preempt)
        hold = QuotaLedger.after_preemption(view, preempt) if quota is not None else None
        starts: dict[str, JobAllocation] = {}
        for jid in chosen:
            if view.job(jid).status is JobStatus.QUEUED:
                job = view.job(jid).job
                if hold is not None and not hold.admits(job):
                    continue  # its tenant's quota is still held by a checkpointing job: next event
                ja = self.starter.start(view, ps, job, consolidate=True)
                if ja is not None:  # else (realistic semantics) it waits for the next event
                    starts[jid] = ja
                    if hold is not None:
                        hold.take(job)
        return Decision(start=starts, preempt=preempt)

    def _start_all(self, view: ClusterView) -> Decision:
        ps = self.starter.pass_state(view)
        starts: dict[str, JobAllocation] = {}
        for jv in view.queue():
            ja = self.starter.start(view, ps, jv.job, consolidate=True)
            if ja is not None:
                starts[jv.id] = ja
        return Decision(start=starts)


__all__ = ["ShortestParams", "ShortestRemaining"]
