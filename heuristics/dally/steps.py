"""The later steps of Dally's offer round (:mod:`.policy`), as a mix-in of :class:`~.policy.DallyPolicy`:
offering a running job a better level (``upgrade``), serving claims, preemption by priority (step 3) and
the delay timers to request (step 4: the next instant ``t`` with ``t - since >= T`` of a waiting job, a
simulator timer strictly after ``now``)."""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from typing import TYPE_CHECKING

from schedlab.heuristics.dally.delay import Offer, allowed
from schedlab.heuristics.dally.preemption import Claim, VictimIndex
from schedlab.heuristics.dally.priority import job_nw_sens
from schedlab.heuristics.fifo import QuotaLedger
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import (
    ClusterView,
    JobStatus,
    JobView,
    Timer,
)

if TYPE_CHECKING:
    from schedlab.heuristics.dally.policy import DemandClass

CLAIM_RECHECK_S = 1.0   # after preempting: look again this much later (checkpoints may be free)
_HOLDING = (JobStatus.RUNNING, JobStatus.RESTORING, JobStatus.CHECKPOINTING)


class OfferSteps:
    """Steps 1, 3 and 4 of a pass and ``upgrade``; the state they read is :class:`~.policy.DallyPolicy`'s."""

    def _upgrade(self, view: ClusterView, offer: Offer, jv: JobView, starts: dict[str, JobAllocation]) -> bool:
        """Offer a running job placed below its best level a strictly better level (free GPUs plus its
        own); it moves when one fits."""
        if jv.status is not JobStatus.RUNNING or jv.id in self._preempting or offer.free_gpus <= 0:
            return False
        job = jv.job
        cur, entry = self._upgradable[jv.id]
        for k in range(self._best_level(job), cur):
            if not allowed(self.levels, job, k):
                continue
            p = offer.relocate(job, k, jv.allocation.placement)
            if p is not None:
                offer.take(p)
                starts[jv.id] = JobAllocation(jv.id, jv.allocation.plan, p)
                self._note_running(job, p, entry)
                return True
        return False

    def _serve_claims(self, view: ClusterView, offer: Offer, starts: dict[str, JobAllocation],
                      quota: QuotaLedger | None) -> None:
        """Step 1: place claimants whose victims have all released their GPUs."""
        for jid, claim in sorted(self._claims.items(), key=lambda kv: self._claim_key(view, kv[0])):
            jv = view.job(jid)
            if any(view.job(v).status in _HOLDING for v in claim.victims):
                continue
            del self._claims[jid]
            offer.unblock(claim.machines, jid)
            queued = jid in self._key
            if not queued and (jv.status is not JobStatus.RUNNING or jid not in self._upgradable):
                continue   # finished, or moved meanwhile
            job = jv.job
            if queued and quota is not None and job.guaranteed and job.tenant in view.quotas and not quota.fits(job):
                continue   # its tenant's quota is used up meanwhile
            p = offer.place_in(jv.job, claim.level, claim.machines,
                               None if queued else jv.allocation.placement)
            if p is None:
                continue
            offer.take(p)
            if queued:
                starts[jid] = JobAllocation(jid, self._plan(jv.job), p)
                if claim.level < self.levels.top:
                    self.tuner.record(claim.level, jv.job.requested.gpus, view.now - self._since[jid], view.now)
                if quota is not None and jv.job.guaranteed and jv.job.tenant in view.quotas:
                    quota.charge(jv.job)
                self._dequeue(jv.job)
            else:
                starts[jid] = JobAllocation(jid, jv.allocation.plan, p)
                self._note_running(jv.job, p, self._upgradable[jid][1])

    def _claim_key(self, view: ClusterView, jid: str) -> tuple[float, int]:
        k = self._key.get(jid)
        if k is not None:
            return k
        return (job_nw_sens(view.job(jid)), self._upgradable.get(jid, (0, 0))[1])

    # ------------------------------------------------------------------ preemption
    def _preempt(self, view: ClusterView, offer: Offer, unserved: list, starts: dict[str, JobAllocation],
                 preempt: list[str]) -> None:
        """Step 3: unserved jobs in priority order claim a domain of their best level by preempting
        running jobs of lower priority (``Nw_sens`` higher by more than ``preempt_margin``)."""
        victims = VictimIndex(view, self.levels, exclude=set(starts) | self._preempting | set(self._claims),
                              lease=self.lease)
        failed: set[tuple[int, int]] = set()
        for nw, _entry, jid in sorted(unserved):
            if jid in self._claims or jid in starts:
                continue
            jv = view.job(jid)
            job = jv.job
            g = job.requested.gpus
            target = self._best_level(job)
            if jid not in self._key and target >= self._upgradable.get(jid, (0, 0))[0]:
                continue
            own = jv.allocation.gpu_counts if jid not in self._key and jv.allocation is not None else {}
            if not own and (target, g) in failed:
                continue
            pick = victims.choose(offer, target, g, nw + self.preempt_margin, own, jid)
            if pick is None:
                if not own:   # a later queued claimant of this class has a higher threshold: it fails too
                    failed.add((target, g))
                continue
            domain, chosen = pick
            machines = (self.levels[target].members[domain] if target < self.levels.top
                        else view.cluster.machines)
            claim = Claim(jid, target, domain, tuple(machines), set(chosen))
            self._claims[jid] = claim
            offer.block(claim.machines, jid)
            for v in chosen:
                preempt.append(v)
                self._preempting.add(v)
                self._upgradable.pop(v, None)
                victims.remove(v)

    # ------------------------------------------------------------------ timers
    def _timers(self, view: ClusterView, offer: Offer, waiting_on_timer: bool, preempted: bool) -> tuple[Timer, ...]:
        """Step 4: the next delay-timer expiry (and window change) as one simulator timer."""
        now = view.now
        free = offer.free_gpus
        nxt = math.inf
        if preempted:
            nxt = now + CLAIM_RECHECK_S
        if free > 0 and self._key:
            demands = []
            for g, cls in self._classes.items():
                if g > free:
                    continue
                self._compact(cls)
                if not cls.items:
                    continue
                demands.append(g)
                t = self.tuner.timers(g, now)
                for tk in t:
                    if tk <= 0:
                        continue
                    e = self._first_after(cls, now, tk)
                    if e is not None:
                        at = _expiry(e, tk)
                        if at < nxt:
                            nxt = at
            if waiting_on_timer and demands:   # (a window change of another demand's list changes no timer here)
                nxt = min(nxt, self.tuner.next_change(now, demands))
        if not math.isfinite(nxt) or nxt <= now:
            return ()
        if self._wakeups and self._wakeups[0] <= nxt:
            return ()   # an earlier (or the same) wake-up is already pending
        heapq.heappush(self._wakeups, nxt)
        return (Timer(nxt, "dally-delay"),)

    def _compact(self, cls: DemandClass) -> None:
        key = self._key
        if cls.items and (cls.dead * 2 > len(cls.items) or cls.items[0][2] not in key):
            cls.items = [it for it in cls.items if key.get(it[2], (None, None))[1] == it[1]]
            cls.dead = 0

    def _first_after(self, cls: DemandClass, now: float, tk: float) -> float | None:
        """Waiting-since of the first live job whose timer ``tk`` has not run out at ``now``, in the
        arithmetic of Algorithm 1's test (``now - since < tk``: ``since > now - tk`` may differ by a
        rounding)."""
        items = cls.items
        key = self._key
        i = bisect_right(items, (now - tk, math.inf, ""))
        while i > 0 and now - items[i - 1][0] < tk:   # (a rounding: the job before the cut still waits)
            i -= 1
        while i < len(items) and not now - items[i][0] < tk:
            i += 1
        while i < len(items):
            since, entry, jid = items[i]
            k = key.get(jid)
            if k is not None and k[1] == entry:
                return since
            cls.dead += 1
            i += 1
        return None


def _expiry(since: float, tk: float) -> float:
    """The first time ``t`` at which Algorithm 1's test sees the timer run out: ``t - since >= tk`` in
    floating point (``since + tk`` rounded may fall one step short)."""
    t = since + tk
    while t - since < tk:
        t = math.nextafter(t, math.inf)
    return t



__all__ = ["OfferSteps"]
