"""SRTF and SRSF: preemptive shortest-remaining-first oracles (the Tiresias paper's baselines).

They know every job's duration (``Job.duration`` at the requested resources; ``oracle = True``).
Remaining time = remaining iterations x (duration / iterations) seconds at the request; SRSF weighs it
by the job's GPUs (remaining *service*, GPU-seconds). Semantics (the Tiresias artifact's ``shortest`` /
``shortest-gpu``, ``run_sim.py``): at every event the list of active jobs is sorted by that key (stable:
ties keep the previous order, new jobs at the end), every GPU is released and reassigned in that order
to the jobs that fit (no head-of-line blocking), and running jobs that no longer fit are preempted. A
guaranteed job that would exceed its tenant's quota is skipped (multi-tenant workloads; the order
decides who gets the quota). While every active job fits the keys are not refreshed and nothing is
sorted (everything runs).

Keys are integers (:mod:`.srtf_keys`): remaining time in whole microseconds on an integer clock,
``key(T) = max(A - round(s_q x T), 0)`` with ``T`` the clock in µs and ``(A, s_q)`` the job's intercept
and quantized slope since its motion last changed (x GPUs for SRSF: GPU-µs). Jobs whose remaining times
are really equal (same intercept and slope class) are tied exactly at every event, so the tie rule
decides their order, not float rounding; the artifact's whole-second ties are ties too. (Before
session 8 the keys were floats ``progress + rate x (now - mark)`` per job, snapped to a whole second
within 1e-6 s, and tied jobs swapped order by an ulp from one event to the next; the records of such tie
cases changed with the integer keys: docs/performance.md § Round 8.)

Incremental form (same decisions as re-sorting every active job at every event). Every job carries a
tie-break number ``tb`` such that the artifact's list is always ordered by ``(key, tb)``: keys only
decrease, and a job whose key changes moves behind every job it now ties with (that job was already
ahead of it), so at each sort the jobs whose key changed get fresh numbers in their previous order,
then the jobs that arrived since the last sort (appended to the list) in arrival order. Queued jobs'
keys never change: they wait in one sorted list per GPU count; a decision refreshes only the running
jobs' keys and walks the merge of the running jobs and those lists until the pool is full, dropping a
list as soon as its GPU count no longer fits. A decision costs O(running x log + started x log sizes),
not O(active jobs).

Placement: consolidated when possible, else spread (:func:`heuristics.tiresias.placement.place_job`);
under ``realistic`` semantics a checkpointing job's GPUs are not reassigned until it is done, and a
job that cannot be placed yet stays queued until the next event.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator
from heapq import heapify, heappop, heappush, merge

from schedlab.heuristics.baselines.srtf_arrays import BlockFill, RunningArrays
from schedlab.heuristics.baselines.srtf_keys import anchor, clock, key_at
from schedlab.heuristics.fifo import QuotaLedger, fill_pool
from schedlab.heuristics.tiresias.placement import JobTraits, Starter
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import ClusterView, Decision, EventKind, JobStatus, start_decision
from schedlab.scheduling.registry import PolicyParams, paper
from schedlab.scheduling.snapshot import PolicyBase
from schedlab.topology.errors import SpecError


class ShortestParams(PolicyParams):
    gpu_weighted: bool = paper(False, description="weigh remaining time by the job's GPUs (SRSF: remaining "
                                                  "service) instead of remaining time alone (SRTF)")


Entry = tuple[int, int, str]  # (key, tie-break, job id): the artifact's list order


class ShortestRemaining(PolicyBase):
    """SRTF (``gpu_weighted=False``) / SRSF (``True``); see the module docstring."""

    oracle = True

    def __init__(self, *, seed: int = 0, gpu_weighted: bool = False, name: str | None = None) -> None:
        super().__init__(seed=seed)
        self.gpu_weighted = gpu_weighted
        self.name = name or ("srsf" if gpu_weighted else "srtf")
        self.starter = Starter(JobTraits())
        self._view: ClusterView | None = None
        self._reset()

    def _reset(self) -> None:
        self.key: dict[str, int] = {}          # the key at the last sort (arrival for jobs not sorted yet)
        self.tb: dict[str, int] = {}           # tie-break: the list is ordered by (key, tb)
        self.const: dict[str, tuple[float, float, int]] = {}  # duration, iterations, GPUs
        self.pending: list[str] = []           # arrived since the last sort (the list's tail)
        self.queued: dict[int, list[Entry]] = {}  # GPU count -> queued jobs sorted by (key, tb)
        self.entry: dict[str, Entry] = {}      # queued job -> its entry in self.queued
        self.running: dict[str, None] = {}     # holding jobs at the last rebuild (ordered set)
        self.arr = RunningArrays()             # holding jobs since: keys, tie-breaks, motion (arrays)
        self.enter: list[str] = []             # started by the last decision (rows to add)
        self.leave: list[str] = []             # gave their GPUs back since (preempted, checkpoint done)
        self.touch: list[str] = []             # motion changed since (restored, checkpointing)
        self.demand = 0                        # GPUs requested by the active jobs
        self.stale = True                      # no sorted structures (uncontended spell or fresh view)
        self._next_tb = 0

    # -------------------------------------------------------------- keys
    def _keys_now(self, view: ClusterView, jids: list[str]) -> list[int]:
        """Each job's integer key at ``view.now`` (:func:`.srtf_keys.key_at` of its anchor now)."""
        const, weighted, t_us = self.const, self.gpu_weighted, clock(view.now)
        out = []
        for jid, (p, r, m, st) in zip(jids, view.motion_of(jids), strict=True):
            duration, iterations, g = const[jid]
            a, s = anchor(p, r, m, st is JobStatus.RUNNING, iterations, duration)
            out.append(key_at(a, s, t_us, g, weighted))
        return out

    def _admit(self, view: ClusterView, jid: str) -> None:
        job = view.job(jid).job
        if job.duration is None:
            raise SpecError(f"job {jid!r} has no duration: {self.name} is an oracle and needs it",
                            source=f"<job {jid!r}>", field="duration")
        self.const[jid] = (job.duration, job.iterations, job.requested.gpus)
        self.key[jid] = self._keys_now(view, [jid])[0]
        self.pending.append(jid)
        self.demand += job.requested.gpus

    def _drop(self, jid: str) -> None:
        self._unqueue(jid)
        if jid in self.arr:
            self.arr.remove(jid)
        self.demand -= self.const.pop(jid)[2]
        self.key.pop(jid, None)
        self.tb.pop(jid, None)
        self.running.pop(jid, None)

    def _enqueue(self, jid: str) -> None:
        e = (self.key[jid], self.tb[jid], jid)
        self.entry[jid] = e
        insort(self.queued.setdefault(self.const[jid][2], []), e)

    def _unqueue(self, jid: str) -> None:
        e = self.entry.pop(jid, None)
        if e is not None:
            lst = self.queued[self.const[jid][2]]
            del lst[bisect_left(lst, e)]

    # -------------------------------------------------------------- the sort, incrementally
    def _refresh(self, view: ClusterView, jids: list[str]) -> None:
        """New keys for ``jids``; those whose key changed, then the pending arrivals, get fresh
        tie-breaks (the stable sort puts them behind every job they now tie with)."""
        key, tb = self.key, self.tb
        changed: list[tuple[int, int, str]] = []
        pending = set(self.pending)
        for jid, k in zip(jids, self._keys_now(view, jids), strict=True):
            if jid in pending:
                key[jid] = k
            elif k != key[jid]:
                changed.append((key[jid], tb[jid], jid))
                key[jid] = k
        changed.sort()
        for _, _, jid in changed:
            tb[jid] = self._tick()
        self._tb_pending()

    def _tick(self) -> int:
        self._next_tb += 1
        return self._next_tb - 1

    def _tb_pending(self) -> None:
        """The arrivals since the last sort: fresh tie-breaks after every changed job's."""
        for jid in self.pending:
            if jid in self.key:  # (not finished during an uncontended spell)
                self.tb[jid] = self._tick()
        self.pending.clear()

    def _rebuild(self, view: ClusterView) -> None:
        """Back from an uncontended spell (or a fresh view): every key, then the sorted lists and the
        running rows."""
        self._refresh(view, list(self.const))
        self.queued.clear()
        self.entry.clear()
        self.running = {jv.id: None for jv in view.running()}
        for jid in self.const:
            if jid not in self.running:
                self._enqueue(jid)
        arr = self.arr = RunningArrays(max(256, 2 * len(self.running)))
        for jid in self.running:
            duration, iterations, g = self.const[jid]
            arr.add(jid, duration, iterations, g, self.key[jid], self.tb[jid])
        arr.read_motion(view, self.running)
        self.enter.clear()
        self.leave.clear()
        self.touch.clear()
        self.stale = False

    def _sync(self, view: ClusterView) -> None:
        """The rows now: jobs that gave their GPUs back join the queued lists (with their key and
        tie-break), started ones leave them; changed motions are read; every row's key is refreshed
        (:meth:`RunningArrays.refresh`: the scalar :meth:`_refresh`, in bulk)."""
        arr, const = self.arr, self.const
        for jid in self.leave:
            if jid in arr and jid in const:
                self.key[jid], self.tb[jid] = arr.remove(jid)
                self._enqueue(jid)
        for jid in self.enter:
            if jid in const and jid not in arr:
                self._unqueue(jid)
                duration, iterations, g = const[jid]
                arr.add(jid, duration, iterations, g, self.key[jid], self.tb[jid])
        arr.read_motion(view, self.enter + self.touch)
        self.enter.clear()
        self.leave.clear()
        self.touch.clear()
        self._next_tb = arr.refresh(view.now, self.gpu_weighted, self._next_tb)
        self._tb_pending()

    # -------------------------------------------------------------- decisions
    def schedule(self, view: ClusterView) -> Decision:
        if view is not self._view:
            self._view = view
            self._reset()
            for jv in list(view.running()) + list(view.queue()):  # the artifact's initial list order
                self._admit(view, jv.id)
        else:
            for e in view.events:
                if e.kind is EventKind.COMPLETION and e.job_id in self.const:
                    self._drop(e.job_id)
            for e in view.events:
                k = e.kind
                if k is EventKind.ARRIVAL:
                    self._admit(view, e.job_id)
                elif k is EventKind.PREEMPT_DONE:
                    self.leave.append(e.job_id)
                elif k is EventKind.RECONF_DONE:
                    self.touch.append(e.job_id)
        if not view.quotas and self.demand <= view.cluster.total_gpus:
            # every active job fits: all run, nothing to sort (the order is refreshed when it matters)
            self.stale = True
            return self._start_all(view)
        if self.stale:
            self._rebuild(view)
        else:
            arrived = [j for j in self.pending if j in self.const]
            self._sync(view)
            for jid in arrived:  # the list's tail, with their fresh tie-breaks
                self._enqueue(jid)
        arr = self.arr
        order = arr.ranked()  # running jobs in the list's order
        # tenants' quotas (guaranteed jobs): only checkpointing jobs keep theirs, the rest is reassigned
        if view.quotas:
            n = len(arr)
            ck = arr.ck[:n]
            free = view.cluster.total_gpus - (int(arr.gi[:n][ck].sum()) if view.checkpoint_s else 0)
            ids = arr.ids
            ranked = [(int(arr.key[i]), int(arr.tb[i]), ids[i]) for i in order.tolist()]
            ckpt = {ids[i]: int(arr.gi[i]) for i in order.tolist() if ck[i]}
            quota = QuotaLedger(view, (view.job(j).job for j in ckpt))
            gpus = {j: c[2] for j, c in self.const.items()}
            chosen = fill_pool(view, self._merged(ranked), gpus, free, ckpt, quota)
            keep = set(chosen)
            preempt = tuple(e[2] for e in ranked if e[2] not in keep and e[2] not in ckpt)
        else:
            quota = None
            bf = BlockFill(arr, order)
            free = view.cluster.total_gpus - (bf.ckpt_gpus if view.checkpoint_s else 0)
            chosen, preempt = self._fill_blocks(bf, free)
        ps = self.starter.pass_state(view, preempt)
        hold = QuotaLedger.after_preemption(view, preempt) if quota is not None else None
        starts: dict[str, JobAllocation] = {}
        # GPUs free in this pass: a job needing more cannot be placed (what start would find, cheaply)
        avail = view.index.total
        if view.checkpoint_s == 0:
            avail += sum(r.gpus for j in preempt for r in view.job(j).allocation.placement.values())
        const = self.const
        for jid in chosen:
            if const[jid][2] > avail:
                continue  # (realistic semantics) the GPUs it was given are still being checkpointed
            if view.job(jid).status is JobStatus.QUEUED:
                job = view.job(jid).job
                if hold is not None and not hold.admits(job):
                    continue  # its tenant's quota is still held by a checkpointing job: next event
                ja = self.starter.start(view, ps, job, consolidate=True)
                if ja is not None:  # else (realistic semantics) it waits for the next event
                    avail -= const[jid][2]
                    starts[jid] = ja
                    if hold is not None:
                        hold.take(job)
        self.enter.extend(starts)
        (self.leave if view.checkpoint_s == 0 else self.touch).extend(preempt)
        # (``starts``: this decision's new dict, held by nobody else)
        return Decision(start=starts, preempt=preempt) if preempt else start_decision(starts)

    def _merged(self, ranked: list[Entry]) -> Iterator[str]:
        """Every active job in the list's order (the running ones merged into the queued lists)."""
        return (e[2] for e in merge(ranked, *(lst for lst in self.queued.values() if lst)))

    def _fill_blocks(self, bf: BlockFill, free: int) -> tuple[list[str], tuple[str, ...]]:
        """:func:`fill_pool` without quotas over the merged order: the running rows in order, and before
        each the queued jobs ahead of it (a heap of the per-GPU-count lists' heads); a queued list is
        dropped once its GPU count no longer fits (free GPUs only decrease, so none of its jobs would be
        taken). The running rows before the next queued head are walked in blocks (:meth:`BlockFill.walk`).
        Returns the queued jobs chosen (in order) and the running ones not kept (preempted; checkpointing
        ones excepted)."""
        const = self.const
        lists = [lst for g, lst in self.queued.items() if lst and g <= free]
        sizes = [const[lst[0][2]][2] for lst in lists]
        heads = [(*lst[0], i, 0) for i, lst in enumerate(lists)]
        heapify(heads)
        chosen: list[str] = []
        rows = len(bf.order)
        out: list[int] = []  # positions (in the ranked order) of running rows not kept
        pos = 0
        top: tuple | None = None
        idx = rows
        while True:
            if free <= 0:
                out.extend(bf.rest(pos))
                break
            if heads:
                if heads[0] is not top:  # the next queued head's place among the ranked rows
                    top = heads[0]
                    idx = bf.position(top[0], top[1])
            else:
                idx = rows
            if idx > pos:
                pos, free = bf.walk(pos, idx, free, out)
                continue
            if not heads:
                break
            _, _, jid, i, p = heappop(heads)  # the next queued head in the merged order (free > 0)
            g = sizes[i]
            if g <= free:
                chosen.append(jid)
                free -= g
            if p + 1 < len(lists[i]) and g <= free:
                heappush(heads, (*lists[i][p + 1], i, p + 1))
        ids = bf.arr.ids
        return chosen, tuple(ids[r] for r in bf.order[out].tolist()) if out else ()

    def _start_all(self, view: ClusterView) -> Decision:
        ps = self.starter.pass_state(view)
        starts: dict[str, JobAllocation] = {}
        for jv in view.queue():
            ja = self.starter.start(view, ps, jv.job, consolidate=True)
            if ja is not None:
                starts[jv.id] = ja
        return start_decision(starts)


__all__ = ["ShortestParams", "ShortestRemaining"]
