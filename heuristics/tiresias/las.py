"""Discretized 2D-LAS and 2D-Gittins (Tiresias §3.2, Algorithm 1) as an online policy.

* **Attained service** ``a = W_J x t_J`` (GPUs x running seconds, the view's ``attained_service``),
  counted from the job's last promotion.
* **K queues** with upper thresholds ``Q_1^hi < ... < Q_{K-1}^hi``; a new job enters Q1; a running job
  is **demoted** at the exact instant ``a`` reaches its queue's threshold: the policy asks the
  simulator for a timer at ``now + (Q_q^hi - a) / W_J`` (never polling; a restoring job's deadline is
  re-computed when it runs again).
* **Order inside a queue**: 2D-LAS serves jobs FIFO by the time they first ran in the queue (then the
  never-run ones by entry), so skipped jobs do not cause extra preemptions (§3.2); 2D-Gittins serves
  waiting jobs by their Gittins index (:mod:`.gittins`, quantum = what is left of the queue's
  interval), the last queue FIFO as 2D-LAS (Δ = ∞, §3.2). Before a distribution exists (no file, fewer
  than ``min_history`` finished jobs) 2D-Gittins orders as 2D-LAS.
* **Pass** (after every batch of events that changes something): queues from Q1 down, waiting jobs in
  order; a job that fits in the unclaimed GPUs is claimed; one that would fit if lower queues gave
  theirs back preempts their jobs, lowest priority first (reserved claims first, then running jobs;
  victims not needed after all are kept); jobs that do not fit are skipped (all-or-nothing gangs, no
  head-of-line blocking). Jobs of the same queue never preempt each other. Claimed jobs are placed by
  :mod:`.placement` (skewed ones consolidated, waiting at most ``pack_wait_s``); a claimed job that
  cannot be placed yet (its GPUs are still checkpointing, or fragmented) keeps its claim.
* **PROMOTEKNOB**: a waiting job of a lower queue whose waiting time since it last ran after a
  promotion reaches ``knob x`` its executed time since that promotion goes back to Q1, both clocks
  reset (§3.2), at the exact instant (a timer), never polling.

The pass itself is in :mod:`.passes`. Cost: a pass costs O((started + preempted) x log(sizes) + K x sizes), independent of how many jobs
wait or run (:mod:`.queues`); a batch that changes nothing costs O(events).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from schedlab.heuristics.tiresias.gittins import History, ServiceDistribution, load_samples
from schedlab.heuristics.tiresias.params import DEFAULT_PACKLIMIT, queue_limits
from schedlab.heuristics.tiresias.passes import PassMixin
from schedlab.heuristics.tiresias.placement import JobTraits, PacklimitLearner, Starter
from schedlab.heuristics.tiresias.queues import CKPT, MLFQ, RESV, RUN, WAIT, QJob, drop_stale
from schedlab.scheduling.policy import (
    NO_DECISION,
    ClusterView,
    Decision,
    EventKind,
    JobStatus,
    JobView,
    Timer,
    start_decision,
)
from schedlab.scheduling.snapshot import PolicyBase

EPS_T = 1e-9   # a deadline at ``now`` (the timer's own time) is due
EPS_A = 1e-6   # GPU-seconds of float error tolerated at a threshold


class TiresiasPolicy(PassMixin, PolicyBase):
    """2D-LAS (``gittins=False``) or 2D-Gittins; parameters in :mod:`.params`."""

    oracle = False

    def __init__(self, *, seed: int = 0, queues: int = 2, threshold: float = 3600.0,
                 thresholds: tuple[float, ...] | None = None, knob: float | None = None,
                 packlimit: float = DEFAULT_PACKLIMIT, learn_packlimit: bool = False, pack_wait_s: float = 0.0,
                 gittins: bool = False, distribution: str | None = None, min_history: int = 20,
                 preempt_margin: float = 0.0, name: str | None = None) -> None:
        super().__init__(seed=seed)
        self.name = name or ("2d-gittins" if gittins else "2d-las")
        self.k = queues
        self.limits = queue_limits(queues, threshold, thresholds)
        self.knob = knob
        self.gittins = gittins
        self.pack_wait_s = pack_wait_s
        self.learner = PacklimitLearner(packlimit) if learn_packlimit else None
        self._packlimit = packlimit
        self.min_history = min_history
        self.margin = preempt_margin
        self._file_dist = ServiceDistribution(load_samples(distribution)) if distribution else None
        self.traits = JobTraits()
        self.starter = Starter(self.traits, cursors=True)
        self._view: ClusterView | None = None
        self._reset()

    @property
    def packlimit(self) -> float:
        return self.learner.value if self.learner is not None else self._packlimit

    def _reset(self) -> None:
        self.st = MLFQ(self.k, arrays=self.gittins)  # (the numpy columns serve the Gittins index only)
        self.history = History(self.min_history)
        self._dem: list[tuple[float, int, str]] = []
        self._pro: list[tuple[float, int, str]] = []
        self._pack: list[tuple[float, int, str]] = []
        self._asked: set[float] = set()
        self._stuck: set[str] = set()  # claims that could not be placed since GPUs were last given back
        self._outside = 0  # GPUs held outside the view (a snapshot's ``reserved``): never free to claim
        self.demotions = 0
        self.promotions = 0

    @property
    def dist(self) -> ServiceDistribution | None:
        return self._file_dist if self._file_dist is not None else self.history.distribution

    # ------------------------------------------------------------- keys
    def _k0(self, view: ClusterView, j: QJob) -> float:
        if not self.gittins or j.q >= self.k - 1:
            return 0.0
        d = self.dist
        if d is None:
            return 0.0
        return -float(d.index(view.job(j.id).attained_service - j.svc0, self.limits[j.q]))

    def _to_waiting(self, view: ClusterView, j: QJob) -> None:
        j.k0 = self._k0(view, j)
        self.st.add_waiting(j)
        if self.knob is not None and j.q > 0:
            self._push_promotion(view, j)

    def _rekey(self, view: ClusterView) -> None:
        """The distribution changed: every waiting job of a Gittins queue gets its new index, computed
        for the whole queue at once (numpy: the same floats as :meth:`_k0`'s scalar path, see
        ``ServiceDistribution.index``); each bucket is sorted once instead of re-inserted job by job."""
        st = self.st
        d = self.dist
        for q in range(self.k - 1):
            buckets = st.wait[q]
            if not buckets:
                continue
            jobs = [st.jobs[key[3]] for lst in buckets.values() for key in lst]
            if d is None:
                ks = [0.0] * len(jobs)
            else:
                a = np.array([view.job(j.id).attained_service - j.svc0 for j in jobs], dtype=float)
                ks = (-np.atleast_1d(d.index(a, self.limits[q]))).tolist()
            new: dict[int, list[tuple]] = {}
            for j, k0 in zip(jobs, ks, strict=True):
                j.k0 = k0
                new.setdefault(j.g, []).append((k0, j.band, j.stamp, j.id))
            for lst in new.values():
                lst.sort()
            st.wait[q] = new

    # -------------------------------------------------------- deadlines
    def _push_demotion(self, view: ClusterView, j: QJob) -> None:
        if j.q < self.k - 1:
            a = view.job(j.id).attained_service - j.svc0
            heapq.heappush(self._dem, (view.now + max(self.limits[j.q] - a, 0.0) / j.g, j.ver, j.id))

    def _push_promotion(self, view: ClusterView, j: QJob) -> None:
        jv = view.job(j.id)
        t_j = jv.executed_time - j.exec0
        waited = jv.waiting_time - (j.wait0 if j.wait0 is not None else jv.waiting_time)
        heapq.heappush(self._pro, (view.now + max(self.knob * t_j - waited, 0.0), j.ver, j.id))

    def _due(self, heap: list, now: float, state: int) -> list[QJob]:
        out: dict[str, QJob] = {}  # a job may have several entries for the same version
        while heap and heap[0][0] <= now + EPS_T:
            _, ver, jid = heapq.heappop(heap)
            j = self.st.jobs.get(jid)
            if j is not None and j.ver == ver and j.state == state:
                out[jid] = j
        return list(out.values())

    def _next_deadline(self) -> float:
        best = math.inf
        jobs = self.st.jobs
        pop = heapq.heappop
        for heap, state in ((self._dem, RUN), (self._pro, WAIT), (self._pack, RESV)):
            stale = 0
            while heap:
                t, ver, jid = heap[0]
                j = jobs.get(jid)
                if j is not None and j.ver == ver and j.state == state:
                    if t < best:
                        best = t
                    break
                pop(heap)
                stale += 1
                if stale >= 64 and stale * 4 >= len(heap):  # a long stale run: keep the valid entries in one filter
                    drop_stale(heap, jobs, state)
                    stale = 0
        return best

    # ----------------------------------------------------------- events
    def _arrive(self, view: ClusterView, jid: str, seq: int) -> QJob:
        j = QJob(jid, view.job(jid).job, seq)
        j.stamp = self.st.next_stamp()
        self.st.jobs[jid] = j
        self._to_waiting(view, j)
        return j

    def _rebuild(self, view: ClusterView) -> None:
        """State from the view alone (first pass, snapshot form): each job's queue from its attained
        service, running jobs first by start time, then waiting ones that ran, then the rest in queue order."""
        self._reset()
        st = self.st
        rows = []
        for n, jv in enumerate(view.running()):
            rows.append((0, jv.first_start if jv.first_start is not None else view.now, n, jv))
        for n, jv in enumerate(view.queue()):
            ran = jv.executed_time > 0
            rows.append((1 if ran else 2, jv.first_start if ran and jv.first_start is not None else 0.0, n, jv))
        for seq, (kind, _, _, jv) in enumerate(sorted(rows, key=lambda r: r[:3])):
            j = QJob(jv.id, jv.job, seq)
            a = jv.attained_service
            j.q = next((q for q, lim in enumerate(self.limits) if a < lim - EPS_A), self.k - 1)
            j.stamp = st.next_stamp()
            j.band = 0 if kind < 2 else 1
            st.jobs[jv.id] = j
            if kind == 0:
                j.wait0 = jv.waiting_time
                if jv.status is JobStatus.CHECKPOINTING:
                    j.state = CKPT
                    st.ckpt_gpus += j.g
                else:
                    self._set_running(view, j)
                    self._push_demotion(view, j)
            else:
                j.wait0 = jv.waiting_time if kind == 1 else None
                self._to_waiting(view, j)
        # capacity the view's jobs do not hold and that is not free (a snapshot instance's ``reserved``: the
        # jobs a converted state keeps running, work outside the decision) is never claimable
        free_now = sum(r.gpus for r in view.free_map.values())
        self._outside = max(0, view.cluster.total_gpus - free_now - sum(st.held) - st.ckpt_gpus)

    def _complete(self, view: ClusterView, jid: str) -> bool:
        j = self.st.jobs.pop(jid, None)
        if j is None:
            return False
        self.st.detach(j)
        if self._file_dist is None and self.gittins and self.history.add(view.job(jid).attained_service):
            self._rekey(view)
        return True

    # ------------------------------------------------------------- pass
    def schedule(self, view: ClusterView) -> Decision:
        now = view.now
        st = self.st
        dirty = False
        if view is not self._view:
            self._view = view
            self._rebuild(view)
            st = self.st
            dirty = True
        else:
            back: list[QJob] = []  # checkpoints ended: back to waiting in bulk (``_to_waiting_all``)
            for ev in view.events:
                kind, jid = ev.kind, ev.job_id
                if kind is EventKind.ARRIVAL:
                    self._arrive(view, jid, len(st.jobs))
                    dirty = True
                elif kind is EventKind.COMPLETION:
                    if back:  # (before a completion may re-key the waiting jobs)
                        self._to_waiting_all(view, back)
                        back = []
                    dirty |= self._complete(view, jid)
                    self._stuck.clear()
                elif kind is EventKind.PREEMPT_DONE:
                    j = st.jobs.get(jid)
                    self._stuck.clear()
                    if j is not None and j.state == CKPT:
                        st.ckpt_gpus -= j.g
                        j.state = WAIT  # (its keys join the waiting lists below)
                        back.append(j)
                        dirty = True
                elif kind is EventKind.RECONF_DONE:
                    j = st.jobs.get(jid)
                    if j is not None and j.state == RUN:
                        j.a_ref, j.t_ref = view.job(jid).attained_service, now  # its restore is over
                        if st.arrays:
                            st.run_cols[j.q].refresh(j)
                        self._push_demotion(view, j)
            if back:
                self._to_waiting_all(view, back)
        for j in (self._due(self._dem, now, RUN) if self._dem and self._dem[0][0] <= now + EPS_T else ()):
            jv = view.job(j.id)
            a = jv.attained_service - j.svc0
            if a >= self.limits[j.q] - EPS_A:
                st.remove_running(j)
                while j.q < self.k - 1 and a >= self.limits[j.q] - EPS_A:
                    j.q += 1
                j.band, j.stamp, j.ver = 0, st.next_stamp(), j.ver + 1
                self._set_running(view, j)
                self._push_demotion(view, j)
                self.demotions += 1
                dirty = True
            elif jv.status is JobStatus.RUNNING:
                self._push_demotion(view, j)
        if self.knob is not None and self._pro and self._pro[0][0] <= now + EPS_T:
            for j in self._due(self._pro, now, WAIT):
                jv = view.job(j.id)
                t_j = jv.executed_time - j.exec0
                waited = jv.waiting_time - (j.wait0 if j.wait0 is not None else jv.waiting_time)
                if waited >= self.knob * t_j - EPS_A:
                    st.remove_waiting(j)
                    j.q, j.band, j.stamp, j.ver = 0, 1, st.next_stamp(), j.ver + 1
                    j.svc0, j.exec0, j.wait0 = jv.attained_service, jv.executed_time, None
                    self._to_waiting(view, j)
                    self.promotions += 1
                    dirty = True
                else:
                    self._push_promotion(view, j)
        for j in (self._due(self._pack, now, RESV) if self._pack and self._pack[0][0] <= now + EPS_T else ()):
            j.pack_expired = True
            self._stuck.discard(j.id)
            dirty = True
        d = self._pass(view) if dirty and (self.st.n_wait or self.st.resv) else None
        timers = self._timers(now)
        if d is None:
            return Decision(timers=timers) if timers else NO_DECISION
        start, preempt = d  # (``start``: the pass's new dict, held by nobody else; ``preempt`` a tuple)
        return start_decision(start, preempt=preempt, timers=timers)

    def _timers(self, now: float) -> tuple[Timer, ...]:
        if len(self._asked) > 64:  # times already past are never asked again (t > now below): pruned now and then
            self._asked = {t for t in self._asked if t > now}
        t = self._next_deadline()
        if now + EPS_T < t < math.inf and t not in self._asked:
            self._asked.add(t)
            return (Timer(t, "tiresias"),)
        return ()

    def _set_running(self, view: ClusterView, j: QJob, jv: JobView | None = None) -> None:
        """``j`` runs from now; a preempted job restarting under costly preemption restores first (no
        service until its ``RECONF_DONE`` event refreshes the reference point)."""
        if jv is None:
            jv = view.job(j.id)
        restoring = jv.status is JobStatus.QUEUED and jv.preemptions > 0 and view.checkpoint_s > 0
        j.a_ref, j.t_ref = jv.attained_service, math.inf if restoring else view.now
        self.st.add_running(j)


__all__ = ["TiresiasPolicy"]
