"""The node sets of the Tiresias artifact's ``gandiva`` scheduler, step by step (no simulator).

Restated from SymbioticLab/Tiresias @959f9b0 ``simulator/cluster.py`` (``gandiva_placement``,
``gandiva_node_set_shrink/expand/adjust``, ``time_slicing_execute``) and ``run_sim.py``
(``gandiva_sim_jobs``); ``../shared/docs/gandiva-reference.md`` states it. ``mem_util`` is 1 for every
model there, so a set's *util* counts jobs joined, and nothing ever slows a job. A g-GPU class holds
sets of ``n = ceil(g / gpn)`` whole nodes with capacity ``C = floor(n gpn / g)``. One step at ``T``
(``dt`` since the last):

1. :meth:`adjust`: per class, ``target = min(floor(demand / total demand x GPUs), demand)`` with
   ``demand = g x jobs``; ``target - occupied GPUs`` < 0 dissolves sets from the head (at most all
   but one) and moves their jobs to the lowest-util set; > 0 opens empty sets on free nodes and
   re-spreads the class's jobs only when the loop variable ``i`` the artifact reuses ends above 0
   (the last opening failed, or a set spans >= 2 nodes); otherwise the empty sets dissolve in step 2;
2. :meth:`slice`: the first ``min(len(jobs), C)`` jobs of each set gain ``dt``; a job whose executed
   time reaches its duration ends at ``T``; when ``T % 60 == 0`` an over-subscribed set moves its first
   ``C`` jobs to the back; empty sets free their nodes (a *release*);
3. arrivals at ``T`` are placed (:meth:`place`), or pend FIFO;
4. after a release every pending job is retried, iterating the list it removes from (so the job after
   each placed one is skipped).

Kept from the artifact on purpose: *util* is never decreased when a job ends (only the re-spread
resets it), placement (a) needs ``util + 1 < C`` (strict), a failed (a) puts the set at the list end
unsorted, and classes are visited in CPython 2.7's order of the ``node_g`` dict (:data:`ORDER`).
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import repeat
from operator import add, attrgetter

from schedlab.topology.errors import SpecError

#: the classes (``node_g`` keys, cluster.py:50) in CPython 2.7's iteration order of that 9-key dict
#: literal (a 16-slot table: key mod 16, collisions of 24/32/64 probed)
ORDER: tuple[int, ...] = (16, 1, 2, 4, 24, 32, 8, 64, 12)


@dataclass(slots=True)
class NodeSet:
    """``nodes`` whole nodes for jobs of one class; ``cap`` jobs run at once; ``util`` jobs joined."""

    nodes: int
    cap: int
    util: int = 0
    jobs: list[str] = field(default_factory=list)


class GandivaSets:
    """The artifact's state: free nodes (a count: nodes are identical and nothing depends on which),
    each class's sets in list order, the pending list, and per job its GPUs, duration and executed
    seconds (integers)."""

    def __init__(self, gpus_per_node: int, nodes: int, *, quantum_s: int = 60) -> None:
        self.gpn = gpus_per_node
        self.total_gpus = gpus_per_node * nodes
        self.free = nodes
        self.quantum_s = quantum_s
        self.classes: dict[int, list[NodeSet]] = {g: [] for g in ORDER}
        self.pending: list[str] = []
        self.g: dict[str, int] = {}
        self.duration: dict[str, int] = {}
        self.executed: dict[str, int] = {}
        self.rotations = 0

    # ----------------------------------------------------------- jobs
    def add(self, jid: str, gpus: int, duration: int) -> None:
        if gpus not in self.classes:
            raise SpecError(f"job {jid!r} asks for {gpus} GPUs; the artifact's gandiva has node sets only for "
                            f"{sorted(ORDER)} GPUs (it crashes on any other count)", source="<gandiva>",
                            field="num_gpus")
        self.g[jid] = gpus
        self.duration[jid] = duration
        self.executed[jid] = 0

    def _span(self, g: int) -> int:
        return math.ceil(g / self.gpn)

    def place(self, jid: str) -> bool:
        """``gandiva_placement``: (a) the lowest-util set if ``util + 1 < C``; (b) a new set on free nodes;
        (c) the lowest-util set left after (a), over-subscribed; else False (the job pends)."""
        sets = self.classes[self.g[jid]]
        if sets:
            ns = sets.pop(0)
            if ns.util + 1 < ns.cap:
                ns.util += 1
                ns.jobs.append(jid)
                sets.append(ns)
                sets.sort(key=_util)
                return True
            sets.append(ns)
        n = self._span(self.g[jid])
        if n <= self.free:
            self.free -= n
            sets.append(NodeSet(n, int(n * self.gpn / self.g[jid]), 1, [jid]))
            sets.sort(key=_util)
            return True
        if sets:
            ns = sets.pop(0)
            ns.util += 1
            ns.jobs.append(jid)
            sets.append(ns)
            sets.sort(key=_util)
            return True
        return False

    # --------------------------------------------------------- adjust
    def adjust(self) -> None:
        """``gandiva_node_set_adjust`` (module docstring, 1.)."""
        counts = []  # (g, demand, occupied GPUs) of the classes with jobs, in ORDER (all read before any change)
        total = 0
        for g in ORDER:
            sets = self.classes[g]
            if sets:
                jobs = sum(map(len, map(_jobs, sets)))
                if jobs:
                    nodes = sum(map(_nodes, sets))
                    counts.append((g, g * jobs, self.gpn * nodes))
                    total += g * jobs
        if total == 0:
            return
        for g, demand, occupied in counts:
            plan = int(math.floor((demand / total) * self.total_gpus))
            diff = min(plan, demand) - occupied
            if diff > 0:
                self._expand(g, math.ceil(diff / g))
            elif diff < 0:
                self._shrink(g, math.ceil(-diff / g))

    def _shrink(self, g: int, k: int) -> None:
        sets = self.classes[g]
        k = min(k, len(sets) - 1)
        moved: list[str] = []
        for _ in range(k):
            ns = sets.pop(0)
            moved.extend(ns.jobs)
            self.free += ns.nodes
        if k > 0:
            _join_lowest(sets, moved)

    def _expand(self, g: int, k: int) -> None:
        sets = self.classes[g]
        n = self._span(g)
        i = 0
        for i in range(1, k + 1):
            if n <= self.free:
                self.free -= n
                sets.append(NodeSet(n, int(n * self.gpn / g)))
                i = n - 1  # the artifact's inner ``for i in range(num_node)`` reuses i
        if i > 0:  # re-spread every job of the class round-robin over its sets
            moved: list[str] = []
            for ns in sets:
                if ns.jobs:
                    moved.extend(ns.jobs)
                    ns.jobs = []
                    ns.util = 0
            if moved and all(ns.util == 0 for ns in sets):
                sets[:] = _spread_even(sets, moved)
            else:
                _join_lowest(sets, moved)

    # ---------------------------------------------------------- slice
    def slice(self, t: int, dt: int, running: list[str] | None = None) -> tuple[list[str], bool]:
        """``time_slicing_execute`` (module docstring, 2.): the jobs ended at ``t`` and whether a set
        was dissolved. ``running``: :meth:`executing` of the state now, given by a caller that knows no
        job of it ends (each has more than ``dt`` left): credited at once (:meth:`_slice_quiet`)."""
        switch = t % self.quantum_s == 0
        if running is not None:
            return [], self._slice_quiet(switch, dt, running)
        ended: list[str] = []
        release = False
        ex, dur = self.executed, self.duration
        for g in ORDER:
            sets = self.classes[g]
            if not sets:
                continue
            gone = False
            for ns in sets:
                jobs, cap = ns.jobs, ns.cap  # (the first min(len, cap) jobs run: cap >= 1)
                end_here = None
                for jid in (jobs if len(jobs) <= cap else jobs[:cap]):
                    e = ex[jid] + dt
                    ex[jid] = e
                    if e >= dur[jid]:
                        if end_here is None:
                            end_here = [jid]
                        else:
                            end_here.append(jid)
                if switch and len(jobs) > cap:
                    ns.jobs = jobs = jobs[cap:] + jobs[:cap]
                    self.rotations += 1
                if end_here is not None:
                    for jid in end_here:
                        jobs.remove(jid)
                        ended.append(jid)
                if not jobs:
                    self.free += ns.nodes
                    gone = release = True
            if gone:
                _drop_empty(sets)
        for jid in ended:
            del self.g[jid], self.duration[jid], self.executed[jid]
        return ended, release

    def _slice_quiet(self, switch: bool, dt: int, running: list[str]) -> bool:
        """:meth:`slice` where no job ends: every job of ``running`` gains ``dt`` (integers: the order of
        the additions does not matter), then the rotations and the releases of empty sets as there;
        whether a set was dissolved."""
        ex = self.executed
        ex.update(zip(running, map(add, map(ex.__getitem__, running), repeat(dt)), strict=True))
        release = False
        for g in ORDER:
            sets = self.classes[g]
            if not sets:
                continue
            gone = False
            for ns in sets:
                jobs, cap = ns.jobs, ns.cap
                if switch and len(jobs) > cap:
                    ns.jobs = jobs[cap:] + jobs[:cap]
                    self.rotations += 1
                elif not jobs:
                    self.free += ns.nodes
                    gone = release = True
            if gone:
                _drop_empty(sets)
        return release

    # ----------------------------------------------------------- step
    def step(self, t: int, dt: int, arrivals: list[str], *, adjusted: bool = False,
             running: list[str] | None = None) -> list[str]:
        """One iteration of ``gandiva_sim_jobs`` at ``t`` (``adjusted``: step 1 already done); the jobs
        that ended. ``running``: see :meth:`slice` (only with ``adjusted``)."""
        if not adjusted:
            self.adjust()
        ended, release = self.slice(t, dt, running)
        for jid in arrivals:
            if not self.place(jid):
                self.pending.append(jid)
        if release:
            for jid in self.pending:  # the artifact iterates the list it removes from
                if self.place(jid):
                    self.pending.remove(jid)
        return ended

    # ---------------------------------------------------------- views
    def executing(self) -> list[str]:
        """The jobs that gain time in the next step (given the state after its adjust)."""
        out: list[str] = []
        classes = self.classes
        for g in ORDER:
            for ns in classes[g]:
                out.extend(ns.jobs[:ns.cap])  # (= jobs[:max(min(len, cap), 1)]: cap >= 1)
        return out

    def oversubscribed(self) -> bool:
        return any(len(ns.jobs) > ns.cap for sets in self.classes.values() for ns in sets)

    def signature(self) -> tuple:
        """Everything a no-arrival step reads except executed times and the clock."""
        return (self.free, tuple(self.pending),
                tuple((g, tuple((ns.nodes, ns.util, tuple(ns.jobs)) for ns in sets))
                      for g, sets in self.classes.items() if sets))

    @property
    def active(self) -> bool:
        return bool(self.g)


def _util(ns: NodeSet) -> int:
    return ns.util


_jobs = attrgetter("jobs")
_nodes = attrgetter("nodes")


def _drop_empty(sets: list[NodeSet]) -> None:
    """The artifact's ``for ns in gone: sets.remove(ns)`` over the sets left empty by a slice: ``remove``
    takes the first set *equal* to ``ns`` (dataclass equality), and a set equal to an empty one is empty
    too, hence one of ``gone``; so the removals take exactly the empty sets, and the others keep their
    order. Done as that filter (no field-by-field comparison per set)."""
    sets[:] = [ns for ns in sets if ns.jobs]


def _join_lowest(sets: list[NodeSet], moved: list[str]) -> None:
    """Each job of ``moved`` in turn joins ``sets[0]`` (its util + 1), then ``sets.sort(key=_util)``, as the
    artifact does. After the first sort the list is sorted and only its head changed (util ``u`` -> ``u + 1``,
    ``u`` the least): the stable sort puts it before the other sets of util ``u + 1`` and after those of
    util ``u``, found by binary search, instead of a sort per job."""
    if not moved:
        return
    head = sets[0]
    head.util += 1
    head.jobs.append(moved[0])
    sets.sort(key=_util)
    for jid in itertools.islice(moved, 1, None):
        head = sets[0]
        head.util += 1
        head.jobs.append(jid)
        i = bisect_left(sets, head.util, lo=1, key=_util)
        if i > 1:
            del sets[0]
            sets.insert(i - 1, head)


def _spread_even(sets: list[NodeSet], moved: list[str]) -> list[NodeSet]:
    """:func:`_join_lowest` of ``moved`` (not empty) over ``sets`` whose utils are all 0 (the re-spread),
    in closed form; returns the sets' new order. From a list of equal utils, each job joins the head,
    which then moves behind the sets still at the old util and before those already at the new one (the
    stable sort): a round of ``len(sets)`` jobs walks the list in order and leaves it reversed. So job
    ``i`` (round ``q``, position ``p``) joins ``B[p]``, ``B`` the order at the round's start (``sets`` for
    even ``q``, reversed for odd), and after ``r`` jobs of the last round the order is ``B[r:]`` then
    ``B[:r]`` reversed."""
    n, k = len(moved), len(sets)
    fwd = list(sets)
    rev = fwd[::-1]
    # set ``p`` of ``fwd`` takes moved[q k + p] in even rounds and moved[q k + k - 1 - p] in odd ones: the
    # slices ``moved[p::2k]`` and ``moved[2k-1-p::2k]``, alternating (the first is as long as the second
    # or one longer: a set gets a job in an odd round only after the full even round before it)
    step = 2 * k
    for p, ns in enumerate(fwd):
        a, b = moved[p::step], moved[step - 1 - p::step]
        got = [None] * (len(a) + len(b))
        got[::2] = a
        got[1::2] = b
        ns.jobs.extend(got)
        ns.util = len(ns.jobs)
    rounds, r = divmod(n, k)
    base = fwd if not rounds & 1 else rev
    return base[r:] + base[:r][::-1]


__all__ = ["ORDER", "GandivaSets", "NodeSet"]
