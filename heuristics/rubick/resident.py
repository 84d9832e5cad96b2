"""The running jobs of a Rubick pass, kept across passes (issue 25, round 6).

Every pass adds each job holding resources to its pass state: a record its entry is built from when
first read (:meth:`~schedlab.heuristics.rubick.policy.RubickPolicy._running_entry`) and its place in the
per-machine resident lists, in the order the view lists running jobs. At high load that set-up, over
every running job and every pass, was most of a replay. :class:`Residents` keeps the records and the
resident lists across passes and updates them by what changed since the last pass: jobs that left,
and jobs that are new or whose allocation (or job model) is not the one recorded. A pass then reads
them through :class:`ResidentMap` (a machine's list is copied when the pass first reads it).

The pass's answers do not change: a record is what :meth:`_running_entry` would have made, but for
its ``seq``, which is a counter kept across passes instead of the position in this pass's lists; only
the order of ``seq`` is ever read (ties of victims, sorting), and the counter gives the running jobs the
same order (the view's) and puts them after every queued job. When the view's order of the jobs kept
is not the recorded one (or a new job is not after them), everything is rebuilt in the view's order.
``RubickPolicy.check_residents`` compares the kept state with a rebuilt one at every pass (tests).
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, insort

RUNNING_SEQ = 1 << 50  # the first running job's seq: above any queue position


class Residents:
    """Records of the running jobs and the per-machine resident lists, kept across passes."""

    __slots__ = ("lazy", "movers", "on_machine", "hits", "checkpointing", "next_seq", "synced", "free", "stale",
                 "lows", "lowtab", "lowexp", "shrink")

    def __init__(self) -> None:
        self.lazy: dict[str, tuple] = {}     # job id -> record, jobs a pass never moves (built when read)
        self.movers: dict[str, tuple] = {}   # job id -> record, jobs a pass may move (built every pass)
        self.on_machine: dict[str, dict[str, None]] = {}  # machine -> job ids holding something, view order
        self.hits: dict[str, tuple] = {}     # job id -> template the record was made from, view order
        self.checkpointing: dict[str, None] = {}  # the kept jobs checkpointing (a preemption's)
        self.next_seq = RUNNING_SEQ
        # what the kept state was last brought up to: (view, the policy's job-model cache, the jobs its
        # decision started, those it preempted), or None when the next pass must read every running job
        self.synced: tuple | None = None
        # free GPUs / CPUs / GB per machine as the view last showed them, and the machines where a job
        # kept or dropped since held something (only there can they have changed; None: every machine)
        self.free: tuple[dict[str, int], dict[str, int], dict[str, float]] | None = None
        self.stale: set[str] | None = None
        # machine -> (its lowest loss at the start of a pass, until when it holds): kept while no job on
        # it comes, goes or changes status (VictimSearch._machine_low)
        self.lows: dict[str, tuple] = {}
        # machine -> its kept lowest loss, for every machine in ``lows`` (the pass's table of lowest losses
        # starts from a copy), and (until, machine) of the kept ones that expire, soonest first
        self.lowtab: dict[str, float] = {}
        self.lowexp: list[tuple[float, str]] = []
        # (GPU loss, job id) of the lazily kept jobs a pass may take a GPU granule from (if running and
        # past the penalty rule), sorted: VictimSearch._two_lowest reads it from the lowest
        self.shrink: list[tuple[float, str]] = []

    def touch(self, machines) -> None:
        """Something of a job on ``machines`` changed (its status): their kept lowest losses are void."""
        lows, tab = self.lows, self.lowtab
        for m in machines:
            if lows.pop(m, None) is not None:
                del tab[m]

    def keep_low(self, m: str, low: tuple, until: float) -> None:
        """Keep ``low`` (``(loss, job id)``) as machine ``m``'s lowest loss until ``until`` (exclusive)."""
        self.lows[m] = (low, until)
        self.lowtab[m] = low[0]
        if until < math.inf:
            exp = self.lowexp
            if len(exp) > 4 * len(self.lows) + 64:  # (drop the expiries of records replaced since)
                exp[:] = [(u, k) for k, (_, u) in self.lows.items() if u < math.inf]
                heapq.heapify(exp)
            heapq.heappush(exp, (until, m))

    def lows_at(self, now: float) -> dict[str, float]:
        """The kept lowest losses still valid at ``now`` (those due are dropped): machine -> loss."""
        exp, lows, tab = self.lowexp, self.lows, self.lowtab
        while exp and exp[0][0] <= now:
            until, m = heapq.heappop(exp)
            kept = lows.get(m)
            if kept is not None and kept[1] == until:
                del lows[m]
                del tab[m]
        return tab

    def forget_lows(self) -> None:
        self.lows.clear()
        self.lowtab.clear()
        self.lowexp.clear()

    def free_of(self, fm, machines) -> tuple[dict[str, int], dict[str, int], dict[str, float]]:
        """Copies of the free GPUs, CPUs and GB of every machine (``fm``: the view's free map), read
        again only on the machines that may have changed since the last call."""
        free, stale = self.free, self.stale
        if free is None or stale is None:
            free = self.free = ({m: fm[m].gpus for m in machines}, {m: fm[m].cpus for m in machines},
                                {m: fm[m].mem_gb for m in machines})
        else:
            g, c, mem = free
            for m in stale:
                r = fm[m]
                g[m], c[m], mem[m] = r.gpus, r.cpus, r.mem_gb
        self.stale = set()
        return dict(free[0]), dict(free[1]), dict(free[2])

    def clear(self) -> None:
        """Forget every job (the counter of ``seq`` goes on)."""
        self.lazy.clear()
        self.movers.clear()
        self.on_machine.clear()
        self.hits.clear()
        self.checkpointing.clear()
        self.stale = None
        self.forget_lows()
        self.shrink.clear()

    def seq(self, jid: str) -> int:
        record = self.lazy.get(jid)
        return (record if record is not None else self.movers[jid])[4]

    def remove(self, jid: str) -> None:
        self.checkpointing.pop(jid, None)
        hit = self.hits.pop(jid)
        self.touch(hit[4])
        if self.stale is not None:
            self.stale.update(hit[4])
        record = self.lazy.pop(jid, None)
        if record is None:
            del self.movers[jid]
        elif record[2] and record[0] < math.inf:
            shrink = self.shrink
            del shrink[bisect_left(shrink, (record[0], jid))]
        om = self.on_machine
        for m in hit[4]:
            d = om[m]
            del d[jid]
            if not d:
                del om[m]

    def add(self, jid: str, record_of) -> None:
        """Append job ``jid`` (its record from ``record_of(seq)``: ``(record, movable)``)."""
        record, movable = record_of(self.next_seq)
        self.next_seq += 1
        hit = record[7]
        (self.movers if movable else self.lazy)[jid] = record
        if not movable and record[2] and record[0] < math.inf:
            insort(self.shrink, (record[0], jid))
        self.hits[jid] = hit
        self.touch(hit[4])
        if self.stale is not None:
            self.stale.update(hit[4])
        om = self.on_machine
        for m in hit[4]:
            d = om.get(m)
            if d is None:
                d = om[m] = {}
            d[jid] = None


class ResidentMap(dict):
    """A pass's ``machine -> {job id: None}``: a machine's list is copied from the kept one when first read
    (then the pass changes its copy), empty if nobody holds anything there (a ``defaultdict(dict)``)."""

    __slots__ = ("_base",)

    def __init__(self, base: dict[str, dict[str, None]]) -> None:
        super().__init__()
        self._base = base

    def __missing__(self, m: str) -> dict[str, None]:
        got = self._base.get(m)
        d = self[m] = dict(got) if got else {}
        return d


__all__ = ["RUNNING_SEQ", "ResidentMap", "Residents"]
