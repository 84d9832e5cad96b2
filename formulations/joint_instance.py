"""Instances of the joint execution-plan + allocation problem (Rubick's), their ONE objective function,
JSON (de)serialisation and a seeded generator.

A job's *options* come from the perf model: for each resource shape (GPUs ``g``, CPUs ``c``, machines
spanned ``n``) the best plan's throughput and host memory, Pareto-filtered. An option places an equal
share ``(g/n, c/n, mem/n)`` on each of ``n`` machines (TP groups stay inside a machine:
``(g/n) mod tp = 0``). A job's normalised throughput is its throughput over its throughput at its
requested resources and plan (``ref_throughput``), as Rubick normalises.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any

from schedlab.formulations import io
from schedlab.perfmodel.plans import ExecutionPlan, parse_plan
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.state import ClusterState
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SolverError, SpecError


@dataclass(frozen=True, slots=True)
class JobOption:
    """One resource shape of a job with its best plan: ``gpus``, ``cpus`` over ``machines`` machines."""

    gpus: int
    cpus: int
    machines: int
    throughput: float
    plan: ExecutionPlan
    mem_gb: float = 0.0

    def __post_init__(self) -> None:
        src = "<JobOption>"
        if self.machines < 1 or self.gpus % self.machines or self.cpus % self.machines:
            raise SpecError(f"option {self}: gpus and cpus must split evenly over {self.machines} machines",
                            source=src, field="machines")
        if self.plan.gpus != self.gpus:
            raise SpecError(f"option plan {self.plan.name} uses {self.plan.gpus} GPUs, not {self.gpus}",
                            source=src, field="plan")
        if (self.gpus // self.machines) % self.plan.tp:
            raise SpecError(f"option with TP {self.plan.tp} puts {self.gpus // self.machines} GPUs per machine",
                            source=src, field="plan")
        if self.throughput < 0:
            raise SpecError("option throughput must be >= 0", source=src, field="throughput")

    @property
    def share(self) -> Resources:
        n = self.machines
        return Resources(self.gpus // n, self.cpus // n, self.mem_gb / n)

    def to_list(self) -> list:
        return [self.gpus, self.cpus, self.machines, self.throughput, self.plan.canonical(), self.mem_gb]

    @classmethod
    def from_list(cls, v) -> JobOption:
        return cls(int(v[0]), int(v[1]), int(v[2]), float(v[3]), parse_plan(v[4]), float(v[5]))


class JointObjective(Enum):
    SUM = "sum"            # sum of normalised throughputs
    WEIGHTED = "weighted"  # sum of weight * normalised throughput
    MAXMIN = "max-min"     # min over jobs of weight * normalised throughput (queued jobs count 0)


@dataclass(frozen=True)
class JointInstance:
    """``base`` (cluster, jobs, current allocation, quotas, reserved) plus per-job ``options`` and
    ``ref_throughput``. ``reconfig_penalty`` is charged (in normalised-throughput units) for every
    running job of ``base.current`` whose plan or placement changes or that is preempted.
    ``place_guaranteed`` forces every guaranteed job to be placed. ``machines`` restricts the
    eligible machines (POP sub-problems); ``None`` = all."""

    KIND = "joint"
    base: Instance
    options: Mapping[str, tuple[JobOption, ...]]
    ref_throughput: Mapping[str, float]
    weights: Mapping[str, float] = field(default_factory=dict)
    objective: JointObjective = JointObjective.SUM
    reconfig_penalty: float = 0.0
    place_guaranteed: bool = False
    machines: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType({k: tuple(v) for k, v in self.options.items()}))
        object.__setattr__(self, "ref_throughput", MappingProxyType(dict(self.ref_throughput)))
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        for j in self.base.jobs:
            if self.ref_throughput.get(j.id, 0) <= 0:
                raise SpecError(f"job {j.id!r} needs a positive reference throughput", source="<joint>",
                                field="ref_throughput")

    @property
    def eligible_machines(self) -> tuple[str, ...]:
        return self.machines if self.machines is not None else self.base.cluster.machines

    def weight(self, job_id: str) -> float:
        return self.weights.get(job_id, 1.0) if self.objective is not JointObjective.SUM else 1.0

    def admissible(self, job: Job) -> list[tuple[int, JobOption]]:
        """Options a job may take: guaranteed jobs need >= their SLO (requested throughput) and
        >= minRes GPUs/CPUs."""
        out = []
        for k, o in enumerate(self.options.get(job.id, ())):
            if not job.reconfigurable and o.gpus != job.requested.gpus:
                continue
            if job.guaranteed:
                mr = job.min_resources or Resources()
                if o.throughput < self.ref_throughput[job.id] * (1 - 1e-9) or o.gpus < mr.gpus or o.cpus < mr.cpus:
                    continue
            out.append((k, o))
        return out

    # ------------------------------------------------------------------ json
    def to_dict(self) -> dict[str, Any]:
        return {"base": io.instance_to_dict(self.base),
                "options": {j: [o.to_list() for o in os_] for j, os_ in self.options.items()},
                "ref_throughput": dict(self.ref_throughput), "weights": dict(self.weights),
                "objective": self.objective.value, "reconfig_penalty": self.reconfig_penalty,
                "place_guaranteed": self.place_guaranteed,
                "machines": None if self.machines is None else list(self.machines)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<joint>") -> JointInstance:
        return cls(base=io.instance_from_dict(d["base"], source),
                   options={j: tuple(JobOption.from_list(v) for v in vs) for j, vs in d["options"].items()},
                   ref_throughput=d["ref_throughput"], weights=d.get("weights", {}),
                   objective=JointObjective(d.get("objective", "sum")),
                   reconfig_penalty=d.get("reconfig_penalty", 0.0),
                   place_guaranteed=d.get("place_guaranteed", False),
                   machines=None if d.get("machines") is None else tuple(d["machines"]))


io.INSTANCE_KINDS[JointInstance.KIND] = JointInstance


def option_throughput(inst: JointInstance, ja: JobAllocation) -> float:
    """Throughput of an allocated job: the best option with its plan, GPUs and machine count whose
    CPUs it has. Raises :class:`SolverError` if the option table has no such shape."""
    gpus = ja.gpus
    n = sum(1 for r in ja.placement.values() if r.gpus > 0)
    cpus = ja.resources.cpus
    best = None
    for o in inst.options.get(ja.job_id, ()):
        if o.gpus == gpus and o.machines == n and o.plan == ja.plan and o.cpus <= cpus:
            best = o.throughput if best is None else max(best, o.throughput)
    if best is None:
        raise SolverError(f"job {ja.job_id!r}: no option with plan {ja.plan.name}, {gpus} GPUs on {n} machines "
                          f"and <= {cpus} CPUs in the instance's option table")
    return best


def joint_objective(inst: JointInstance, allocation: Allocation) -> float:
    """THE objective of the joint problem, for solver and heuristic allocations alike.

    ``SUM``/``WEIGHTED``: ``sum_j w_j * tput_j / ref_j - penalty * #changed running jobs``;
    ``MAXMIN``: ``min_j w_j * tput_j / ref_j`` (a queued job counts 0; no penalty term).
    """
    vals = []
    for job in inst.base.jobs:
        ja = allocation.get(job.id)
        t = 0.0 if ja is None else option_throughput(inst, ja)
        vals.append(inst.weight(job.id) * t / inst.ref_throughput[job.id])
    if inst.objective is JointObjective.MAXMIN:
        return min(vals) if vals else 0.0
    changed = 0
    for cur in inst.base.current:
        ja = allocation.get(cur.job_id)
        if ja is None or ja.plan != cur.plan or dict(ja.placement) != dict(cur.placement):
            changed += 1
    return sum(vals) - inst.reconfig_penalty * changed


# ----------------------------------------------------------------- generator
#: synthetic model zoo (ours; names the perf model does not know, so the verifier skips memory): name -> (per-GPU throughput, GPU scaling exponent, multi-machine
#: slowdown, CPU per GPU to saturate, TP degree for large models or 1)
_ZOO: dict[str, tuple[float, float, float, int, int]] = {
    "syn-vit": (120.0, 0.95, 0.05, 6, 1), "syn-roberta": (40.0, 0.9, 0.10, 4, 1), "syn-bert": (45.0, 0.9, 0.08, 4, 1),
    "syn-t5": (12.0, 0.85, 0.15, 6, 2), "syn-gpt2": (10.0, 0.85, 0.20, 4, 2), "syn-llama": (3.0, 0.8, 0.25, 4, 4),
}


def _synthetic_options(model: str, max_gpus: int, per_machine: int) -> list[JobOption]:
    base, beta, slow, cpg, tp = _ZOO[model]
    opts = []
    g = 1
    while g <= max_gpus:
        for n in sorted({1, -(-g // per_machine)}):
            if g % n or (g // n) > per_machine:
                continue
            t = tp if (g // n) % tp == 0 and g >= tp else 1
            for c_per in (2, cpg):
                c = c_per * g
                if c % n:
                    continue
                tput = base * g ** beta * (1 - slow * (n > 1)) * (1 + 0.1 * (t > 1)) * min(1.0, 0.8 + 0.2 * c_per / cpg)
                opts.append(JobOption(g, c, n, round(tput, 3), ExecutionPlan(dp=g // t, tp=t), mem_gb=float(4 * g)))
        g *= 2
    return pareto(opts)


def pareto(opts: list[JobOption]) -> list[JobOption]:
    """Drop options another option dominates (no more GPUs, CPUs, machines and memory, at least
    the throughput, strictly better somewhere)."""
    keep = []
    for o in opts:
        dom = any(p is not o and p.gpus <= o.gpus and p.cpus <= o.cpus and p.machines <= o.machines
                  and p.mem_gb <= o.mem_gb and p.throughput >= o.throughput and
                  (p.gpus, p.cpus, p.machines, p.mem_gb, p.throughput) != (o.gpus, o.cpus, o.machines, o.mem_gb,
                                                                          o.throughput) for p in opts)
        if not dom:
            keep.append(o)
    return keep


def equal_split(gpus: int, cpus: int, machines: int, tp: int) -> bool:
    """Whether a shape splits evenly over its machines with whole TP groups (what :class:`JobOption`
    represents)."""
    return gpus % machines == 0 and cpus % machines == 0 and (gpus // machines) % tp == 0


class _PerfOptions:
    """Option tables from :class:`perfmodel.PerfModel` (cached per model): the model's Pareto options
    that split evenly over their machines (uneven splits such as 8 + 4 GPUs are not representable
    here and are left out), re-filtered with machines spanned as a cost, plus the requested shape
    (plain DP, canonical placement) so that the reference throughput is in the table."""

    def __init__(self, cluster: Cluster, max_gpus: int) -> None:
        from schedlab.perfmodel import PerfModel

        self.pm, self.max_gpus, self.cache = PerfModel(cluster), max_gpus, {}
        self.models = sorted(m for m in self._zoo() if not m.startswith("llama30"))

    @staticmethod
    def _zoo():
        from schedlab.perfmodel import MODELS

        return MODELS

    def __call__(self, model: str, g: int, per_machine: int) -> tuple[list[JobOption], JobOption | None]:
        if model not in self.cache:
            self.cache[model] = pareto([JobOption(o.gpus, o.cpus, o.machines, round(o.throughput, 6), o.plan,
                                                  round(o.host_mem_gb, 3))
                                        for o in self.pm.options(model, max_gpus=self.max_gpus)
                                        if equal_split(o.gpus, o.cpus, o.machines, o.plan.tp)])
        opts = list(self.cache[model])
        n = -(-g // per_machine)
        cpus = 4 * g
        plan = ExecutionPlan(dp=g)
        pl = {m: g // n for m in self.pm.cluster.machines[:n]}
        if self.pm.plan_problem(model, plan, pl, cpus) is not None:
            return opts, None
        t = self.pm.throughput(model, plan, pl, cpus)
        req = JobOption(g, cpus, n, round(t, 6), plan, 0.0)
        return opts + [req], req


def generate_joint(cluster: Cluster, n_jobs: int, *, seed: int = 0, guaranteed_frac: float = 0.0,
                   running_frac: float = 0.0, reconfig_penalty: float = 0.0, max_gpus: int = 32,
                   objective: JointObjective = JointObjective.SUM, source: str = "synthetic") -> JointInstance:
    """A seeded snapshot: jobs with requested GPUs in {1,2,4,8,16} (<= ``max_gpus``), a fraction
    guaranteed (tenant ``A`` with a quota of half the GPUs) and a fraction already running first-fit
    at their request. ``source="synthetic"``: a small synthetic zoo whose options have the perf
    model's shape (GPUs, CPUs, machines, throughput, plan, memory); ``source="perfmodel"``: the
    options of :meth:`perfmodel.PerfModel.options` for a random model of its zoo (requests whose
    plain-DP plan does not fit memory are redrawn)."""
    rng = random.Random(seed)
    per_machine = cluster.max_gpus_per_machine
    perf = _PerfOptions(cluster, max_gpus) if source == "perfmodel" else None
    if source not in ("synthetic", "perfmodel"):
        raise SpecError(f"unknown option source {source!r}", source="<generate_joint>", field="source")
    jobs, options, ref, weights = [], {}, {}, {}
    for i in range(n_jobs):
        if perf is not None:
            for _ in range(100):
                model = rng.choice(perf.models)
                g = rng.choice([x for x in (1, 1, 2, 4, 8, 16) if x <= max_gpus])
                opts, r = perf(model, g, per_machine)
                if r is not None:
                    break
            else:
                raise SolverError("no model of the perf model's zoo fits its request")
            guar = rng.random() < guaranteed_frac
            jid = f"j{i:04d}"
            jobs.append(Job(id=jid, requested=Resources(g, r.cpus, 0.0), model=model, tenant="A" if guar else "B",
                            plan=r.plan, job_class=JobClass.GUARANTEED if guar else JobClass.BEST_EFFORT,
                            reconfigurable=True, min_resources=Resources(g, r.cpus // 2, 0.0) if guar else None))
            options[jid], ref[jid] = tuple(opts), r.throughput
            weights[jid] = float(rng.choice([1, 1, 2]))
            continue
        model = rng.choice(sorted(_ZOO))
        g = rng.choice([x for x in (1, 1, 2, 4, 8, 16) if x <= max_gpus])
        opts = _synthetic_options(model, max_gpus, per_machine)
        n_req = -(-g // per_machine)
        req = [o for o in opts if o.gpus == g and o.machines == n_req]
        if not req:
            req = [o for o in _synthetic_options(model, g, per_machine) if o.gpus == g]
        r = max(req, key=lambda o: (o.cpus, o.throughput))
        if r not in opts:
            opts.append(r)
        guar = rng.random() < guaranteed_frac
        jid = f"j{i:04d}"
        jobs.append(Job(id=jid, requested=Resources(g, r.cpus, r.mem_gb), model=model, tenant="A" if guar else "B",
                        plan=r.plan, job_class=JobClass.GUARANTEED if guar else JobClass.BEST_EFFORT,
                        reconfigurable=True, min_resources=Resources(g, r.cpus // 2, 0.0) if guar else None))
        options[jid] = tuple(opts)
        ref[jid] = r.throughput
        weights[jid] = float(rng.choice([1, 1, 2]))
    quotas = {"A": Resources(cluster.total_gpus // 2, 0, 0.0)} if guaranteed_frac > 0 else {}
    current = Allocation()
    if running_frac > 0:
        state = ClusterState(cluster)
        placed = []
        for j in jobs:
            if rng.random() >= running_frac:
                continue
            o = next(o for o in options[j.id] if o.gpus == j.requested.gpus and o.plan == j.plan
                     and o.cpus == j.requested.cpus)
            ms = [m for m in cluster.machines if o.share <= state.free(m)][: o.machines]
            if len(ms) == o.machines:
                pl = {m: o.share for m in ms}
                state.allocate(j.id, pl)
                placed.append(JobAllocation(j.id, o.plan, pl))
        current = Allocation.of(placed)
    base = Instance(cluster, tuple(jobs), current=current, quotas=quotas)
    return JointInstance(base, options, ref, weights, objective, reconfig_penalty)
