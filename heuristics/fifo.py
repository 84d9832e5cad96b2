"""YARN-CS (the Tiresias baseline): first-come first-served, all-or-nothing gangs, head-of-line
blocking, consolidating placement.

Each decision point walks the queue from its head and starts jobs at their requested GPUs and plan
while they fit; the first job that does not fit blocks everything behind it (no backfilling). Nothing
is ever preempted.

Placement (consolidating): a job that fits in one machine (``g <= max GPUs per machine``) goes to one
machine only, best fit (fewest free GPUs that suffice). A larger job takes the fewest machines: among
the racks that can hold it, the one where it needs the fewest machines (ties: the smallest sufficient
free GPU count, best fit), where it takes the machines with the most free GPUs until the rest fits on
one machine, which is then chosen by best fit; if no rack can hold it, the same over the whole
cluster. Per-machine shares are
multiples of the plan's TP degree; CPUs and memory are split in proportion to GPUs. On clusters that
mix GPU memory sizes, a job only goes to machines whose GPUs hold its plan (perf model's estimate).

A pass costs O(jobs started + 1) queue steps, each O(max GPUs per machine) for one-machine jobs
(:class:`PassState` buckets the machines touched earlier in the pass by their remaining GPUs).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping

from schedlab.perfmodel.memory import plan_gpu_memory_gb
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.perfmodel.zoo import get_model, resolve_name
from schedlab.scheduling.allocation import JobAllocation, own_allocation
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import NO_DECISION, ClusterView, Decision, split_resources, start_decision
from schedlab.scheduling.registry import PolicyFamily, PolicyParams, PolicyRegistry, PolicySpec, paper
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.snapshot import PolicyBase


class FifoParams(PolicyParams):
    blocking: bool = paper(True, description="head-of-line blocking: the first job that does not fit stops "
                                             "the pass (YARN-CS); false skips it (Best-effort / backfill)")


class FifoPolicy(PolicyBase):
    """YARN-CS FIFO. ``blocking=False`` gives the *Best-effort* variant (skips jobs that do not fit)."""

    oracle = False

    def __init__(self, *, blocking: bool = True, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.blocking = blocking
        self.name = "fifo" if blocking else "fifo-backfill"
        self._dp_plans: dict[int, ExecutionPlan] = {}  # plain DP plans by GPU count (plans are values)
        self._mem: dict[tuple, float] = {}  # per-GPU memory need by (model, batch, plan)
        self._mixed: bool | None = None      # does the cluster mix GPU memory sizes?

    def schedule(self, view: ClusterView) -> Decision:
        idx = view.index
        if idx.total == 0 or view.queue_length == 0:
            return NO_DECISION  # (shared and immutable: no dictionaries built per idle pass)
        if self._mixed is None:
            c = view.cluster
            self._mixed = len({c.machine(m).gpu_memory_gb for m in c.machines if c.machine(m).gpus}) > 1
        ps = PassState(view)
        starts: dict[str, JobAllocation] = {}
        left = idx.total
        quota = QuotaLedger(view) if view.quotas else None
        blocked_tenants: set[str] = set()
        # the last start's placement, not yet taken in ``ps``: only a later placement reads ``ps``, so a
        # pass that starts one job (most do) never takes it
        taken: dict[str, Resources] | None = None
        for jv in view.queue():
            job = jv.job
            if quota is not None and job.guaranteed and job.tenant in view.quotas:
                # a tenant's guaranteed jobs form their own queue with the quota as its capacity
                # (YARN-CS queues): one that would exceed the quota waits and, with blocking, holds
                # back that tenant's later guaranteed jobs only
                if job.tenant in blocked_tenants or not quota.fits(job):
                    if self.blocking:
                        blocked_tenants.add(job.tenant)
                    continue
            if job.requested.gpus <= left:
                if self._mixed:  # (``_need``, its cache read inline)
                    need = self._mem.get((job.model, job.global_batch, job.plan, job.requested.gpus))
                    if need is None:
                        need = plan_memory_need(job, self._mem)
                else:
                    need = 0.0
                if taken is not None:  # the previous start's resources, taken only once another job is placed
                    for m, r in taken.items():
                        ps.take(m, r)
                    taken = None
                placement = place_consolidated(view, job, ps, min_gpu_mem=need)
                if placement is not None:
                    taken = placement
                    left -= job.requested.gpus
                    plan = job.plan
                    if plan is None:
                        g = job.requested.gpus
                        plan = self._dp_plans.get(g)
                        if plan is None:
                            plan = self._dp_plans[g] = ExecutionPlan(dp=g)
                    starts[job.id] = own_allocation(job.id, plan, placement)
                    if quota is not None:
                        quota.charge(job)
                    continue
            if self.blocking or left == 0:
                break
        return start_decision(starts)

    def _need(self, job: Job) -> float:
        return plan_memory_need(job, self._mem)


def plan_memory_need(job: Job, cache: dict[tuple, float]) -> float:
    """GB per GPU the job's requested plan needs (perf model's estimate; 0 for unknown models), so
    that on clusters with mixed GPU sizes a job only goes where it fits; memoised in ``cache``."""
    key = (job.model, job.global_batch, job.plan, job.requested.gpus)
    need = cache.get(key)
    if need is None:
        name = resolve_name(job.model)
        need = 0.0 if name is None else plan_gpu_memory_gb(get_model(name), job.requested_plan, job.global_batch)
        cache[key] = need
    return need


class QuotaLedger:
    """Per-tenant quota usage of the guaranteed jobs holding resources, plus what a pass starts.
    A zero quota component means no quota on that resource (as the verifier reads it)."""

    __slots__ = ("quotas", "used")

    def __init__(self, view: ClusterView, holding: Iterable[Job] | None = None) -> None:
        """``holding``: the jobs that keep their resources (default: the view's running jobs; a policy
        that reassigns every GPU at each event passes only those it cannot take them from)."""
        self.quotas = view.quotas
        self.used: dict[str, Resources] = {}
        for job in (jv.job for jv in view.running()) if holding is None else holding:
            self.take(job)

    @classmethod
    def after_preemption(cls, view: ClusterView, preempted: Iterable[str]) -> QuotaLedger:
        """The usage once ``preempted`` are stopped: they keep charging while they checkpoint (the
        verifier counts every job holding resources); with free preemption they release at once."""
        gone = set(preempted) if view.checkpoint_s == 0 else set()
        return cls(view, (jv.job for jv in view.running() if jv.id not in gone))

    def counted(self, job: Job) -> bool:
        return job.guaranteed and job.tenant in self.quotas

    def usage(self, job: Job) -> Resources:
        """What ``job`` charges (``Job.quota_usage``; a policy with its own reading overrides it)."""
        return job.quota_usage

    def charge(self, job: Job) -> None:
        self.used[job.tenant] = self.used.get(job.tenant, Resources()) + self.usage(job)

    def take(self, job: Job) -> None:
        """Charge ``job`` if it counts against a quota (a guaranteed job of a tenant with one)."""
        if self.counted(job):
            self.charge(job)

    def release(self, job: Job) -> None:
        if self.counted(job):
            self.used[job.tenant] = self.used[job.tenant] - self.usage(job)

    def admits(self, job: Job) -> bool:
        """``job`` may hold resources now: it does not count, or it fits its tenant's quota."""
        return not self.counted(job) or self.fits(job)

    def fits(self, job: Job) -> bool:
        q = self.quotas[job.tenant]
        u = self.used.get(job.tenant, Resources()) + self.usage(job)
        return ((not q.gpus or u.gpus <= q.gpus) and (not q.cpus or u.cpus <= q.cpus)
                and (not q.mem_gb or u.mem_gb <= q.mem_gb + 1e-9))


def fill_pool(view: ClusterView, order: Iterable[str], gpus: Mapping[str, int], free: int,
              skip: Container[str], quota: QuotaLedger | None) -> list[str]:
    """One pool of ``free`` GPUs filled in ``order``: each job (not in ``skip``) whose ``gpus[j]`` fit
    what is left, and whose tenant's quota admits it, is taken (no head-of-line blocking). The
    preemptive pool policies (SRTF/SRSF, the artifact's loop) share it."""
    chosen: list[str] = []
    for jid in order:
        if free <= 0:
            break
        g = gpus[jid]
        if g <= free and jid not in skip:
            if quota is not None:
                job = view.job(jid).job
                if not quota.admits(job):
                    continue
                quota.take(job)
            chosen.append(jid)
            free -= g
    return chosen


class PassState:
    """What one decision pass has tentatively taken, on top of the view's free resources.

    Touched machines are bucketed by their remaining free GPUs (only the counts that occur: a one-pool
    cluster has thousands of GPUs on its one machine), so best-fit among them costs O(distinct free
    counts), not O(machines touched): a pass that starts k jobs costs O(k log k).
    """

    __slots__ = ("view", "eff", "buckets", "rack_taken", "_cap", "_gain")

    def __init__(self, view: ClusterView) -> None:
        self.view = view
        self._cap = view.cluster.max_gpus_per_machine
        self.eff: dict[str, Resources] = {}            # effective free resources of touched machines
        self.buckets: dict[int, dict[str, None]] = {}  # free GPUs (capped) -> touched machines
        self.rack_taken: dict[str, int] = {}
        self._gain = 0  # sum over touched machines of max(effective free GPUs, 0) - the view's free GPUs

    @property
    def free_gpus(self) -> int:
        """Free GPUs left in this pass over all machines (negative effective amounts count as 0): no
        placement can take more."""
        return self.view.index.total + self._gain

    def __bool__(self) -> bool:
        return bool(self.eff)

    def __contains__(self, machine: object) -> bool:
        return machine in self.eff

    def free(self, machine: str) -> Resources:
        e = self.eff.get(machine)
        return e if e is not None else self.view.free(machine)

    def take(self, machine: str, r: Resources) -> None:
        """Tentatively use ``r`` on ``machine`` (negative amounts give resources back)."""
        old = self.free(machine)
        if machine in self.eff:
            k = min(old.gpus, self._cap)
            del self.buckets[k][machine]
            if not self.buckets[k]:
                del self.buckets[k]
        new = old - r
        self._gain += max(new.gpus, 0) - max(old.gpus, 0)
        self.eff[machine] = new
        self.buckets.setdefault(min(max(new.gpus, 0), self._cap), {})[machine] = None
        rack = self.view.index.rack_of(machine)
        self.rack_taken[rack] = self.rack_taken.get(rack, 0) + r.gpus

    def take_all(self, placement: Mapping[str, Resources]) -> None:
        """``take(m, r)`` for every ``m, r`` of ``placement`` in its order (the same state, in one call)."""
        eff, buckets, cap, rt = self.eff, self.buckets, self._cap, self.rack_taken
        rack_of = self.view.index.rack_of
        for m, r in placement.items():
            old = eff.get(m)
            if old is None:
                old = self.view.free(m)
            else:
                k = min(old.gpus, cap)
                b = buckets[k]
                del b[m]
                if not b:
                    del buckets[k]
            new = old - r
            g = new.gpus
            self._gain += max(g, 0) - max(old.gpus, 0)
            eff[m] = new
            k = min(max(g, 0), cap)
            b = buckets.get(k)
            if b is None:
                buckets[k] = {m: None}
            else:
                b[m] = None
            rack = rack_of(m)
            rt[rack] = rt.get(rack, 0) + r.gpus

    def retouch(self, placement: Mapping[str, Resources]) -> None:
        """The same as giving ``placement`` back and taking it again (``take(m, r.scale(-1))`` for every
        machine, then ``take(m, r)`` for every machine), in fewer steps: the machines end up touched, with
        the same effective free resources (the same float operations) and at the end of their buckets in
        ``placement``'s order; the racks' taken GPUs are unchanged (a rack not seen before is entered
        with 0, as there)."""
        eff, buckets, cap, rt = self.eff, self.buckets, self._cap, self.rack_taken
        rack_of = self.view.index.rack_of
        for m, r in placement.items():
            # ``(old + r) - r`` is ``old`` itself when ``r`` has no memory and ``old``'s is not +-0.0: the
            # ints are exact and ``(x + 0.0) - 0.0`` is ``x`` for such a float (``-0.0`` becomes ``0.0``)
            same = r.mem_gb == 0.0
            old = eff.get(m)
            if old is None:
                old = self.view.free(m)
                new = old if same and old.mem_gb != 0.0 else (old + r) - r
                eff[m] = new
                buckets.setdefault(min(max(new.gpus, 0), cap), {})[m] = None
            else:
                k = min(old.gpus, cap)
                b = buckets[k]
                del b[m]
                if same and old.mem_gb != 0.0 and old.gpus >= 0:
                    b[m] = None  # the same object in the same bucket, moved to its end (``eff`` keeps it)
                else:
                    if not b:
                        del buckets[k]
                    new = (old + r) - r  # = (old - r.scale(-1)) - r: x - (-y) is x + y in IEEE arithmetic
                    eff[m] = new
                    buckets.setdefault(min(max(new.gpus, 0), cap), {})[m] = None
            rt.setdefault(rack_of(m), 0)

    def best_touched(self, gpus: int, accept: Callable[[str], bool] | None, below: int | None) -> str | None:
        """The touched machine with the fewest free GPUs ``>= gpus`` (and ``< below``) that ``accept``s."""
        hi = min(self._cap, (below or self._cap + 1) - 1)
        buckets = self.buckets
        for k in range(max(gpus, 0), hi + 1):  # (the bucket keys are 0..cap: ascending, as sorted)
            b = buckets.get(k)
            if b:
                for m in b:
                    if accept is None or accept(m):
                        return m
        return None

    def touched_with(self, gpus: int) -> tuple[str, ...]:
        """Touched machines with exactly ``gpus`` free GPUs (capped at the largest machine)."""
        return tuple(self.buckets.get(gpus, ()))


def place_consolidated(view: ClusterView, job: Job, ps: PassState, *,
                       min_gpu_mem: float = 0.0) -> dict[str, Resources] | None:
    """A consolidated placement of ``job`` on the free resources left by ``ps``, on machines whose
    GPUs have at least ``min_gpu_mem`` GB, or ``None``."""
    g = job.requested.gpus
    idx = view.index
    cluster = view.cluster
    if g <= cluster.max_gpus_per_machine:
        need = job.requested
        simple = need.cpus == 0 and need.mem_gb == 0 and not min_gpu_mem
        if simple and not ps.eff:  # fast path: nothing placed yet in this pass, GPUs only
            best = idx.best_fit(g)
            return {best: need} if best is not None else None

        if not ps.eff:  # nothing placed yet in this pass: ``ps.free`` is the view's
            free = view.free_map
            if min_gpu_mem:
                spec = cluster.machine
                best = idx.best_fit(g, accept=lambda m: need <= free[m] and spec(m).gpu_memory_gb >= min_gpu_mem)
            else:
                best = idx.best_fit(g, accept=lambda m: need <= free[m])
            return {best: need} if best is not None else None

        def fits(m: str) -> bool:
            return need <= ps.free(m) and (not min_gpu_mem or cluster.machine(m).gpu_memory_gb >= min_gpu_mem)

        if not ps.eff:  # fast path: nothing placed yet in this pass
            best = idx.best_fit(g) if simple else idx.best_fit(g, accept=fits)
            return {best: need} if best is not None else None
        best = idx.best_fit_except(g, ps.eff, None if simple else fits)  # untouched machines only
        touched = ps.best_touched(g, None if simple else fits, idx.machine(best) if best is not None else None)
        best = touched if touched is not None else best
        return {best: need} if best is not None else None
    tp = job.plan.tp if job.plan is not None else 1  # (``requested_plan`` builds a DP plan per call)
    rack_free = {r: idx.rack(r) - ps.rack_taken.get(r, 0) for r in cluster.racks}
    racks = sorted((r for r, k in rack_free.items() if k >= g), key=lambda r: (rack_free[r], r))

    def usable(ms: list[str]) -> list[str]:
        return [m for m in ms if cluster.machine(m).gpu_memory_gb >= min_gpu_mem] if min_gpu_mem else ms

    # fewest machines first, then best fit (the rack with the fewest free GPUs that suffice): a rack
    # whose free GPUs are fragmented loses to one with whole machines idle; a rack that reaches the
    # lower bound ceil(g / largest machine) ends the search
    floor = -(-g // max(cluster.max_gpus_per_machine, 1))
    best: dict[str, Resources] | None = None
    for rack in racks:
        p = _fill(job, usable(idx.machines_by_free(rack)), ps, tp)
        if p is not None and (best is None or len(p) < len(best)):
            best = p
            if len(p) <= floor:
                break
    return best if best is not None else _fill(job, usable(idx.machines_by_free()), ps, tp)


def _fill(job: Job, machines: list[str], ps: PassState, tp: int) -> dict[str, Resources] | None:
    """Fewest machines, least fragmentation: while the rest fits on one machine, take the best fit for
    it; otherwise take the machine with the most free GPUs (ties: cluster order)."""
    free = {m: ps.free(m).gpus for m in machines}
    free = {m: k - k % tp for m, k in free.items() if k - k % tp > 0}
    counts: dict[str, int] = {}
    need = job.requested.gpus
    while need > 0 and free:
        fit = [m for m, k in free.items() if k >= need]
        if fit:
            m = min(fit, key=lambda x: free[x])  # first minimum: keeps the given order on ties
            counts[m] = need
            need = 0
            break
        m = max(free, key=lambda x: free[x])
        counts[m] = free.pop(m)
        need -= counts[m]
    return None if need else split_checked(job, counts, ps)


def split_checked(job: Job, counts: dict[str, int], ps: PassState) -> dict[str, Resources] | None:
    """``{machine: gpus}`` -> ``{machine: Resources}`` (CPUs and memory in proportion to GPUs), or
    ``None`` if a machine lacks the CPUs or memory of its share."""
    placement = split_resources(job, counts)
    for m, r in placement.items():
        if not r <= ps.free(m):
            return None
    return placement


FIFO_POLICIES = PolicyRegistry()
FIFO_POLICIES.register(PolicySpec(
    "fifo", FifoPolicy, "FIFO by arrival at the requested GPUs and plan, consolidating placement",
    PolicyFamily.BASELINE, FifoParams, twins=("joint", "tiresias-placement", "tier-placement"),
    reference="Tiresias §6 (YARN-CS baseline); the floor of every gap suite"))
FIFO_POLICIES.register(PolicySpec(
    "yarn-cs", FifoPolicy, "YARN-CS: FIFO with head-of-line blocking and strict consolidation (= fifo)",
    PolicyFamily.BASELINE, FifoParams, preset={"blocking": True}, twins=("joint",), reference="Tiresias §6"))
FIFO_POLICIES.register(PolicySpec(
    "fifo-backfill", FifoPolicy, "FIFO that skips jobs that do not fit (no head-of-line blocking)",
    PolicyFamily.BASELINE, FifoParams, preset={"blocking": False}, reference="Tiresias §6 (Best-effort)"))


__all__ = ["FIFO_POLICIES", "FifoParams", "FifoPolicy", "PassState", "QuotaLedger", "fill_pool",
           "place_consolidated", "plan_memory_need", "split_checked"]
