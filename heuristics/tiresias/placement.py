"""Tiresias' skew-based placement (§3.3), and the PACKLIMIT learner.

A job's skew ``S_J`` = largest tensor / model size (``perfmodel.network.skew``; the Tiresias profiler
measures it, our perf model knows the architectures). If ``S_J > PACKLIMIT`` the job is
**consolidated** on as few machines as possible (one machine when it fits in one, else the fewest
machines, preferring one rack: the YARN-CS placement of :func:`heuristics.fifo.place_consolidated`);
when no consolidated placement is free it waits, at most ``pack_wait_s``, then is spread. The others
are **spread to reduce fragmentation**: GPUs are taken from the machines with the fewest free GPUs
first, so whole machines stay free for the jobs that need them. Jobs of models the perf model does
not know have skew ``attrs["skew"]`` or 0 (spread). Per-machine shares are multiples of the plan's
TP degree; CPUs and memory are split in proportion to GPUs; on clusters mixing GPU memory sizes a job
only goes where its plan fits (perf model's memory estimate). On a one-machine cluster (the
``tiresias`` semantics' pool) every placement is that machine.

**Learning PACKLIMIT** (§3.3: "a simple linear classifier ... using a job's placement and
corresponding performance as features"): every job started on more than one machine is an
observation ``(skew, slowdown)`` with ``slowdown = t_iter(placement) / t_iter(consolidated shape)``
from the simulator's rate model (``view.estimate``: the perf model under ``realistic`` semantics), so
consolidation is measured, not assumed. A job is *sensitive* when its slowdown exceeds
``1 + tolerance``; PACKLIMIT is refitted every ``every`` observations as the 1-D decision threshold on
skew with the fewest misclassified observations (the midpoint between neighbouring skews; ties: the
largest threshold), over the last ``window`` observations.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator, Mapping

from schedlab.heuristics.fifo import PassState, place_consolidated, plan_memory_need, split_checked
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.perfmodel.zoo import get_model, resolve_name
from schedlab.scheduling.allocation import JobAllocation, own_allocation
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import ClusterView
from schedlab.scheduling.resources import Resources


class JobTraits:
    """Per-model skew and per-(model, batch, plan) GPU memory need, cached."""

    __slots__ = ("_skew", "_mem", "_mixed")

    def __init__(self) -> None:
        self._skew: dict[str, float] = {}
        self._mem: dict[tuple, float] = {}
        self._mixed: bool | None = None

    def skew(self, job: Job) -> float:
        s = self._skew.get(job.model)
        if s is None:
            name = resolve_name(job.model)
            s = float(get_model(name).skew) if name is not None else float(job.attrs.get("skew", 0.0))
            self._skew[job.model] = s
        return s

    def min_gpu_mem(self, view: ClusterView, job: Job) -> float:
        """GB per GPU the job's plan needs, on clusters mixing GPU memory sizes (else 0)."""
        if self._mixed is None:
            c = view.cluster
            self._mixed = len({c.machine(m).gpu_memory_gb for m in c.machines if c.machine(m).gpus}) > 1
        if not self._mixed:
            return 0.0
        return plan_memory_need(job, self._mem)


def place_spread(view: ClusterView, job: Job, ps: PassState, *, min_gpu_mem: float = 0.0,
                 cursors: PassCursors | None = None, bounded: bool = False) -> dict[str, Resources] | None:
    """``job``'s GPUs from the machines with the fewest free GPUs first (see the module docstring).
    ``cursors`` (of this ``ps``): the same placement, without rescanning the machines the pass touched.
    ``bounded``: the caller knows the job's GPUs are at most ``ps.free_gpus``."""
    g = job.requested.gpus
    if not bounded and g > ps.free_gpus:
        return None  # (the scan below could not collect g GPUs: no search)
    plan = job.plan
    tp = plan.tp if plan is not None else 1  # (``requested_plan`` builds a DP plan per call)
    cluster = view.cluster
    idx = view.index
    counts: dict[str, int] = {}
    need = g
    touched = ps.eff if ps else None
    for k in range(1, cluster.max_gpus_per_machine + 1):
        usable = k - k % tp
        if usable <= 0:
            continue
        if touched is None:
            cands = idx.machines_with(k)
        elif cursors is not None:  # (the touched bucket read in place: nothing below changes ``ps``)
            if not min_gpu_mem:
                take = min(usable, need)
                take -= take % tp
                if take <= 0:
                    continue  # (no machine of this count takes a share: the loop below would skip each)
                if take == need:  # the first candidate finishes the job: no generators
                    m = cursors.first_untouched(view, k)
                    if m is None:
                        m = next(iter(ps.buckets.get(k, ())), None)
                        if m is None:
                            continue
                    counts[m] = take
                    need = 0
                    break
            cands = itertools.chain(cursors.untouched(view, k), ps.buckets.get(k, ()))
        else:
            cands = itertools.chain((m for m in idx.machines_with(k) if m not in touched), ps.touched_with(k))
        for m in cands:
            if min_gpu_mem and cluster.machine(m).gpu_memory_gb < min_gpu_mem:
                continue
            take = min(usable, need)
            take -= take % tp
            if take <= 0:
                continue
            counts[m] = take
            need -= take
            if need == 0:
                break
        if need == 0:
            break
    return None if need else split_checked(job, counts, ps)


def place_pool(view: ClusterView, job: Job, ps: PassState) -> dict[str, Resources] | None:
    """One-machine clusters (the ``tiresias`` semantics' pool): that machine if the job fits."""
    m = view.cluster.machines[0]
    return {m: job.requested} if job.requested <= ps.free(m) else None


class PassCursors:
    """One pass's cursors into the view's free index: for a free-GPU count ``k`` (and, for a job that asks
    for CPUs, memory or a GPU memory floor, that request), where the scan for the first machine with ``k``
    free GPUs that the pass has not touched and that fits stopped. Within a pass the view does not
    change and the touched machines only grow, so an untouched machine that fits keeps fitting until it
    is touched, and a machine skipped stays skipped: each cursor only moves forward, and the scans of a
    pass that places many jobs cost the index's size once, not once per job."""

    __slots__ = ("ps", "at", "spread")

    def __init__(self, ps: PassState) -> None:
        self.ps = ps
        self.at: dict[object, tuple] = {}
        self.spread: dict[int, list] = {}

    def untouched(self, view: ClusterView, k: int) -> Iterator[str]:
        """``m for m in view.index.machines_with(k) if m not in ps.eff``, for :func:`place_spread`: the
        machines read from the index so far are kept with a pointer past the touched ones at their front
        (touched machines stay touched for the rest of the pass), so a pass of many spread placements
        reads each machine of a count once, not once per placement."""
        eff = self.ps.eff
        cur = self.spread.get(k)
        if cur is None:
            cur = self.spread[k] = [view.index.machines_with(k), [], 0]
        it, seen, i = cur
        n = len(seen)
        while i < n and seen[i] in eff:
            i += 1
        cur[2] = i
        while True:
            if i < n:
                m = seen[i]
            else:
                m = next(it, None)
                if m is None:
                    return
                seen.append(m)
                n += 1
            i += 1
            if m not in eff:
                yield m

    def first_untouched(self, view: ClusterView, k: int) -> str | None:
        """The first machine :meth:`untouched` would yield for ``k`` (``None`` if none), without a
        generator; the cursor is left as :meth:`untouched` would leave it after one step."""
        eff = self.ps.eff
        cur = self.spread.get(k)
        if cur is None:
            cur = self.spread[k] = [view.index.machines_with(k), [], 0]
        seen = cur[1]
        i, n = cur[2], len(seen)
        while i < n and seen[i] in eff:
            i += 1
        cur[2] = i
        if i < n:
            return seen[i]
        it = cur[0]
        while True:
            m = next(it, None)
            if m is None:
                return None
            seen.append(m)
            if m not in eff:
                return m

    def first_fit(self, view: ClusterView, g: int, need: Resources, min_gpu_mem: float, simple: bool) -> str | None:
        """``view.index.best_fit(g, accept)`` with ``accept`` = untouched in the pass and fits (``need``
        within the view's free resources, GPUs of at least ``min_gpu_mem`` GB), as
        :func:`~schedlab.heuristics.fifo.place_consolidated` asks it once the pass has touched a machine."""
        eff = self.ps.eff
        at = self.at
        idx = view.index
        cluster = view.cluster
        for k in range(max(g, 1), cluster.max_gpus_per_machine + 1):
            key = k if simple else (k, need.gpus, need.cpus, need.mem_gb, min_gpu_mem)  # (no dataclass hash)
            cur = at.get(key)
            if cur is None:
                it = idx.machines_with(k)
            else:
                it, m = cur
                if m is None:
                    continue  # no machine of this count fits in this pass
                if m not in eff:
                    return m
            m = None
            for x in it:
                if x not in eff and (simple or (need <= view.free(x) and (
                        not min_gpu_mem or cluster.machine(x).gpu_memory_gb >= min_gpu_mem))):
                    m = x
                    break
            at[key] = (it, m)
            if m is not None:
                return m
        return None


def _consolidated_one_machine(view: ClusterView, job: Job, ps: PassState, min_gpu_mem: float,
                              cursors: PassCursors) -> dict[str, Resources] | None:
    """:func:`~schedlab.heuristics.fifo.place_consolidated` for a job that fits on one machine, in a pass
    that has touched a machine: the same machine, the untouched candidate found by ``cursors``."""
    need = job.requested
    g = need.gpus
    cluster = view.cluster
    simple = need.cpus == 0 and need.mem_gb == 0 and not min_gpu_mem

    def fits(m: str) -> bool:
        return need <= ps.free(m) and (not min_gpu_mem or cluster.machine(m).gpu_memory_gb >= min_gpu_mem)

    best = cursors.first_fit(view, g, need, min_gpu_mem, simple)
    touched = ps.best_touched(g, None if simple else fits, view.index.machine(best) if best is not None else None)
    best = touched if touched is not None else best
    return {best: need} if best is not None else None


def place_job(view: ClusterView, job: Job, ps: PassState, *, consolidate: bool, allow_spread: bool,
              traits: JobTraits, cursors: PassCursors | None = None,
              mem: float | None = None, bounded: bool = False) -> dict[str, Resources] | None:
    """Consolidated placement when ``consolidate`` (falling back to a spread one when ``allow_spread``),
    else a spread one; ``None`` when nothing fits now. ``cursors`` (of this ``ps``): the same placements,
    found faster in a pass that places many jobs. ``mem``: ``traits.min_gpu_mem(view, job)`` when the caller
    has it. ``bounded``: the caller knows the job's GPUs are at most ``ps.free_gpus``."""
    if not bounded and job.requested.gpus > ps.free_gpus:
        return None  # more GPUs than are free in the whole pass: no placement below could find them
    if len(view.cluster.machines) == 1:
        return place_pool(view, job, ps)
    if mem is None:
        mem = traits.min_gpu_mem(view, job)
    if consolidate:
        if cursors is not None and ps.eff and job.requested.gpus <= view.cluster.max_gpus_per_machine:
            p = _consolidated_one_machine(view, job, ps, mem, cursors)
        else:
            p = place_consolidated(view, job, ps, min_gpu_mem=mem)
        if p is not None or not allow_spread:
            return p
    p = place_spread(view, job, ps, min_gpu_mem=mem, cursors=cursors, bounded=True)
    if p is None and not consolidate and (job.requested.cpus or job.requested.mem_gb):
        p = place_consolidated(view, job, ps, min_gpu_mem=mem)  # CPUs per machine may need a compact shape
    return p


class Starter:
    """Starts jobs one after the other on what is free in this pass: a :class:`PassState` that counts
    the GPUs of jobs preempted in the same decision as free when preemption is instant
    (``view.checkpoint_s == 0``: the simulator releases them before the starts), and one cached plain
    data-parallel plan per GPU count for jobs without a plan."""

    __slots__ = ("traits", "_plans", "cursors", "_cur")

    def __init__(self, traits: JobTraits, *, cursors: bool = False) -> None:
        self.traits = traits
        self._plans: dict[int, ExecutionPlan] = {}
        # resume one-machine consolidated searches from :class:`PassCursors` (the pass state must be new
        # for each decision; 2D-LAS / 2D-Gittins turn it on)
        self.cursors = cursors
        self._cur: PassCursors | None = None

    def pass_state(self, view: ClusterView, preempted=()) -> PassState:
        ps = PassState(view)
        if view.checkpoint_s == 0:
            for jid in preempted:
                for m, r in view.job(jid).allocation.placement.items():
                    ps.take(m, r.scale(-1))
        return ps

    def start(self, view: ClusterView, ps: PassState, job: Job, *, consolidate: bool,
              allow_spread: bool = True, take: bool = True, mem: float | None = None,
              bounded: bool = False) -> JobAllocation | None:
        """``job`` placed (and taken from ``ps`` unless ``take`` is false: the pass's last placement, after
        which ``ps`` is not read), or ``None`` when it does not fit now. ``mem``: the job's GPU memory need
        (``traits.min_gpu_mem``) when the caller has it; ``bounded``: the caller knows the job's GPUs are at
        most ``ps.free_gpus``."""
        cur = None
        if self.cursors and ps.eff:  # (the cursors serve searches after the pass's first placement)
            cur = self._cur
            if cur is None or cur.ps is not ps:
                cur = self._cur = PassCursors(ps)
        p = place_job(view, job, ps, consolidate=consolidate, allow_spread=allow_spread, traits=self.traits,
                      cursors=cur, mem=mem, bounded=bounded)
        if p is None:
            return None
        if take:
            ps.take_all(p)
        plan = job.plan
        if plan is None:
            g = job.requested.gpus
            plan = self._plans.get(g)
            if plan is None:
                plan = self._plans[g] = ExecutionPlan(dp=g)
        # (``p`` is a new ``{machine: Resources}`` dict of this placement, held by nobody else; the plan an
        # ``ExecutionPlan``; the job's id the engine's: the constructor's checks would pass)
        return own_allocation(job.id, plan, p)


def consolidated_shape(view: ClusterView, gpus: int) -> dict[str, Resources]:
    """The most consolidated shape of ``gpus`` GPUs on the empty cluster (a reference for slowdowns)."""
    c = view.cluster
    for m in c.machines:
        if c.machine(m).gpus >= gpus:
            return {m: Resources(gpus)}
    for rack in c.racks:
        ms = sorted(c.machines_in(rack), key=lambda m: -c.machine(m).gpus)
        if sum(c.machine(m).gpus for m in ms) >= gpus:
            break
    else:
        ms = sorted(c.machines, key=lambda m: -c.machine(m).gpus)
    out: dict[str, Resources] = {}
    left = gpus
    for m in ms:
        k = min(c.machine(m).gpus, left)
        if k:
            out[m] = Resources(k)
            left -= k
        if not left:
            break
    return out


class PacklimitLearner:
    """Learns PACKLIMIT from observed slowdowns of spread jobs (see the module docstring)."""

    __slots__ = ("value", "tolerance", "every", "obs", "_since", "refits")

    def __init__(self, initial: float, *, tolerance: float = 0.1, every: int = 20, window: int = 2000) -> None:
        self.value = initial
        self.tolerance = tolerance
        self.every = every
        self.obs: deque[tuple[float, bool]] = deque(maxlen=window)
        self._since = 0
        self.refits = 0

    def observe(self, view: ClusterView, job: Job, placement: Mapping[str, Resources], skew: float) -> None:
        if sum(1 for r in placement.values() if r.gpus > 0) <= 1:
            return
        plan = job.requested_plan
        t_here = view.estimate(job, plan, placement)
        t_ref = view.estimate(job, plan, consolidated_shape(view, job.requested.gpus))
        self.add(skew, t_here / t_ref > 1.0 + self.tolerance if t_ref > 0 else False)

    def add(self, skew: float, sensitive: bool) -> None:
        self.obs.append((skew, sensitive))
        self._since += 1
        if self._since >= self.every:
            self._since = 0
            self.value = fit_threshold(self.obs, self.value)
            self.refits += 1


def fit_threshold(obs, current: float) -> float:
    """The threshold ``t`` minimising ``#{sensitive, skew <= t} + #{insensitive, skew > t}``
    (skews sorted; candidate thresholds are 0, the midpoints, and 1; ties keep the largest)."""
    pts = sorted(obs)
    if not pts:
        return current
    n_sens_total = sum(1 for _, y in pts if y)
    # threshold below every point: all predicted sensitive -> errors = insensitive count
    best_err, best_t = len(pts) - n_sens_total, 0.0
    err = best_err
    for i, (s, y) in enumerate(pts):
        err += 1 if y else -1  # point i moves to the "not consolidated" side
        nxt = pts[i + 1][0] if i + 1 < len(pts) else 1.0
        if nxt == s and i + 1 < len(pts):
            continue
        t = (s + nxt) / 2.0 if i + 1 < len(pts) else 1.0
        if err <= best_err:
            best_err, best_t = err, t
    return best_t


__all__ = ["JobTraits", "PacklimitLearner", "PassCursors", "Starter", "consolidated_shape", "fit_threshold", "place_job", "place_pool",
           "place_spread"]
