"""The Dally policy: delay scheduling (:mod:`.delay`, Algorithm 1) with tuned or fixed timers
(:mod:`.autotune`, Algorithm 2), offers in increasing network-sensitive priority (:mod:`.priority`)
and preemption by the same priority.

One decision pass (``schedule``), at every simulator event:

1. **Claims.** A job for which running jobs were preempted earlier (step 3) is placed in the domain it
   claimed as soon as every victim has released its GPUs.
2. **Offers** in increasing ``Nw_sens`` (ties: queue-entry order). A queued job runs Algorithm 1 on
   the resources still free (the offer ``R``): accept at the best level that fits, else reject while
   its starvation is below that level's timer. Starvation = ``now - last assignment time``, the time
   the job last entered the wait queue (:func:`waiting_since`). With ``upgrade`` (ours, off by
   default: the paper offers resources to waiting jobs only), a *running* job placed below its best
   level (e.g. across racks though it fits one rack) is offered too and moves when the offer holds a
   strictly better level (a migration: the simulator charges it like a checkpoint-restore).
3. **Preemption** (parameter ``preemption``, the paper's "preemption uses the same priority"): a
   queued job still unserved (and, with ``upgrade``, a running one below its best level) whose
   ``Nw_sens`` is lower than that of running jobs (by more than ``preempt_margin``: ours, default 0 =
   strict priority order) preempts the fewest such jobs (lowest priority first) inside one domain of
   its best level where their GPUs plus the free ones suffice, and claims that domain (its machines
   are offered to nobody else until the claim is served, step 1). Each job holds at most one claim.
   With ``lease`` > 0 (ours, default 0) only jobs that have run ``lease`` seconds since their last
   start or move can be preempted: without it a victim pushed to a worse tier can become the most
   slowed job and preempt back, a ping-pong the paper does not address; the lease bounds the churn to
   one preemption per job per lease.
4. **Timers.** For the jobs still waiting, the next instant one of their delay timers expires (per
   GPU demand, from the oldest waiting job past which the timer has not yet run) becomes a simulator
   timer (``Decision.timers``) — only when GPUs are free for it to take then; resources only change
   at events, which bring a pass anyway. Timers are never polled.

A pass of completions and at most one arrival with nothing queued, claimed or preempting takes a short
path with the same outcome (``_lone_event``); in a full pass a job's timers are computed only when it
misses level 0 (the wait lists' expiry is the same as if they had been: :mod:`.autotune`).

Snapshot form (``decide``): the same ``schedule`` on a view built from an ``Instance``: waiting since =
the job's last preemption (``JobProgress.last_change``) or else its arrival; a job whose timer has not
run out stays queued, one whose timer has accepts the lower level; the history of a freshly built
policy is empty, so its timers are the cold-start values.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort

from schedlab.heuristics.dally.autotune import AutoTuner, FixedTimers
from schedlab.heuristics.dally.delay import Levels, Offer, Rejection, allowed, best_machine, on_resource_offer
from schedlab.heuristics.dally.preemption import Claim
from schedlab.heuristics.dally.priority import job_nw_sens
from schedlab.heuristics.dally.steps import _HOLDING, OfferSteps
from schedlab.heuristics.fifo import QuotaLedger, plan_memory_need
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import (
    NO_DECISION,
    ClusterView,
    Decision,
    EventKind,
    JobStatus,
    JobView,
)
from schedlab.scheduling.snapshot import PolicyBase

HOUR = 3600.0
_ENTERS = (EventKind.ARRIVAL, EventKind.PREEMPT_DONE)
_COMPLETION = EventKind.COMPLETION  # (a module constant: ``EventKind.X`` is a descriptor call per read)
_ARRIVAL = EventKind.ARRIVAL


def _shape(job: Job) -> tuple:
    """What decides a job's answer to an offer, but for its starvation (``_offer_round``'s ``rejects``)."""
    return (job.requested.gpus, job.requested.cpus, job.requested.mem_gb, job.plan, job.max_tier, job.model,
            job.global_batch)


def waiting_since(jv: JobView) -> float:
    """``T_last_assignment`` of Algorithm 1 line 1: when the job last entered the wait queue — its
    arrival, or the end of its last preemption. In a snapshot (no queue history) the last preemption
    is ``JobProgress.last_change``; online, ``queued_since`` (the end of the checkpoint) is later."""
    t = jv.queued_since
    lc = jv.last_change
    return lc if lc is not None and lc > t else t


class DemandClass:
    """Queued jobs of one GPU demand, by waiting-since (for timer expiries); lazy deletion."""

    __slots__ = ("items", "dead")

    def __init__(self) -> None:
        self.items: list[tuple[float, int, str]] = []   # (since, entry, job)
        self.dead = 0

    def add(self, since: float, entry: int, jid: str) -> None:
        if self.items and since < self.items[-1][0]:
            insort(self.items, (since, entry, jid))
        else:
            self.items.append((since, entry, jid))


class DallyPolicy(OfferSteps, PolicyBase):
    """Dally (``autotune=True``) or Dally-manual (fixed timers). Parameters: :class:`DallyParams`."""

    oracle = False

    def __init__(self, *, autotune: bool = True, machine_timer: float = 12 * HOUR, rack_timer: float = 12 * HOUR,
                 history_window: float = 24 * HOUR, min_samples: int = 2, sigmas: float = 2.0,
                 preemption: bool = True, preempt_margin: float = 0.0, lease: float = 0.0,
                 upgrade: bool = False, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.name = "dally" if autotune else "dally-manual"
        self.autotune = autotune
        self.machine_timer = float(machine_timer)
        self.rack_timer = float(rack_timer)
        self.history_window = float(history_window)
        self.min_samples = int(min_samples)
        self.sigmas = float(sigmas)
        self.preemption = bool(preemption)
        self.preempt_margin = float(preempt_margin)
        self.lease = float(lease)
        self.upgrade = bool(upgrade)
        self.levels: Levels | None = None
        self.tuner: AutoTuner | FixedTimers | None = None
        self._mixed = False
        self._gpu_memory: dict[str, float] = {}
        self._mem: dict[tuple, float] = {}
        self._plans: dict[int, ExecutionPlan] = {}
        self._view: ClusterView | None = None
        self._clear()

    # ------------------------------------------------------------------ state
    def _clear(self) -> None:
        self._order: list[tuple[float, int, str]] = []    # queued jobs by (Nw_sens, entry)
        self._key: dict[str, tuple[float, int]] = {}
        self._since: dict[str, float] = {}
        self._classes: dict[int, DemandClass] = {}
        self._entry = 0
        self._upgradable: dict[str, tuple[int, int]] = {}  # running below best level: job -> (level, entry)
        self._preempting: set[str] = set()
        self._claims: dict[str, Claim] = {}
        self._wakeups: list[float] = []

    def _setup(self, view: ClusterView) -> None:
        c = view.cluster
        if self.levels is None or self.levels.cluster is not c:
            self.levels = Levels.from_cluster(c)
            caps = self.levels.capacities
            steps = [self.machine_timer] + [self.rack_timer] * (len(caps) - 1)
            fixed = FixedTimers(steps, caps)
            self.tuner = (AutoTuner(window=self.history_window, capacities=caps, cold=fixed.absolute,
                                    min_samples=self.min_samples, sigmas=self.sigmas) if self.autotune else fixed)
            self._mixed = len({c.machine(m).gpu_memory_gb for m in c.machines if c.machine(m).gpus}) > 1
            self._gpu_memory = {m: c.machine(m).gpu_memory_gb for m in c.machines}
        self._view = view
        self._clear()
        for jv in view.queue():
            self._enqueue(jv)
        for jv in view.running():
            if jv.allocation is not None and jv.status is not JobStatus.CHECKPOINTING:
                self._note_running(jv.job, jv.allocation.placement, self._entry)

    def _enqueue(self, jv: JobView) -> None:
        job = jv.job
        jid = job.id
        key = self._key
        if jid in key:
            return
        entry = self._entry = self._entry + 1
        nw = job_nw_sens(jv)
        key[jid] = (nw, entry)
        item = (nw, entry, jid)
        order = self._order
        if not order or order[-1] < item:   # (an arrival, UNSTARTED = the highest ``Nw_sens``: last)
            order.append(item)
        else:
            insort(order, item)
        since = waiting_since(jv)
        self._since[jid] = since
        g = job.requested.gpus
        cls = self._classes.get(g)
        if cls is None:
            cls = self._classes[g] = DemandClass()
        items = cls.items   # (``cls.add``, inline)
        if items and since < items[-1][0]:
            insort(items, (since, entry, jid))
        else:
            items.append((since, entry, jid))

    def _dequeue(self, job: Job) -> None:
        jid = job.id
        nw, entry = self._key.pop(jid)
        order = self._order
        if order[-1][1] == entry:   # (the last: most passes start the one job that just arrived)
            order.pop()
        else:
            del order[bisect_left(order, (nw, entry, jid))]
        del self._since[jid]
        self._classes[job.requested.gpus].dead += 1   # its DemandClass entry is dropped lazily

    def _note_running(self, job: Job, placement, entry: int) -> None:
        lv = self.levels.level_of(placement)
        best = self._best_level(job)
        if lv > best:
            self._upgradable[job.id] = (lv, entry)
        else:
            self._upgradable.pop(job.id, None)

    def _best_level(self, job: Job) -> int:
        levels = self.levels
        k = levels.best_level(job.requested.gpus)
        while k > 0 and not allowed(levels, job, k):
            k -= 1
        return k

    def _sync(self, view: ClusterView) -> None:
        if view is not self._view or self.levels is None or self.levels.cluster is not view.cluster:
            self._setup(view)
            return
        upgradable = self._upgradable
        claims = self._claims
        for ev in view.events:
            kind = ev.kind
            if kind is _COMPLETION:
                if upgradable:
                    upgradable.pop(ev.job_id, None)
                if claims:
                    claims.pop(ev.job_id, None)
            elif kind in _ENTERS:
                self._enqueue(view.job(ev.job_id))
        for jid in [j for j in self._preempting if view.job(j).status not in _HOLDING] if self._preempting else ():
            self._preempting.discard(jid)
            if view.job(jid).status is JobStatus.QUEUED:
                self._enqueue(view.job(jid))
        if len(self._key) != view.queue_length:
            self._setup(view)   # out of step (e.g. a caller-driven change): rebuild from the view

    # ------------------------------------------------------------------ helpers
    def _min_gpu_mem(self, job: Job) -> float:
        return plan_memory_need(job, self._mem) if self._mixed else 0.0

    def _plan(self, job: Job) -> ExecutionPlan:
        if job.plan is not None:
            return job.plan
        g = job.requested.gpus
        p = self._plans.get(g)
        if p is None:
            p = self._plans[g] = ExecutionPlan(dp=g)
        return p

    def timers(self, g: int, now: float) -> tuple[float, ...]:
        """The absolute delay timers of a ``g``-GPU job now (Algorithm 2 or the fixed ones)."""
        return self.tuner.timers(g, now)

    # ------------------------------------------------------------------ the pass
    def schedule(self, view: ClusterView) -> Decision:
        if (view is self._view and not self._key and not self._claims and not self._preempting
                and not view.quotas and self.levels.cluster is view.cluster
                and not (self.upgrade and self._upgradable)):
            d = self._lone_event(view)
            if d is not None:
                return d
        self._sync(view)
        now = view.now
        wakeups = self._wakeups
        while wakeups and wakeups[0] <= now:
            heapq.heappop(wakeups)
        if not self._key and not self._claims and not (self.upgrade and self._upgradable):
            return NO_DECISION  # (shared and immutable: nothing built per idle pass)
        claims = self._claims
        blocked = {m: c.job for c in claims.values() for m in c.machines} if claims else None
        offer = Offer(view, self.levels, blocked=blocked, min_gpu_mem=self._min_gpu_mem)
        quota = QuotaLedger(view) if view.quotas else None
        starts: dict[str, JobAllocation] = {}
        if claims:  # (none to serve: no call)
            self._serve_claims(view, offer, starts, quota)
        unserved: list[tuple[float, int, str]] = []
        waiting_on_timer = self._offer_round(view, offer, starts, quota, unserved)
        preempt: list[str] = []
        if self.preemption and unserved:
            self._preempt(view, offer, unserved, starts, preempt)
        timers = self._timers(view, offer, waiting_on_timer, bool(preempt)) if preempt or self._key else ()
        if not starts and not preempt and not timers:
            return NO_DECISION
        return Decision(start=starts, preempt=tuple(preempt), timers=timers)

    def _lone_event(self, view: ClusterView) -> Decision | None:
        """A pass of completions and at most one arrival with nothing queued, claimed or preempting before
        it (most passes of a replay that is not overloaded): the decision the full pass gives, or ``None``
        to take the full pass. An arrival that fits one machine (Algorithm 1 lines 5-8) is placed without
        entering the queue's structures (the full pass would enter it and take it out again): its queue
        entry is numbered, its wait recorded and its timers' query skipped (``AutoTuner.skip``) as the
        full pass does. Anything else (it misses level 0, its tier forbids it, the view is out of step)
        goes through the full pass, which finds the same."""
        arrival = None
        upgradable = self._upgradable
        for ev in view.events:
            kind = ev.kind
            if kind is _COMPLETION:
                if upgradable:
                    upgradable.pop(ev.job_id, None)   # (as ``_sync``; the full pass pops it again: no change)
            elif kind is _ARRIVAL and arrival is None:
                arrival = ev.job_id
            else:
                return None
        if arrival is None:
            if view.queue_length:
                return None   # (out of step: the full pass rebuilds)
            answer = NO_DECISION
        elif view.queue_length == 1:
            jv = view.job(arrival)
            job = jv.job
            need = job.requested
            g = need.gpus
            levels = self.levels
            lvs = levels.levels
            free = view.index.total
            if (free <= 0 or g > free or not lvs or g > lvs[0].capacity
                    or not (job.max_tier is None or allowed(levels, job, 0))):
                return None
            p = best_machine(view, need, plan_memory_need(job, self._mem) if self._mixed else 0.0, self._gpu_memory)
            if p is None:
                return None
            self._entry += 1                              # (its queue entry, as the full pass numbers it)
            now = view.now
            tuner = self.tuner
            tuner.skip(g, now)                            # (line 4's query not needed: nothing owed)
            since = jv.queued_since                       # (``waiting_since``, inline)
            lc = jv.last_change
            if lc is not None and lc > since:
                since = lc
            tuner.record(0, g, now - since, now)          # update_demand_delay (line 7)
            plan = job.plan
            if plan is None:
                plan = self._plan(job)
            answer = Decision(start={job.id: JobAllocation(job.id, plan, p)})
        else:
            return None
        wakeups = self._wakeups
        if wakeups:
            now = view.now
            while wakeups and wakeups[0] <= now:
                heapq.heappop(wakeups)
        return answer

    def _offer_round(self, view: ClusterView, offer: Offer, starts: dict[str, JobAllocation],
                     quota: QuotaLedger | None, unserved: list) -> bool:
        """Step 2: offers in increasing ``Nw_sens``; returns whether a job rejected an offer on a timer.

        ``rejects[shape]``: a job of that shape was rejected in this pass with threshold ``th`` (it fit
        none of the levels up to the one whose timer stopped it); a same-shape job with less starvation
        is rejected without another search. Valid while the timers of its demand do not change and no
        resources are given back (``offer.epoch``)."""
        now = view.now
        tuner = self.tuner
        cache: dict[int, tuple[float, ...]] = {}
        rejects: dict[tuple, float] = {}
        epoch = offer.epoch
        margin_cut = 1.0 - self.preempt_margin   # only jobs below it can find lower-priority victims
        preemption = self.preemption
        waiting_on_timer = False
        if self.upgrade and self._upgradable:
            running = sorted((job_nw_sens(view.job(j)), e, j) for j, (_, e) in self._upgradable.items())
            order = heapq.merge(list(self._order), running)
        else:
            order = list(self._order)
        claims = self._claims
        queued = self._key
        since = self._since
        free = offer.free_gpus
        levels = self.levels
        level0 = len(levels.levels) > 0
        record = tuner.record
        for nw, entry, jid in order:
            if jid in claims or jid in starts:
                continue
            if free <= 0:
                if not preemption or nw >= margin_cut:
                    break
                unserved.append((nw, entry, jid))
                continue
            jv = view.job(jid)
            job = jv.job
            g = job.requested.gpus
            if jid not in queued:                          # a running job below its best level
                if not self._upgrade(view, offer, jv, starts) and nw < margin_cut:
                    unserved.append((nw, entry, jid))
                free = offer.free_gpus
                if offer.epoch != epoch:
                    epoch, rejects = offer.epoch, {}
                continue
            if g > free or (quota is not None and job.guaranteed and job.tenant in view.quotas
                            and not quota.fits(job)):
                if g > free and nw < margin_cut:
                    unserved.append((nw, entry, jid))
                continue
            starvation = now - since[jid]                  # Algorithm 1 lines 1-2
            if rejects:
                th = rejects.get(_shape(job))
                if th is not None and starvation < th:     # same answer as the search below would give
                    waiting_on_timer = True
                    if nw < margin_cut:
                        unserved.append((nw, entry, jid))
                    continue
            # Algorithm 1 line 5 first: the timers (line 4) are read only if the job misses level 0
            p = offer.place(job, 0) if level0 and (job.max_tier is None or allowed(levels, job, 0)) else None
            if p is not None:
                level = 0                                   # lines 6-8: accepted on one machine
                tuner.skip(g, now)                          # (line 4's query not needed: nothing owed)
            else:
                t = cache.get(g)
                if t is None:
                    t = cache[g] = tuner.timers(g, now)             # Algorithm 1 line 4 (Algorithm 2)
                acc = on_resource_offer(offer, job, starvation, t)   # Algorithm 1 lines 5-22
                if isinstance(acc, Rejection):
                    rejects[_shape(job)] = acc.threshold
                    waiting_on_timer = True
                    if nw < margin_cut:
                        unserved.append((nw, entry, jid))
                    continue
                p = acc.placement
                level = acc.level if acc.record else -1     # (-1: accepted on the network, nothing recorded)
            offer.take(p)
            free = offer.free_gpus
            plan = job.plan
            if plan is None:
                plan = self._plan(job)
            starts[jid] = JobAllocation(jid, plan, p)
            if level >= 0:
                record(level, g, starvation, now)            # update_demand_delay (lines 7, 15)
                cache.pop(g, None)
                if rejects:
                    rejects = {k: v for k, v in rejects.items() if k[0] != g}   # its timers changed
            else:
                level = levels.top
            if quota is not None and job.guaranteed and job.tenant in view.quotas:
                quota.charge(job)
            self._dequeue(job)
            if level and level > self._best_level(job):
                self._upgradable[jid] = (level, entry)
        return waiting_on_timer

__all__ = ["DallyPolicy", "DemandClass", "waiting_since"]
