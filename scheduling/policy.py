"""The online Policy protocol and the read-only types a policy sees and returns.

A simulator (``benchmarks.simulator``) owns the mutable state; at every decision point it hands the
policy a :class:`ClusterView` and applies the :class:`Decision` it returns, after running it through
the one verifier (:func:`scheduling.verify.validate_allocation`). Heuristics import this module and
never the simulator.

Decision semantics (a *delta*, so a pass costs what it changes, not what runs):

* ``start[j] = JobAllocation`` starts queued job ``j``, or changes a running job's placement, GPU
  count or plan (migration / resize / plan change = a *reconfiguration*); an identical allocation is
  a no-op;
* ``preempt`` lists running jobs to stop; they keep their progress and go back to the queue;
* ``timers`` ask for a later decision point (queue demotion, delay-timer expiry, periodic round);
  the view of that pass carries a :class:`SimEvent` of kind ``TIMER`` with the timer's ``tag``.

Jobs not named keep what they have. Views are live proxies valid during the call that received them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from schedlab.perfmodel.params import DEFAULT_CALIBRATION
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.free_index import FreeIndex
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster

if TYPE_CHECKING:
    from schedlab.scheduling.allocation import Allocation
    from schedlab.scheduling.instance import Instance


class JobStatus(Enum):
    """Life cycle: PENDING -> QUEUED -> (RESTORING ->) RUNNING -> FINISHED; a preempted job goes
    RUNNING -> CHECKPOINTING -> QUEUED (or straight to QUEUED when checkpoints are free)."""

    PENDING = "pending"            # not yet arrived (never shown to policies)
    QUEUED = "queued"
    RESTORING = "restoring"        # holds resources, no progress (restore / reconfiguration cost)
    RUNNING = "running"
    CHECKPOINTING = "checkpointing"  # preempted, still holds resources while it saves a checkpoint
    FINISHED = "finished"

    @property
    def holds_resources(self) -> bool:
        return self in _HOLDING


_HOLDING = frozenset({JobStatus.RESTORING, JobStatus.RUNNING, JobStatus.CHECKPOINTING})


class EventKind(Enum):
    """What triggered a decision point (ordered as the simulator processes same-time events)."""

    COMPLETION = 0
    PREEMPT_DONE = 1
    RECONF_DONE = 2
    ARRIVAL = 3
    TIMER = 4


@dataclass(frozen=True, slots=True)
class SimEvent:
    time: float
    kind: EventKind
    job_id: str | None = None
    tag: str | None = None


@dataclass(frozen=True, slots=True)
class Timer:
    """A decision point the policy asks for at absolute time ``at`` (``tag`` comes back in the event)."""

    at: float
    tag: str = "timer"


@dataclass(frozen=True, slots=True)
class Share:
    """Run a queued job on the GPUs of a running *host* job (GPU sharing: AntMan's opportunistic jobs).
    The guest holds no resources of its own (the host's GPUs, as many as it requests, in the host's
    placement order), runs at ``speed`` (0 < speed <= 1) x its rate on them, and is suspended (re-queued,
    progress kept, no checkpoint: AntMan releases an opportunistic job's GPU memory at a mini-batch
    boundary) when the host finishes, is preempted or moves, or when the policy preempts it. One guest per
    host; a guest hosts nobody and is never in ``start`` (suspend it first)."""

    host: str
    speed: float


_EMPTY: Mapping = MappingProxyType({})  # the empty parts of every Decision (read-only, shared)


@dataclass(frozen=True, slots=True)
class Decision:
    start: Mapping[str, JobAllocation] = field(default_factory=dict)
    preempt: tuple[str, ...] = ()
    timers: tuple[Timer, ...] = ()
    share: Mapping[str, Share] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # (empty parts share one read-only empty mapping; tuples are kept as given)
        object.__setattr__(self, "start", MappingProxyType(dict(self.start)) if self.start else _EMPTY)
        if type(self.preempt) is not tuple:
            object.__setattr__(self, "preempt", tuple(self.preempt))
        if type(self.timers) is not tuple:
            object.__setattr__(self, "timers", tuple(self.timers))
        object.__setattr__(self, "share", MappingProxyType(dict(self.share)) if self.share else _EMPTY)

    @property
    def empty(self) -> bool:
        return not self.start and not self.preempt and not self.timers and not self.share


NO_DECISION = Decision()
_SET_START, _SET_PREEMPT, _SET_TIMERS, _SET_SHARE = (getattr(Decision, f).__set__
                                                     for f in ("start", "preempt", "timers", "share"))


def start_decision(start: dict[str, JobAllocation], *, preempt: tuple[str, ...] = (),
                   timers: tuple[Timer, ...] = ()) -> Decision:
    """``Decision(start=start, preempt=preempt, timers=timers)`` without the constructor's copy: ``start``
    is a new dict that nobody else holds (kept as the decision's, read-only); ``preempt`` and ``timers``
    are tuples (kept as given); no shares."""
    d = object.__new__(Decision)
    _SET_START(d, MappingProxyType(start) if start else _EMPTY)
    _SET_PREEMPT(d, preempt)
    _SET_TIMERS(d, timers)
    _SET_SHARE(d, _EMPTY)
    return d


class JobRuntime:
    """Mutable per-job state, written only by the simulator; policies read it through :class:`JobView`.

    Accumulators (``progress``, ``attained``, ``executed``, ``waited``, ``held``, ``comm``) are exact
    up to ``t_mark``; between events they grow linearly (see :meth:`JobView.progress`).
    """

    __slots__ = ("job", "status", "progress", "attained", "executed", "waited", "held", "comm",
                 "t_mark", "rate", "comm_frac", "iter_time", "alloc", "gpus", "first_start", "last_start",
                 "last_change", "end", "preemptions", "reconfigurations", "overhead", "version", "tiers",
                 "seq", "enqueued_at", "host")

    def __init__(self, job: Job, seq: int) -> None:
        self.job = job
        self.seq = seq
        self.status = JobStatus.PENDING
        self.progress = 0.0      # iterations done
        self.attained = 0.0      # GPU-seconds of productive running (Tiresias' W_J * t_J)
        self.executed = 0.0      # seconds of productive running
        self.waited = 0.0        # seconds queued after arrival
        self.held = 0.0          # GPU-seconds holding resources (incl. restore/checkpoint)
        self.comm = 0.0          # seconds of exposed communication
        self.overhead = 0.0      # seconds spent restoring / checkpointing / reconfiguring
        self.t_mark = job.arrival
        self.rate = 0.0          # iterations per second while RUNNING
        self.comm_frac = 0.0     # exposed-communication share of an iteration
        self.iter_time = 0.0
        self.alloc: JobAllocation | None = None
        self.gpus = 0
        self.first_start: float | None = None
        self.last_start: float | None = None
        self.last_change: float | None = None
        self.end: float | None = None
        self.preemptions = 0
        self.reconfigurations = 0
        self.version = 0
        self.tiers: set[str] = set()
        self.enqueued_at = job.arrival
        self.host: str | None = None  # the job whose GPUs it shares (a Share guest), else None


class JobView:
    """Read-only live view of one job at the view's current time."""

    __slots__ = ("_rt", "_clock")

    def __init__(self, rt: JobRuntime, clock: Callable[[], float]) -> None:
        self._rt = rt
        self._clock = clock

    def _dt(self) -> float:
        return self._clock() - self._rt.t_mark

    @property
    def job(self) -> Job:
        return self._rt.job

    @property
    def id(self) -> str:
        return self._rt.job.id

    @property
    def status(self) -> JobStatus:
        return self._rt.status

    @property
    def progress(self) -> float:
        """Iterations done: ``progress(t) = progress(t_mark) + rate * (t - t_mark)`` while running."""
        rt = self._rt
        return rt.progress + rt.rate * self._dt() if rt.status is JobStatus.RUNNING else rt.progress

    @property
    def remaining(self) -> float:
        return max(self._rt.job.iterations - self.progress, 0.0)

    @property
    def attained_service(self) -> float:
        """GPU-seconds of productive running so far (Tiresias' ``W_J * t_J``)."""
        rt = self._rt
        return rt.attained + rt.gpus * self._dt() if rt.status is JobStatus.RUNNING else rt.attained

    @property
    def executed_time(self) -> float:
        rt = self._rt
        return rt.executed + self._dt() if rt.status is JobStatus.RUNNING else rt.executed

    @property
    def waiting_time(self) -> float:
        """Total seconds spent queued since arrival."""
        rt = self._rt
        return rt.waited + self._dt() if rt.status is JobStatus.QUEUED else rt.waited

    @property
    def queued_since(self) -> float:
        """When the job last entered the queue (arrival or end of its last preemption)."""
        return self._rt.enqueued_at

    @property
    def allocation(self) -> JobAllocation | None:
        return self._rt.alloc

    @property
    def rate(self) -> float:
        """Iterations per second now (0 unless RUNNING)."""
        return self._rt.rate if self._rt.status is JobStatus.RUNNING else 0.0

    @property
    def iteration_time(self) -> float:
        """Seconds per iteration of the current allocation (0 when it holds none)."""
        return self._rt.iter_time

    @property
    def first_start(self) -> float | None:
        return self._rt.first_start

    @property
    def last_start(self) -> float | None:
        return self._rt.last_start

    @property
    def last_change(self) -> float | None:
        """Time of the last start, preemption or reconfiguration."""
        return self._rt.last_change

    @property
    def preemptions(self) -> int:
        return self._rt.preemptions

    @property
    def reconfigurations(self) -> int:
        return self._rt.reconfigurations

    def __repr__(self) -> str:
        return f"JobView({self.id!r}, {self.status.value}, progress={self.progress:.3g})"


class ClusterView:
    """What a policy sees at a decision point: time, the active jobs, free resources, topology.

    ``queue`` is in queue-entry order (arrival, or return from preemption); ``running`` holds the jobs
    holding resources. ``estimate(job, plan, placement)`` gives the simulator's seconds per iteration
    (policies that model speed use it or the perf model directly; oracles may read ``job.duration``).
    ``checkpoint_s`` is the checkpoint time of a preemption: 0 means a preempted job's resources are
    free for the same decision's starts (the simulator releases them first), otherwise they come back
    with a ``PREEMPT_DONE`` event. ``machine_gpus`` are the GPUs of the machines as given (before the
    Tiresias artifact's pooling; empty = those of ``cluster``). ``next_arrival()`` is the time of the next
    arrival, given only under ``tiresias`` semantics (None otherwise): the artifact's loops step to
    ``min(T + 10, next arrival)``, so reproducing them needs it; no other policy may look ahead.
    ``calibration`` names the perf-model calibration the simulator's rates use (``perfmodel.params``'s
    ``CALIBRATIONS``): a policy that builds its own ``PerfModel`` builds it under this one.
    """

    __slots__ = ("_now", "cluster", "_queue", "_holding", "_views", "_state_free", "index", "events",
                 "quotas", "_estimate", "semantics", "checkpoint_s", "machine_gpus", "next_arrival",
                 "calibration")

    def __init__(self, *, cluster: Cluster, queue: Mapping[str, JobRuntime], holding: Mapping[str, JobRuntime],
                 views: Mapping[str, JobView], free: Mapping[str, Resources], index: FreeIndex,
                 quotas: Mapping[str, Resources], estimate: Callable[[Job, ExecutionPlan, Mapping[str, Resources]],
                                                                      float], semantics: str,
                 checkpoint_s: float = 0.0, machine_gpus: tuple[int, ...] = (),
                 next_arrival: Callable[[], float] | None = None, calibration: str = DEFAULT_CALIBRATION) -> None:
        self._now = 0.0
        self.cluster = cluster
        self._queue = queue
        self._holding = holding
        self._views = views
        self._state_free = free
        self.index = index
        self.events: tuple[SimEvent, ...] = ()
        self.quotas = quotas
        self._estimate = estimate
        self.semantics = semantics
        self.checkpoint_s = checkpoint_s
        self.machine_gpus = machine_gpus or tuple(g for g in (cluster.machine(m).gpus for m in cluster.machines) if g)
        self.next_arrival = next_arrival
        self.calibration = calibration

    @property
    def now(self) -> float:
        return self._now

    def queue(self) -> Iterator[JobView]:
        views = self._views
        for jid in self._queue:
            yield views[jid]

    def running(self) -> Iterator[JobView]:
        views = self._views
        for jid in self._holding:
            yield views[jid]

    @property
    def queue_length(self) -> int:
        return len(self._queue)

    @property
    def running_count(self) -> int:
        return len(self._holding)

    def job(self, job_id: str) -> JobView:
        return self._views[job_id]

    def remaining_of(self, job_ids: Iterable[str]) -> list[float]:
        """``[self.job(j).remaining for j in job_ids]`` in one pass, the same floats (for policies that
        refresh a key of every running job at every decision)."""
        views = self._views
        running = JobStatus.RUNNING
        out = []
        for jid in job_ids:
            jv = views[jid]
            rt = jv._rt
            p = rt.progress + rt.rate * (jv._clock() - rt.t_mark) if rt.status is running else rt.progress
            out.append(max(rt.job.iterations - p, 0.0))
        return out

    def motion_of(self, job_ids: Iterable[str]) -> list[tuple[float, float, float, JobStatus]]:
        """``(progress, rate, mark, status)`` of each job: while it is RUNNING its progress at time ``t``
        is ``progress + rate * (t - mark)`` (what :meth:`remaining_of` computes), else ``progress``. For
        policies that keep running jobs' keys in arrays and evaluate them in bulk; the triple only
        changes on an event of that job or a decision that starts, preempts or moves it."""
        views = self._views
        out = []
        for jid in job_ids:
            rt = views[jid]._rt
            out.append((rt.progress, rt.rate, rt.t_mark, rt.status))
        return out

    def active(self) -> Iterator[JobView]:
        yield from self.queue()
        yield from self.running()

    def free(self, machine: str) -> Resources:
        return self._state_free[machine]

    @property
    def free_map(self) -> Mapping[str, Resources]:
        return self._state_free

    def estimate(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> float:
        return self._estimate(job, plan, placement)


@runtime_checkable
class Policy(Protocol):
    """An online scheduling policy. ``schedule`` is called after each batch of same-time events and
    must only read the view (its own declared state excepted). ``oracle`` policies read the future
    (``Job.duration``) and are reported as such.

    ``decide(instance, *, seed)`` is the snapshot form: one decision on an ``Instance`` by the same
    ``schedule`` code (:mod:`schedlab.scheduling.snapshot`; :class:`~schedlab.scheduling.snapshot.PolicyBase`
    provides it). Policies are registered with documented parameters in a
    :class:`~schedlab.scheduling.registry.PolicyRegistry`."""

    name: str
    oracle: bool

    def schedule(self, view: ClusterView) -> Decision: ...

    def decide(self, instance: Instance, *, seed: int | None = None) -> Allocation: ...


def split_resources(job: Job, counts: Mapping[str, int]) -> dict[str, Resources]:
    """``{machine: gpus}`` -> ``{machine: Resources}``, sharing the job's CPUs and memory in proportion
    to GPUs (whole CPUs; the remainder goes to the first machines)."""
    total = sum(counts.values())
    req = job.requested
    out: dict[str, Resources] = {}
    cpu_left = req.cpus
    items = [(m, g) for m, g in counts.items() if g > 0]
    for i, (m, g) in enumerate(items):
        if i == len(items) - 1:
            cpus = cpu_left
        else:
            cpus = req.cpus * g // total
            cpu_left -= cpus
        out[m] = Resources(g, cpus, req.mem_gb * g / total)
    return out


__all__ = [
    "NO_DECISION", "ClusterView", "Decision", "EventKind", "FreeIndex", "JobRuntime", "JobStatus", "JobView",
    "Policy", "Share", "SimEvent", "Timer", "split_resources", "start_decision",
]
