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
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from schedlab.benchmarks.simulator.artifact import ArtifactNotes, pooled_cluster
from schedlab.benchmarks.simulator.costs import CostModel, Semantics
from schedlab.benchmarks.simulator.costs import semantics as get_semantics
from schedlab.benchmarks.simulator.decisions import DecisionsMixin
from schedlab.benchmarks.simulator.events import EventQueue, sim_event
from schedlab.benchmarks.simulator.gcpause import PausedGC
from schedlab.benchmarks.simulator.guarantee import GuaranteeCheck
from schedlab.benchmarks.simulator.hooks import CountsFallbacks, PreparesJobs
from schedlab.benchmarks.simulator.lifecycle import LifecycleMixin
from schedlab.benchmarks.simulator.metrics import RunMetrics, summarize
from schedlab.benchmarks.simulator.rates import RateModel, RealisticRates, make_rates
from schedlab.benchmarks.simulator.records import Recorder
from schedlab.benchmarks.simulator.result import Progress, SimResult, StopReason, prepare_jobs
from schedlab.benchmarks.simulator.sharing import SharingMixin
from schedlab.benchmarks.simulator.swaps import SwapMixin
from schedlab.benchmarks.simulator.verifying import DecisionVerifier
from schedlab.perfmodel.params import CALIBRATIONS, DEFAULT_CALIBRATION
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import (
    NO_DECISION,
    ClusterView,
    EventKind,
    FreeIndex,
    JobRuntime,
    JobStatus,
    JobView,
    Policy,
)
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.state import ClusterState
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError

_QUEUED = JobStatus.QUEUED
_FINISHED = JobStatus.FINISHED
_K_ARRIVAL = EventKind.ARRIVAL.value
_K_COMPLETION = EventKind.COMPLETION.value
# enum members as module constants: reading ``EventKind.X`` in the hot loop is an attribute lookup each time
_E_ARRIVAL = EventKind.ARRIVAL
_E_COMPLETION = EventKind.COMPLETION

_INF = float("inf")


class Simulator(DecisionsMixin, LifecycleMixin, SharingMixin, SwapMixin):
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
        rts: dict[str, JobRuntime] = {}
        views: dict[str, JobView] = {}
        clock = self._clock
        keep = sem.keep_oversized
        for i, j in enumerate(self.jobs):  # a runtime and its view per job
            jid = j.id
            if jid in rts:
                raise SpecError(f"duplicate job id {jid!r}", source="<workload>", field="id")
            if j.requested.gpus > total and not keep:
                raise SpecError(f"job {jid!r} requests {j.requested.gpus} GPUs; cluster {cluster.name!r} has "
                                f"{total}", source="<workload>", field="num_gpus")
            rt = rts[jid] = JobRuntime(j, i)
            views[jid] = JobView(rt, clock)
        self._rt = rts
        self._views = views
        self.guarantee = GuaranteeCheck(cluster, self._estimate)  # guaranteed jobs never below their SLO
        self.state = ClusterState(cluster)
        self.verifier = DecisionVerifier(cluster)  # the verifier's checks on every decision, incrementally
        self.index = FreeIndex(cluster, {m: self.state.free(m).gpus for m in cluster.machines})
        self._free_map = self.state.free_map  # (a live read-only view: built once, not per event)
        self._blocks = self.index.blocks  # (the state sample's free GPUs and largest blocks, after every pass)
        self._queue: dict[str, JobRuntime] = {}
        self._holding: dict[str, JobRuntime] = {}
        self._now = 0.0
        self.view = ClusterView(cluster=cluster, queue=self._queue, holding=self._holding, views=self._views,
                                free=self.state.free_map, index=self.index, quotas=MappingProxyType(self.quotas),
                                estimate=self._estimate, semantics=sem.name, checkpoint_s=self.costs.checkpoint_s,
                                machine_gpus=machine_gpus,
                                next_arrival=self._next_arrival if sem.whole_seconds else None,
                                calibration=calibration)
        arrivals = sorted([(j.arrival, i, j.id) for i, j in enumerate(self.jobs)])  # (i: the runtime's ``seq``)
        self.events = EventQueue([(a, jid) for a, _, jid in arrivals])
        self._seg_start: dict[str, float] = {}
        self._slowdown = getattr(self.rates, "placement_slowdown", None)  # per allocation (realistic rates)
        self._forget = getattr(self.rates, "forget", None)  # a rate model's per-job cache
        # the realistic rates of this cluster: ``_allocate`` gives them the GPUs and tier it computes anyway
        rates = self.rates
        self._fast_rates = rates if type(rates) is RealisticRates and rates.cluster is cluster else None
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
        return self._step()

    def _step(self) -> bool:
        """:meth:`step`. Arrivals and completions (half of all events each) are handled here, the other
        kinds by ``_handle``. Duplicated for speed (one call less per pass): the state sample of the plain
        :class:`~benchmarks.simulator.records.Recorder` is inline (its ``sample``'s same-time rule; the
        free index's numbers from one ``FreeIndex.blocks`` call); any other recorder gets ``_sample``."""
        t, items = self.events.pop_batch()
        if not items:  # (the queue was empty)
            return False
        self._now = t
        self.n_events += len(items)
        batch = []
        append = batch.append
        for kind, jid, payload in items:
            if kind == _K_ARRIVAL:
                rt = self._rt[jid]
                rt.status = _QUEUED
                rt.t_mark = t
                rt.enqueued_at = t
                self._queue[jid] = rt
                append(sim_event(t, _E_ARRIVAL, jid))
            elif kind == _K_COMPLETION:
                rt = self._rt[jid]
                if rt.version == payload:  # (else superseded by a later change of this job)
                    self._finish(rt, t)
                    append(sim_event(t, _E_COMPLETION, jid))
            else:
                se = self._handle(t, kind, jid, payload)
                if se is not None:
                    append(se)
        if not batch:  # (every event of the batch may be a superseded one)
            return True
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
            free, mb, rb = self._blocks()
            row = (t, self._total_gpus - free, len(self._queue), len(self._holding), mb, rb, free)
            if series and series[-1][0] == t:  # (``Recorder.sample``: a same-time row replaces the last)
                series[-1] = row
            else:
                series.append(row)
        if self.progress is not None and self.n_events >= self._next_report:
            self._next_report = self.n_events + self.progress_every
            self.progress(t, self.finished, len(self.jobs))
        return True

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
            try:
                if until == _INF:  # the next event is never after an infinite ``until``
                    while step():
                        n += 1
                        if not n & 4095:
                            tick()
                else:
                    while len(ev):
                        if ev.peek_time() > until:
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
