"""One Rubick decision pass: tentative per-machine allocations of every active job, with an undo log.

``ScheduleJob`` moves GPUs and CPUs one unit at a time (from a machine's free pool or from another
job) and must be able to take all of it back when the job cannot be placed after all (the paper's
``return null``): every move goes through :meth:`PassState.move`, which logs it, and
:meth:`PassState.rollback` undoes the log back to a mark.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from schedlab.heuristics.rubick.curves import JobModel
from schedlab.heuristics.rubick.resident import ResidentMap
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import ClusterView, JobView
from schedlab.scheduling.resources import Resources

GPU, CPU = 0, 1
PENDING = "pending"  # a move's source/destination: units a preempted job still holds (not free this pass)


@dataclass(eq=False, slots=True)
class Entry:
    """One active job in the pass. ``units[r][machine]`` = GPUs (``r = 0``) / CPUs (``r = 1``) it holds
    tentatively; ``orig`` its allocation before the pass (``None`` if queued).

    ``locked``: its resources may not change this pass (restoring/checkpointing, or the reconfiguration
    penalty); ``doomed``: a penalty-locked best-effort job a guaranteed job is taking resources from,
    so it is preempted whole; ``deferred``: it got resources of a preempted job, which are free only
    once that job's checkpoint is saved, so it starts at a later pass.
    """

    jid: str
    jv: JobView
    jm: JobModel
    seq: int
    orig: JobAllocation | None = None
    units: tuple[dict[str, int], dict[str, int]] = field(default_factory=lambda: ({}, {}))
    totals: list[int] = field(default_factory=lambda: [0, 0])
    mem: dict[str, float] = field(default_factory=dict)
    plan: ExecutionPlan | None = None
    tput: float = 0.0           # normalised throughput of ``orig`` (0 if queued)
    floor: tuple[int, int] = (0, 0)
    locked: bool = False        # penalty: only a guaranteed job below its minRes may preempt it (whole)
    frozen: bool = False        # restoring / checkpointing: never changed this pass
    slo: bool = False           # guaranteed with an SLO (throughput >= T_ref whenever it runs)
    guaranteed: bool = False    # counts against its tenant's quota; never shrunk below ``floor``
    doomed: bool = False
    deferred: bool = False
    preempted: bool = False
    changed: bool = False
    starving: bool = False
    tick: int = 0               # when its allocation last changed in the pass (log position)

    @property
    def job(self):
        return self.jm.job

    @property
    def running(self) -> bool:
        return self.orig is not None

    @property
    def g(self) -> int:
        return self.totals[GPU]

    @property
    def c(self) -> int:
        return self.totals[CPU]

    def on(self, r: int, m: str) -> int:
        return self.units[r].get(m, 0)

    def below_floor(self, r: int) -> bool:
        return self.totals[r] < self.floor[r]

    def counts(self) -> dict[str, int]:
        return {m: k for m, k in self.units[GPU].items() if k > 0}


class PassState:
    """Free resources per machine and the tentative allocations of the pass's jobs."""

    def __init__(self, view: ClusterView, index: dict[str, int] | None = None,
                 make: Callable[[tuple], Entry] | None = None, residents=None) -> None:
        """``make(record)`` builds the entry of a job added by :meth:`add_lazy`; ``residents`` (a
        :class:`~schedlab.heuristics.rubick.resident.Residents`) gives the running jobs' records and
        resident lists kept across passes (then nothing is added by :meth:`add_lazy`)."""
        cluster = view.cluster
        machines = self.machines = cluster.machines
        self.index = index if index is not None else {m: i for i, m in enumerate(machines)}
        if residents is None:
            fm = view.free_map
            self.free: tuple[dict[str, int], dict[str, int]] = (
                {m: fm[m].gpus for m in machines}, {m: fm[m].cpus for m in machines})
            self.free_mem: dict[str, float] = {m: fm[m].mem_gb for m in machines}
        else:
            g, c, mem = residents.free_of(view.free_map, machines)
            self.free, self.free_mem = (g, c), mem
        self.free_total = [sum(self.free[GPU].values()), sum(self.free[CPU].values())]
        # the machines with a free GPU (kept by every move; ``ScheduleJob``'s active machines read it)
        self.free_gpu: set[str] = {m for m, k in self.free[GPU].items() if k > 0}
        # identifies the state: a new number for every change, the old one back on rollback (so caches
        # keyed on it, e.g. victim scans, survive a ScheduleJob that was undone)
        self.version = 0
        self._versions = 0
        self._marks: dict[int, tuple[int, int]] = {}
        self.mversion: dict[str, int] = dict.fromkeys(machines, 0)  # per machine, likewise (new only)
        self._mlog: list[tuple[str, int]] = []  # (machine, its version before) per change: a rollback's undo
        # machines whose version changed since their reader (the lowest-loss table) last cleared this
        self.mdirty: set[str] = set()
        # while set, changes leave the machines' versions alone: only for changes no machine query reads
        # (the free pool and the units of a queued job that ends frozen; keep_claims)
        self.quiet = False
        # the pass's entries; a running job's is built when first read (most are never read on a large
        # cluster): ``lazy`` holds what builds it, ``pending()`` what is not built yet
        self.lazy: dict[str, tuple] = {} if residents is None else residents.lazy
        self.entries: _Entries = _Entries(self.lazy, make)
        self.on_machine: dict[str, dict[str, None]] = (
            defaultdict(dict) if residents is None else ResidentMap(residents.on_machine))
        # entries whose attributes were set in the pass (only they can end changed, preempted or deferred)
        self.touched: dict[str, Entry] = {}
        self.log: list[tuple] = []
        self.memo: dict[str, tuple] = {}  # per-pass caches keyed on ``version``
        self.lowmemo: dict[str, tuple] = {}  # machine -> (its version, its lowest loss): VictimSearch's cache
        self.kept = residents  # (what is kept across passes, or None)
        self.now = view.now
        # entries whose units or attributes changed (moves, sets and their undoing), oldest first: what an
        # incremental cache (Rubick's lowest-loss heap) must look at again; its reader clears it
        self.dirty: list[Entry] = []

    # -------------------------------------------------------------- setup
    def add(self, e: Entry) -> None:
        self.entries[e.jid] = e
        if e.orig is not None:
            for m, r in e.orig.placement.items():
                for kind, amount in ((GPU, r.gpus), (CPU, r.cpus)):
                    if amount:
                        e.units[kind][m] = amount
                        e.totals[kind] += amount
                e.mem[m] = r.mem_gb
                self.on_machine[m][e.jid] = None

    def add_placed(self, e: Entry, machines: Iterable[str]) -> None:
        """Add ``e`` whose units and memory are filled in already (held on ``machines``, in order)."""
        self.entries[e.jid] = e
        om = self.on_machine
        jid = e.jid
        for m in machines:
            om[m][jid] = None

    def add_lazy(self, jid: str, machines: Iterable[str], record: tuple) -> None:
        """A job holding resources on ``machines`` whose entry ``make(record)`` (the constructor's) builds
        when first read; :meth:`pending` gives ``record`` meanwhile."""
        self.lazy[jid] = record
        om = self.on_machine
        for m in machines:
            om[m][jid] = None

    def pending(self) -> Iterator[tuple]:
        """The record of every lazily added job whose entry is not built yet."""
        entries = self.entries
        for jid, record in self.lazy.items():
            if jid not in entries:
                yield record

    def peek(self, jid: str) -> tuple[JobView | None, JobAllocation | None]:
        """Job ``jid``'s view and its allocation before the pass (``None`` if queued), without building its
        entry; ``(None, None)`` if it is not in the pass."""
        v = dict.get(self.entries, jid)
        if v is not None:
            return v.jv, v.orig
        record = self.lazy.get(jid)
        if record is None or self.entries._make is None:
            return None, None
        return record[3], record[7][0]

    def touched_entries(self) -> list[Entry]:
        """The entries whose attributes were set in the pass, in the order they were added."""
        return sorted(self.touched.values(), key=lambda e: e.seq)

    # -------------------------------------------------------------- moves
    def mark(self) -> int:
        n = len(self.log)
        self._marks[n] = (self.version, len(self._mlog))
        return n

    def _bump(self, *touched) -> None:
        """A new state: new version numbers for it and for every machine where something changed
        (``touched``: machines, or entries, meaning every machine they hold units on)."""
        v = self._versions = self._versions + 1
        self.version = v
        if self.quiet:
            return
        mv = self.mversion
        log = self._mlog
        dirty = self.mdirty
        for t in touched:
            if isinstance(t, Entry):
                for m in (*t.units[GPU], *t.units[CPU]):
                    log.append((m, mv[m]))
                    mv[m] = v
                    dirty.add(m)
            elif t is not PENDING and isinstance(t, str):
                log.append((t, mv[t]))
                mv[t] = v
                dirty.add(t)

    def move(self, r: int, m: str, src, dst, k: int) -> None:
        """Move ``k`` units of resource ``r`` on ``m`` from ``src`` to ``dst``: an :class:`Entry`, ``None``
        (the free pool) or :data:`PENDING` (held by a preempted job until its checkpoint is saved)."""
        self._apply(r, m, src, dst, k)
        self.log.append(("move", r, m, src, dst, k))

    def _apply(self, r: int, m: str, src, dst, k: int) -> None:
        self._bump(m, src, dst)
        dirty = self.dirty
        if src is None:
            left = self.free[r][m] = self.free[r][m] - k
            self.free_total[r] -= k
            if r == GPU and left <= 0:
                self.free_gpu.discard(m)
        elif src is PENDING:
            pass
        else:
            dirty.append(src)
            left = src.units[r][m] - k
            src.units[r][m] = left
            src.totals[r] -= k
            if left == 0:
                del src.units[r][m]
                self._maybe_leave(src, m)
        if dst is None:
            left = self.free[r][m] = self.free[r][m] + k
            self.free_total[r] += k
            if r == GPU and left > 0:
                self.free_gpu.add(m)
        elif dst is PENDING:
            pass
        else:
            dirty.append(dst)
            dst.units[r][m] = dst.units[r].get(m, 0) + k
            dst.totals[r] += k
            self.on_machine[m][dst.jid] = None

    def _maybe_leave(self, e: Entry, m: str) -> None:
        if m not in e.units[GPU] and m not in e.units[CPU] and not e.mem.get(m):
            self.on_machine[m].pop(e.jid, None)

    def drop(self, e: Entry) -> None:
        """``e`` is preempted: its units leave the pass (they free up only after its checkpoint)."""
        for r in (GPU, CPU):
            for m, k in list(e.units[r].items()):
                self.move(r, m, e, PENDING, k)
        for m in list(e.mem):
            self.set_mem(e, m, 0.0, release=False)
        self.set(e, "preempted", True)

    def set_mem(self, e: Entry, m: str, gb: float, *, release: bool = True) -> None:
        self._bump(m)
        old = e.mem.get(m, 0.0)
        if release:
            self.free_mem[m] += old - gb
        if gb:
            e.mem[m] = gb
            self.on_machine[m][e.jid] = None
        else:
            e.mem.pop(m, None)
            self._maybe_leave(e, m)
        self.log.append(("mem", e, m, old, gb, release))

    def set(self, e: Entry, attr: str, value) -> None:
        self._bump(e)
        self.touched[e.jid] = e
        self.dirty.append(e)
        self.log.append(("attr", e, attr, getattr(e, attr)))
        setattr(e, attr, value)

    def rollback(self, mark: int) -> None:
        if len(self.log) <= mark:
            return
        while len(self.log) > mark:
            item = self.log.pop()
            kind = item[0]
            if kind == "move":
                _, r, m, src, dst, k = item
                self._apply(r, m, dst, src, k)
            elif kind == "mem":
                _, e, m, old, gb, release = item
                if release:
                    self.free_mem[m] -= old - gb
                if old:
                    e.mem[m] = old
                    self.on_machine[m][e.jid] = None
                else:
                    e.mem.pop(m, None)
                    self._maybe_leave(e, m)
            else:
                _, e, attr, old = item
                setattr(e, attr, old)
                self.dirty.append(e)
        if mark in self._marks:  # the state of the mark, exactly: its version numbers too
            self.version, n = self._marks[mark]
            log, mv, dirty = self._mlog, self.mversion, self.mdirty
            while len(log) > n:
                m, old = log.pop()
                mv[m] = old
                dirty.add(m)

    # ------------------------------------------------------------ queries
    def residents(self, m: str) -> Iterable[Entry]:
        entries = self.entries
        for jid in self.on_machine[m]:
            yield entries[jid]

    def allocation(self, e: Entry) -> JobAllocation:
        """``e``'s tentative allocation as a value (machines with GPUs or memory)."""
        ms = set(e.units[GPU]) | set(e.units[CPU]) | {m for m, v in e.mem.items() if v}
        placement = {m: Resources(e.on(GPU, m), e.on(CPU, m), e.mem.get(m, 0.0))
                     for m in sorted(ms, key=self.index.__getitem__)}
        return JobAllocation(e.jid, e.plan, placement)


class _Entries(dict):
    """``jid -> Entry``; reading a lazily added job builds its entry (``in`` and iteration see built ones).
    ``queued`` (set by the pass) holds the queued jobs whose entries are built when first read, the same way:
    ``jid -> record``, built by ``make_queued(record)``."""

    __slots__ = ("_lazy", "_make", "queued", "make_queued")

    def __init__(self, lazy: dict[str, tuple], make: Callable[[tuple], Entry] | None) -> None:
        super().__init__()  # (it holds no reference to the pass state: no reference cycle to collect)
        self._lazy = lazy
        self._make = make
        self.queued: dict[str, tuple] = {}
        self.make_queued: Callable[[tuple], Entry] | None = None

    def __missing__(self, jid: str) -> Entry:
        record = self._lazy.get(jid)
        if record is None or self._make is None:
            record = self.queued.get(jid)
            if record is None:
                raise KeyError(jid)
            e = self[jid] = self.make_queued(record)
            return e
        e = self[jid] = self._make(record)
        return e

    def get(self, jid, default=None):
        try:
            return self[jid]
        except KeyError:
            return default


__all__ = ["CPU", "GPU", "PENDING", "Entry", "PassState"]
