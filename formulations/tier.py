r"""Tier-aware consolidation placement: the exact counterpart of Dally's decision at one instant.

Waiting rigid jobs :math:`j` with GPU demand :math:`g_j` and communication overhead
:math:`o_j(\ell)` per tier :math:`\ell \in \{machine, rack, network\}` (a fraction of compute time,
non-decreasing in the tier, as in Dally's Table 1); machines :math:`m` with free GPUs :math:`G_m`;
racks read from the networkx topology. Binary :math:`a_{jm}` (job on machine m alone),
:math:`b_{jr}` (job inside rack r), :math:`n_j` (job across racks); integer :math:`x_{jm}` GPUs.

.. math::

   \sum_m a_{jm} + \sum_r b_{jr} + n_j \le 1,\qquad
   \sum_m x_{jm} = g_j\Big(\sum_m a_{jm} + \sum_r b_{jr} + n_j\Big)

   x_{jm} \le \min(g_j, G_m)\,(a_{jm} + b_{j,r(m)} + n_j),\qquad \sum_j x_{jm} \le G_m

Objective *max-throughput*: :math:`\max \sum_j g_j \big(e^M_j \sum_m a_{jm} + e^R_j \sum_r b_{jr}
+ e^N_j n_j\big)` with :math:`e^\ell_j = 1/(1 + o_j(\ell))` (effective GPUs); an unplaced job adds 0.
*min-overhead*: GPU-weighted overhead with **unplaced GPUs priced** (issue 20.4: scoring only the
placed jobs let FIFO placing 10 of 12 jobs beat the place-all optimum):

.. math::

   \min \sum_{j\ \text{placed}} g_j\, o_j(\ell_j) \;+\; W \sum_{j\ \text{unplaced}} g_j,
   \qquad W = \Big\lfloor \sum_j g_j\, o_j(\text{network}) \Big\rfloor + 1 .

:math:`W` exceeds the worst total overhead of any allocation, so the order is lexicographic: fewer
unplaced GPUs always wins (:math:`U_A \ge U_B + 1 \Rightarrow \text{cost}_A \ge W U_B + W >
W U_B + \sum_j g_j o_j(N) \ge \text{cost}_B`), then less overhead. Where every job can be placed the
optimum is the old place-all optimum (same allocation, same value); an unplaced job costs
:math:`W g_j > g_j o_j(N)`, more than any placement of it. Every allocation is scored (none is
infeasible for leaving a job out) and the model's objective equals :func:`tier_objective` on it, so a
heuristic's gap is never negative. (Rejected: "place all" as a constraint on every scored allocation
— it leaves no gap at all on the instances where the jobs do not all fit, the common busy case.)

*est-avg-jct* (mode ``est-avg-jct``, the kind's neutral objective exactly, :func:`tier_neutral`): with
:math:`(d_j, C^q_j)` of :func:`formulations.neutral.job_terms`, :math:`\min \frac{1}{|J|} \sum_j \big(C^q_j +
\sum_\ell \text{level}_{j\ell} (d_j (1 + o_j(\ell)) / (1 + o_j(M)) - C^q_j)\big)`; an unplaced job is
charged its queued completion :math:`C^q_j`.

The chosen level is never below the placement's real tier, and overheads are monotone, so the
optimum equals the optimum over real tiers (the objective is always recomputed from the real tiers).
**Symmetry**: machines of one rack with equal free GPUs are ordered by load; identical jobs (equal
demand and overheads) are ordered by their objective terms (an unplaced twin last). A per-rack gate
:math:`\sum_{m \in r} x_{jm} \le g_j(\sum_{m\in r} a_{jm} + b_{jr} + n_j)` tightens the relaxation.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any

from schedlab.formulations import io
from schedlab.formulations.base import Built, check_deadline
from schedlab.formulations.model import LinExpr, Model
from schedlab.formulations.neutral import Releases, est_avg_jct, generated_durations, job_terms
from schedlab.perfmodel.network import comm_overhead
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.tiers import Tier


class TierMode(Enum):
    MAX_THROUGHPUT = "max-throughput"
    MIN_OVERHEAD = "min-overhead"
    #: the kind's neutral objective (:mod:`formulations.neutral`), exactly: min est-avg-jct at the tier rates
    EST_AVG_JCT = "est-avg-jct"


@dataclass(frozen=True)
class TierInstance:
    """``base``: cluster, waiting rigid jobs, ``reserved`` (GPUs in use). ``overhead[job]`` =
    (machine, rack, network) overhead fractions, non-decreasing. ``releases``: ``(seconds, GPUs)`` the
    reserved work frees when it ends (a replay state's running jobs; only the neutral objective reads it)."""

    KIND = "tier-placement"
    base: Instance
    overhead: Mapping[str, tuple[float, float, float]]
    mode: TierMode = TierMode.MAX_THROUGHPUT
    machines: tuple[str, ...] | None = None
    releases: Releases = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "overhead", MappingProxyType({k: tuple(v) for k, v in self.overhead.items()}))
        object.__setattr__(self, "releases", tuple((float(t), int(g)) for t, g in self.releases))
        for j in self.base.jobs:
            o = self.overhead.get(j.id)
            if o is None or len(o) != 3 or not (0 <= o[0] <= o[1] <= o[2]):
                raise SpecError(f"job {j.id!r}: overhead must be 3 non-decreasing fractions >= 0, got {o}",
                                source="<tier>", field=f"overhead.{j.id}")

    @property
    def eligible_machines(self) -> tuple[str, ...]:
        return self.machines if self.machines is not None else self.base.cluster.machines

    def free_gpus(self, m: str) -> int:
        return max(0, self.base.capacity(m).gpus)

    def to_dict(self) -> dict[str, Any]:
        return {"base": io.instance_to_dict(self.base), "overhead": {k: list(v) for k, v in self.overhead.items()},
                "mode": self.mode.value, "machines": None if self.machines is None else list(self.machines),
                "releases": [list(r) for r in self.releases]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<tier>") -> TierInstance:
        return cls(io.instance_from_dict(d["base"], source), {k: tuple(v) for k, v in d["overhead"].items()},
                   TierMode(d.get("mode", "max-throughput")),
                   None if d.get("machines") is None else tuple(d["machines"]),
                   tuple(tuple(r) for r in d.get("releases", ())))



def placement_tier(inst: TierInstance, ja: JobAllocation) -> Tier:
    """Tier of a placement (:meth:`Cluster.tier_of`; one without GPUs: MACHINE)."""
    return inst.base.cluster.tier_of(ja.placement, default=Tier.MACHINE)


#: what a report prints beside a tier-placement gap (the kind's gap note)
GAP_NOTE = ("tier: both sides are scored at the real tier of each placement (Dally's Table 1 overheads); "
            "min-overhead prices every unplaced GPU at W = floor(sum_j g_j o_j(network)) + 1, above any "
            "allocation's total overhead, so fewer unplaced GPUs always wins and a partial allocation "
            "never scores below the optimum (issue 20.4)")


def unplaced_penalty(inst: TierInstance) -> float:
    """``W``, the min-overhead price of one unplaced GPU: ``floor(sum_j g_j o_j(network)) + 1``,
    strictly above the total overhead of any allocation (module docstring)."""
    return float(math.floor(sum(j.requested.gpus * inst.overhead[j.id][2] for j in inst.base.jobs)) + 1)


def tier_rate(inst: TierInstance, ja: JobAllocation) -> float:
    r"""A placed job's speed relative to its request (all GPUs on one machine), at the real tier of its
    placement: :math:`(1 + o_j(\text{machine})) / (1 + o_j(\text{tier}))` (Dally: iteration time = compute x
    (1 + overhead(tier)))."""
    o = inst.overhead[ja.job_id]
    return (1 + o[0]) / (1 + o[placement_tier(inst, ja) - 1])


def neutral_terms(inst: TierInstance) -> dict[str, tuple[float, float]]:
    """Per job ``(d_j, C_q)`` of the neutral objective (:func:`formulations.neutral.job_terms` at the tier
    rates, remaining run time at the request in seconds, ``releases`` of the reserved work): the constants
    both :func:`tier_neutral` and the ``est-avg-jct`` model use."""
    return job_terms(inst.base, lambda ja: tier_rate(inst, ja), lambda j: 1.0, inst.releases)


def tier_neutral(inst: TierInstance, allocation: Allocation) -> float:
    r"""The kind's neutral objective: est-avg-jct (:mod:`formulations.neutral`), a placed job finishing at
    :math:`d_j (1 + o_j(\text{tier})) / (1 + o_j(\text{machine}))`, a queued one charged :math:`C_q`."""
    return est_avg_jct(inst.base, allocation, lambda ja: tier_rate(inst, ja), lambda j: 1.0, inst.releases)


def tier_objective(inst: TierInstance, allocation: Allocation) -> float:
    """THE objective, at the real tier of each placement: effective GPUs ``sum g/(1+o(tier))`` over
    placed jobs (max-throughput), or GPU-weighted overhead ``sum g*o(tier)`` over placed jobs plus
    ``W * g`` per unplaced job (min-overhead, :func:`unplaced_penalty`), or the neutral est-avg-jct
    (:func:`tier_neutral`, mode ``est-avg-jct``)."""
    if inst.mode is TierMode.EST_AVG_JCT:
        return tier_neutral(inst, allocation)
    tot = 0.0
    pen = unplaced_penalty(inst) if inst.mode is TierMode.MIN_OVERHEAD else 0.0
    for job in inst.base.jobs:
        ja = allocation.get(job.id)
        if ja is None:
            tot += pen * job.requested.gpus
            continue
        o = inst.overhead[job.id][placement_tier(inst, ja) - 1]
        g = job.requested.gpus
        tot += g / (1 + o) if inst.mode is TierMode.MAX_THROUGHPUT else g * o
    return tot


class TierFormulation:
    name = "tier-ilp"

    def build(self, inst: TierInstance, deadline: float | None = None) -> Built:
        nodes = inst.base.cluster.graph.nodes
        mach = [m for m in inst.eligible_machines if inst.free_gpus(m) > 0]
        racks: dict[str, list[str]] = defaultdict(list)
        for m in mach:
            racks[nodes[m]["rack"]].append(m)
        total = sum(inst.free_gpus(m) for m in mach)
        maxim = inst.mode is TierMode.MAX_THROUGHPUT
        neutral = inst.mode is TierMode.EST_AVG_JCT
        W = 0.0 if maxim or neutral else unplaced_penalty(inst)
        terms = neutral_terms(inst) if neutral else {}
        n_jobs = max(1, len(inst.base.jobs))
        mdl = Model("tier-ilp", sense="max" if maxim else "min")
        used = {m: LinExpr() for m in mach}
        obj = LinExpr()
        data: dict[str, Any] = {"a": {}, "b": {}, "n": {}, "x": {}}
        contrib: dict[str, LinExpr] = {}
        for job in inst.base.jobs:
            check_deadline(deadline)
            g = job.requested.gpus
            o = inst.overhead[job.id]
            # min-overhead: g*o(level) if placed, W*g if not = W*g + sum_level (g*o(level) - W*g) * level;
            # est-avg-jct: (C_q + sum_level (d (1 + o(level)) / (1 + o(machine)) - C_q) * level) / |J|
            if neutral:
                d, cq = terms[job.id]
                coef, const = [(d * (1 + v) / (1 + o[0]) - cq) / n_jobs for v in o], cq / n_jobs
            else:
                coef, const = [g / (1 + v) if maxim else g * v - W * g for v in o], W * g
            choice = LinExpr()
            cj = contrib[job.id] = LinExpr(const=const)
            obj.const += const
            gate: dict[str, LinExpr] = {m: LinExpr() for m in mach}
            for m in mach:
                if g <= inst.free_gpus(m):
                    a = mdl.binary(f"a[{job.id},{m}]")
                    data["a"][job.id, m] = a
                    choice.add_term(a.index, 1)
                    gate[m].add_term(a.index, 1)
                    obj.add_term(a.index, coef[0])
                    cj.add_term(a.index, coef[0])
            for r, ms in racks.items():
                if len(ms) > 1 and g <= sum(inst.free_gpus(m) for m in ms):
                    b = mdl.binary(f"b[{job.id},{r}]")
                    data["b"][job.id, r] = b
                    choice.add_term(b.index, 1)
                    obj.add_term(b.index, coef[1])
                    cj.add_term(b.index, coef[1])
                    for m in ms:
                        gate[m].add_term(b.index, 1)
            if len(racks) > 1 and g <= total:
                n = mdl.binary(f"n[{job.id}]")
                data["n"][job.id] = n
                choice.add_term(n.index, 1)
                obj.add_term(n.index, coef[2])
                cj.add_term(n.index, coef[2])
                for m in mach:
                    gate[m].add_term(n.index, 1)
            if choice.terms:
                mdl.add(choice <= 1, f"one[{job.id}]")
            xs = LinExpr()
            in_rack: dict[str, LinExpr] = defaultdict(LinExpr)
            for m in mach:
                if not gate[m].terms:
                    continue
                U = min(g, inst.free_gpus(m))
                x = mdl.integer(f"x[{job.id},{m}]", 0, U)
                data["x"][job.id, m] = x
                xs.add_term(x.index, 1)
                used[m].add_term(x.index, 1)
                in_rack[nodes[m]["rack"]].add_term(x.index, 1)
                mdl.add(x - gate[m] * U <= 0, f"gate[{job.id},{m}]")
                a = data["a"].get((job.id, m))
                if a is not None:  # a job alone on m has all its GPUs there (cut, implied)
                    mdl.add(x - g * a >= 0, f"alone[{job.id},{m}]")
            mdl.add(xs - choice * g == 0, f"gang[{job.id}]")
            for r, e in in_rack.items():  # per-rack gate (cut: tighter than the sum of machine gates)
                lvl = LinExpr()
                for m in racks[r]:
                    if (job.id, m) in data["a"]:
                        lvl.add_term(data["a"][job.id, m].index, g)
                if (job.id, r) in data["b"]:
                    lvl.add_term(data["b"][job.id, r].index, g)
                if job.id in data["n"]:
                    lvl.add_term(data["n"][job.id].index, g)
                mdl.add(e - lvl <= 0, f"rackgate[{job.id},{r}]")
        for m in mach:
            if used[m].terms:
                mdl.add(used[m] <= inst.free_gpus(m), f"cap[{m}]")
        # identical jobs (same demand and overheads) are interchangeable: order their objective terms
        for ids in _twins(inst, terms).values():
            for j1, j2 in zip(ids, ids[1:], strict=False):
                e = contrib[j1] - contrib[j2]
                if e.terms:
                    mdl.add(e >= 0 if maxim else e <= 0, f"twins[{j1},{j2}]")
        for ms in racks.values():
            by_free: dict[int, list[str]] = defaultdict(list)
            for m in ms:
                by_free[inst.free_gpus(m)].append(m)
            for cls in by_free.values():
                for a_, b_ in zip(cls, cls[1:], strict=False):
                    if used[a_].terms:
                        mdl.add(used[a_] - used[b_] >= 0, f"sym[{a_},{b_}]")
        if maxim:
            mdl.maximize(obj)
        else:
            mdl.minimize(obj)
        return Built(mdl, data)

    def extract(self, inst: TierInstance, built: Built, values: list[float]) -> Allocation:
        per: dict[str, dict[str, Resources]] = defaultdict(dict)
        for (jid, m), x in built.data["x"].items():
            k = int(round(values[x.index]))
            if k > 0:
                per[jid][m] = Resources(k, 0, 0.0)
        return Allocation.of(JobAllocation(j, ExecutionPlan(dp=sum(r.gpus for r in pl.values())), pl)
                             for j, pl in per.items())

    def objective(self, inst: TierInstance, solution: Allocation) -> float:
        return tier_objective(inst, solution)

    def allocation_of(self, solution: Allocation) -> Allocation:
        return solution

    def verify(self, inst: TierInstance, solution: Allocation) -> list[str]:
        out = [str(v) for v in validate_allocation(inst.base, solution)]
        elig = set(inst.eligible_machines)
        out += [f"[eligible] job {ja.job_id!r} outside the sub-problem" for ja in solution
                if not set(ja.placement) <= elig]
        return out

    def point(self, inst: TierInstance, built: Built, allocation: Allocation) -> tuple[dict[int, float], list[str]]:
        """The model's variables at ``allocation``: level = the real tier; identical jobs and the
        machines of one rack with equal free GPUs are first permuted into the model's order (the
        objective is unchanged)."""
        alloc = canonical_tier(inst, built, allocation)
        d = built.data
        nodes = inst.base.cluster.graph.nodes
        vals: dict[int, float] = {}
        problems = []
        for ja in alloc:
            ms = [m for m, r in ja.placement.items() if r.gpus > 0]
            t = placement_tier(inst, ja)
            key = {Tier.MACHINE: ("a", (ja.job_id, ms[0] if ms else None)),
                   Tier.RACK: ("b", (ja.job_id, nodes[ms[0]]["rack"] if ms else None)),
                   Tier.NETWORK: ("n", ja.job_id)}[t]
            v = d[key[0]].get(key[1])
            if v is None:
                problems.append(f"job {ja.job_id!r}: no {t.name.lower()}-level variable for its placement")
            else:
                vals[v.index] = 1.0
            for m in ms:
                x = d["x"].get((ja.job_id, m))
                if x is None:
                    problems.append(f"job {ja.job_id!r}: machine {m!r} outside the model")
                else:
                    vals[x.index] = float(ja.placement[m].gpus)
        return vals, problems

    def hints(self, inst: TierInstance, built: Built, allocation: Allocation) -> dict[int, float]:
        h = {v.index: 0.0 for v in built.model.vars}
        nodes = inst.base.cluster.graph.nodes
        for ja in allocation:
            ms = [m for m, r in ja.placement.items() if r.gpus > 0]
            t = placement_tier(inst, ja)
            key = {Tier.MACHINE: ("a", (ja.job_id, ms[0])), Tier.RACK: ("b", (ja.job_id, nodes[ms[0]]["rack"])),
                   Tier.NETWORK: ("n", ja.job_id)}[t]
            v = built.data[key[0]].get(key[1])
            if v is None or not all((ja.job_id, m) in built.data["x"] for m in ms):
                continue
            h[v.index] = 1.0
            for m in ms:
                h[built.data["x"][ja.job_id, m].index] = float(ja.placement[m].gpus)
        return h


def _twins(inst: TierInstance, terms: Mapping[str, tuple[float, float]]) -> dict[tuple, list[str]]:
    """Interchangeable jobs: equal demand and overheads (and, under est-avg-jct, equal neutral terms)."""
    twins: dict[tuple, list[str]] = defaultdict(list)
    for job in inst.base.jobs:
        twins[(job.requested.gpus, inst.overhead[job.id], terms.get(job.id))].append(job.id)
    return twins


def canonical_tier(inst: TierInstance, built: Built, allocation: Allocation) -> Allocation:
    """``allocation`` permuted by the model's symmetries: identical jobs (equal demand and overheads)
    take their objective terms in non-increasing (max-throughput) or non-decreasing (min-overhead)
    order; machines of one rack with equal free GPUs carry non-increasing loads."""
    maxim = inst.mode is TierMode.MAX_THROUGHPUT
    twins = _twins(inst, neutral_terms(inst) if inst.mode is TierMode.EST_AVG_JCT else {})
    moved = {}
    for ids in twins.values():
        def term(j: str) -> float:
            ja = allocation.get(j)
            return -1.0 if ja is None else tier_objective(inst, Allocation.of([ja]))
        ranked = sorted(ids, key=lambda j: (allocation.get(j) is None, -term(j) if maxim else term(j)))
        for new, old in zip(ids, ranked, strict=True):
            if allocation.get(old) is not None:
                ja = allocation[old]
                moved[new] = JobAllocation(new, ja.plan, ja.placement)
    single = Allocation.of(moved.values())
    load: dict[str, int] = defaultdict(int)
    for ja in single:
        for m, r in ja.placement.items():
            load[m] += r.gpus
    rename = {}
    nodes = inst.base.cluster.graph.nodes
    classes: dict[tuple, list[str]] = defaultdict(list)
    for m in inst.eligible_machines:
        if inst.free_gpus(m) > 0:
            classes[(nodes[m]["rack"], inst.free_gpus(m))].append(m)
    for cls in classes.values():
        rename.update(zip(sorted(cls, key=lambda m: -load[m]), cls, strict=True))
    return Allocation.of(JobAllocation(ja.job_id, ja.plan, {rename.get(m, m): r for m, r in ja.placement.items()})
                         for ja in single)


def tier_relaxation_bound(inst: TierInstance) -> float:
    """A cheap valid bound on the whole problem: every job at its best (machine) tier and only the
    total free GPUs ``C`` binding, a fractional knapsack solved greedily. Max-throughput: fill ``C``
    with effective GPUs, lowest ``o_j(M)`` first. Min-overhead (a lower bound):
    ``W sum_j g_j - max { sum_j f_j g_j (W - o_j(M)) : sum_j f_j g_j <= C, 0 <= f_j <= 1 }`` — a placed
    GPU saves ``W - o_j(M) > 0`` against its price unplaced, lowest ``o_j(M)`` first; it is
    ``sum_j g_j o_j(M)`` when every job fits."""
    jobs = inst.base.jobs
    if inst.mode is TierMode.EST_AVG_JCT:  # each job's term is at least d_j (placed on one machine or queued)
        return sum(d for d, _ in neutral_terms(inst).values()) / len(jobs) if jobs else 0.0
    cap = float(sum(inst.free_gpus(m) for m in inst.eligible_machines))
    maxim = inst.mode is TierMode.MAX_THROUGHPUT
    W = 0.0 if maxim else unplaced_penalty(inst)
    tot = 0.0 if maxim else W * sum(j.requested.gpus for j in jobs)
    for j in sorted(jobs, key=lambda j: inst.overhead[j.id][0]):
        if cap <= 0:
            break
        take = min(float(j.requested.gpus), cap)
        o = inst.overhead[j.id][0]
        tot += take / (1 + o) if maxim else -take * (W - o)
        cap -= take
    return tot


#: the models of Dally's Table 1 (their per-tier overheads come from :func:`perfmodel.comm_overhead`)
DALLY_MODELS = ("vgg11", "alexnet", "mobilenetv3", "resnet18", "resnet50", "bert_large")


def generate_tier(cluster: Cluster, n_jobs: int, *, seed: int = 0, busy: float = 0.3,
                  mode: TierMode = TierMode.MAX_THROUGHPUT) -> TierInstance:
    """A seeded snapshot: machines busy with probability ``busy`` (random GPUs reserved); jobs with
    GPU demand in {1, 2, 4, 8, 16, 32} (at most one rack), a model of Dally's Table 1 and a
    global batch of 32 per GPU (so the data-parallel plan fits GPU memory)."""
    rng = random.Random(seed)
    reserved = {}
    for m in cluster.machines:
        if rng.random() < busy:
            reserved[m] = Resources(rng.randint(1, cluster.machine(m).gpus), 0, 0.0)
    rack_gpus = max(sum(cluster.machine(m).gpus for m in cluster.machines_in(r)) for r in cluster.racks)
    jobs, ov = [], {}
    durations = generated_durations(n_jobs, seed)
    for i in range(n_jobs):
        g = rng.choice([x for x in (1, 2, 4, 4, 8, 8, 16, 32) if x <= rack_gpus])
        model = rng.choice(DALLY_MODELS)
        jid = f"d{i:03d}"
        jobs.append(Job(id=jid, requested=Resources(g, 0, 0.0), model=model, global_batch=32 * g,
                        duration=durations[i]))
        ov[jid] = tuple(comm_overhead(model, t) for t in (Tier.MACHINE, Tier.RACK, Tier.NETWORK))
    return TierInstance(Instance(cluster, tuple(jobs), reserved=reserved), ov, mode)


__all__ = ["DALLY_MODELS", "GAP_NOTE", "TierFormulation", "TierInstance", "TierMode", "canonical_tier",
           "generate_tier", "neutral_terms", "placement_tier", "tier_neutral", "tier_objective", "tier_rate",
           "tier_relaxation_bound", "unplaced_penalty"]
