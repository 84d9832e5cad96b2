r"""Dally's delay scheduling (Algorithm 1, "On Resource Offer") over the topology's tiers.

**Levels.** :class:`Levels` reads the tiers from the cluster's tree (the one its networkx graph holds):
each machine's chain of ancestors up to the root (``machine -> rack -> network``) gives one *delay
level* per ancestor below the root — level 0 = one machine (tier ``machine``), level 1 = one rack (tier
``rack``) — and the root is the fallback "network" (accept anywhere). A cluster whose racks hold one
machine, or a single rack, just has domains that coincide or span everything. ``capacity[k]`` is the
GPU count of the largest domain of level ``k``; a job larger than that skips the level.

**The resource offer** ``R`` (:class:`Offer`) is what is free *now*: the cluster's free resources less
what jobs earlier in this pass's offer order took (Dally's global scheduler offers in increasing
``Nw_sens``; :mod:`.priority`). Machines claimed by a pending preemption are not offered to others.

**Algorithm 1**, line by line (:func:`on_resource_offer`)::

    1-2  T_starvation = now - T_last_assignment          (caller: policy.starvation)
    3-4  g_d, (T_Mc, T_Rk) = demand, get_tuned_timers(g_d)   (caller: .autotune)
    5-9  if g_d fits one machine of R: allocate there, update_demand_delay(machine, ...), accept
    10-12  if T_starvation < T_Mc: reject
    13-17  if g_d fits one rack of R: allocate there, update_demand_delay(rack, ...), accept
    18-20  if T_starvation < T_Rk: reject
    21-22  allocate g_d GPUs anywhere ("network"), accept

generalised to any number of levels as ``for k: (fits level k -> accept) ; (starvation < T_k -> reject)``
then the root. A job whose ``max_tier`` forbids a level is never placed there (the verifier's tier
rule); it keeps waiting instead.

**Placement inside a level** (the paper says only "allocate on machine / rack / network"; ours):
one machine = best fit (the machine with the fewest free GPUs that suffice, ties in cluster order);
one rack = the best-fit rack (fewest free GPUs that suffice), inside it the fewest machines (largest
free first, best fit for the remainder; FIFO's ``_fill``); anywhere = the same fill over the whole
cluster. Shares are multiples of the plan's TP degree; CPUs and memory split in proportion to GPUs;
on clusters mixing GPU memory sizes a job only goes where its plan fits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from schedlab.heuristics.fifo import PassState
from schedlab.heuristics.fifo import _fill as fill_fewest_machines
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import ClusterView
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.tiers import Tier


@dataclass(frozen=True)
class Level:
    """One delay level: its tier, the domain of every machine, the machines of every domain."""

    index: int
    tier: Tier
    kind: str                                   # graph node kind of the domains ("machine", "rack")
    domain_of: Mapping[str, str]
    members: Mapping[str, tuple[str, ...]]
    capacity: int                               # GPUs of the largest domain

    @property
    def name(self) -> str:
        return self.tier.label


@dataclass(frozen=True)
class Levels:
    """The delay levels of a cluster, smallest domain first; the root ("network") is implicit."""

    cluster: Cluster
    levels: tuple[Level, ...]

    @classmethod
    def from_cluster(cls, cluster: Cluster) -> Levels:
        """The levels of ``cluster``'s tree (the same tree as its networkx graph: machine -> rack ->
        network, racks linked to machines by ``Tier.RACK`` edges), read from its machines and racks
        without building the graph (or importing networkx: a fast start; ``tests/heuristics/test_dally.py``
        compares them with the graph's)."""
        machines = cluster.machines
        per_level = ({m: m for m in machines}, {m: cluster.rack_of(m) for m in machines})
        levels = []
        for k, (tier, kind) in enumerate(((Tier.MACHINE, "machine"), (Tier.RACK, "rack"))):
            domain_of = per_level[k]
            members: dict[str, list[str]] = {}
            for m in machines:
                members.setdefault(domain_of[m], []).append(m)
            cap = max(sum(cluster.machine(m).gpus for m in ms) for ms in members.values())
            levels.append(Level(k, tier, kind, domain_of, {d: tuple(ms) for d, ms in members.items()}, cap))
        return cls(cluster, tuple(levels))

    def __len__(self) -> int:
        return len(self.levels)

    def __getitem__(self, k: int) -> Level:
        return self.levels[k]

    @property
    def top(self) -> int:
        """Index of the root level ("network": accept anywhere) = the number of delay levels."""
        return len(self.levels)

    @property
    def capacities(self) -> tuple[int, ...]:
        return tuple(lv.capacity for lv in self.levels)

    def best_level(self, gpus: int) -> int:
        """The smallest level whose largest domain holds ``gpus`` (``top`` if none)."""
        for lv in self.levels:
            if gpus <= lv.capacity:
                return lv.index
        return self.top

    def level_of(self, placement: Mapping[str, Resources]) -> int:
        """The smallest level with one domain holding every GPU of ``placement``."""
        ms = [m for m, r in placement.items() if r.gpus > 0]
        for lv in self.levels:
            d = lv.domain_of
            if len({d[m] for m in ms}) <= 1:
                return lv.index
        return self.top

    def tier(self, k: int) -> Tier:
        return self.levels[k].tier if k < len(self.levels) else Tier.NETWORK


@dataclass(frozen=True, slots=True)
class Acceptance:
    """An accepted offer: the level it was accepted at (``levels.top`` = network) and the placement."""

    level: int
    placement: Mapping[str, Resources]
    record: bool = True   # Algorithm 1 records the wait at a delay level (lines 7, 15), not at line 21


@dataclass(frozen=True, slots=True)
class Rejection:
    """A rejected offer: the job did not fit levels ``0..level`` and waits on the timer of ``level``
    (lines 11, 19); ``level = levels.top``: it fits nowhere in the offer (or its ``max_tier`` forbids
    what does). Any job of the same shape with less starvation than ``threshold`` is rejected too."""

    level: int
    threshold: float


class Offer:
    """The resource offer ``R`` of one pass: the view's free resources less what this pass took.

    ``blocked``: machine -> the job whose preemption claim holds it (offered to that job only).
    ``min_gpu_mem(job)``: GB per GPU the job's plan needs (0 unless the cluster mixes GPU sizes).
    Fit failures are cached per (job shape, level) for the pass: within a pass free resources only
    shrink, so a shape that did not fit a level does not fit it later in the same pass.
    """

    def __init__(self, view: ClusterView, levels: Levels, *, blocked: Mapping[str, str] | None = None,
                 min_gpu_mem: Callable[[Job], float] | None = None) -> None:
        self.view = view
        self.levels = levels
        self._ps: PassState | None = None   # built when first read (``ps``)
        self._pending: list[tuple[str, Resources]] = []  # takes not yet applied to ``_ps`` (see ``ps``)
        self.blocked: dict[str, str] = dict(blocked) if blocked else {}
        self.min_gpu_mem = min_gpu_mem
        self.taken = 0
        self._who: str | None = None
        self._failed: set[tuple] = set()
        self.epoch = 0   # bumped when resources are given back (what failed to fit may fit now)
        self._blocked_free = sum(view.index.machine(m) for m in self.blocked) if self.blocked else 0
        self._lvs = levels.levels
        # GPUs the offer still holds for an unclaimed job (blocked machines excluded): the view's free
        # GPUs less ``taken`` less ``_blocked_free``, kept by ``take``, ``block`` and ``unblock``
        self.free_gpus = view.index.total - self._blocked_free

    # ------------------------------------------------------------ queries
    @property
    def ps(self) -> PassState:
        """The pass state with every take so far applied, in order: :meth:`take` defers them to the next
        read (most passes start one job and read it no more)."""
        ps = self._ps
        if ps is None:
            ps = self._ps = PassState(self.view)
        pending = self._pending
        if pending:
            for m, r in pending:
                ps.take(m, r)
            pending.clear()
        return ps

    @property
    def fresh(self) -> bool:
        """Nothing taken in this pass and no machine claimed: the free resources are the view's."""
        return not self._pending and not self.blocked and (self._ps is None or not self._ps.eff)

    def domain_free(self, level: Level, domain: str) -> int:
        if level.kind == "machine":
            return self.ps.free(domain).gpus
        if level.kind == "rack":
            return self.view.index.rack(domain) - self.ps.rack_taken.get(domain, 0)
        return sum(self.ps.free(m).gpus for m in level.members[domain])

    def take(self, placement: Mapping[str, Resources]) -> None:
        """Use ``placement`` (negative amounts give resources back: cached fit failures are void)."""
        for m, r in placement.items():
            self._pending.append((m, r))  # (applied to the pass state when it is next read: ``ps``)
            self.taken += r.gpus
            if m in self.blocked:
                self._blocked_free -= r.gpus
            else:
                self.free_gpus -= r.gpus
            if r.gpus < 0:
                self._failed.clear()
                self.epoch += 1

    def block(self, machines: tuple[str, ...], job: str) -> None:
        """Hold ``machines`` for ``job``'s claim (after a preemption): offered to nobody else."""
        for m in machines:
            if m not in self.blocked:
                self.blocked[m] = job
                n = self.ps.free(m).gpus
                self._blocked_free += n
                self.free_gpus -= n

    def unblock(self, machines: tuple[str, ...], job: str) -> None:
        for m in machines:
            if self.blocked.get(m) == job:
                del self.blocked[m]
                n = self.ps.free(m).gpus
                self._blocked_free -= n
                self.free_gpus += n

    # ------------------------------------------------------------ placement
    def place(self, job: Job, k: int) -> dict[str, Resources] | None:
        """A placement of ``job`` inside one domain of level ``k`` (``k = top``: anywhere), or ``None``."""
        need = job.requested
        g = need.gpus
        lvs = self._lvs
        if g > self.free_gpus or (k < len(lvs) and g > lvs[k].capacity):
            return None
        mem = self.min_gpu_mem(job) if self.min_gpu_mem is not None else 0.0
        plan = job.plan
        tp = plan.tp if plan is not None else 1
        failed = self._failed
        if failed and (k, g, need.cpus, need.mem_gb, tp, mem) in failed:
            return None
        found = self._place(job, k, mem, tp)
        if found is None:
            failed.add((k, g, need.cpus, need.mem_gb, tp, mem))
        return found

    def place_in(self, job: Job, k: int, machines: tuple[str, ...],
                 holding: Mapping[str, Resources] | None = None) -> dict[str, Resources] | None:
        """A placement of ``job`` at level ``k`` on ``machines`` (its claimed domain). ``holding``: what
        a running job holds now; it moves, so its own resources count as free for it (and, once it
        moved, for the rest of the pass: the simulator releases a moving job first)."""
        zero = Resources()
        for m, r in (holding or {}).items():
            self.take({m: zero - r})
        self._who = job.id
        try:
            mem = self.min_gpu_mem(job) if self.min_gpu_mem is not None else 0.0
            tp = job.plan.tp if job.plan is not None else 1
            need = job.requested
            if k == 0:
                m = machines[0]
                p = {m: need} if self._usable(m, mem) and need <= self.ps.free(m) else None
            else:
                p = fill_fewest_machines(job, self._usable_of(machines, mem), self.ps, tp)
        finally:
            self._who = None
        if p is None:
            for m, r in (holding or {}).items():
                self.take({m: r})
        return p

    def relocate(self, job: Job, k: int, holding: Mapping[str, Resources]) -> dict[str, Resources] | None:
        """A placement at level ``k`` for a running job that holds ``holding`` (its own resources count
        as free for it), or ``None``. A cheap bound on the largest domain skips hopeless searches."""
        g = job.requested.gpus
        if k < len(self.levels):
            lv = self.levels[k]
            if g > lv.capacity:
                return None
            own: dict[str, int] = {}
            for m, r in holding.items():
                own[lv.domain_of[m]] = own.get(lv.domain_of[m], 0) + r.gpus
            idx = self.view.index
            largest = idx.largest_machine_block() if lv.kind == "machine" else (
                idx.largest_rack_block() if lv.kind == "rack" else g)
            if max(largest, max(self.domain_free(lv, d) + n for d, n in own.items())) < g:
                return None
        elif self.free_gpus <= 0:
            return None
        zero = Resources()
        for m, r in holding.items():
            self.take({m: zero - r})
        mem = self.min_gpu_mem(job) if self.min_gpu_mem is not None else 0.0
        p = self._place(job, k, mem, job.plan.tp if job.plan is not None else 1)
        if p is None:
            for m, r in holding.items():
                self.take({m: r})
        return p

    def _usable_of(self, machines: tuple[str, ...], mem: float) -> list[str] | tuple[str, ...]:
        if not self.blocked and not mem:
            return machines
        return [m for m in machines if self._usable(m, mem)]

    def _usable(self, m: str, mem: float) -> bool:
        b = self.blocked.get(m)
        return (b is None or b == self._who) and (not mem or self.view.cluster.machine(m).gpu_memory_gb >= mem)

    def _place(self, job: Job, k: int, mem: float, tp: int) -> dict[str, Resources] | None:
        need = job.requested
        g = need.gpus
        if k == 0:
            if self.fresh:  # ``ps.free`` is the view's, no machine held (the pass state is not built)
                return best_machine(self.view, need, mem)  # (no machine touched: ``best_touched`` has none)
            ps = self.ps

            def ok(m: str) -> bool:
                return self._usable(m, mem) and need <= ps.free(m)

            idx = self.view.index
            best = idx.best_fit(g, accept=lambda m: m not in ps and ok(m))      # untouched machines
            touched = ps.best_touched(g, ok, idx.machine(best) if best is not None else None)
            m = touched if touched is not None else best
            return {m: need} if m is not None else None
        ps = self.ps
        if k < len(self.levels):
            lv = self.levels[k]
            cands = [(f, d) for d in lv.members if (f := self.domain_free(lv, d)) >= g]
            cands.sort(key=lambda x: x[0])   # best-fit domain; sort is stable: ties in cluster order
            domains = [lv.members[d] for _, d in cands]
        else:
            domains = [self.view.cluster.machines]
        for machines in domains:
            p = fill_fewest_machines(job, self._usable_of(machines, mem), ps, tp)
            if p is not None:
                return p
        return None


def best_machine(view: ClusterView, need: Resources, mem: float,
                 gpu_memory: Mapping[str, float] | None = None) -> dict[str, Resources] | None:
    """Level 0 of a fresh offer (nothing taken, no machine claimed): ``{m: need}`` on the best-fit
    machine of the view's free resources (with ``mem`` GB per GPU when the cluster mixes GPU sizes;
    ``gpu_memory``: each machine's GPU memory, else read from the cluster)."""
    free = view.free_map
    if mem and gpu_memory is not None:
        m = view.index.best_fit(need.gpus, accept=lambda m: need <= free[m] and gpu_memory[m] >= mem)
    elif mem:
        spec = view.cluster.machine
        m = view.index.best_fit(need.gpus, accept=lambda m: need <= free[m] and spec(m).gpu_memory_gb >= mem)
    else:
        m = view.index.best_fit(need.gpus, accept=lambda m: need <= free[m])
    return {m: need} if m is not None else None


def allowed(levels: Levels, job: Job, k: int) -> bool:
    """May ``job`` be placed at level ``k`` (its ``max_tier``, if any, permits the tier)?"""
    return job.max_tier is None or levels.tier(k) <= job.max_tier


def on_resource_offer(offer: Offer, job: Job, starvation: float,
                      timers: tuple[float, ...]) -> Acceptance | Rejection:
    """Algorithm 1: accept the offer at the best level it fits, or reject it while a timer runs.

    ``starvation`` = now - last assignment time (lines 1-2); ``timers`` = absolute thresholds per delay
    level from Algorithm 2 or Dally-manual (line 4). Returns the acceptance (the caller records the
    wait for delay levels, lines 7 and 15) or a :class:`Rejection` (lines 11 and 19)."""
    levels = offer.levels
    for k in range(len(levels)):
        if allowed(levels, job, k):
            p = offer.place(job, k)                # line 5 (k = 0) / 13 (k = 1): fits one domain of R
            if p is not None:
                return Acceptance(k, p)            # lines 6-8 / 14-16 (wait recorded by the caller)
        if starvation < timers[k]:                 # line 10 / 18
            return Rejection(k, max(timers[: k + 1]))   # line 11 / 19: reject offer
    if allowed(levels, job, levels.top):
        p = offer.place(job, levels.top)           # line 21: allocate g_d GPUs on network
        if p is not None:
            return Acceptance(levels.top, p, record=False)   # line 22 (no wait list for "network")
    return Rejection(levels.top, math.inf)         # R holds no placement for it at all


__all__ = ["Acceptance", "Level", "Levels", "Offer", "Rejection", "allowed", "best_machine", "on_resource_offer"]
