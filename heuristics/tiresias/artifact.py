"""The Tiresias artifact's ``dlas-gpu`` / ``dlas-gpu-gittins`` loop, for exact reproduction.

Read from SymbioticLab/Tiresias ``simulator/run_sim.py`` (``dlas_sim_jobs``) and restated in
``docs/REPRODUCTION.md``; with ``--semantics tiresias`` it gives the artifact's numbers. At every event:

1. finished jobs leave; arrivals are appended to Q0 and to the list of runnable jobs;
2. for each runnable job in that list's order: a running job whose ``executed x GPUs`` (integer
   seconds) reached its queue's limit moves to the end of the next queue (one level per event);
   ``dlas-gpu-gittins`` then ranks every job by :class:`~.gittins.ArtifactGittins` and sorts each queue
   by ``(rank, -submit)`` descending (stable: ties keep the list order);
3. every GPU is released and reassigned: queues in order, each in list order, a job runs if enough
   GPUs are left (first fit, no head-of-line blocking), else it stays or becomes pending (preempted);
4. each queue is reordered: running jobs first, then pending ones, each group in its previous order;
5. the next event is also the earliest *demotion time* over running jobs, computed as
   ``(limit - executed) // GPUs + now`` (the **quirk**: a GPU-second limit minus *seconds*, floored,
   which is not when the demotion happens; the extra events it creates change the schedule). Our
   simulator's timers persist, so a timer that is no longer the artifact's next jump is ignored.

Our own 2D-LAS (:mod:`.las`, the default ``discipline``) demotes at the exact crossing time, keeps jobs
of a queue from preempting each other, and computes the Gittins index of the *remaining* service.

Under ``realistic`` semantics the loop is the same; started jobs are placed by :mod:`.placement`
(a job that cannot be placed stays pending) and checkpointing jobs' GPUs are not reassigned.
"""

from __future__ import annotations

import math

from schedlab.heuristics.fifo import QuotaLedger, fill_pool
from schedlab.heuristics.tiresias.gittins import ArtifactGittins, History, load_samples
from schedlab.heuristics.tiresias.params import DEFAULT_PACKLIMIT, queue_limits
from schedlab.heuristics.tiresias.placement import JobTraits, Starter
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import NO_DECISION, ClusterView, Decision, EventKind, JobStatus, Timer
from schedlab.scheduling.snapshot import PolicyBase


def whole(x: float) -> int:
    """The artifact's integer seconds: ``int`` of a value that float error may put just below a whole number."""
    r = round(x)
    return int(r) if abs(x - r) < 1e-6 else int(math.floor(x))


class ArtifactTiresias(PolicyBase):
    """The artifact's loop (module docstring); ``gittins`` selects ``dlas-gpu-gittins``."""

    oracle = False

    def __init__(self, *, seed: int = 0, queues: int = 3, threshold: float = 3250.0,
                 thresholds: tuple[float, ...] | None = None, knob: float | None = None, gittins: bool = False,
                 distribution: str | None = None, min_history: int = 20, packlimit: float = DEFAULT_PACKLIMIT,
                 preempt_margin: float = 0.0, name: str | None = None) -> None:
        super().__init__(seed=seed)
        self.name = name or ("dlas-gpu-gittins" if gittins else "dlas-gpu")
        self.k = queues
        self.limits = [int(x) for x in queue_limits(queues, threshold, thresholds)]
        self.knob = knob
        self.gittins = gittins
        self.packlimit = packlimit
        self.delta = self.limits[0] if self.limits else int(threshold)  # the artifact's Δ = its first limit
        self._file = ArtifactGittins(load_samples(distribution), self.delta) if gittins and distribution else None
        self.min_history = min_history
        self.traits = JobTraits()
        self.starter = Starter(self.traits)
        self._view: ClusterView | None = None
        self._reset()

    def _reset(self) -> None:
        self.queues: list[list[str]] = [[] for _ in range(self.k)]
        self.qid: dict[str, int] = {}
        self.runnable: dict[str, None] = {}
        self.running: set[str] = set()
        self.ckpt: set[str] = set()
        self.exec0: dict[str, float] = {}
        self.wait_mark: dict[str, float | None] = {}
        self.g: dict[str, int] = {}
        self.sub: dict[str, float] = {}
        self.e: dict[str, int] = {}
        self.pos: dict[str, int] = {}
        self.rank: dict[str, float] = {}
        self._ranked: ArtifactGittins | None = None
        self._npos = 0
        self.history = History(self.min_history)
        self._table = self._file
        self._jump = math.inf
        self.demotions = 0
        self.promotions = 0

    # ------------------------------------------------------------ state
    def _add(self, view: ClusterView, jid: str, q: int = 0) -> None:
        job = view.job(jid).job
        self.g[jid] = job.requested.gpus
        self.sub[jid] = job.arrival
        self._npos += 1
        self.pos[jid] = self._npos  # runnable order (arrival order)
        self.e[jid] = self._executed_at(view, jid, 0.0)
        if self._table is not None:
            self.rank[jid] = self._table.rank(self.e[jid] * self.g[jid])
        self.runnable[jid] = None
        self.qid[jid] = q
        self.queues[q].append(jid)
        self.exec0.setdefault(jid, 0.0)
        self.wait_mark.setdefault(jid, None)

    def _rebuild(self, view: ClusterView) -> None:
        self._reset()
        for jv in list(view.running()) + list(view.queue()):
            a = jv.attained_service
            q = next((i for i, lim in enumerate(self.limits) if a < lim), self.k - 1)
            self._add(view, jv.id, q)
            if jv.status is JobStatus.CHECKPOINTING:
                self.ckpt.add(jv.id)
            elif jv.status.holds_resources:
                self.running.add(jv.id)
                self.wait_mark[jv.id] = jv.waiting_time

    def _executed(self, view: ClusterView, jid: str) -> int:
        return whole(view.job(jid).executed_time - self.exec0[jid])

    @staticmethod
    def _executed_at(view: ClusterView, jid: str, base: float) -> int:
        return whole(view.job(jid).executed_time - base)

    # ------------------------------------------------------------- pass
    def schedule(self, view: ClusterView) -> Decision:
        now = view.now
        if view is not self._view:
            self._view = view
            self._rebuild(view)
        else:
            evs = view.events
            if evs and all(e.kind is EventKind.TIMER for e in evs) and now != self._jump:
                return NO_DECISION  # a superseded jump: not an event of the artifact
            for e in evs:
                jid = e.job_id
                if e.kind is EventKind.COMPLETION and jid in self.runnable:
                    del self.runnable[jid]
                    for d in (self.g, self.sub, self.e, self.pos, self.rank, self.exec0, self.wait_mark):
                        d.pop(jid, None)
                    self.queues[self.qid.pop(jid)].remove(jid)
                    self.running.discard(jid)
                    if self.gittins and self._file is None and self.history.add(view.job(jid).attained_service):
                        self._table = ArtifactGittins(self.history.samples, self.delta)
                elif e.kind is EventKind.ARRIVAL:
                    self._add(view, jid)
                elif e.kind is EventKind.PREEMPT_DONE:
                    self.ckpt.discard(jid)
        table = self._table
        g_of, e_of, rank = self.g, self.e, self.rank
        demoted = []
        for jid in self.running:  # the artifact's update loop (running jobs; pending ones do not change)
            e = e_of[jid] = self._executed(view, jid)
            q = self.qid[jid]
            if q < self.k - 1 and e * g_of[jid] >= self.limits[q]:
                demoted.append(jid)
            if table is not None:
                rank[jid] = table.rank(e * g_of[jid])
        for jid in sorted(demoted, key=self.pos.__getitem__):  # appended in runnable order
            q = self.qid[jid]
            self.queues[q].remove(jid)
            self.queues[q + 1].append(jid)
            self.qid[jid] = q + 1
            self.demotions += 1
        if self.knob is not None:
            for jid in self.runnable:
                q = self.qid[jid]
                if jid not in self.running and q > 0 and e_of[jid] > 0 and self._promote_due(view, jid, e_of[jid]):
                    self.queues[q].remove(jid)
                    self.queues[0].append(jid)
                    self.qid[jid] = 0
                    self.exec0[jid] = view.job(jid).executed_time
                    self.wait_mark[jid] = None
                    self.promotions += 1
                    e_of[jid] = 0
                    if table is not None:
                        rank[jid] = table.rank(0)
        if table is not None:
            if self._ranked is not table:  # a new table: every job's rank changes
                self._ranked = table
                for jid in self.runnable:
                    rank[jid] = table.rank(e_of[jid] * g_of[jid])
            sub = self.sub
            key = {j: (rank[j], -sub[j]) for j in self.runnable}
            for queue in self.queues:
                queue.sort(key=key.__getitem__, reverse=True)
        # every GPU released and reassigned
        free = view.cluster.total_gpus - sum(g_of[j] for j in self.ckpt)
        chosen: set[str] = set()
        ckpt = self.ckpt
        # tenants' quotas (multi-tenant workloads; the artifact has none): a guaranteed job beyond its
        # tenant's quota is skipped like one that does not fit
        quota = QuotaLedger(view, (view.job(j).job for j in ckpt)) if view.quotas else None
        chosen.update(fill_pool(view, (j for q in self.queues for j in q), g_of, free, ckpt, quota))
        preempt = [j for j in self.running if j not in chosen]
        starts = self._start(view, [j for q in self.queues for j in q if j in chosen and j not in self.running],
                             preempt)
        if view.checkpoint_s > 0:
            self.ckpt.update(preempt)
        self.running = (self.running - set(preempt)) | set(starts)
        for i, queue in enumerate(self.queues):  # running jobs first, then pending, each in order
            self.queues[i] = [j for j in queue if j in self.running] + [j for j in queue if j not in self.running]
        for jid in starts:
            if self.wait_mark[jid] is None:
                self.wait_mark[jid] = view.job(jid).waiting_time
        self._jump = self._next_jump(view)
        timers = (Timer(float(self._jump), "dlas-jump"),) if self._jump < math.inf else ()
        return Decision(start=starts, preempt=tuple(sorted(preempt, key=self.pos.__getitem__)), timers=timers)

    def _promote_due(self, view: ClusterView, jid: str, e: int) -> bool:
        mark = self.wait_mark[jid]
        lp = whole(view.job(jid).waiting_time - mark) if mark is not None else 0
        return lp >= int(e * self.knob)

    def _start(self, view: ClusterView, jids: list[str], preempt: list[str]) -> dict[str, JobAllocation]:
        ps = self.starter.pass_state(view, preempt)
        hold = QuotaLedger.after_preemption(view, preempt) if view.quotas else None
        out: dict[str, JobAllocation] = {}
        for jid in jids:
            job = view.job(jid).job
            if hold is not None and not hold.admits(job):
                continue  # its tenant's quota is still held by a checkpointing job: it stays pending
            ja = self.starter.start(view, ps, job, consolidate=self.traits.skew(job) > self.packlimit)
            if ja is not None:  # else (realistic semantics only) it stays pending
                out[jid] = ja
                if hold is not None:
                    hold.take(job)
        return out

    def _next_jump(self, view: ClusterView) -> float:
        """The artifact's next queue jump: ``(limit - executed) // GPUs + now`` over running jobs (its
        rounding quirk), and promotion times of pending ones when the knob is on."""
        now = whole(view.now)
        best = math.inf
        for jid in self.running:
            q = self.qid[jid]
            if q < self.k - 1:
                t = (self.limits[q] - self.e[jid]) // self.g[jid] + now
                if now < t < best:
                    best = t
        if self.knob is not None:
            for jid in self.runnable:
                if jid in self.running or self.qid[jid] == 0:
                    continue
                e = self.e[jid]
                mark = self.wait_mark[jid]
                if e > 0 and mark is not None:
                    diff = int(e * self.knob - whole(view.job(jid).waiting_time - mark))
                    if diff > 0 and now + diff < best:
                        best = now + diff
        return best


__all__ = ["ArtifactTiresias", "whole"]
