"""The discrete-event simulator.

Events (arrival, completion, policy timer, preemption done, reconfiguration done) are processed in
``(time, priority, sequence)`` order; after every batch of same-time events the policy gets one
decision point (a :class:`~scheduling.policy.ClusterView`) and its :class:`~scheduling.policy.Decision`
is verified (:mod:`benchmarks.simulator.verifying`) and applied.

Job progress is in iterations. Between events a job's rate is constant, so at every change its
accumulators are integrated exactly: ``progress += rate * (t - t_mark)``; its completion event is
``t + remaining / rate`` and is invalidated (by a version number) when the rate changes.
All bookkeeping is incremental: a pass costs what the policy touches plus O(racks) for the state
sample, independent of the number of finished jobs.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from types import MappingProxyType

from schedlab.benchmarks.simulator.artifact import ArtifactNotes, artifact_jobs, pooled_cluster, snap
from schedlab.benchmarks.simulator.costs import CostModel, Semantics
from schedlab.benchmarks.simulator.costs import semantics as get_semantics
from schedlab.benchmarks.simulator.events import EventQueue, sim_event
from schedlab.benchmarks.simulator.gcpause import PausedGC
from schedlab.benchmarks.simulator.guarantee import GuaranteeCheck
from schedlab.benchmarks.simulator.hooks import CountsFallbacks, PreparesJobs
from schedlab.benchmarks.simulator.metrics import RunMetrics, summarize
from schedlab.benchmarks.simulator.rates import RateModel, make_rates
from schedlab.benchmarks.simulator.records import JobRecord, Recorder, Segment, job_record
from schedlab.benchmarks.simulator.sharing import SharingMixin
from schedlab.benchmarks.simulator.verifying import DecisionVerifier
from schedlab.perfmodel.params import CALIBRATIONS, DEFAULT_CALIBRATION
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.policy import (
    NO_DECISION,
    ClusterView,
    Decision,
    EventKind,
    FreeIndex,
    JobRuntime,
    JobStatus,
    JobView,
    Policy,
    SimEvent,
)
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.state import ClusterState
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import PolicyError, SpecError
from schedlab.topology.tiers import Tier

_RUNNING = JobStatus.RUNNING
_QUEUED = JobStatus.QUEUED
_RESTORING = JobStatus.RESTORING
_CHECKPOINTING = JobStatus.CHECKPOINTING
_K_ARRIVAL = EventKind.ARRIVAL.value
_K_COMPLETION = EventKind.COMPLETION.value
_K_PREEMPT = EventKind.PREEMPT_DONE.value
_K_RECONF = EventKind.RECONF_DONE.value
_K_TIMER = EventKind.TIMER.value
_KINDS = {k.value: k for k in EventKind}
# enum members as module constants: reading ``EventKind.X`` or ``member.value`` in the hot loop is a
# descriptor call each time
_E_ARRIVAL = EventKind.ARRIVAL
_E_COMPLETION = EventKind.COMPLETION
_E_PREEMPT = EventKind.PREEMPT_DONE
_E_RECONF = EventKind.RECONF_DONE
_E_TIMER = EventKind.TIMER
_FINISHED = JobStatus.FINISHED
_GUARANTEED = JobClass.GUARANTEED
_T_MACHINE = Tier.MACHINE
_TIER_LABEL = {t: t.label for t in Tier}
_MACHINE_LABEL = Tier.MACHINE.label

_INF = float("inf")

Progress = Callable[[float, int, int], None]  # (sim time, finished, total)


class StopReason(Enum):
    """Why :meth:`Simulator.run` returned."""

    DRAINED = "drained"          # no event left: every job that can finish did
    UNTIL = "until"              # the next event is after ``until``
    INTERRUPTED = "interrupted"  # Ctrl-C (KeyboardInterrupt): the records of what finished


@dataclass(frozen=True)
class SimResult:
    """What a run gave: the records, the typed metrics, the jobs not finished and why it stopped."""

    policy: str
    recorder: Recorder
    metrics: RunMetrics
    unfinished: tuple[str, ...]
    stop: StopReason
    events: int
    passes: int
    wall_s: float
    sim_time: float
    rate_sources: dict[str, int] = field(default_factory=dict)

    @property
    def interrupted(self) -> bool:
        """Stopped by Ctrl-C (``stop`` says why it stopped otherwise)."""
        return self.stop is StopReason.INTERRUPTED

    @property
    def jobs(self) -> list[JobRecord]:
        return self.recorder.jobs

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s if self.wall_s > 0 else float("inf")


def prepare_jobs(jobs: Iterable[Job], sem: Semantics, total_gpus: int | None = None,
                 notes: ArtifactNotes | None = None) -> tuple[Job, ...]:
    """Under ``gpu_only`` semantics requests keep their GPUs only (Tiresias: allocation by GPU count);
    under ``keep_oversized`` / ``whole_seconds`` the jobs are read as the Tiresias artifact reads them
    (:func:`~schedlab.benchmarks.simulator.artifact.artifact_jobs`)."""
    out = tuple(jobs)
    if (sem.keep_oversized or sem.whole_seconds) and total_gpus is not None:
        out = artifact_jobs(out, total_gpus, notes=notes)
    if sem.gpu_only:
        out = tuple(j if (j.requested.cpus == 0 and j.requested.mem_gb == 0) else
                    replace(j, requested=Resources(j.requested.gpus), min_resources=None) for j in out)
    return out


class Simulator(SharingMixin):
    """Replay ``jobs`` on ``cluster`` under ``policy``.

    ``semantics``: ``"realistic"`` (default) or ``"tiresias"`` (see :mod:`benchmarks.simulator.costs`);
    ``rates``/``costs`` override its rate and cost models. ``calibration`` (a name of
    ``perfmodel.params.CALIBRATIONS``) is the perf model's calibration, for the rate model and for the
    policy (the view's ``calibration``). ``recorder`` receives the records
    (pass one with ``out_dir`` to stream them to CSV). ``progress(t, finished, total)`` is called
    every ``progress_every`` events.
    """

    def __init__(self, cluster: Cluster, jobs: Iterable[Job], policy: Policy, *,
                 semantics: str | Semantics = "realistic", rates: RateModel | None = None,
                 costs: CostModel | None = None, quotas: Mapping[str, Resources] | None = None,
                 recorder: Recorder | None = None, progress: Progress | None = None,
                 progress_every: int = 50_000, small_gpus: int | None = None,
                 short_s: float = 4 * 3600.0, calibration: str = DEFAULT_CALIBRATION) -> None:
        if calibration not in CALIBRATIONS:
            raise SpecError(f"unknown calibration {calibration!r}; known: {', '.join(CALIBRATIONS)}",
                            source="<simulator>", field="calibration")
        self.calibration = calibration
        sem = get_semantics(semantics) if isinstance(semantics, str) else semantics
        self.semantics = sem
        machine_gpus = tuple(g for g in (cluster.machine(m).gpus for m in cluster.machines) if g > 0)
        if sem.pooled:
            cluster = pooled_cluster(cluster)  # the Tiresias artifact's one pool of GPUs
        self.cluster = cluster
        self.policy = policy
        self.policy_name = getattr(policy, "name", type(policy).__name__)
        self.rates = rates if rates is not None else make_rates(cluster, placement_speed=sem.placement_speed,
                                                                     calibration=calibration)
        self.costs = costs if costs is not None else sem.costs
        self.quotas = dict(quotas or {})
        self.recorder = recorder if recorder is not None else Recorder()
        self.progress = progress
        self.progress_every = progress_every
        self.small_gpus = small_gpus if small_gpus is not None else cluster.max_gpus_per_machine
        self.short_s = short_s
        total = cluster.total_gpus
        self.notes = ArtifactNotes()
        self.jobs = prepare_jobs(jobs, sem, total, self.notes)
        if isinstance(policy, PreparesJobs):  # a policy's load-time fill-ins and checks (Rubick's minRes)
            self.jobs = tuple(policy.prepare_jobs(self.jobs, cluster, self.quotas, calibration=calibration))
        self._snap = sem.whole_seconds
        with PausedGC():  # a runtime and a view per job: no cycle collection while they are built
            self._init_jobs(cluster, sem, total, calibration, machine_gpus)

    def _init_jobs(self, cluster: Cluster, sem: Semantics, total: int, calibration: str,
                   machine_gpus: tuple[int, ...]) -> None:
        self._rt: dict[str, JobRuntime] = {}
        for i, j in enumerate(self.jobs):
            if j.id in self._rt:
                raise SpecError(f"duplicate job id {j.id!r}", source="<workload>", field="id")
            if j.requested.gpus > total and not sem.keep_oversized:
                raise SpecError(f"job {j.id!r} requests {j.requested.gpus} GPUs; cluster {cluster.name!r} has "
                                f"{total}", source="<workload>", field="num_gpus")
            self._rt[j.id] = JobRuntime(j, i)
        self.guarantee = GuaranteeCheck(cluster, self._estimate)  # guaranteed jobs never below their SLO
        self.state = ClusterState(cluster)
        self.verifier = DecisionVerifier(cluster)  # the verifier's checks on every decision, incrementally
        self.index = FreeIndex(cluster, {m: self.state.free(m).gpus for m in cluster.machines})
        self._free_map = self.state.free_map  # (a live read-only view: built once, not per event)
        self._queue: dict[str, JobRuntime] = {}
        self._holding: dict[str, JobRuntime] = {}
        self._now = 0.0
        clock = self._clock
        self._views = {jid: JobView(rt, clock) for jid, rt in self._rt.items()}
        self.view = ClusterView(cluster=cluster, queue=self._queue, holding=self._holding, views=self._views,
                                free=self.state.free_map, index=self.index, quotas=MappingProxyType(self.quotas),
                                estimate=self._estimate, semantics=sem.name, checkpoint_s=self.costs.checkpoint_s,
                                machine_gpus=machine_gpus,
                                next_arrival=self._next_arrival if sem.whole_seconds else None,
                                calibration=calibration)
        arrivals = sorted(((j.arrival, rt.seq, j.id) for j, rt in ((j, self._rt[j.id]) for j in self.jobs)))
        self.events = EventQueue([(a, jid) for a, _, jid in arrivals])
        self._seg_start: dict[str, float] = {}
        self._slowdown = getattr(self.rates, "placement_slowdown", None)  # per allocation (realistic rates)
        self._forget = getattr(self.rates, "forget", None)  # a rate model's per-job cache
        self._guest: dict[str, str] = {}  # host job -> its Share guest
        self.shared = 0                   # Share starts
        self.unshared = 0                 # guests suspended (host left, or preempted)
        self._slow: dict[str, float] = {}
        self.finished = 0
        self.n_events = 0
        self.n_passes = 0
        self._next_report = self.progress_every
        self._wall = 0.0
        self._total_gpus = cluster.total_gpus
        # the plain recorder's series, appended to inline per pass (any other recorder: its ``sample``)
        self._series = self.recorder.series if type(self.recorder) is Recorder else None
        self._segments = self.recorder.segments is not None  # segments kept (``_close_segment`` does nothing else)

    # ------------------------------------------------------------ helpers
    def _clock(self) -> float:
        return self._now

    def _next_arrival(self) -> float:
        return self.events.next_arrival_time()

    def _estimate(self, job: Job, plan, placement: Mapping[str, Resources]) -> float:
        return self.rates.speed(job, plan, placement)[0]

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
        rt.iter_time, rt.comm_frac = self.rates.speed(job, ja.plan, placement)
        if not rt.iter_time > 0:
            raise SpecError(f"job {jid!r}: rate model gave iteration time {rt.iter_time!r}",
                            source="<rates>", field="iter_time")
        if job.job_class is _GUARANTEED:
            self.guarantee.observe(job, rt.iter_time)
        if spans > 1 and self._slowdown is not None:
            slow = self._slowdown(job, ja.plan, placement, rt.iter_time)
            if slow > self._slow.get(jid, 1.0):
                self._slow[jid] = slow
        if len(placement) == 1:  # one machine (verified): the machine tier, GPUs or not
            rt.tiers.add(_MACHINE_LABEL)
        else:
            rt.tiers.add(_TIER_LABEL[self.cluster.tier_of(placement, default=_T_MACHINE)])

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
        self.guarantee.forget(j.id)

    def _handle(self, t: float, kind: int, jid: str | None, payload: object) -> SimEvent | None:
        if kind == _K_ARRIVAL:
            rt = self._rt[jid]
            rt.status = _QUEUED
            rt.t_mark = t
            rt.enqueued_at = t
            self._queue[jid] = rt
            return sim_event(t, _E_ARRIVAL, jid)
        if kind == _K_TIMER:
            return sim_event(t, _E_TIMER, None, payload)
        rt = self._rt[jid]
        if rt.version != payload:
            return None  # superseded by a later change of this job
        if kind == _K_COMPLETION:
            self._finish(rt, t)
            return sim_event(t, _E_COMPLETION, jid)
        if kind == _K_RECONF:
            self._advance(rt, t)
            self._close_segment(rt, t)
            self._set_running(rt, t)
            self._open_segment(rt, t)
            return sim_event(t, _E_RECONF, jid)
        # preemption done: the checkpoint is saved; give the resources back
        self._advance(rt, t)
        self._close_segment(rt, t)
        self._release(rt)
        rt.status = _QUEUED
        rt.enqueued_at = t
        self._queue[jid] = rt
        return sim_event(t, _E_PREEMPT, jid)

    # ----------------------------------------------------------- decisions
    def _apply(self, d: Decision, t: float) -> None:
        name = self.policy_name
        rts = self._rt
        changes: dict[str, JobAllocation] = {}
        hosted = False  # a started job shares another's GPUs (an error, reported after the checks before it)
        for jid, ja in d.start.items():
            rt = rts.get(jid)
            if rt is None:
                raise PolicyError(f"policy {name!r} at t={t:g} s started unknown job {jid!r}")
            st = rt.status
            if st is _QUEUED or ((st is _RUNNING or st is _RESTORING) and rt.alloc != ja):
                if ja.job_id != jid:
                    raise PolicyError(f"policy {name!r} at t={t:g} s: start[{jid!r}] holds the allocation of "
                                      f"{ja.job_id!r}")
                changes[jid] = ja
            elif st is not _RUNNING and st is not _RESTORING:
                raise PolicyError(f"policy {name!r} at t={t:g} s started job {jid!r}, which is {st.value}")
            if rt.host is not None:
                hosted = True
        for jid in d.preempt:
            rt = rts.get(jid)
            if rt is None or not (rt.status is _RUNNING or rt.status is _RESTORING):
                what = "unknown" if rt is None else rt.status.value
                raise PolicyError(f"policy {name!r} at t={t:g} s preempted job {jid!r}, which is {what}")
            if jid in d.start:
                raise PolicyError(f"policy {name!r} at t={t:g} s both starts and preempts job {jid!r}")
        for tm in d.timers:
            if not tm.at > t:
                raise PolicyError(f"policy {name!r} at t={t:g} s asked for a timer at {tm.at:g}, not in the future")
        if d.share:
            self._check_shares(d, changes, t)
        for jid in d.start if hosted else ():
            if rts[jid].host is not None:
                raise PolicyError(f"policy {name!r} at t={t:g} s started job {jid!r}, which shares the GPUs of "
                                  f"{rts[jid].host!r} (preempt it first)")
        if changes:
            released = d.preempt if self.costs.checkpoint_s == 0 else ()
            self.verifier.verify(self.state, changes, rts, released=released, quotas=self.quotas,
                            holding=self._holding, policy=name, now=t)
        costs = self.costs
        segments = self._segments
        for jid in d.preempt:
            rt = rts[jid]
            if rt.host is not None:
                self._suspend_guest(rt, t)
                continue
            self._unshare_host(jid, t)
            self._advance(rt, t)
            self._close_segment(rt, t)
            rt.preemptions += 1
            rt.version += 1
            rt.rate = 0.0
            rt.last_change = t
            if costs.checkpoint_s > 0:
                rt.status = _CHECKPOINTING
                self._open_segment(rt, t)
                self.events.push(t + costs.checkpoint_s, _E_PREEMPT, jid, rt.version)
            else:
                self._release(rt)
                rt.status = _QUEUED
                rt.enqueued_at = t
                self._queue[jid] = rt
        for jid in changes:  # release first, so that moves between jobs fit
            rt = rts[jid]
            if rt.status is not _QUEUED:
                self._unshare_host(jid, t)
                self._advance(rt, t)
                self._close_segment(rt, t)
                self._release(rt)
        for jid, ja in changes.items():
            rt = rts[jid]
            was_queued = rt.status is _QUEUED
            if was_queued:  # (``_advance`` of a queued job, inline)
                dt = t - rt.t_mark
                if dt > 0:
                    rt.waited += dt
                rt.t_mark = t
            else:
                self._advance(rt, t)
            self._allocate(rt, ja)
            rt.last_change = t
            rt.last_start = t
            rt.version += 1
            if was_queued:
                del self._queue[jid]
                delay = costs.restore_s if rt.preemptions > 0 else 0.0
                if rt.first_start is None:
                    rt.first_start = t
            else:
                rt.reconfigurations += 1
                delay = costs.reconfigure_s
            if delay > 0:
                rt.status = _RESTORING
                rt.rate = 0.0
                self.events.push(t + delay, _E_RECONF, jid, rt.version)
            else:
                self._set_running(rt, t)
            if segments:
                self._open_segment(rt, t)
        for gid, sh in d.share.items():
            self._start_guest(rts[gid], rts[sh.host], sh.speed, t)
        for tm in d.timers:
            self.events.push(tm.at, _E_TIMER, None, tm.tag)

    def _sample(self, t: float) -> None:
        idx = self.index
        self.recorder.sample((t, self.cluster.total_gpus - idx.total, len(self._queue), len(self._holding),
                              idx.largest_machine_block(), idx.largest_rack_block(), idx.total))

    # ----------------------------------------------------------------- run
    def schedule(self, at: float, kind: EventKind, job_id: str | None = None, payload: object = None) -> None:
        """Put an event on the queue (SimPy's ``Environment.schedule``); ``at`` is absolute and not in
        the past. Policies ask for decision points through :class:`~scheduling.policy.Decision` timers."""
        if not at >= self._now:
            raise SpecError(f"event at t={at!r} s is in the past (now {self._now:g} s)", source="<simulator>",
                            field="at")
        self.events.push(at, kind, job_id, payload)

    def peek(self) -> float:
        """The time of the next event (``inf`` when none is left)."""
        return self.events.peek_time() if len(self.events) else float("inf")

    def step(self) -> bool:
        """Process the next batch of same-time events, then the policy's decision point they cause;
        ``False`` when no event was left."""
        if not len(self.events):
            return False
        self._step()
        return True

    def _step(self) -> None:
        """:meth:`step` on a queue known not to be empty."""
        t, items = self.events.pop_batch()
        self._now = t
        self.n_events += len(items)
        batch = []
        append = batch.append
        for kind, jid, payload in items:
            if kind == _K_ARRIVAL:  # (``_handle``'s arrival case, inline: half of all events)
                rt = self._rt[jid]
                rt.status = _QUEUED
                rt.t_mark = t
                rt.enqueued_at = t
                self._queue[jid] = rt
                append(sim_event(t, _E_ARRIVAL, jid))
            elif kind == _K_COMPLETION:  # (``_handle``'s completion case, inline)
                rt = self._rt[jid]
                if rt.version == payload:  # (else superseded by a later change of this job)
                    self._finish(rt, t)
                    append(sim_event(t, _E_COMPLETION, jid))
            else:
                se = self._handle(t, kind, jid, payload)
                if se is not None:
                    append(se)
        if not batch:  # (every event of the batch may be a superseded one)
            return
        # the decision point (in this method: one call less per step)
        view = self.view
        view._now = t
        view.events = tuple(batch)
        self.n_passes += 1
        d = self.policy.schedule(view)
        if d is not None and d is not NO_DECISION and not d.empty:
            self._apply(d, t)
        # the state sample (``_sample``), inline for the plain recorder
        series = self._series
        if series is None:
            self._sample(t)
        else:
            idx = self.index
            free = idx._total
            mb = idx._top  # (``largest_machine_block``: its upper bound is the answer while that bucket is not empty)
            if not (mb and idx._buckets[mb]):
                mb = idx.largest_machine_block()
            rb = idx._rack_max
            if rb is None:
                rb = idx.largest_rack_block()
            row = (t, self._total_gpus - free, len(self._queue), len(self._holding), mb, rb, free)
            if series and series[-1][0] == t:  # (``Recorder.sample``: a same-time row replaces the last)
                series[-1] = row
            else:
                series.append(row)
        if self.progress is not None and self.n_events >= self._next_report:
            self._next_report = self.n_events + self.progress_every
            self.progress(t, self.finished, len(self.jobs))

    def run(self, until: float = float("inf")) -> SimResult:
        """Process events up to and including time ``until`` (default: until none is left) and return
        the result so far; call again with a later ``until`` to go on. Ctrl-C stops it with the records
        of what finished. The recorder is closed once the run drains or is interrupted (flushed when
        it stops at ``until``)."""
        if until < self._now:
            raise SpecError(f"run(until={until!r}): the simulation is already at t={self._now:g} s",
                            source="<simulator>", field="until")
        with PausedGC() as gc_pause:  # the cycle collector off (young objects collected in batches)
            start = _time.perf_counter()
            ev = self.events
            step = self._step
            tick = gc_pause.tick
            stop = StopReason.DRAINED
            n = 0
            bounded = not until == _INF  # (the next event is never after an infinite ``until``)
            heap, n_arrivals = ev._heap, len(ev._arrivals)  # ``len(ev)`` without a method call per step
            try:
                while heap or ev._next_arrival < n_arrivals:
                    if bounded and ev.peek_time() > until:
                        stop = StopReason.UNTIL
                        break
                    step()
                    n += 1
                    if not n & 4095:
                        tick()
            except KeyboardInterrupt:
                stop = StopReason.INTERRUPTED
            finally:
                if stop is StopReason.UNTIL:
                    self.recorder.flush()
                else:
                    self.recorder.close()
            self._wall += _time.perf_counter() - start  # the event loop only (metrics below are not events)
            if self.progress is not None and stop is not StopReason.INTERRUPTED:
                self.progress(self._now, self.finished, len(self.jobs))
            return self._result(stop)

    def _result(self, stop: StopReason) -> SimResult:
        unfinished = tuple(jid for jid, rt in self._rt.items() if rt.status is not _FINISHED)
        summary = summarize(self.recorder.jobs, total_gpus=self.cluster.total_gpus, small_gpus=self.small_gpus,
                            short_s=self.short_s)
        capped = getattr(self.rates, "capped", None)
        policy = self.policy
        counters = policy.counters if isinstance(policy, CountsFallbacks) else None
        artifact = self.semantics.keep_oversized or self.semantics.whole_seconds
        metrics = RunMetrics(summary, len(unfinished), self.guarantee.metrics(),
                             shared_starts=self.shared or None, shared_suspensions=self.unshared if self.shared else None,
                             comm_overhead_capped=dict(sorted(capped.items())) if capped else None,
                             policy_counters=dict(counters) if counters else None,
                             oversized_jobs=self.notes.oversized if artifact else None,
                             rounded_jobs=self.notes.rounded if artifact else None)
        sources = dict(getattr(self.rates, "sources", {}) or {})
        return SimResult(self.policy_name, self.recorder, metrics, unfinished, stop, self.n_events,
                         self.n_passes, self._wall, self._now, sources)


def simulate(cluster: Cluster, jobs: Iterable[Job], policy: Policy, **kwargs) -> SimResult:
    """Replay ``jobs`` on ``cluster`` under an online ``policy`` and return the metrics.

    Builds a :class:`Simulator` and runs it to the end of the trace (or ``until``).

    Parameters
    ----------
    cluster : Cluster
        The cluster (``topology.preset(name)`` or a spec file).
    jobs : iterable of Job
        The workload's jobs (``get_workload(name).build(cluster, seed=...).jobs`` or a loaded trace).
    policy : Policy
        A fresh policy object (``POLICIES.build(name, params, seed=...)``).
    **kwargs
        :class:`Simulator` options (rates, costs, semantics, verification, ...) and ``until`` (the
        simulated time to stop at; default: run every job to its end).

    Returns
    -------
    SimResult
        ``metrics`` (a dict: ``avg_jct``, ``makespan``, ...), per-job records, samples, the wall time.

    Raises
    ------
    PolicyError
        The policy made a decision the verifier rejects.
    SpecError
        An invalid option, job or rate.

    Examples
    --------
    >>> from schedlab.benchmarks.simulator import simulate
    >>> from schedlab.benchmarks.workloads import get_workload
    >>> from schedlab.heuristics import POLICIES
    >>> from schedlab.topology import preset
    >>> cluster = preset("dally-2")
    >>> jobs = get_workload("smoke").build(cluster, seed=0).jobs[:6]
    >>> res = simulate(cluster, jobs, POLICIES.build("fifo", seed=0))
    >>> res.metrics["avg_jct"] > 0
    True
    """
    until = kwargs.pop("until", float("inf"))
    return Simulator(cluster, jobs, policy, **kwargs).run(until)
