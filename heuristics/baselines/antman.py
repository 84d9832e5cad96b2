"""AntMan-like multi-tenant scheduler (Xiao et al., OSDI'20), as Rubick's evaluation uses it.

* **Guaranteed** jobs get exactly their request (GPUs, CPUs, memory and plan), within their tenant's
  quota counted in requested resources (and in ``Job.quota_usage``, which the verifier charges),
  first, in queue order. If the free resources do not suffice, best-effort jobs are preempted to make
  room: on the machine where the fewest GPUs must go (one-machine requests), or on the machines with
  the most room (larger ones). The guaranteed job starts once their checkpoints are saved (resources
  of a checkpointing job count as *coming free*, so later passes preempt nobody else for it).
* **Best-effort** jobs use what is left, opportunistically: FIFO with backfill at their request and
  plan, consolidated placement (as YARN-CS); they are the only jobs ever preempted.

* **GPU sharing** (``share``, on by default; AntMan §3-4: opportunistic jobs are packed on GPUs that
  resource-guarantee jobs hold, using the memory and the idle compute those leave, while the
  guaranteed job keeps its dedicated speed): a best-effort job that finds no free GPUs is co-located
  (:class:`~scheduling.policy.Share`) on a running (or starting) guaranteed job holding at least its GPU
  count and
  sharing with nobody (the one with the fewest GPUs, the first in running order on ties). It runs at ``share_speed`` x its dedicated rate; the guaranteed job is not slowed
  (AntMan's GpuOpManager launches the opportunistic kernels only in the guaranteed job's idle slots).
  It is suspended, with no checkpoint, when its host finishes or is preempted, and re-queued.
  ``share_speed`` = 0.5 is **ours**: AntMan reports the opportunistic job's slowdown per job pair
  (its micro-benchmarks), not as one figure we could take; set it from a measurement of your pair.

Not modelled: memory over-subscription and its host-memory swapping (a guest always fits), more than one
guest per host, a guest moving to free GPUs while it shares (it waits to be suspended).
"""

from __future__ import annotations

from schedlab.heuristics.fifo import PassState, QuotaLedger, place_consolidated
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import (
    ClusterView,
    Decision,
    JobStatus,
    JobView,
    Share,
    Timer,
    split_resources,
)
from schedlab.scheduling.registry import PolicyFamily, PolicyParams, PolicyRegistry, PolicySpec, ours, paper
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.snapshot import PolicyBase


class AntManParams(PolicyParams):
    retry_s: float = ours(1.0, gt=0.0, neutral="a wake-up only for cost models with free checkpoints",
                          description="after preempting, ask for a decision point this much later (for cost "
                                      "models whose checkpoints are free, so no PREEMPT_DONE event comes)")
    share: bool = paper(True, description="co-locate best-effort jobs that find no free GPUs on guaranteed jobs' "
                                          "GPUs (AntMan's GPU sharing)")
    share_speed: float = ours(0.5, gt=0.0, le=1.0, neutral="AntMan reports slowdowns per job pair, no single "
                              "figure; 0.5 is ours", description="a shared best-effort job's rate, as a fraction "
                              "of its dedicated rate")


class AntManPolicy(PolicyBase):
    """See the module docstring."""

    name = "antman"
    oracle = False

    def __init__(self, *, retry_s: float = 1.0, share: bool = True, share_speed: float = 0.5, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.retry_s = retry_s
        self.share = share
        self.share_speed = share_speed
        self._guests: dict[str, str] = {}  # guest -> host, as decided (checked against the view)

    def schedule(self, view: ClusterView) -> Decision:
        if view.queue_length == 0:
            return Decision()
        ps = PassState(view)
        coming: dict[str, Resources] = {}   # held by checkpointing jobs: free once their checkpoint is saved
        victims: dict[str, dict[str, Resources]] = {}  # preemptible best-effort jobs per machine
        for jv in view.running():
            for m, r in jv.allocation.placement.items():
                if jv.status is JobStatus.CHECKPOINTING:
                    coming[m] = coming.get(m, Resources()) + r
                elif not jv.job.guaranteed:
                    victims.setdefault(m, {})[jv.id] = r
        holders = {jv.id: jv for jv in view.running()}
        ledger = QuotaLedger(view) if view.quotas else None
        used = _requested_usage(view)
        starts: dict[str, JobAllocation] = {}
        preempt: list[str] = []
        for jv in view.queue():
            job = jv.job
            if not job.guaranteed:
                continue
            if ledger is not None and job.tenant in view.quotas:
                if not ledger.fits(job) or not _within(view.quotas[job.tenant], used.get(job.tenant, Resources())
                                                        + job.requested):
                    continue
            placement = place_consolidated(view, job, ps)
            if placement is None:
                placement = self._make_room(view, ps, job, coming, victims, holders, preempt)
                if placement is None:
                    continue
            else:
                starts[job.id] = JobAllocation(job.id, job.requested_plan, placement)
            for m, r in placement.items():
                ps.take(m, r)
            if ledger is not None and job.tenant in view.quotas:
                ledger.charge(job)
                used[job.tenant] = used.get(job.tenant, Resources()) + job.requested
        for jv in view.queue():  # best effort: FIFO with backfill on what is left
            job = jv.job
            if job.guaranteed:
                continue
            placement = place_consolidated(view, job, ps)
            if placement is not None:
                for m, r in placement.items():
                    ps.take(m, r)
                starts[job.id] = JobAllocation(job.id, job.requested_plan, placement)
        shares = self._co_locate(view, starts, preempt) if self.share else {}
        timers = (Timer(view.now + self.retry_s, "antman-retry"),) if preempt else ()
        return Decision(start=starts, preempt=tuple(preempt), timers=timers, share=shares)

    def _co_locate(self, view: ClusterView, starts: dict[str, JobAllocation], preempt: list[str]) -> dict[str, Share]:
        """Queued best-effort jobs left without GPUs share a running guaranteed job's (module docstring)."""
        self._guests = {g: h for g, h in self._guests.items() if view.job(g).status is JobStatus.RUNNING}
        taken = set(self._guests.values())
        hosts = [(jv.id, jv.allocation.gpus) for jv in view.running()
                 if jv.job.guaranteed and jv.status is JobStatus.RUNNING and jv.id not in taken
                 and jv.id not in preempt and jv.id not in starts]
        hosts += [(jid, ja.gpus) for jid, ja in starts.items()  # guaranteed jobs starting now (no restore)
                  if view.job(jid).job.guaranteed and view.job(jid).first_start is None]
        out: dict[str, Share] = {}
        for jv in view.queue():
            if jv.job.guaranteed or jv.id in starts or not hosts:
                continue
            g = jv.job.requested.gpus
            fit = [h for h in hosts if h[1] >= g]
            if not fit:
                continue
            host = min(fit, key=lambda h: h[1])
            hosts.remove(host)
            out[jv.id] = Share(host[0], self.share_speed)
            self._guests[jv.id] = host[0]
        return out

    def _make_room(self, view: ClusterView, ps: PassState, job: Job, coming: dict[str, Resources],
                   victims: dict[str, dict[str, Resources]], holders: dict[str, JobView],
                   preempt: list[str]) -> dict[str, Resources] | None:
        """Preempt best-effort jobs so that ``job`` fits once their checkpoints are saved; returns the
        placement it waits for (reserved in this pass) or None if even that is impossible."""
        cluster = view.cluster
        g = job.requested.gpus
        tp = job.requested_plan.tp
        gone = set(preempt)

        def room(m: str) -> int:
            k = ps.free(m).gpus + coming.get(m, Resources()).gpus
            return k + sum(r.gpus for jid, r in victims.get(m, {}).items() if jid not in gone)

        ms = [m for m in cluster.machines if room(m) >= tp]
        if g <= cluster.max_gpus_per_machine:
            fit = [m for m in ms if room(m) >= g]
            if not fit:
                return None
            # fewest GPUs to preempt, then best fit
            m = min(fit, key=lambda m: (max(0, g - ps.free(m).gpus - coming.get(m, Resources()).gpus), room(m)))
            counts = {m: g}
        else:
            counts, left = {}, g
            for m in sorted(ms, key=lambda m: (-room(m), cluster.machine_index[m])):
                k = min(room(m), left)
                k -= k % tp
                if k > 0:
                    counts[m] = k
                    left -= k
                if not left:
                    break
            if left:
                return None
        placement = split_resources(job, counts)
        chosen: list[str] = []
        for m, need in placement.items():
            have = ps.free(m) + coming.get(m, Resources())
            for jid, r in sorted(victims.get(m, {}).items(), key=lambda kv: -kv[1].gpus):
                if need <= have:
                    break
                if jid in gone or jid in chosen:
                    continue
                chosen.append(jid)
                have = have + r
            if not need <= have:
                return None
        for jid in chosen:
            preempt.append(jid)
            for m, r in holders[jid].allocation.placement.items():
                coming[m] = coming.get(m, Resources()) + r
        reserved: dict[str, Resources] = {}
        for m, need in placement.items():  # free now: reserved in this pass; coming free: reserved too
            free = ps.free(m)
            now = Resources(min(free.gpus, need.gpus), min(free.cpus, need.cpus), min(free.mem_gb, need.mem_gb))
            reserved[m] = now
            coming[m] = coming.get(m, Resources()) - (need - now)
        return reserved


def _requested_usage(view: ClusterView) -> dict[str, Resources]:
    used: dict[str, Resources] = {}
    for jv in view.running():
        if jv.job.guaranteed:
            used[jv.job.tenant] = used.get(jv.job.tenant, Resources()) + jv.job.requested
    return used


def _within(quota: Resources, usage: Resources) -> bool:
    return ((not quota.gpus or usage.gpus <= quota.gpus) and (not quota.cpus or usage.cpus <= quota.cpus)
            and (not quota.mem_gb or usage.mem_gb <= quota.mem_gb + 1e-9))


ANTMAN_POLICIES = PolicyRegistry()
ANTMAN_POLICIES.register(PolicySpec(
    "antman", AntManPolicy, "AntMan-like: guaranteed jobs get exactly their request within quota, best-effort "
    "jobs use the rest and are preempted for them", PolicyFamily.BASELINE, AntManParams, preemptive=True,
    twins=("joint",), reference="Rubick (MLSys'25) Sec. 7.3 baseline; AntMan (OSDI'20)"))

__all__ = ["ANTMAN_POLICIES", "AntManParams", "AntManPolicy"]
