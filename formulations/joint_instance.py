"""Instances of the joint execution-plan + allocation problem (Rubick's), the footprint of an
allocation, its pricing, and the ONE objective function.

**Options.** A job's *option* is a class of placements with one throughput: ``gpus`` in all,
``cpus`` and ``mem_gb`` at least (on the machines holding its GPUs), and either on one machine
(``machines == 1``) or *spread*: any number of machines, each holding a multiple of ``divisor``
GPUs (uneven splits such as 3 + 1 or 8 + 4 included), all inside ``tier`` (rack or network), each
rack holding a multiple of ``granule`` GPUs (a multiple of ``divisor``; it matters only across racks,
where a 3D plan's stages straddling a rack boundary are slower). The option's ``throughput`` is the
best plan's over that class (``plan`` attains it).

**Pricing.** An allocation is priced by what its job really gets (:func:`footprint`: GPU counts per
machine, the tier they span, CPUs and host memory on those machines) with the plan it really runs:

* ``pricing="perfmodel"``: :class:`perfmodel.PerfModel` on the actual placement, at the largest CPU
  level (:data:`PERF_CPU_LEVELS` per GPU) not above the CPUs held (CPUs above a level idle; only
  ZeRO-Offload plans depend on CPUs); the plan must be valid there and fit the host memory held;
* ``pricing="synthetic"``: the small synthetic zoo's closed formula (:mod:`formulations.joint_options`);
* ``pricing="table"`` (hand-built instances): the best option of the table with that plan that the
  footprint fits.

A job's normalised throughput is its throughput over ``ref_throughput`` (its requested resources
and plan), as Rubick normalises. Option tables are built so that every valid allocation is
*covered* by an option at least as fast (:func:`covering_option`): the exact models range over all
of them, which is what makes ``gap >= 0`` hold against any heuristic (:mod:`formulations.containment`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cached_property
from types import MappingProxyType
from typing import Any

from schedlab.formulations import io
from schedlab.perfmodel.plans import ExecutionPlan, parse_plan
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.errors import SolverError, SpecError
from schedlab.topology.tiers import Tier

#: CPU levels (cores per GPU) of perf-model option tables: PerfModel.options' choices
PERF_CPU_LEVELS = (1, 2, 4, 8, 12)
PRICINGS = ("table", "synthetic", "perfmodel")


@dataclass(frozen=True, slots=True)
class JobOption:
    """A class of placements with one throughput (see the module docstring). ``machines``: 1 = one
    machine; >= 2 = spread over any number of machines. ``divisor`` (spread only; default the plan's
    TP degree): every machine holds a multiple of it. ``tier`` (spread only; default network): the
    highest tier the placement may span. ``granule`` (spread only; default the divisor): every rack
    holds a multiple of it."""

    gpus: int
    cpus: int
    machines: int
    throughput: float
    plan: ExecutionPlan
    mem_gb: float = 0.0
    divisor: int = 0
    tier: Tier | int = 0
    granule: int = 0

    def __post_init__(self) -> None:
        src = "<JobOption>"
        if self.gpus < 1 or self.machines < 1:
            raise SpecError(f"option {self}: gpus and machines must be >= 1", source=src, field="gpus")
        if self.plan.gpus != self.gpus:
            raise SpecError(f"option plan {self.plan.name} uses {self.plan.gpus} GPUs, not {self.gpus}",
                            source=src, field="plan")
        single = self.machines == 1
        d = self.gpus if single else (self.divisor or self.plan.tp)
        t = Tier.MACHINE if single else Tier(self.tier or Tier.NETWORK)
        if d < 1 or self.gpus % d or d % self.plan.tp:
            raise SpecError(f"option {self}: divisor {d} must divide the GPUs and be a multiple of TP "
                            f"{self.plan.tp}", source=src, field="divisor")
        r = d if single else (self.granule or d)
        if r % d or self.gpus % r:
            raise SpecError(f"option {self}: granule {r} must be a multiple of the divisor {d} and divide the "
                            "GPUs", source=src, field="granule")
        if not single and t is Tier.MACHINE:
            raise SpecError("a spread option needs tier rack or network", source=src, field="tier")
        if self.throughput < 0 or self.cpus < 0 or self.mem_gb < 0:
            raise SpecError("option throughput, cpus and mem_gb must be >= 0", source=src, field="throughput")
        object.__setattr__(self, "divisor", d)
        object.__setattr__(self, "tier", t)
        object.__setattr__(self, "granule", r)

    @property
    def single(self) -> bool:
        return self.machines == 1

    def covers(self, fp: Footprint) -> bool:
        """Whether a placement with footprint ``fp`` belongs to this option's class (throughput aside)."""
        if fp.gpus != self.gpus or fp.cpus < self.cpus or fp.mem_gb < self.mem_gb - 1e-9:
            return False
        if self.single:
            return len(fp.pieces) == 1
        return fp.tier <= self.tier and all(k % self.divisor == 0 for k in fp.pieces) \
            and all(k % self.granule == 0 for k in fp.racks)

    def to_list(self) -> list:
        out = [self.gpus, self.cpus, self.machines, self.throughput, self.plan.canonical(), self.mem_gb,
               self.divisor, int(self.tier)]
        return out + [self.granule] if self.granule != self.divisor else out

    @classmethod
    def from_list(cls, v) -> JobOption:
        extra = {} if len(v) < 8 else {"divisor": int(v[6]), "tier": int(v[7])}
        if len(v) >= 9:
            extra["granule"] = int(v[8])
        return cls(int(v[0]), int(v[1]), int(v[2]), float(v[3]), parse_plan(v[4]), float(v[5]), **extra)


@dataclass(frozen=True, slots=True)
class Footprint:
    """What a job holds: ``pieces`` (GPUs per machine holding any, descending), the ``tier`` they span,
    the CPUs and host memory on those machines (resources on GPU-less machines do not count) and
    ``racks`` (GPUs per rack holding any, descending)."""

    gpus: int
    pieces: tuple[int, ...]
    tier: Tier
    cpus: int
    mem_gb: float
    counts: Mapping[str, int]
    racks: tuple[int, ...] = ()


def footprint(inst: JointInstance, ja: JobAllocation) -> Footprint:
    cl = inst.base.cluster
    counts = {m: r.gpus for m, r in ja.placement.items() if r.gpus > 0}
    per_rack: dict[str, int] = {}
    for m, k in counts.items():
        r = cl.rack_of(m)
        per_rack[r] = per_rack.get(r, 0) + k
    tier = cl.tier_of(counts, default=Tier.MACHINE)
    cpus = sum(r.cpus for m, r in ja.placement.items() if m in counts)
    mem = sum(r.mem_gb for m, r in ja.placement.items() if m in counts)
    return Footprint(sum(counts.values()), tuple(sorted(counts.values(), reverse=True)), tier, cpus, mem,
                     MappingProxyType(counts), tuple(sorted(per_rack.values(), reverse=True)))


class JointObjective(Enum):
    SUM = "sum"            # sum of normalised throughputs
    WEIGHTED = "weighted"  # sum of weight * normalised throughput
    MAXMIN = "max-min"     # min over jobs of weight * normalised throughput (queued jobs count 0)
    NEUTRAL = "est-avg-jct"  # formulations.neutral's estimated average completion time, as gains (below)


@dataclass(frozen=True)
class JointInstance:
    """``base`` (cluster, jobs, current allocation, quotas, reserved) plus per-job ``options`` and
    ``ref_throughput``. ``reconfig_penalty`` is charged (in normalised-throughput units) for every
    running job of ``base.current`` whose plan or placement changes or that is preempted: a linear
    stand-in for Rubick's rule "reconfigure only if ``(T - N delta) / T > 0.97``" (see
    :data:`GAP_NOTE`). ``place_guaranteed`` forces every guaranteed job to be placed. ``machines``
    restricts the eligible machines (POP sub-problems); ``None`` = all. ``pricing`` names how any
    allocation is priced (module docstring). ``fixed_plans``: every job runs its option's plan (no
    re-planning of a placement at extraction; the fixed-size twin, :mod:`formulations.joint_rigid`).

    ``hold_preempted`` (**the holding rule**, the simulator's: a preempted job saves a checkpoint while it
    keeps its resources): a running job of ``base.current`` that the allocation leaves out (preempts)
    keeps holding its running resources (GPUs, CPUs, host memory, and its quota charge) for the whole
    decision, so nothing else may start on them; a job kept, moved or resized frees its old resources
    within the decision. Jobs already checkpointing or restoring are outside the decision (``reserved``).
    Every model of the kind, the verifier (:func:`holding_violations`) and the scorer judge solver and
    heuristic allocations by it alike. Off: preempted resources are free at once (generated instances)."""

    KIND = "joint"
    base: Instance
    options: Mapping[str, tuple[JobOption, ...]]
    ref_throughput: Mapping[str, float]
    weights: Mapping[str, float] = field(default_factory=dict)
    objective: JointObjective = JointObjective.SUM
    reconfig_penalty: float = 0.0
    place_guaranteed: bool = False
    machines: tuple[str, ...] | None = None
    pricing: str = "table"
    fixed_plans: bool = False
    hold_preempted: bool = False
    #: a :class:`~schedlab.perfmodel.PerfModel` of ``base.cluster`` that ``pricing="perfmodel"`` may reuse
    #: (its caches survive from one instance to the next: exact-in-the-loop rounds); not part of the
    #: instance's value (not compared, not saved)
    perf_model: Any = field(default=None, compare=False, repr=False)
    #: a dict the instances of one replay share (exact-in-the-loop rounds: the policy's option tables
    #: own it), where the pricer memoises what depends only on a job's model, batch and footprint (the
    #: fastest plan of a footprint); not part of the instance's value (not compared, not saved)
    memo: dict | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType({k: tuple(v) for k, v in self.options.items()}))
        object.__setattr__(self, "ref_throughput", MappingProxyType(dict(self.ref_throughput)))
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        if self.pricing not in PRICINGS:
            raise SpecError(f"unknown pricing {self.pricing!r}; known: {', '.join(PRICINGS)}", source="<joint>",
                            field="pricing")
        for j in self.base.jobs:
            if self.ref_throughput.get(j.id, 0) <= 0:
                raise SpecError(f"job {j.id!r} needs a positive reference throughput", source="<joint>",
                                field="ref_throughput")

    @property
    def eligible_machines(self) -> tuple[str, ...]:
        return self.machines if self.machines is not None else self.base.cluster.machines

    def holds(self, job: Job, machines: Any = None) -> bool:
        """Whether ``job`` is under the holding rule here: ``hold_preempted``, running (in ``base.current``)
        on ``machines`` only (default: the eligible ones), and free to be left out (not a guaranteed job
        that ``place_guaranteed`` forces to be placed)."""
        if not self.hold_preempted or (job.guaranteed and self.place_guaranteed):
            return False
        cur = self.base.current.get(job.id)
        return cur is not None and set(cur.placement) <= set(self.eligible_machines if machines is None
                                                              else machines)

    @cached_property
    def hold_capacity(self) -> Mapping[str, Resources]:
        """Per machine, the capacity the holding rule checks against: :meth:`Instance.capacity`, each
        component raised to what the running jobs hold there together when they already exceed it (a
        state whose running allocations were completed with host memory the simulator did not charge:
        keeping or holding them stays feasible)."""
        used: dict[str, list[float]] = {}
        for ja in self.base.current:
            for m, r in ja.placement.items():
                u = used.setdefault(m, [0.0, 0.0, 0.0])
                u[0] += r.gpus
                u[1] += r.cpus
                u[2] += r.mem_gb
        out = {}
        for m in self.base.cluster.machines:
            c = self.base.capacity(m)
            u = used.get(m)
            out[m] = c if u is None else Resources(int(max(c.gpus, u[0])), int(max(c.cpus, u[1])),
                                                  max(c.mem_gb, u[2]))
        return MappingProxyType(out)

    def weight(self, job_id: str) -> float:
        if self.objective is JointObjective.SUM or self.objective is JointObjective.NEUTRAL:
            return 1.0
        return self.weights.get(job_id, 1.0)

    @cached_property
    def neutral_terms(self) -> Mapping[str, tuple[float, float]]:
        r"""``JointObjective.NEUTRAL``: per job ``(a_j, b_j)`` with gain :math:`a_j - b_j / n` for a job run at
        normalised throughput :math:`n`: :math:`a_j = C^q_j / s`, :math:`b_j = d_j / s`, where
        :math:`d_j` and :math:`C^q_j` are :func:`formulations.neutral.job_terms` (remaining time at the
        request; completion time charged when queued) and :math:`s` the mean :math:`d_j` (1 if 0). Then
        ``est_avg_jct(A) = (sum_j C^q_j - s * sum_{j placed} gain_j) / |J|``: maximising the gains minimises
        the neutral objective exactly (the reconfiguration penalty is charged in units of :math:`s`)."""
        from schedlab.formulations.neutral import job_terms

        def rate(ja: JobAllocation) -> float:
            try:
                return self.norm(ja)
            except SolverError:
                return 1.0

        terms = job_terms(self.base, rate, lambda j: self.ref_throughput[j.id])
        s = self.neutral_scale
        return MappingProxyType({j: (q / s, d / s) for j, (d, q) in terms.items()})

    @cached_property
    def neutral_scale(self) -> float:
        """:math:`s` of :attr:`neutral_terms`: the mean remaining run time at the request (1 if 0)."""
        from schedlab.formulations.neutral import remaining_time

        d = [remaining_time(self.base, j, self.ref_throughput[j.id]) for j in self.base.jobs]
        s = sum(d) / len(d) if d else 0.0
        return s if s > 0 else 1.0

    def neutral_value(self, gains: float) -> float:
        r"""``est_avg_jct`` (:mod:`~schedlab.formulations.neutral`) of an allocation whose placed jobs' gains
        sum to ``gains`` (:attr:`neutral_terms`): :math:`s (\sum_j a_j - G) / |J|` (0 with no jobs). A dual
        bound on the gains maps to a lower bound on ``est_avg_jct``."""
        n = len(self.base.jobs)
        if n == 0:
            return 0.0
        return self.neutral_scale * (sum(a for a, _ in self.neutral_terms.values()) - gains) / n

    def gain(self, job_id: str, n: float) -> float:
        """The objective's value of job ``job_id`` run at normalised throughput ``n`` (a queued job: 0):
        ``weight * n`` (sum, weighted, max-min); ``a_j - b_j / n`` (neutral, :attr:`neutral_terms`)."""
        if self.objective is JointObjective.NEUTRAL:
            a, b = self.neutral_terms[job_id]
            return a - b / n if n > 0 else -math.inf
        return self.weight(job_id) * n

    def table(self, job: Job) -> tuple[JobOption, ...]:
        """The job's options as the models use them: a guaranteed job's option below its minRes CPUs
        ``c`` stands for its class restricted to ``>= c`` CPUs (``cpus`` lifted to ``c``; same throughput,
        since CPUs above a level idle). Dropping such options instead (or pruning options dominated only
        by them) left a verified allocation outside the model: rubick's 2-GPU bert_large with 4 of its 8
        CPUs (minRes 4) scored 4.838 against a reported optimum of 4.376 (issue 20)."""
        opts = self.options.get(job.id, ())
        need = job.min_resources.cpus if job.guaranteed and job.min_resources is not None else 0
        if not any(o.cpus < need for o in opts):
            return opts
        key = (id(opts), need)
        if key not in self._lifted:
            self._lifted[key] = tuple(o if o.cpus >= need else replace(o, cpus=need) for o in opts)
        return self._lifted[key]

    def option(self, job_id: str, k: int) -> JobOption:
        """Option ``k`` of a job as the models use it (:meth:`table`)."""
        return self.table(self.base.job(job_id))[k]

    @cached_property
    def _lifted(self) -> dict[tuple[int, int], tuple[JobOption, ...]]:
        return {}

    def admissible(self, job: Job) -> list[tuple[int, JobOption]]:
        """Options a job may take (:meth:`table`): rigid jobs keep their GPU count; guaranteed jobs need
        >= their SLO (requested throughput) and >= minRes GPUs (CPUs: lifted to minRes)."""
        opts = self.table(job)
        guaranteed = job.guaranteed
        if job.reconfigurable and not guaranteed:
            return list(enumerate(opts))
        out = []
        for k, o in enumerate(opts):
            if not job.reconfigurable and o.gpus != job.requested.gpus:
                continue
            if guaranteed:
                mr = job.min_resources or Resources()
                if o.throughput < self.ref_throughput[job.id] * (1 - 1e-9) or o.gpus < mr.gpus:
                    continue
            out.append((k, o))
        return out

    @cached_property
    def pricer(self):
        from schedlab.formulations.joint_options import PRICERS

        return PRICERS[self.pricing](self)

    def norm(self, ja: JobAllocation) -> float:
        """Normalised throughput of one job's allocation (its price over its reference; raises
        :class:`SolverError` when it cannot run: invalid plan, too little CPU or host memory, shape
        outside the tables). Memoised per instance: the models, the verifier, the objective and a warm
        start's check price the same allocations several times."""
        key = (ja.job_id, ja.plan, tuple(sorted(ja.placement.items())))
        hit = self._norms.get(key)
        if hit is None:
            job = self.base.job(ja.job_id)
            try:
                hit = self.pricer.price(job, ja, footprint(self, ja)) / self.ref_throughput[job.id]
            except SolverError as e:
                hit = e
            self._norms[key] = hit
        if isinstance(hit, SolverError):
            raise hit.with_traceback(None)
        return hit

    @cached_property
    def _norms(self) -> dict[tuple, float | SolverError]:
        return {}

    def value(self, ja: JobAllocation) -> float:
        """The objective's value of one job's allocation (:meth:`gain` of :meth:`norm`: the weighted
        normalised throughput, or the neutral gain); raises :class:`SolverError` as :meth:`norm`."""
        return self.gain(ja.job_id, self.norm(ja))

    # ------------------------------------------------------------------ json
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; option tables shared by several jobs are written once (``tables``)."""
        index: dict[int, int] = {}
        tables = []
        for os_ in self.options.values():
            if id(os_) not in index:
                index[id(os_)] = len(tables)
                tables.append([o.to_list() for o in os_])
        return {"base": io.instance_to_dict(self.base), "tables": tables,
                "options": {j: index[id(os_)] for j, os_ in self.options.items()},
                "ref_throughput": dict(self.ref_throughput), "weights": dict(self.weights),
                "objective": self.objective.value, "reconfig_penalty": self.reconfig_penalty,
                "place_guaranteed": self.place_guaranteed, "pricing": self.pricing,
                "machines": None if self.machines is None else list(self.machines),
                **({"fixed_plans": True} if self.fixed_plans else {}),
                **({"hold_preempted": True} if self.hold_preempted else {})}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<joint>") -> JointInstance:
        tables = [tuple(JobOption.from_list(v) for v in t) for t in d.get("tables", ())]
        return cls(base=io.instance_from_dict(d["base"], source),
                   options={j: tables[v] if isinstance(v, int) else tuple(JobOption.from_list(x) for x in v)
                            for j, v in d["options"].items()},
                   ref_throughput=d["ref_throughput"], weights=d.get("weights", {}),
                   objective=JointObjective(d.get("objective", "sum")),
                   reconfig_penalty=d.get("reconfig_penalty", 0.0),
                   place_guaranteed=d.get("place_guaranteed", False), pricing=d.get("pricing", "table"),
                   machines=None if d.get("machines") is None else tuple(d["machines"]),
                   fixed_plans=bool(d.get("fixed_plans", False)),
                   hold_preempted=bool(d.get("hold_preempted", False)))


#: what the harness prints beside a joint gap
GAP_NOTE = ("joint: reconfiguration is charged as a linear penalty per changed running job, not Rubick's "
            "(T - N delta)/T > 0.97 rule; allocations are priced by their real footprint and plan")


def covering_option(inst: JointInstance, ja: JobAllocation, value: float | None = None) -> int | None:
    """Index of the fastest option of ``ja``'s job that covers its footprint and is at least as fast
    as the allocation (its normalised ``value`` if given), or ``None``."""
    job = inst.base.job(ja.job_id)
    fp = footprint(inst, ja)
    ref = inst.ref_throughput[job.id]
    best, best_t = None, -1.0
    for k, o in inst.admissible(job):
        if inst.pricing == "table" and o.plan != ja.plan:
            continue
        if o.covers(fp) and (value is None or inst.gain(job.id, o.throughput / ref)
                             >= value - 1e-9 * max(1.0, abs(value))) \
                and o.throughput > best_t:
            best, best_t = k, o.throughput
    return best


def table_price(inst: JointInstance, job: Job, ja: JobAllocation, fp: Footprint) -> float:
    """``pricing="table"``: the best option of the table with the allocation's plan that covers it."""
    best = None
    for o in inst.options.get(job.id, ()):
        if o.plan == ja.plan and o.covers(fp):
            best = o.throughput if best is None else max(best, o.throughput)
    if best is None:
        raise SolverError(f"job {job.id!r}: no option with plan {ja.plan.name}, {fp.gpus} GPUs as "
                          f"{'+'.join(map(str, fp.pieces))} ({fp.tier.name.lower()} tier), <= {fp.cpus} CPUs and "
                          f"<= {fp.mem_gb:g} GB in the instance's option table")
    return best


__all__ = ["GAP_NOTE", "PERF_CPU_LEVELS", "PRICINGS", "Footprint", "JobOption", "JointInstance", "JointObjective",
           "covering_option", "footprint", "table_price"]
