"""The decision pass of 2D-LAS / 2D-Gittins (:class:`~.las.TiresiasPolicy`, Tiresias Algorithm 1): the
queues walked from Q1 down, claims, preemptions (:meth:`PassMixin._evict`) and placement of the claims
(:meth:`PassMixin._place`); the policy's module docstring describes the rules. A mixin: it reads and
writes the policy's queues (``st``), deadline heaps and placement state."""

from __future__ import annotations

import heapq
import itertools
import math
from bisect import bisect_left
from collections.abc import Iterator

import numpy as np

from schedlab.heuristics.fifo import QuotaLedger
from schedlab.heuristics.tiresias.queues import CKPT, MLFQ, RESV, RUN, WAIT, QJob
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import ClusterView, JobStatus

QUEUED = JobStatus.QUEUED


class PassMixin:
    """``_pass`` and what it calls; mixed into :class:`~.las.TiresiasPolicy`."""

    one_claim_fast = True  # ``_place_one`` for a pass with one claim and no victims (false: the general loop)

    def _gittins_queue(self, q: int) -> bool:
        return self.gittins and q < self.k - 1 and self.dist is not None

    def _running_index(self, view: ClusterView, q: int) -> tuple[np.ndarray, np.ndarray, list[QJob]]:
        """The running jobs of Gittins queue ``q``: their indices sorted ascending (ties: latest start
        first), the matching row order, and the rows' jobs. Attained service is extrapolated from when
        each job last started running (``a_ref + GPUs x elapsed``; a restoring job's from the end of its
        restore), so this costs O(running) in numpy."""
        cols = self.st.run_cols[q]
        if not cols.n:
            return np.empty(0), np.empty(0, dtype=int), []
        g = np.atleast_1d(self.dist.index(cols.attained(view.now), self.limits[q]))
        order = np.lexsort((-cols.cols[4, :cols.n], g))
        return g[order], order, list(cols.jobs)  # a copy: evictions reorder the rows

    def _running_order(self, view: ClusterView, q: int) -> Iterator[QJob]:
        """Running jobs of queue ``q``, lowest priority first."""
        if self._gittins_queue(q):
            _, order, jobs = self._running_index(view, q)
            return (jobs[i] for i in order)
        return (self.st.jobs[key[3]] for key in reversed(self.st.run[q]))


    def _to_waiting_all(self, view: ClusterView, js: list[QJob]) -> None:
        """``_to_waiting(view, j)`` for every ``j`` of ``js`` in order (the victims whose checkpoint ended in
        one batch of events), with the Gittins indices of each queue's jobs from one numpy call: the same
        floats as :meth:`_k0`'s scalar path (``ServiceDistribution.index``, as :meth:`_rekey` uses it)."""
        if len(js) < 8:
            for j in js:
                self._to_waiting(view, j)
            return
        d = self.dist if self.gittins else None
        last = self.k - 1
        if d is None:
            for j in js:
                j.k0 = 0.0
        else:
            by_q: dict[int, list[QJob]] = {}
            for j in js:
                if j.q < last:
                    by_q.setdefault(j.q, []).append(j)
                else:
                    j.k0 = 0.0
            job = view.job
            for q, lst in by_q.items():
                a = np.array([job(j.id).attained_service - j.svc0 for j in lst], dtype=float)
                for j, k0 in zip(lst, (-np.atleast_1d(d.index(a, self.limits[q]))).tolist(), strict=True):
                    j.k0 = k0
        self.st.add_waiting_all(js)
        if self.knob is not None:
            for j in js:
                if j.q > 0:
                    self._push_promotion(view, j)

    def _pass(self, view: ClusterView) -> tuple[dict[str, JobAllocation], tuple[str, ...]]:
        st = self.st
        instant = view.checkpoint_s == 0
        free = view.cluster.total_gpus - self._outside - sum(st.held) - st.ckpt_gpus
        quota = _Quota(view, st) if view.quotas else None
        preempted: list[QJob] = []
        wait = st.wait
        for q in range(self.k):
            if not wait[q]:
                continue  # (nothing to claim; a later queue's cap is at most this one's: the break below is kept)
            below = st.below(q)
            # 2D-Gittins: a waiting job may also preempt running jobs of its own queue with a lower index
            gq = self._gittins_queue(q)
            same: list[QJob] | None = None  # lowest index first, computed once when first needed
            same_g: list[float] = []
            lo = 0  # same[:lo] no longer run (taken by earlier claims of this walk: never run again in it)
            cap = [free + below + (st.run_gpus[q] if gq else 0)]
            if cap[0] <= 0:
                break
            claimed: list[QJob] = []
            back: list[QJob] = []  # same-queue victims: back to waiting once the walk is over
            for s, _, key in st.walk(q, cap):
                j = st.jobs[key[3]]
                if quota is not None and not quota.ok(j):
                    continue
                if s > free:
                    mine: list[QJob] = []
                    if s > free + below:
                        if same is None:
                            g_sorted, order, rows = self._running_index(view, q)
                            same_g = (g_sorted * (1.0 + self.margin)).tolist()
                            same = [rows[i] for i in order.tolist()]
                        # low enough to be preempted: (1 + margin) x index below the claimant's; index 0
                        # (no sample above the job's service) is the lowest priority and preemptible too
                        n = bisect_left(same_g, -key[0])  # (np.searchsorted(side="left") on the same floats)
                        short, got = s - free - below, 0  # GPUs its own queue must give
                        while lo < len(same) and same[lo].state != RUN:
                            lo += 1
                        for i in range(lo, n):
                            v = same[i]
                            if v.state == RUN:
                                mine.append(v)
                                got += v.g
                                if got >= short:
                                    break
                        if got < short:
                            cap[0] = min(cap[0], s - 1)  # later jobs have lower indices: none of size >= s fits
                            continue
                    got, lower = self._evict(view, q, s - free, instant, preempted, quota, mine, back)
                    free += got
                    below -= lower
                claimed.append(j)
                free -= s
                cap[0] = min(cap[0], free + below + (st.run_gpus[q] if gq else 0))
                if quota is not None:
                    quota.add(j)
            if len(claimed) >= 16:
                st.reserve_all(claimed)  # (in bulk: the same state)
            else:
                for j in claimed:
                    st.remove_waiting(j)
                    st.add_reserved(j)
            for v in back:
                self._to_waiting(view, v)
        return self._place(view, preempted, instant)

    def _evict(self, view: ClusterView, q: int, need: int, instant: bool, preempted: list[QJob],
               quota: _Quota | None, mine: list[QJob], back: list[QJob]) -> tuple[int, int]:
        """Free at least ``need`` claimed GPUs from queues below ``q``, then from ``mine`` (running jobs
        of queue ``q`` with a lower Gittins index), lowest priority first; returns (freed, freed below)."""
        st = self.st
        chosen: list[QJob] = []
        got = 0
        for v in itertools.chain(st.victims(q, lambda qq: self._running_order(view, qq)), mine):
            chosen.append(v)
            got += v.g
            if got >= need:
                break
        spare = got - need
        freed = lower = 0
        for v in reversed(chosen):  # highest priority first: keep those the claim does not need
            if v.g <= spare:
                spare -= v.g
                continue
            freed += v.g
            lower += v.g if v.q > q else 0
            if v.state == RESV:
                st.remove_reserved(v)
                self._stuck.discard(v.id)
                v.ver += 1
                v.pack_deadline, v.pack_expired = None, False
                self._to_waiting(view, v)
                if quota is not None:
                    quota.give_back(v)
            else:
                st.remove_running(v)
                v.ver += 1
                preempted.append(v)
                if instant:
                    if v.q == q:
                        v.state = WAIT
                        back.append(v)
                    else:
                        self._to_waiting(view, v)
                    if quota is not None:
                        quota.give_back(v)
                else:
                    v.state = CKPT
                    st.ckpt_gpus += v.g
        return freed, lower

    def _place(self, view: ClusterView, preempted: list[QJob], instant: bool
               ) -> tuple[dict[str, JobAllocation], tuple[str, ...]]:
        st = self.st
        if instant and preempted:
            # a victim that a later queue's walk claimed again (GPUs a larger victim left over) keeps
            # running where it is: neither preempted nor restarted in the same decision
            again = [v for v in preempted if v.state == RESV]
            for v in again:
                st.remove_reserved(v)
                v.k0, v.ver = 0.0, v.ver + 1
                v.pack_deadline, v.pack_expired = None, False
                self._set_running(view, v)
                self._push_demotion(view, v)
            if again:
                preempted = [v for v in preempted if v.state != RUN]
        if not preempted and self.one_claim_fast and len(st.resv) == 1:
            return self._place_one(view)
        ps = self.starter.pass_state(view, [v.id for v in preempted])
        starts: dict[str, JobAllocation] = {}
        now = view.now
        limit = self.packlimit
        stuck = self._stuck
        if preempted and instant:
            stuck.clear()  # GPUs given back in this decision: every claim may fit now
        claims = st.reserved_in_order()
        if stuck:
            claims = [j for j in claims if j.id not in stuck]
        last = len(claims) - 1
        skew_of = self.traits.skew
        start = self.starter.start
        # what a placement reads of a job: a claim with the same shape as one that failed since the pass
        # state last changed (a placement taken) fails too, without a search (placement is a function of
        # the view, the pass state and this shape)
        failed: set[tuple] = set()
        mem_of = self.traits.min_gpu_mem
        pack_wait = self.pack_wait_s
        dem, lim, last_q = self._dem, self.limits, self.k - 1
        restore = view.checkpoint_s > 0
        jobs_view = view.job
        add_running = st.add_running
        unreserve, remove_reserved = st.unreserve, st.remove_reserved
        bulk = last >= 15  # (many claims: their keys leave ``resv_keys`` with one filter)
        gone: list[tuple] = []
        ran: list[QJob] = []
        pfree = ps.free_gpus
        for n, j in enumerate(claims):
            job = j.job
            base = j.shape
            if base is None:  # (fixed for the job: its request, TP degree, GPU memory need and skew)
                plan, req = job.plan, job.requested
                base = j.shape = (req.gpus, req.cpus, req.mem_gb, plan.tp if plan is not None else 1,
                                  mem_of(view, job))
                j.skew = skew_of(job)
            skew = j.skew
            skewed = skew > limit
            spread = not skewed or j.pack_expired or pack_wait == 0
            if j.g > pfree:
                ja = None  # (more GPUs than the pass has left: ``start`` would answer so)
            else:
                if failed and (base, skewed, spread) in failed:  # (no key built while nothing failed)
                    ja = None
                else:
                    ja = start(view, ps, job, consolidate=skewed, allow_spread=spread, take=n < last,
                               mem=base[4], bounded=True)
                    if ja is None:
                        failed.add((base, skewed, spread))
                    else:
                        if failed:
                            failed.clear()
                        if n < last:  # (the pass state changes only with a placement taken)
                            pfree = ps.free_gpus
            if ja is None:
                stuck.add(j.id)  # retried once GPUs are given back (or its consolidation wait ends)
                if skewed and not j.pack_expired and j.pack_deadline is None:
                    j.pack_deadline = now + pack_wait
                    heapq.heappush(self._pack, (j.pack_deadline, j.ver, j.id))
                continue
            if bulk:
                unreserve(j, gone)  # (``resv_keys`` is not read in this loop: its keys go in one go below)
            else:
                remove_reserved(j)
            j.k0 = 0.0
            if j.band == 1:
                j.band, j.stamp = 0, st.next_stamp()
            j.ver += 1
            j.pack_deadline, j.pack_expired = None, False
            # ``_run_from_now``, inline: placed from the queue (QUEUED in the view), so its attained
            # service is its stored value; a preempted job under costly preemption restores first
            jv = jobs_view(j.id)
            a = jv.attained_service
            j.a_ref, j.t_ref = a, math.inf if restore and jv.preemptions > 0 and jv.status is QUEUED else now
            if bulk:
                ran.append(j)  # (running in one call below: nothing in this loop reads the running lists)
            else:
                add_running(j)
            if j.q < last_q:
                heapq.heappush(dem, (now + max(lim[j.q] - (a - j.svc0), 0.0) / j.g, j.ver, j.id))
            if j.wait0 is None:
                j.wait0 = jv.waiting_time
            starts[j.id] = ja
            if self.learner is not None:
                self.learner.observe(view, job, ja.placement, skew)
        if gone:
            st.drop_keys(gone)
        if ran:
            st.add_running_all(ran)
        return starts, tuple(v.id for v in preempted)

    def _place_one(self, view: ClusterView) -> tuple[dict[str, JobAllocation], tuple[str, ...]]:
        """``_place`` of a pass with one reserved job and no victims (most passes of 2D-LAS at its own
        arrivals): the same steps for its one claim, without the claims list, the failed-shape set and the
        bulk bookkeeping (one claim: the pass state is never read after its placement, nothing taken)."""
        st = self.st
        j = st.jobs[st.resv_keys[0][4]]
        if j.id in self._stuck:
            return {}, ()
        job = j.job
        base = j.shape
        if base is None:
            plan, req = job.plan, job.requested
            base = j.shape = (req.gpus, req.cpus, req.mem_gb, plan.tp if plan is not None else 1,
                              self.traits.min_gpu_mem(view, job))
            j.skew = self.traits.skew(job)
        skew = j.skew
        skewed = skew > self.packlimit
        pack_wait = self.pack_wait_s
        spread = not skewed or j.pack_expired or pack_wait == 0
        ps = self.starter.pass_state(view, ())
        ja = None
        if j.g <= ps.free_gpus:
            ja = self.starter.start(view, ps, job, consolidate=skewed, allow_spread=spread, take=False,
                                    mem=base[4])
        now = view.now
        if ja is None:
            self._stuck.add(j.id)
            if skewed and not j.pack_expired and j.pack_deadline is None:
                j.pack_deadline = now + pack_wait
                heapq.heappush(self._pack, (j.pack_deadline, j.ver, j.id))
            return {}, ()
        st.remove_reserved(j)
        j.k0 = 0.0
        if j.band == 1:
            j.band, j.stamp = 0, st.next_stamp()
        j.ver += 1
        j.pack_deadline, j.pack_expired = None, False
        jv = view.job(j.id)
        a = jv.attained_service
        j.a_ref, j.t_ref = a, math.inf if view.checkpoint_s > 0 and jv.preemptions > 0 and jv.status is QUEUED else now
        st.add_running(j)
        if j.q < self.k - 1:
            heapq.heappush(self._dem, (now + max(self.limits[j.q] - (a - j.svc0), 0.0) / j.g, j.ver, j.id))
        if j.wait0 is None:
            j.wait0 = jv.waiting_time
        if self.learner is not None:
            self.learner.observe(view, job, ja.placement, skew)
        return {j.id: ja}, ()


class _Quota(QuotaLedger):
    """Guaranteed jobs' quota usage per tenant over the jobs that hold resources (the view's running
    ones, checkpointing included) or claim them (reserved)."""

    __slots__ = ()

    def __init__(self, view: ClusterView, st: MLFQ) -> None:
        super().__init__(view)
        for jid in st.resv:
            self.add(st.jobs[jid])

    def add(self, j: QJob) -> None:
        self.take(j.job)

    def give_back(self, j: QJob) -> None:
        self.release(j.job)

    def ok(self, j: QJob) -> bool:
        return self.admits(j.job)


__all__ = ["PassMixin"]
