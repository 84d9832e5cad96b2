r"""Tiresias placement instances (Appendix D): jobs with parameter servers, node traffic, THE objective
(maximum per-node traffic, unplaced jobs priced) and the rule that completes a heuristic's worker-only
allocation with parameter servers. The ILP is :mod:`formulations.tiresias_ilp`; generators, a greedy
placement and solution points are :mod:`formulations.tiresias_gen`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from schedlab.formulations import io
from schedlab.formulations.neutral import Releases, est_avg_jct, job_terms
from schedlab.perfmodel.network import skew
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.checks import integer
from schedlab.topology.errors import SolverError, SpecError

MAX_MB = 10**12
"""Largest size (MB), traffic (MB) or CPU count an instance may state (bounds the model's coefficients)."""


@dataclass(frozen=True, slots=True)
class PSJob:
    """A parameter-server job: ``ps_sizes`` (MB) per PS; workers = the job's requested GPUs."""

    ps_sizes: tuple[int, ...]
    cpus_per_worker: int = 0
    cpus_per_ps: int = 0

    def __post_init__(self) -> None:
        src = "<PSJob>"
        if isinstance(self.ps_sizes, (str, bytes)) or not isinstance(self.ps_sizes, (tuple, list)):
            raise SpecError(f"ps_sizes must be a list of MB sizes, got {self.ps_sizes!r}"[:200], source=src,
                            field="ps_sizes")
        object.__setattr__(self, "ps_sizes", tuple(integer(v, "ps_sizes", source=src, ge=0, le=MAX_MB)
                                                   for v in self.ps_sizes))
        for name in ("cpus_per_worker", "cpus_per_ps"):
            object.__setattr__(self, name, integer(getattr(self, name), name, source=src, ge=0, le=MAX_MB))

    @property
    def model_size(self) -> int:
        return sum(self.ps_sizes)


def spread_overhead(job: Job) -> float:
    """:math:`o_a` of the neutral objective: the job's slowdown (a fraction of its run time) when all of its
    worker-PS traffic crosses machines — its skew (largest tensor / model size, Tiresias §3.2: a skewed model
    is the one consolidation helps), from ``job.attrs["skew"]``, else the perf model's zoo, else 0."""
    v = job.attrs.get("skew") if job.attrs else None
    if v is None:
        try:
            v = skew(job.model)
        except SpecError:
            v = 0.0
    return float(min(1.0, max(0.0, v)))


@dataclass(frozen=True)
class TiresiasInstance:
    """``base`` gives the cluster, the jobs to place (rigid, ``requested.gpus`` workers) and
    ``reserved`` (what is already used); ``traffic`` is each node's existing traffic (MB).

    The neutral objective (:func:`tiresias_neutral`) also reads ``spread`` (:math:`o_a` per job, default
    :func:`spread_overhead`) and ``releases`` (``(seconds, GPUs)`` the reserved work frees when it ends: a
    replay state's running jobs). ``neutral``: the instance's objective is that neutral one (the exact
    model minimises est-avg-jct; ``Kind.neutral.exact_instance``)."""

    KIND = "tiresias-placement"
    base: Instance
    ps: Mapping[str, PSJob]
    traffic: Mapping[str, int] = field(default_factory=dict)
    machines: tuple[str, ...] | None = None
    spread: Mapping[str, float] | None = None
    releases: Releases = ()
    neutral: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "ps", MappingProxyType(dict(self.ps)))
        given = dict(self.spread or {})
        object.__setattr__(self, "spread", MappingProxyType(
            {j.id: float(given[j.id]) if j.id in given else spread_overhead(j) for j in self.base.jobs}))
        object.__setattr__(self, "releases", tuple((float(t), int(g)) for t, g in self.releases))
        object.__setattr__(self, "traffic", MappingProxyType(
            {m: integer(t, f"traffic[{m!r}]", source="<tiresias>", ge=0, le=MAX_MB) for m, t in self.traffic.items()}))
        for j in self.base.jobs:
            if j.id not in self.ps or not self.ps[j.id].ps_sizes:
                raise SpecError(f"job {j.id!r} needs at least one parameter server", source="<tiresias>", field="ps")

    @property
    def eligible_machines(self) -> tuple[str, ...]:
        return self.machines if self.machines is not None else self.base.cluster.machines

    def to_dict(self) -> dict[str, Any]:
        return {"base": io.instance_to_dict(self.base),
                "ps": {j: [list(p.ps_sizes), p.cpus_per_worker, p.cpus_per_ps] for j, p in self.ps.items()},
                "traffic": dict(self.traffic), "machines": None if self.machines is None else list(self.machines),
                "spread": dict(self.spread or {}), "releases": [list(r) for r in self.releases],
                "neutral": self.neutral}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<tiresias>") -> TiresiasInstance:
        return cls(io.instance_from_dict(d["base"], source),
                   {j: PSJob(tuple(v[0]), v[1], v[2]) for j, v in d["ps"].items()},
                   dict(d.get("traffic", {})),
                   None if d.get("machines") is None else tuple(d["machines"]),
                   dict(d.get("spread") or {}), tuple(tuple(r) for r in d.get("releases", ())),
                   bool(d.get("neutral", False)))



@dataclass(frozen=True)
class TiresiasSolution:
    """The allocation plus where each parameter server sits (``ps_hosts[job][j]`` = machine)."""

    allocation: Allocation
    ps_hosts: Mapping[str, tuple[str, ...]]


def node_traffic(inst: TiresiasInstance, sol: TiresiasSolution) -> dict[str, float]:
    """``T_i`` of every eligible node for a placement (the formula above, evaluated directly)."""
    T = {m: float(inst.traffic.get(m, 0)) for m in inst.eligible_machines}
    for job in inst.base.jobs:
        ja = sol.allocation.get(job.id)
        if ja is None:
            continue
        ps = inst.ps[job.id]
        W, M = job.requested.gpus, ps.model_size
        hosted: dict[str, int] = defaultdict(int)
        for j, m in enumerate(sol.ps_hosts[job.id]):
            hosted[m] += ps.ps_sizes[j]
        for m in set(ja.placement) | set(hosted):
            w = ja.placement[m].gpus if m in ja.placement else 0
            T[m] = T.get(m, 0.0) + w * (M - hosted[m]) + hosted[m] * (W - w)
    return T


def unplaced_penalty(inst: TiresiasInstance) -> float:
    r"""Price per worker of an unplaced job: :math:`P = \lfloor \max_i t_i + \sum_a 2 W_a M_a \rfloor + 1`.
    A job adds at most :math:`w(M - h) + h(W - w) \le 2 W M` to a node, so :math:`P` exceeds the
    maximum node traffic of any placement: fewer unplaced workers always wins, then less traffic."""
    t = max((float(v) for v in inst.traffic.values()), default=0.0)
    return float(int(t + sum(2 * j.requested.gpus * inst.ps[j.id].model_size for j in inst.base.jobs)) + 1)


def cross_fraction(inst: TiresiasInstance, sol: TiresiasSolution, job_id: str) -> float:
    r""":math:`x_a`: the share of job :math:`a`'s worker-PS traffic (each worker exchanges :math:`M_a` with
    its PS, :math:`W_a M_a` in all) that crosses machines, :math:`1 - \sum_i w_{ai} h_{ai} / (W_a M_a)` with
    :math:`h_{ai}` the PS MB on node :math:`i` — linear in the ILP's :math:`q_{aji} = w_{ai} p_{aji}`."""
    job = inst.base.job_by_id[job_id]
    ps = inst.ps[job_id]
    W, M = job.requested.gpus, ps.model_size
    if W <= 0 or M <= 0:
        return 0.0
    ja = sol.allocation[job_id]
    local = 0.0
    for j, m in enumerate(sol.ps_hosts.get(job_id, ())):
        if m in ja.placement:
            local += ja.placement[m].gpus * ps.ps_sizes[j]
    return max(0.0, 1.0 - local / (W * M))


def neutral_terms(inst: TiresiasInstance) -> dict[str, tuple[float, float]]:
    """Per job ``(d_j, C_q)`` (:func:`formulations.neutral.job_terms`: remaining run time at the request, in
    seconds, and the completion charged when queued, with the reserved work's ``releases``): the constants
    :func:`tiresias_neutral` and the ILP's est-avg-jct objective share."""
    return job_terms(inst.base, lambda ja: 1.0, lambda j: 1.0, inst.releases)


def tiresias_neutral(inst: TiresiasInstance, sol: TiresiasSolution | Allocation) -> float:
    r"""The kind's neutral objective: est-avg-jct (:mod:`formulations.neutral`) with a placed job's speed
    :math:`1 / (1 + o_a x_a)` (:func:`spread_overhead`, :func:`cross_fraction`): consolidated with its PS it
    runs at its request, fully spread it is :math:`o_a` slower. A plain allocation is completed with PS by
    :func:`complete` (the same rule as the family objective); a queued job is charged :math:`C_q`."""
    if isinstance(sol, Allocation):
        sol = complete(inst, sol, allow_missing=True)
    speed = {ja.job_id: 1.0 / (1.0 + inst.spread.get(ja.job_id, 0.0) * cross_fraction(inst, sol, ja.job_id))
             for ja in sol.allocation}
    return est_avg_jct(inst.base, sol.allocation, lambda ja: speed.get(ja.job_id, 1.0), lambda j: 1.0,
                       inst.releases)


def tiresias_objective(inst: TiresiasInstance, sol: TiresiasSolution | Allocation) -> float:
    r"""THE objective: the maximum per-node network traffic (MB) plus :func:`unplaced_penalty` per worker
    of an unplaced job (issue 21, P3: an unplaced job is priced, not an error):

    .. math:: \max_i T_i + P \sum_{a\ \text{unplaced}} W_a .

    A plain :class:`Allocation` (a heuristic's, workers only) is first completed with parameter servers
    by :func:`complete` (the rule is stated there). The ILP places every job
    (every generated instance can place them all), so its optimum is the optimum of this priced objective
    and the bound stays valid for allocations that leave jobs out. On a ``neutral`` instance: :func:`tiresias_neutral`."""
    if inst.neutral:
        return tiresias_neutral(inst, sol)
    if isinstance(sol, Allocation):
        sol = complete(inst, sol, allow_missing=True)
    missing = sum(j.requested.gpus for j in inst.base.jobs if j.id not in sol.allocation)
    pen = unplaced_penalty(inst) * missing if missing else 0.0
    return max(node_traffic(inst, sol).values(), default=0.0) + pen


def complete(inst: TiresiasInstance, allocation: Allocation, *, allow_missing: bool = False) -> TiresiasSolution:
    """Parameter servers for a worker-only allocation (a heuristic's), by the consolidation
    convention Tiresias describes for its baseline ("all components of a job on the same or the
    fewest servers", §2.2; one PS per worker in its runs): each worker machine hosts a share of the
    job's ``K`` PS proportional to its workers (largest remainders first, ties to the machine with
    more workers, then cluster order), larger PS on machines with more workers. A PS whose host has
    no CPU left (after every job's workers and earlier PS) goes to the job's next worker machine
    with room, else to the machine with the least existing traffic that has a CPU free.

    It is a fixed rule, not an optimisation: the heuristic is neither given the best PS placement
    (which would credit it with a decision it never makes) nor the worst. Every job must be placed
    (the ILP places all of them); otherwise :class:`SolverError`, unless ``allow_missing`` (the objective
    prices unplaced jobs: :func:`formulations.tiresias.unplaced_penalty`), when they are skipped."""
    missing = [j.id for j in inst.base.jobs if j.id not in allocation]
    if missing and not allow_missing:
        raise SolverError(f"the Tiresias objective scores complete placements; not placed: {', '.join(missing[:5])}")
    order = {m: i for i, m in enumerate(inst.base.cluster.machines)}
    free_cpu = {m: inst.base.capacity(m).cpus for m in inst.base.cluster.machines}
    for ja in allocation:
        for m, r in ja.placement.items():
            free_cpu[m] -= r.cpus
    hosts, out = {}, []
    for job in inst.base.jobs:
        if job.id not in allocation:
            continue
        ja = allocation[job.id]
        ps = inst.ps[job.id]
        K = len(ps.ps_sizes)
        workers = sorted(((m, r.gpus) for m, r in ja.placement.items() if r.gpus > 0), key=lambda x: (-x[1], order[x[0]]))
        W = sum(w for _, w in workers)
        share = [K * w / W for _, w in workers]
        n = [int(s) for s in share]
        for i in sorted(range(len(workers)), key=lambda i: (-(share[i] - n[i]), i))[:K - sum(n)]:
            n[i] += 1
        slots = [m for (m, _), c in zip(workers, n, strict=True) for _ in range(c)]
        where: list[str] = [""] * K
        for s, j in zip(slots, sorted(range(K), key=lambda j: (-ps.ps_sizes[j], j)), strict=True):
            m = s if free_cpu[s] >= ps.cpus_per_ps else None
            m = m or next((w for w, _ in workers if free_cpu[w] >= ps.cpus_per_ps), None)
            m = m or min((x for x in inst.eligible_machines if free_cpu[x] >= ps.cpus_per_ps),
                         key=lambda x: (inst.traffic.get(x, 0), order[x]), default=None)
            if m is None:
                raise SolverError(f"job {job.id!r}: no machine has a CPU free for parameter server {j}")
            free_cpu[m] -= ps.cpus_per_ps
            where[j] = m
        hosts[job.id] = tuple(where)
        pl = dict(ja.placement)
        for m in where:
            pl[m] = pl.get(m, Resources()) + Resources(0, ps.cpus_per_ps, 0.0)
        out.append(JobAllocation(job.id, ja.plan, pl))
    return TiresiasSolution(Allocation.of(out), hosts)



__all__ = ["MAX_MB", "PSJob", "TiresiasInstance", "TiresiasSolution", "complete", "cross_fraction", "neutral_terms",
           "node_traffic", "spread_overhead", "tiresias_neutral", "tiresias_objective", "unplaced_penalty"]
