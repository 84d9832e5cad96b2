"""Gandiva-like: network-agnostic time-slicing of over-subscribed GPUs, packing and migration.

Gandiva (OSDI'18) as the Tiresias paper uses it for comparison (§6, "Gandiva ... time-sharing"); the
Tiresias artifact's ``gandiva`` schedule groups machines into node sets per job size and rotates
jobs every 60 s. Our version, each choice stated:

* **Queue**: FIFO by arrival, no head-of-line blocking (a job that does not fit is skipped); jobs get
  exactly their requested GPUs (all-or-nothing).
* **Quotas** (multi-tenant workloads): a guaranteed job beyond its tenant's quota is skipped too.
* **Packing** (network-agnostic): the YARN-CS consolidated placement (best fit on one machine, else
  the fewest machines of one rack) for every model, skew ignored; if no consolidated placement is free
  the job is spread over the most fragmented machines rather than kept waiting.
* **Time-slicing**: when jobs wait that do not fit (the GPUs are over-subscribed) a timer fires every
  slice = ``max(quantum_s, 2 x checkpoint time / switch_share)`` (the artifact's 60 s when preemption
  is free; Gandiva suspends at mini-batch boundaries in well under a second, but our cost model
  charges a checkpoint and a restore per switch, so slices grow until switching costs at most
  ``switch_share`` of a slice, 780 s under ``realistic`` costs); at each tick, jobs that have waited the longest (by the time
  they last entered the queue) take the GPUs of running jobs that have held theirs for at least one
  slice, oldest slice first (suspend/resume = a preemption charged by the cost model; our verifier
  never lets two jobs share a GPU, so Gandiva's GPU sharing by memory is replaced by this rotation).
  A job whose GPUs are still being checkpointed keeps its turn until they are free (or the next tick).
* **Migration**: after a job finishes, up to ``max_migrations`` running jobs spread over more machines
  than necessary move (a reconfiguration, charged by the cost model) to a placement on fewer
  machines when one has become free; ``migrate=False`` disables it.
"""

from __future__ import annotations

import itertools

from schedlab.heuristics.fifo import QuotaLedger, place_consolidated
from schedlab.heuristics.tiresias.placement import JobTraits, Starter
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import ClusterView, Decision, EventKind, JobStatus, Timer
from schedlab.scheduling.registry import PolicyParams, ours, paper
from schedlab.scheduling.snapshot import PolicyBase


class GandivaLikeParams(PolicyParams):
    quantum_s: float = paper(60.0, gt=0, description="time slice of over-subscribed GPUs (seconds)")
    switch_share: float = ours(0.1, gt=0, le=1, neutral="bounds the suspend-resume share of a slice",
                               description="at most this share of a slice is spent suspending and resuming: "
                                           "slice = max(quantum_s, 2 x checkpoint time / switch_share)")
    migrate: bool = paper(True, description="move spread jobs onto fewer machines when that becomes possible")
    max_migrations: int = ours(4, ge=0, neutral="a per-decision bound on migrations",
                               description="migrations per decision at most")


class GandivaLike(PolicyBase):
    """See the module docstring."""

    oracle = False

    def __init__(self, *, seed: int = 0, quantum_s: float = 60.0, switch_share: float = 0.1, migrate: bool = True,
                 max_migrations: int = 4, name: str = "gandiva-like") -> None:
        super().__init__(seed=seed)
        self.name = name
        self.quantum_s = quantum_s
        self.switch_share = switch_share
        self.migrate = migrate
        self.max_migrations = max_migrations
        self.traits = JobTraits()
        self.starter = Starter(self.traits)
        self._view: ClusterView | None = None
        self._slice = quantum_s
        self._tick: float | None = None      # the outstanding slice timer
        self._turns: list[str] = []          # jobs owed GPUs freed by a slice switch (in order)
        # holding jobs on more machines than they need (holding order) -> what the migration pass read of
        # them (None until it does)
        self._spread: dict[str, tuple | None] = {}
        # the same candidates indexed for the pass's quick test (:meth:`_none_movable`): machine -> the
        # candidates (of at most a machine's GPUs) with GPUs on it -> their GPUs there; a candidate's GPUs
        # and machines; how many candidates need more than a machine
        self._on: dict[str, dict[str, int]] = {}
        self._need: dict[str, int] = {}  # machine -> min over its candidates of GPUs - GPUs there
        self._cand: dict[str, tuple[int, tuple[tuple[str, int], ...]]] = {}
        self._big: dict[str, None] = {}
        self._sizes: dict[int, int] = {}  # GPUs -> candidates of that size (at most a machine's)
        self.switches = 0
        self.migrations = 0

    def schedule(self, view: ClusterView) -> Decision:
        now = view.now
        if view is not self._view:
            self._view, self._tick, self._turns = view, None, []
            self._spread, self._on, self._cand, self._big, self._sizes = {}, {}, {}, {}, {}
            self._need = {}
            for jv in view.running():
                if jv.allocation is not None and self._spread_out(view, jv.allocation):
                    self._spread[jv.id] = None
                    self._index(view, jv.allocation)
        else:
            for e in view.events:
                if e.kind is EventKind.COMPLETION or e.kind is EventKind.PREEMPT_DONE:
                    self._spread.pop(e.job_id, None)
                    self._unindex(e.job_id)
        tick = any(e.kind is EventKind.TIMER and e.tag == "gandiva-slice" for e in view.events)
        self._slice = max(self.quantum_s, 2.0 * view.checkpoint_s / self.switch_share)
        if tick and self._tick is not None and self._tick <= now:
            self._tick = None
        ps = self.starter.pass_state(view)
        starts: dict[str, JobAllocation] = {}
        preempt: list[str] = []
        free = view.index.total
        quota = QuotaLedger(view) if view.quotas else None
        # jobs owed a turn first, then everyone in FIFO order, skipping what does not fit (every job needs
        # a GPU: the pass ends when none is left)
        queued_status = JobStatus.QUEUED
        self._turns = [j for j in self._turns if view.job(j).status is queued_status]
        owed = set(self._turns)
        fifo = (jv for jv in view.queue() if jv.id not in owed)
        for jv in itertools.chain((view.job(j) for j in self._turns), fifo):
            if free <= 0:
                break
            job = jv.job
            if job.requested.gpus <= free and (quota is None or quota.admits(job)):
                ja = self.starter.start(view, ps, job, consolidate=True)
                if ja is not None:
                    starts[jv.id] = ja
                    free -= job.requested.gpus
                    if quota is not None:
                        quota.take(job)
        waiting = view.queue_length > len(starts)  # (every start so far is a queued job's)
        order = self._turns + [jv.id for jv in view.queue() if jv.id not in owed] if tick and waiting else ()
        self._turns = [j for j in self._turns if j not in starts]
        if tick and waiting:
            preempt = self._switch(view, [view.job(j) for j in order if j not in starts], starts, free, quota)
        elif self.migrate and any(e.kind is EventKind.COMPLETION for e in view.events):
            starts.update(self._migrations(view, ps))
        timers = ()
        if waiting and self._tick is None and (view.running_count or starts):
            self._tick = now + self._slice
            timers = (Timer(self._tick, "gandiva-slice"),)
        self._track(view, starts, preempt)
        return Decision(start=starts, preempt=tuple(preempt), timers=timers)

    @staticmethod
    def _spread_out(view: ClusterView, ja: JobAllocation) -> bool:
        """On more machines than its GPUs need (a migration candidate)."""
        g = view.job(ja.job_id).job.requested.gpus
        return len(ja.gpu_counts) > max(1, -(-g // view.cluster.max_gpus_per_machine))

    def _track(self, view: ClusterView, starts: dict[str, JobAllocation], preempt: list[str]) -> None:
        """The migration candidates after this decision is applied: started and moved jobs are
        (re)allocated in ``starts`` order, at the end of the holding order; preempted ones give their
        GPUs back now (free preemption) or at their checkpoint's end (``PREEMPT_DONE``)."""
        spread = self._spread
        if view.checkpoint_s == 0:
            for jid in preempt:
                spread.pop(jid, None)
                self._unindex(jid)
        for jid, ja in starts.items():
            spread.pop(jid, None)
            self._unindex(jid)
            if self._spread_out(view, ja):
                spread[jid] = None
                self._index(view, ja)

    def _index(self, view: ClusterView, ja: JobAllocation) -> None:
        jid = ja.job_id
        g = view.job(jid).job.requested.gpus
        counts = ja.gpu_counts
        self._cand[jid] = (g, tuple(counts.items()))
        if g > view.cluster.max_gpus_per_machine:
            self._big[jid] = None
            return
        self._sizes[g] = self._sizes.get(g, 0) + 1
        on, need = self._on, self._need
        for m, k in counts.items():
            d = on.get(m)
            if d is None:
                d = on[m] = {}
                need[m] = g - k
            elif g - k < need[m]:
                need[m] = g - k
            d[jid] = k

    def _unindex(self, jid: str) -> None:
        c = self._cand.pop(jid, None)
        if c is None:
            return
        g, own = c
        if jid in self._big:
            del self._big[jid]
            return
        n = self._sizes[g] - 1
        if n:
            self._sizes[g] = n
        else:
            del self._sizes[g]
        on, need, cand = self._on, self._need, self._cand
        for m, k in own:
            d = on[m]
            del d[jid]
            if not d:
                del on[m], need[m]
            elif g - k == need[m]:
                need[m] = min(cand[j][0] - c for j, c in d.items())

    def _none_movable(self, view: ClusterView, ps, other: int) -> bool:
        """Whether every candidate is certainly skipped by :meth:`_migrations`' first test (so the pass
        would try none and change nothing): each candidate of more than a machine's GPUs fails that test
        (done here as there); none of the others needs at most ``other`` GPUs, and no machine has one of
        them whose GPUs there plus the machine's free ones (in ``ps``) reach its own (per machine the least
        ``g - k`` over its candidates, ``k`` their GPUs there, is kept)."""
        cand = self._cand
        if any(g <= other for g in self._sizes):
            return False
        eff = ps.eff
        fmap = view.free_map
        for jid in self._big:
            g, own = cand[jid]
            k = len(own) - 1
            mine = []
            for m, c in own:
                e = eff.get(m)
                mine.append((e if e is not None else fmap[m]).gpus + c)
            if sum(sorted(mine + [other] * k, reverse=True)[:k]) >= g:
                return False
        for m, least in self._need.items():  # f + k >= g for a candidate there <=> f >= min(g - k)
            e = eff.get(m)
            if (e if e is not None else fmap[m]).gpus >= least:
                return False
        return True

    def _switch(self, view: ClusterView, waiting, starts: dict[str, JobAllocation], free: int,
                quota: QuotaLedger | None) -> list[str]:
        """Time-slice switch: the longest-waiting jobs take the GPUs of jobs that ran a full quantum.
        With tenants' quotas a guaranteed job takes a turn only if it fits its quota before its victims
        give theirs back (conservative: it may wait for the next tick)."""
        now = view.now
        pool = sorted((jv for jv in view.running() if jv.status is JobStatus.RUNNING and jv.last_start is not None
                       and now - jv.last_start >= self._slice - 1e-9), key=lambda jv: (jv.last_start, jv.id))
        spare = sum(jv.job.requested.gpus for jv in pool)
        out: list[str] = []
        for jv in sorted(waiting, key=lambda jv: (jv.queued_since, jv.id)):
            g = jv.job.requested.gpus
            if g > free + spare or (quota is not None and not quota.admits(jv.job)):
                continue
            while free < g and pool:
                v = pool.pop(0)
                out.append(v.id)
                free += v.job.requested.gpus
                spare -= v.job.requested.gpus
                if quota is not None:
                    quota.release(v.job)
            free -= g
            if quota is not None:
                quota.take(jv.job)
            self._turns.append(jv.id)
        self.switches += len(out)
        if out and view.checkpoint_s == 0:  # GPUs are free now: start the owed jobs in this decision
            ps = self.starter.pass_state(view, out)
            for ja in starts.values():
                for m, r in ja.placement.items():
                    ps.take(m, r)
            for jid in list(self._turns):
                ja = self.starter.start(view, ps, view.job(jid).job, consolidate=True)
                if ja is not None:
                    starts[jid] = ja
                    self._turns.remove(jid)
        return out

    def _migrations(self, view: ClusterView, ps) -> dict[str, JobAllocation]:
        """Up to ``max_migrations`` spread jobs moved onto fewer machines. A candidate that no placement
        can move is skipped without trying: no placement of its ``g`` GPUs on fewer than its ``now_ms``
        machines can exist, its own GPUs counted free (one machine with ``g`` free when ``g <= cap``, a
        consolidated placement being one machine; else ``now_ms - 1`` machines with ``g`` free between
        them), bounding its own machines by their free GPUs with its own back and any other machine by
        the most free on an untouched machine (``umax``) or a touched one (``ps``'s buckets); its tentative give-back-and-retake
        (net zero, but it marks its machines touched in ``ps``, which can decide ties of later placements)
        is replayed (:meth:`PassState.retouch`) before the next real try, so ``ps`` is the same there as
        without the skip."""
        out: dict[str, JobAllocation] = {}
        cap = view.cluster.max_gpus_per_machine
        idx = view.index
        eff = ps.eff
        fmap = view.free_map
        buckets = ps.buckets
        # an upper bound on the free GPUs of any machine that no take of this pass has touched (touches only
        # shrink that set; the view's counts do not change during the pass)
        umax = next((k for k in range(cap, 0, -1) if any(m not in eff for m in idx.machines_with(k))), 0)
        other = max(umax, max(buckets, default=0))  # (recomputed whenever ``ps`` changes)
        if self._none_movable(view, ps, other):
            return out
        deferred: list = []  # placements of skipped candidates, whose no-op give-back-and-retake is owed
        spread = self._spread
        views = view.job
        running = JobStatus.RUNNING
        limit = self.max_migrations
        for jid in list(spread):  # the only running jobs the loop below does not skip
            if len(out) >= limit:
                break
            jv = views(jid)
            ja = jv.allocation
            if ja is None or jv.status is not running:
                continue
            info = spread[jid]
            if info is None or info[0] is not ja:  # (allocation, machines, GPUs, own GPUs per machine, floor)
                counts = ja.gpu_counts
                g = jv.job.requested.gpus
                info = spread[jid] = (ja, len(counts), g, tuple(counts.items()), max(1, -(-g // cap)))
            _, now_ms, g, own, floor = info
            if now_ms <= floor:
                continue
            # hopeless: no placement on fewer machines can exist (see above)
            if g <= cap:
                hopeless = other < g
                if hopeless:
                    for m, k in own:
                        e = eff.get(m)
                        if (e if e is not None else fmap[m]).gpus + k >= g:
                            hopeless = False
                            break
            else:
                k = now_ms - 1
                mine = []
                for m, c in own:
                    e = eff.get(m)
                    mine.append((e if e is not None else fmap[m]).gpus + c)
                hopeless = sum(sorted(mine + [other] * k, reverse=True)[:k]) < g
            if hopeless:
                deferred.append(ja.placement)  # no placement can be found: none is tried
                continue
            for placement in deferred:
                ps.retouch(placement)
            deferred.clear()
            for m, r in ja.placement.items():  # its own GPUs count as free for the move
                ps.take(m, r.scale(-1))
            p = place_consolidated(view, jv.job, ps, min_gpu_mem=self.traits.min_gpu_mem(view, jv.job))
            if p is not None and sum(1 for r in p.values() if r.gpus) < now_ms:
                for m, r in p.items():
                    ps.take(m, r)
                out[jid] = JobAllocation(jid, ja.plan, p)
                self.migrations += 1
            else:
                for m, r in ja.placement.items():
                    ps.take(m, r)
            other = max(umax, max(buckets, default=0))
        return out


__all__ = ["GandivaLike", "GandivaLikeParams"]
