"""A job's life in the simulator (:class:`LifecycleMixin`): its accumulators integrated between events
(``_advance``), its segments, the completion event of a running job, its resources taken and given back
(the cluster state and the free index together), its record when it finishes, and the rarer events
(timer, reconfiguration done, preemption done; arrivals and completions are handled in
:meth:`~benchmarks.simulator.engine.Simulator._step`, half of all events each).

Duplicated for speed (each saves a Python call per job or per event on the replay's hot path, measured):
``_finish`` integrates a running job inline (``_advance``'s running case), ``_handle`` a checkpointing
or restoring one, :meth:`~benchmarks.simulator.decisions.DecisionsMixin._apply` a queued job and
``_stop`` a preempted one. ``_allocate`` computes the placement's tier once and gives its GPUs and tier
to the realistic rates (``RealisticRates.speed_at`` / ``slowdown_at``: the same floats as ``speed`` /
``placement_slowdown``). ``tests/benchmarks/test_replay_identity.py`` pins the records.
"""

from __future__ import annotations

from schedlab.benchmarks.simulator.artifact import snap
from schedlab.benchmarks.simulator.events import sim_event
from schedlab.benchmarks.simulator.records import Segment, job_record
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.job import JobClass
from schedlab.scheduling.policy import EventKind, JobRuntime, JobStatus, SimEvent
from schedlab.topology.errors import SpecError
from schedlab.topology.tiers import Tier

_RUNNING = JobStatus.RUNNING
_QUEUED = JobStatus.QUEUED
_RESTORING = JobStatus.RESTORING
_CHECKPOINTING = JobStatus.CHECKPOINTING
_FINISHED = JobStatus.FINISHED
_K_TIMER = EventKind.TIMER.value
_K_RECONF = EventKind.RECONF_DONE.value
# enum members as module constants: reading ``EventKind.X`` in the hot loop is an attribute lookup each time
_E_COMPLETION = EventKind.COMPLETION
_E_PREEMPT = EventKind.PREEMPT_DONE
_E_RECONF = EventKind.RECONF_DONE
_E_TIMER = EventKind.TIMER
_GUARANTEED = JobClass.GUARANTEED
_T_MACHINE = Tier.MACHINE
_TIER_LABEL = {t: t.label for t in Tier}
_MACHINE_LABEL = Tier.MACHINE.label


class LifecycleMixin:
    """The :class:`~benchmarks.simulator.engine.Simulator`'s per-job methods (module docstring); they use
    its ``_rt``, ``_queue``, ``_holding``, ``state``, ``index``, ``events``, ``rates``, ``recorder`` and
    ``guarantee``."""

    def _advance(self, rt: JobRuntime, t: float) -> None:
        dt = t - rt.t_mark
        if dt > 0:
            st = rt.status
            if st is _RUNNING:
                rt.progress += rt.rate * dt
                rt.executed += dt
                g = rt.gpus * dt
                rt.attained += g
                if rt.host is None:  # a Share guest holds no GPUs of its own
                    rt.held += g
                rt.comm += rt.comm_frac * dt
            elif st is _QUEUED:
                rt.waited += dt
            elif st is _RESTORING or st is _CHECKPOINTING:
                rt.overhead += dt
                rt.held += rt.gpus * dt
        rt.t_mark = t

    def _close_segment(self, rt: JobRuntime, t: float) -> None:
        if self.recorder.segments is None or rt.alloc is None:
            return
        t0 = self._seg_start.pop(rt.job.id, t)
        if t > t0:
            self.recorder.segment(Segment(rt.job.id, t0, t, tuple(sorted(rt.alloc.gpu_counts.items())),
                                          rt.iter_time if rt.status is _RUNNING else 0.0))

    def _open_segment(self, rt: JobRuntime, t: float) -> None:
        if self.recorder.segments is not None:
            self._seg_start[rt.job.id] = t

    def _set_running(self, rt: JobRuntime, t: float) -> None:
        rt.status = _RUNNING
        rt.rate = 1.0 / rt.iter_time
        rt.version += 1
        remaining = rt.job.iterations - rt.progress
        end = t + max(remaining, 0.0) * rt.iter_time
        if self._snap:
            end = snap(end)  # whole-second clock (tiresias semantics): float error must not split a batch
        self.events.push(end, _E_COMPLETION, rt.job.id, rt.version)

    def _release(self, rt: JobRuntime) -> None:
        jid = rt.job.id
        placement = self.state.release(jid)
        idx_set = self.index._set
        free = self._free_map
        for m in placement:
            idx_set(m, free[m].gpus)
        del self._holding[jid]

    def _allocate(self, rt: JobRuntime, ja: JobAllocation) -> None:
        job = rt.job
        jid = job.id
        placement = ja.placement
        self.state.allocate(jid, placement)
        idx_set = self.index._set
        free = self._free_map
        g = spans = 0  # GPUs (``ja.gpus``) and machines with GPUs of the job
        for m, r in placement.items():
            idx_set(m, free[m].gpus)
            k = r.gpus
            g += k
            if k > 0:
                spans += 1
        self._holding[jid] = rt
        rt.alloc = ja
        rt.gpus = g
        # one machine (verified): the machine tier, GPUs or not; the tier is the rate model's too when g > 1
        tier = _T_MACHINE if len(placement) == 1 else self.cluster.tier_of(placement, default=_T_MACHINE)
        fast = self._fast_rates
        if fast is not None:
            it, rt.comm_frac = fast.speed_at(job, ja.plan, placement, g, tier)
        else:
            it, rt.comm_frac = self.rates.speed(job, ja.plan, placement)
        rt.iter_time = it
        if not it > 0:
            raise SpecError(f"job {jid!r}: rate model gave iteration time {it!r}",
                            source="<rates>", field="iter_time")
        if job.job_class is _GUARANTEED:
            self.guarantee.observe(job, it)
        if spans > 1 and self._slowdown is not None:
            if fast is not None:
                slow = fast.slowdown_at(job, ja.plan, placement, it, g)
            else:
                slow = self._slowdown(job, ja.plan, placement, it)
            if slow > self._slow.get(jid, 1.0):
                self._slow[jid] = slow
        rt.tiers.add(_TIER_LABEL[tier])

    # ------------------------------------------------------------- events
    def _finish(self, rt: JobRuntime, t: float) -> None:
        dt = t - rt.t_mark
        if dt > 0 and rt.status is _RUNNING:  # (``_advance`` of a running job, inline)
            rt.progress += rt.rate * dt
            rt.executed += dt
            g = rt.gpus * dt
            rt.attained += g
            if rt.host is None:
                rt.held += g
            rt.comm += rt.comm_frac * dt
            rt.t_mark = t
        else:
            self._advance(rt, t)
        if self._segments:
            self._close_segment(rt, t)
        rt.progress = rt.job.iterations
        if rt.host is not None:
            del self._guest[rt.host]
            rt.host = None
        else:
            if self._guest:  # (``_unshare_host`` finds nothing while no job shares)
                self._unshare_host(rt.job.id, t)
            self._release(rt)
        rt.status = _FINISHED
        rt.rate = 0.0
        rt.end = t
        self.finished += 1
        j = rt.job
        ideal = j.duration
        if ideal is None:
            it = j.attrs.get("iter_time")
            ideal = j.iterations * it if it is not None else float("nan")
        self.recorder.job(job_record(
            j.id, j.model, j.tenant, j.job_class._value_, j.requested.gpus, j.iterations, j.arrival,
            rt.first_start, t, t - j.arrival, rt.first_start - j.arrival, rt.waited, rt.held, rt.executed,
            rt.overhead, rt.comm, rt.preemptions, rt.reconfigurations, "|".join(sorted(rt.tiers)), ideal,
            int(j.attrs.get("requested_gpus", j.requested.gpus)),
            rt.attained / rt.executed if rt.executed > 0 else float(rt.gpus), self._slow.pop(j.id, 1.0)))
        if self._forget is not None:
            self._forget(j.id)
        if j.job_class is _GUARANTEED:  # (the check keeps an SLO for guaranteed jobs only: ``observe``)
            self.guarantee.forget(j.id)

    def _handle(self, t: float, kind: int, jid: str | None, payload: object) -> SimEvent | None:
        """A timer, reconfiguration done or preemption done event (arrivals and completions: ``_step``).
        The job restores or checkpoints until then (its ``_advance`` inline)."""
        if kind == _K_TIMER:
            return sim_event(t, _E_TIMER, None, payload)
        rt = self._rt[jid]
        if rt.version != payload:
            return None  # superseded by a later change of this job
        st = rt.status
        if st is _RESTORING or st is _CHECKPOINTING:  # (``_advance``, inline)
            dt = t - rt.t_mark
            if dt > 0:
                rt.overhead += dt
                rt.held += rt.gpus * dt
            rt.t_mark = t
        else:
            self._advance(rt, t)
        if self._segments:
            self._close_segment(rt, t)
        if kind == _K_RECONF:
            self._set_running(rt, t)
            if self._segments:
                self._open_segment(rt, t)
            return sim_event(t, _E_RECONF, jid)
        # preemption done: the checkpoint is saved; give the resources back
        self._release(rt)
        rt.status = _QUEUED
        rt.enqueued_at = t
        self._queue[jid] = rt
        return sim_event(t, _E_PREEMPT, jid)


__all__ = ["LifecycleMixin"]
