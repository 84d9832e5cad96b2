"""Rubick's scheduling policy (Algorithm 1 of the paper) and its break-down variants E / R / N.

Each decision point (every submission and completion, plus the timers below) runs ``Schedule``:

1. *privileged* jobs first: queued guaranteed jobs whose quota usage fits their tenant's remaining
   quota (usage = minRes, §5.2: the workload's ``min_resources``, else the searched minRes, which
   :meth:`RubickPolicy.prepare_jobs` writes into the job at load so that the verifier charges the
   same; a job whose minRes exceeds its quota is an error at load), in queue order, each through
   ``ScheduleJob``;
2. then ``SortBySlope(best-effort queue + running jobs)``: GPU gain, then CPU gain, highest first
   (best-effort jobs queued longer than ``starvation_s`` go first: the starvation guard), each
   through ``ScheduleJob``.

``ScheduleJob(j)`` visits the machines (those ``j`` holds, then best fit for the rest of its request,
then the most free): it takes free GPUs while they raise ``j``'s curve (or ``j`` is below its
minRes), then repeatedly moves one unit from the running job with the lowest loss on that machine
that is above its own minRes, while that loss is lower than ``j``'s gain or ``j`` is below its minRes;
then the same for CPUs. If ``j`` reaches its minRes, ``GetBestPlan`` picks the plan for the placement
found (trimming GPUs a plan cannot use), ``AllocMem`` books the plan's host memory, and every job
that lost units is re-planned; a best-effort job left with nothing runnable is preempted back to the
queue. A guaranteed job only ever runs at >= its SLO throughput, and is never shrunk below it.
Otherwise every move of this ``ScheduleJob`` is undone.

A running job is changed (shrunk, grown or re-planned) only if ``(T - N delta) / T > threshold``
(``T`` its productive seconds so far, ``N`` its restarts so far — reconfigurations plus preemptions,
as the artifact counts them (a preemption is a shrink to zero); ``penalty_counts="reconfigurations"``
counts reconfigurations only, §5.2's words — a job never restarted passes), and grown or re-planned
only if that makes it faster. The simulator charges ``delta`` (78 s by default) for each reconfiguration.

Resources of a preempted job are free only once its checkpoint is saved (the simulator's
``PREEMPT_DONE`` event): a job that needs them waits for that decision point (``deferred``); a timer
``retry_s`` later covers cost models with free checkpoints.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Literal

from schedlab.heuristics.fifo import QuotaLedger
from schedlab.heuristics.rubick.claims import Claims, keep_claims, remember_claims
from schedlab.heuristics.rubick.commit import defer_infeasible
from schedlab.heuristics.rubick.curves import CurveBook, JobModel, Mode
from schedlab.heuristics.rubick.queued import QueuedPass
from schedlab.heuristics.rubick.resident import Residents
from schedlab.heuristics.rubick.schedule_job import ScheduleJobSearch
from schedlab.heuristics.rubick.state import GPU, Entry, PassState
from schedlab.heuristics.rubick.sync import ResidentSync
from schedlab.heuristics.rubick.victims import VictimSearch
from schedlab.perfmodel.curves import MIN_CPUS_PER_GPU
from schedlab.perfmodel.params import DEFAULT_CALIBRATION
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import ClusterView, Decision, JobStatus, JobView, Timer
from schedlab.scheduling.registry import PolicyParams, ours, paper
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.snapshot import PolicyBase
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError

NAMES = {Mode.FULL: "rubick", Mode.PLANS: "rubick-e", Mode.RESOURCES: "rubick-r", Mode.NONE: "rubick-n"}


class RubickParams(PolicyParams):
    mode: Literal["full", "plans", "resources", "none"] = paper(
        "full", description="what may change: plans and resources (Rubick), plans only (Rubick-E), resources "
                            "with the plan family fixed and DP scaled (Rubick-R), neither (Rubick-N)")
    threshold: float = paper(0.97, gt=0.0, lt=1.0, description="reconfigure a running job only if "
                             "(T - N*delta)/T exceeds this (T: its training seconds, N: see penalty_counts)")
    delta_s: float = paper(78.0, ge=0.0, description="checkpoint-resume cost delta of one reconfiguration "
                           "in the penalty rule, seconds (the paper's measured average)")
    starvation_s: float | None = paper(4 * 3600.0, gt=0.0, description="best-effort jobs queued this long are "
                                       "scheduled first and may shrink others to run (the paper's starvation "
                                       "guard; its threshold is not given: 4 h is ours; None: no guard)")
    max_scale: float | None = ours(None, ge=1.0, description="a job holds at most this multiple of its "
                                   "requested GPUs (None: as many as raise its curve, the paper)")
    slo_fallback: bool = ours(False, description="a guaranteed job with no plan at its request runs without "
                              "an SLO (counted) instead of stopping the run with an error")
    penalty_counts: Literal["restarts", "reconfigurations"] = ours(
        "restarts", neutral="the artifact's num_restarts; Algorithm 1 preempts a job by shrinking it to zero, "
                            "a reconfiguration",
        description="N in the penalty rule: the job's restarts, reconfigurations plus preemptions (the "
                    "artifact's reading, default), or its reconfigurations only (§5.2's words; with it two "
                    "large best-effort jobs can preempt each other without end)")
    retry_s: float = ours(1.0, gt=0.0, neutral="a wake-up for cost models with free checkpoints; a decision "
                                               "that waits on a checkpoint is held as a claim meanwhile",
                          description="after preempting, ask for a decision point this much later (for cost "
                                      "models whose checkpoints are free, so no PREEMPT_DONE event comes)")


class RubickPolicy(QueuedPass, ScheduleJobSearch, ResidentSync, VictimSearch, PolicyBase):
    """Rubick (``mode="full"``) and Rubick-E/R/N. ``counters`` counts the fallbacks it applied."""

    oracle = False

    def __init__(self, *, mode: str = "full", threshold: float = 0.97, delta_s: float = 78.0,
                 starvation_s: float | None = 4 * 3600.0, max_scale: float | None = None,
                 slo_fallback: bool = False, retry_s: float = 1.0, penalty_counts: str = "restarts",
                 seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.mode = Mode(mode)
        self.name = NAMES[self.mode]
        self.threshold = threshold
        self.delta_s = delta_s
        self.starvation_s = starvation_s
        self.max_scale = max_scale
        self.slo_fallback = slo_fallback
        self.retry_s = retry_s
        self.count_preemptions = penalty_counts == "restarts"
        self.counters: Counter[str] = Counter()
        self._book: CurveBook | None = None
        self._given = False  # the book came from use_curves (kept whatever the calibration)
        self._models: dict[str, tuple[Job, JobModel, tuple[int, int], bool]] = {}
        # a running job's entry as its allocation gives it, kept while the allocation object is the same:
        # (allocation, model, GPUs / CPUs / memory per machine, totals, normalised throughput, whether a
        # pass may move or re-plan it)
        self._placed: dict[str, tuple[JobAllocation, JobModel, dict[str, int], dict[str, int], dict[str, float],
                                      int, int, float, bool]] = {}
        self._index: tuple[Cluster, dict[str, int]] | None = None
        self._starve_timer = -math.inf
        # deferred claims (Algorithm 1's decision kept across passes): job id -> (the job, the allocation
        # decided for it, the preempted jobs whose checkpoints it waits for)
        self._claims: Claims = {}
        self._residents = Residents()
        # queued jobs' failure-memo keys (ScheduleJobSearch._fail_key): job id -> (model, floor, slo, key),
        # and signature -> its number
        self._sigs: dict[str, tuple] = {}
        self._sig_ids: dict[tuple, int] = {}
        # queued jobs' sort keys and starving floors (QueuedPass): job id -> (model, keys, floor)
        self._kinds: dict[str, tuple] = {}

    # ------------------------------------------------------------ job facts
    def use_curves(self, book: CurveBook) -> None:
        """Answer from ``book`` (a :class:`CurveBook` or a subclass: hand-written curves in tests, a
        refitted perf model) on its cluster instead of building one from the perf model's defaults."""
        self._book = book
        self._given = True
        self._models = {}
        self._placed = {}

    def book(self, cluster: Cluster, calibration: str = DEFAULT_CALIBRATION) -> CurveBook:
        """The curve book of ``cluster`` under the perf model's ``calibration`` (the view's); a book given
        by :meth:`use_curves` is kept whatever its calibration."""
        if self._book is None or self._book.cluster is not cluster or (
                not self._given and self._book.pm.calibration != calibration):
            self._book = CurveBook(cluster, calibration)
            self._models = {}
            self._placed = {}
        return self._book

    def job_model(self, job: Job, view: ClusterView) -> tuple[JobModel, tuple[int, int], bool]:
        """``(JobModel, floor, has_slo)`` of ``job``, validated once (bad input named here)."""
        hit = self._models.get(job.id)
        if hit is not None and hit[0] is job:
            return hit[1], hit[2], hit[3]
        jm, floor, slo = self._resolve(job, view.cluster, view.quotas, view.calibration)
        if len(self._models) > 4 * (view.queue_length + view.running_count) + 1024:
            self._models = {}
        self._models[job.id] = (job, jm, floor, slo)
        return jm, floor, slo

    def _resolve(self, job: Job, cluster: Cluster, quotas: Mapping[str, Resources],
                 calibration: str = DEFAULT_CALIBRATION) -> tuple[JobModel, tuple[int, int], bool]:
        book = self.book(cluster, calibration)
        src = f"<job {job.id!r}>"
        if job.guaranteed and job.tenant not in quotas:
            raise SpecError(f"job {job.id!r} is guaranteed but its tenant {job.tenant!r} has no quota "
                            f"(quotas: {', '.join(sorted(quotas)) or 'none'})", source=src, field="tenant")
        jm = book.job_model(job, self.mode, max_scale=self.max_scale)
        if not jm.known:
            self.counters["unknown-model-rigid"] += 1
        slo = job.guaranteed
        if jm.ref <= 0:
            req = job.requested
            if job.guaranteed and not self.slo_fallback:
                raise SpecError(f"guaranteed job {job.id!r}: no execution plan of model {job.model!r} runs on its "
                                f"requested {req.gpus} GPUs / {req.cpus} CPUs, so its SLO (the throughput of its "
                                "request) is undefined", source=src, field="requested")
            if not jm.elastic:
                raise SpecError(f"job {job.id!r}: no execution plan of model {job.model!r} runs on its requested "
                                f"{req.gpus} GPUs and {self.name} does not change its resources", source=src,
                                field="requested")
            positive = jm.gpu.env[jm.gpu.env > 0]
            jm.ref = float(positive[0]) if positive.size else 1.0
            slo = False
            self.counters["no-plan-at-request" + ("-slo-dropped" if job.guaranteed else "")] += 1
        floor = (0, 0)
        if job.guaranteed:
            if slo:
                g, c = book.min_resources(jm)
            else:
                g = (jm.valid_amounts(jm.cap) or [job.requested.gpus])[-1]
                c = g * MIN_CPUS_PER_GPU
            mr = job.min_resources
            if mr is not None:
                g, c = max(g, mr.gpus), max(c, mr.cpus)
            floor = (g, c if jm.elastic else job.requested.cpus)
        return jm, floor, slo

    def quota_usage(self, job: Job, view: ClusterView) -> Resources:
        """What ``job`` charges its tenant's quota: minRes (§5.2), the workload's or, when it gives
        none, the searched one (the policy's floor) — the ledger and the guarantee agree."""
        if job.min_resources is not None:
            return job.min_resources
        g, c = self.job_model(job, view)[1]
        req = job.requested
        return Resources(min(g, req.gpus), min(c, req.cpus), 0.0)

    def prepare_jobs(self, jobs: Iterable[Job], cluster: Cluster, quotas: Mapping[str, Resources], *,
                     calibration: str = DEFAULT_CALIBRATION) -> tuple[Job, ...]:
        """Load-time fill-in and check (the simulator calls it once, before the first event): a
        guaranteed job without ``min_resources`` gets its searched minRes (never above the request;
        counted as ``minres-searched``), so the verifier's quota ledger charges what the policy does;
        a guaranteed job whose minRes exceeds its tenant's quota could never be guaranteed and is an
        error naming it (never an endless wait)."""
        out = []
        for job in jobs:
            if job.guaranteed:
                jm, (g, c), _ = self._resolve(job, cluster, quotas, calibration)
                if job.min_resources is None:
                    req = job.requested
                    job = replace(job, min_resources=Resources(min(g, req.gpus), min(c, req.cpus), 0.0))
                    self.counters["minres-searched"] += 1
                q, u = quotas[job.tenant], job.min_resources
                over = [(n, a, b) for n, a, b in (("GPUs", u.gpus, q.gpus), ("CPUs", u.cpus, q.cpus),
                                                   ("GB of memory", u.mem_gb, q.mem_gb)) if b and a > b + 1e-9]
                if over:
                    n, a, b = over[0]
                    raise SpecError(f"guaranteed job {job.id!r} needs {a:g} {n} (its minRes, the quota usage) "
                                    f"but tenant {job.tenant!r} has a quota of {b:g}: it could never run",
                                    source=f"<job {job.id!r}>", field="min_resources")
            out.append(job)
        return tuple(out)

    def reconfigurable(self, jv: JobView) -> bool:
        """The penalty rule: ``(T - N delta) / T > threshold``, ``N`` the job's restarts (reconfigurations
        plus preemptions; only reconfigurations with ``penalty_counts="reconfigurations"``); a job with
        ``N = 0`` passes."""
        n = jv.reconfigurations + (jv.preemptions if self.count_preemptions else 0)
        if n == 0:
            return True
        t = jv.executed_time
        return t > 0 and (t - n * self.delta_s) / t > self.threshold

    # ------------------------------------------------------------------ pass
    def schedule(self, view: ClusterView) -> Decision:
        if view.queue_length == 0 and view.running_count == 0:
            self._residents.synced = None
            return Decision()
        idx = self._index
        if idx is None or idx[0] is not view.cluster:
            idx = self._index = (view.cluster, {m: i for i, m in enumerate(view.cluster.machines)})
        res = self._residents if self.incremental else None
        if len(self._sigs) > 16384:  # (the failure-memo keys: only between passes)
            self._sigs.clear()
            self._sig_ids.clear()
        scan = self._scan_queue(view)  # (every pass: the job models are asked in the same order)
        synced = self._sync_residents(view, res) if scan is not None and res is not None else None
        if synced is None:  # the pass built from every job (a queued job holds resources, or a running one none)
            return self._plain_pass(view, idx[1])
        checkpointing, movable = synced
        st = PassState(view, idx[1], self._build, res)
        st.entries.queued = scan.records
        st.entries.make_queued = self._queued_entry
        for jid, record in res.movers.items():
            e = st.entries[jid] = self._build(record)
            if not e.locked and not e.frozen:
                movable.append(e)
        if self.check_residents:
            self._check_residents(st, view, movable, checkpointing)
        keep_claims(self._claims, st, self.counters)
        self._queued_pass(st, view, scan, movable, _Ledger(view, self) if view.quotas else None)
        d = self._decision(st, view, checkpointing, scan.next_starving)
        res.synced = (view, self._models, tuple(d.start), d.preempt)
        return d

    def _plain_pass(self, view: ClusterView, index: dict[str, int]) -> Decision:
        """The pass built from every job: an entry for every queued and running job (a queued job holds
        resources, a running one none, or ``incremental`` is off)."""
        self._residents = Residents()
        st = PassState(view, index, self._build)
        queued, movable, checkpointing = self._rebuild(st, view)
        keep_claims(self._claims, st, self.counters)
        ledger = _Ledger(view, self) if view.quotas else None
        if ledger is not None:
            for e in queued:
                if e.frozen and e.guaranteed:
                    ledger.take(e.job)  # a claim holds its quota while it waits
        for e in queued:  # 1. privileged: guaranteed jobs within their tenant's remaining quota
            if (e.guaranteed and not e.frozen and ledger is not None and ledger.fits(e.job)
                    and self.schedule_job(st, e)):
                ledger.charge(e.job)
        rest = [e for e in queued if not e.guaranteed and not e.frozen]
        rest += [e for e in movable if not e.frozen]  # (keep_claims may have frozen one)
        starving = sorted((e for e in rest if e.starving), key=lambda e: (e.jv.queued_since, e.seq))
        others = sorted((e for e in rest if not e.starving),
                        key=lambda e: (-e.jm.gain_g(e.g), -e.jm.gain_c(e.g, e.c), e.seq))
        for e in starving + others:  # 2. SortBySlope(best-effort + running)
            self.schedule_job(st, e)
        return self._decision(st, view, checkpointing)

    def _entry(self, entries: dict[str, Entry], jv: JobView, view: ClusterView, seq: int) -> Entry:
        """A queued job's entry (a preempted job keeps a stale allocation: it holds nothing)."""
        job = jv.job
        jm, floor, slo = self.job_model(job, view)
        e = Entry(jv.id, jv, jm, seq, None, ({}, {}), [0, 0], {}, None, 0.0, floor, False, False, slo,
                  job.guaranteed)
        entries[e.jid] = e
        if (self.starvation_s is not None and not e.guaranteed
                and view.now - jv.queued_since >= self.starvation_s):
            e.starving = True
            amounts = jm.valid_amounts(jm.cap)
            g = amounts[-1] if amounts else job.requested.gpus
            e.floor = (g, g * MIN_CPUS_PER_GPU if jm.elastic else 0)
        return e

    def _running_entry(self, st: PassState, jv: JobView, view: ClusterView, seq: int, *, lazy: bool = False) -> bool:
        """Add a job holding resources to the pass (``lazy``: its entry is built when first read); True if a
        pass may move or re-plan it at all (its entry is then built now)."""
        job = jv.job
        jid = job.id
        known = self._models.get(jid)  # (job_model's cache hit, inline: this runs per running job and pass)
        if known is not None and known[0] is job:
            _, jm, floor, slo = known
        else:
            jm, floor, slo = self.job_model(job, view)
        hit = self._template(jid, jm, jv.allocation)
        moves = hit[8]
        if lazy and not moves:
            # _min_loss reads (loss, jid, whether it may lose a GPU at all, view) while it is not built
            g = hit[5]
            st.add_lazy(jid, hit[4], (hit[9], jid, g > 0 and g - jm.granule >= floor[GPU], jv, seq, floor, slo, hit))
        else:
            st.add_placed(self._build((hit[9], jid, False, jv, seq, floor, slo, hit)), hit[4])
        return moves

    def _template(self, jid: str, jm: JobModel, orig: JobAllocation) -> tuple:
        """A running job's template (allocation, model, GPUs / CPUs / memory per machine, totals, normalised
        throughput, whether a pass may move or re-plan it, GPU loss), kept while the allocation is the same."""
        hit = self._placed.get(jid)
        if hit is None or hit[0] is not orig or hit[1] is not jm:
            ug: dict[str, int] = {}
            uc: dict[str, int] = {}
            mem: dict[str, float] = {}
            for m, r in orig.placement.items():
                if r.gpus:
                    ug[m] = r.gpus
                if r.cpus:
                    uc[m] = r.cpus
                mem[m] = r.mem_gb
            g, c = sum(ug.values()), sum(uc.values())
            tput = self._throughput(jm, orig.plan, ug, c)
            hit = self._placed[jid] = (orig, jm, ug, uc, mem, g, c, tput, jm.elastic or jm.mode.replans,
                                       jm.loss_g(g) if g else math.inf)
        return hit

    def _build(self, record: tuple) -> Entry:
        """The entry of a job holding resources, from its record (:meth:`_running_entry`)."""
        _, jid, _, jv, seq, floor, slo, hit = record
        orig, jm, ug, uc, mem, g, c, tput = hit[:8]
        return Entry(jid, jv, jm, seq, orig, (dict(ug), dict(uc)), [g, c], dict(mem), orig.plan, tput, floor,
                     not self.reconfigurable(jv), jv.status is not JobStatus.RUNNING, slo, jm.job.guaranteed)

    def _throughput(self, jm: JobModel, plan, units: dict[str, int], cpus: int) -> float:
        """Normalised throughput of a job running ``plan`` on ``units`` (its GPUs per machine) with ``cpus``."""
        if not jm.known or jm.book is None:
            return 1.0
        return jm.book.throughput(jm.job, plan, {m: k for m, k in units.items() if k > 0}, cpus) / jm.ref

    # --------------------------------------------------------------- decision
    def _decision(self, st: PassState, view: ClusterView, checkpointing: list[str],
                  next_starving: float | None | bool = False) -> Decision:
        """The pass's decision; ``next_starving``: the next starvation time after now when the queue scan
        gave it (``False``: read the queue for it)."""
        start = {}
        preempt = []
        for e in st.touched_entries():  # (only an entry whose attributes were set can be changed or preempted)
            if e.preempted:
                if e.running:
                    preempt.append(e.jid)
                continue
            if not e.changed or e.deferred or e.g == 0:
                continue
            ja = st.allocation(e)
            if e.orig is None or ja != e.orig:
                start[e.jid] = ja
        defer_infeasible(st, view, start)
        remember_claims(self._claims, st, preempt, checkpointing)
        timers = []
        if preempt:
            timers.append(Timer(view.now + self.retry_s, "rubick-retry"))
        if self.starvation_s is not None:
            s, now = self.starvation_s, view.now
            nxt = next_starving if next_starving is not False else min(
                (t for jv in view.queue() if (t := jv.queued_since + s) > now and not jv.job.guaranteed),
                default=None)
            if nxt is not None and (nxt < self._starve_timer or self._starve_timer <= view.now):
                self._starve_timer = nxt
                timers.append(Timer(nxt, "rubick-starvation"))
        return Decision(start=start, preempt=tuple(preempt), timers=tuple(timers))

class _Ledger(QuotaLedger):
    """The quota ledger charging Rubick's quota usage (:meth:`RubickPolicy.quota_usage`)."""

    __slots__ = ("policy", "view")

    def __init__(self, view: ClusterView, policy: RubickPolicy) -> None:
        self.policy, self.view = policy, view
        super().__init__(view)

    def usage(self, job: Job) -> Resources:
        return self.policy.quota_usage(job, self.view)


__all__ = ["RubickParams", "RubickPolicy"]
