"""Option tables and pricers of the joint problem, and the seeded instance generator.

**Why the tables cover every allocation.** For a job and a GPU count ``g`` the options are indexed by
(tier, divisor ``q``, rack granule ``r``, CPU level): the *class* of placements whose machines each
hold a multiple of ``q`` GPUs and whose racks each hold a multiple of ``r`` GPUs, inside that tier.
Its throughput is the best over plans whose TP degree divides ``q``, each evaluated on a canonical
placement of the class whose per-machine counts have gcd exactly ``q`` and whose per-rack counts
have gcd exactly ``r`` (:func:`layout`; any such placement over all the cluster's racks and
machines). On a homogeneous cluster whose racks are contiguous in machine-name order (the perf
model lays ranks out machine after machine in name order) with one spine bandwidth, the perf
model's throughput of a plan ``(d, t, p)`` on a spread placement depends on it only through its tier,
whether every machine holds a multiple of ``d t`` (*aligned*: no pipeline stage straddles machines)
and whether every rack does (no stage straddles a rack boundary, so the DP groups of straddling
stages stay inside a rack; pipelines of a network-tier placement always cross racks). So an
allocation running plan ``p`` whose counts have gcds ``(q, r)`` lies in class ``(q, r)`` where ``p``
has the same two flags and value: the option is at least as fast. Conversely, on any placement of a
class the best plan of the class is aligned (rack-aligned) wherever it is on the canonical one, and a
plan is never slower aligned (or with its straddles inside a rack) than not: a solution's price is
never below the model's value. ``r`` is refined (``r > q``) only for models with 3D plans on
multi-rack clusters (others do not depend on it). Classes another option covers at no more CPUs and
memory with at least the throughput are dropped (Pareto).

Limits (stated, enforced by the generator): perf-model tables need a homogeneous cluster, racks
contiguous in name order and one spine bandwidth (:meth:`PerfOptions.__init__` refuses others).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable

from schedlab.formulations.joint_instance import (
    PERF_CPU_LEVELS,
    Footprint,
    JobOption,
    JointInstance,
    JointObjective,
    table_price,
)
from schedlab.formulations.joint_layout import chunks, layout
from schedlab.formulations.neutral import generated_durations
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.state import ClusterState
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SolverError, SpecError
from schedlab.topology.tiers import Tier

# ----------------------------------------------------------------- synthetic zoo
#: synthetic model zoo (ours; names the perf model does not know): name -> (per-GPU throughput, GPU
#: scaling exponent, multi-machine slowdown, CPUs per GPU to saturate, TP degree for large models or 1).
#: Synthetic jobs run on power-of-two GPU counts (plain DP, or TP of the model's degree); the
#: network tier costs the slowdown once more; host memory 4 GB per GPU.
_ZOO: dict[str, tuple[float, float, float, int, int]] = {
    "syn-vit": (120.0, 0.95, 0.05, 6, 1), "syn-roberta": (40.0, 0.9, 0.10, 4, 1), "syn-bert": (45.0, 0.9, 0.08, 4, 1),
    "syn-t5": (12.0, 0.85, 0.15, 6, 2), "syn-gpt2": (10.0, 0.85, 0.20, 4, 2), "syn-llama": (3.0, 0.8, 0.25, 4, 4),
}
SYN_MEM_PER_GPU = 4.0


def _syn_levels(model: str) -> tuple[int, ...]:
    return tuple(sorted({1, 2, _ZOO[model][3]}))


def _level(levels: Iterable[int], g: int, cpus: int) -> int | None:
    ok = [lv * g for lv in levels if lv * g <= cpus]
    return max(ok) if ok else None


def synthetic_value(model: str, plan: ExecutionPlan, g: int, pieces: tuple[int, ...], tier: Tier,
                    cpus: int) -> float:
    base, beta, slow, cpg, _ = _ZOO[model]
    t = plan.tp
    return (base * g ** beta * (1 - slow * (len(pieces) > 1)) * (1 - slow * (tier is Tier.NETWORK))
            * (1 + 0.1 * (t > 1)) * min(1.0, 0.8 + 0.2 * (cpus / g) / cpg))


def _syn_plans(model: str, g: int) -> list[ExecutionPlan]:
    tps = {1} | ({_ZOO[model][4]} if g >= _ZOO[model][4] and g % _ZOO[model][4] == 0 else set())
    return [ExecutionPlan(dp=g // t, tp=t) for t in sorted(tps)]


def synthetic_problem(job: Job, plan: ExecutionPlan, fp: Footprint) -> str | None:
    if job.model not in _ZOO:
        return f"model {job.model!r} is not in the synthetic zoo"
    g = fp.gpus
    if g & (g - 1):
        return f"synthetic jobs run on power-of-two GPU counts, not {g}"
    if plan not in _syn_plans(job.model, g):
        return f"plan {plan.name} is not a synthetic plan for {g} GPUs"
    if any(k % plan.tp for k in fp.pieces):
        return f"TP {plan.tp} does not divide the GPUs per machine {fp.pieces}"
    if _level(_syn_levels(job.model), g, fp.cpus) is None:
        return f"{fp.cpus} CPUs for {g} GPUs (need 1 per GPU)"
    if fp.mem_gb < SYN_MEM_PER_GPU * g - 1e-9:
        return f"{fp.mem_gb:g} GB host memory for {g} GPUs (need {SYN_MEM_PER_GPU:g} per GPU)"
    return None


def beyond_table(inst: JointInstance, job: Job, fp: Footprint) -> None:
    """Refuse a GPU count no option of the job has (the exact model could not hold that allocation, so
    pricing it would allow a negative gap): the instance's ``max_gpus`` bounds a job's GPUs."""
    sizes = {o.gpus for o in inst.options.get(job.id, ())}
    if fp.gpus not in sizes:
        raise SolverError(f"job {job.id!r} holds {fp.gpus} GPUs; its options allow {sorted(sizes)} "
                          "(generate_joint(max_gpus=...) bounds a job's GPUs)")


class SyntheticPricer:
    def __init__(self, inst: JointInstance) -> None:
        self.inst = inst

    def price(self, job: Job, ja: JobAllocation, fp: Footprint) -> float:
        beyond_table(self.inst, job, fp)
        why = synthetic_problem(job, ja.plan, fp)
        if why:
            raise SolverError(f"job {job.id!r} cannot run as allocated: {why}")
        lvl = _level(_syn_levels(job.model), fp.gpus, fp.cpus)
        return synthetic_value(job.model, ja.plan, fp.gpus, fp.pieces, fp.tier, lvl)

    def best(self, job: Job, fp: Footprint) -> tuple[ExecutionPlan, float] | None:
        out = None
        for p in _syn_plans(job.model, fp.gpus) if job.model in _ZOO else ():
            if synthetic_problem(job, p, fp) is None:
                v = self.price(job, JobAllocation(job.id, p, {}), fp)
                if out is None or v > out[1]:
                    out = (p, v)
        return out


def synthetic_options(model: str, max_gpus: int, per_machine: int, tiers: tuple[Tier, ...]) -> list[JobOption]:
    opts = []
    g = 1
    mem = SYN_MEM_PER_GPU
    while g <= max_gpus:
        for plan in _syn_plans(model, g):
            for lv in _syn_levels(model):
                c = lv * g
                if g <= per_machine:
                    opts.append(JobOption(g, c, 1, synthetic_value(model, plan, g, (g,), Tier.MACHINE, c), plan, mem * g))
                for tier in tiers:
                    if tier is not Tier.MACHINE and g >= 2 * plan.tp:
                        v = synthetic_value(model, plan, g, (g - plan.tp, plan.tp), tier, c)
                        opts.append(JobOption(g, c, 2, v, plan, mem * g, plan.tp, tier))
        g *= 2
    return pareto(opts)


# ----------------------------------------------------------------- perf model
class PerfPricer:
    def __init__(self, inst: JointInstance) -> None:
        from schedlab.perfmodel import PerfModel

        self.inst = inst
        pm = inst.perf_model
        self.pm = pm if pm is not None and pm.cluster is inst.base.cluster else PerfModel(inst.base.cluster)

    def problem(self, job: Job, plan: ExecutionPlan, fp: Footprint) -> tuple[str | None, int]:
        from schedlab.perfmodel.memory import plan_host_memory_gb

        lvl = _level(PERF_CPU_LEVELS, fp.gpus, fp.cpus)
        if lvl is None:
            return f"{fp.cpus} CPUs for {fp.gpus} GPUs (need 1 per GPU)", 0
        why = self.pm.plan_problem(job.model, plan, dict(fp.counts), lvl, global_batch=job.global_batch)
        if why:
            return why, lvl
        need = plan_host_memory_gb(self.pm.spec(job.model), plan)
        if fp.mem_gb < need - 1e-6:
            return f"{fp.mem_gb:g} GB host memory, plan {plan.name} needs {need:g} GB", lvl
        return None, lvl

    def price(self, job: Job, ja: JobAllocation, fp: Footprint) -> float:
        beyond_table(self.inst, job, fp)
        why, lvl = self.problem(job, ja.plan, fp)
        if why:
            raise SolverError(f"job {job.id!r} cannot run as allocated: {why}")
        return self.pm.throughput(job.model, ja.plan, dict(fp.counts), lvl, global_batch=job.global_batch)

    def best(self, job: Job, fp: Footprint) -> tuple[ExecutionPlan, float] | None:
        """The fastest plan of the footprint and its throughput (memoised in ``inst.memo`` when the
        instance has one: a pure function of the model, its parameters, the batch and the footprint)."""
        lvl = _level(PERF_CPU_LEVELS, fp.gpus, fp.cpus)
        if lvl is None:
            return None
        memo = self.inst.memo
        if memo is None:
            return self._best(job, fp, lvl)
        key = ("best", job.model, self.pm.params_for(job.model), job.global_batch, tuple(sorted(fp.counts.items())),
               lvl, fp.mem_gb)
        if key not in memo:
            memo[key] = self._best(job, fp, lvl)
        return memo[key]

    def _best(self, job: Job, fp: Footprint, lvl: int) -> tuple[ExecutionPlan, float] | None:
        from schedlab.perfmodel.memory import plan_host_memory_gb

        spec = self.pm.spec(job.model)
        plans = [p for p in self.pm.enumerate_plans(job.model, dict(fp.counts), lvl, global_batch=job.global_batch)
                 if plan_host_memory_gb(spec, p) <= fp.mem_gb + 1e-6]
        if not plans:
            return None
        t = self.pm.throughputs(job.model, plans, dict(fp.counts), lvl, global_batch=job.global_batch)
        k = int(t.argmax())
        return plans[k], float(t[k])


class TablePricer:
    def __init__(self, inst: JointInstance) -> None:
        self.inst = inst

    def price(self, job: Job, ja: JobAllocation, fp: Footprint) -> float:
        return table_price(self.inst, job, ja, fp)

    def best(self, job: Job, fp: Footprint) -> tuple[ExecutionPlan, float] | None:
        cands = [(o.throughput, k, o.plan) for k, o in enumerate(self.inst.options.get(job.id, ())) if o.covers(fp)]
        if not cands:
            return None
        t, _, plan = max(cands, key=lambda c: (c[0], -c[1]))
        return plan, t


PRICERS = {"table": TablePricer, "synthetic": SyntheticPricer, "perfmodel": PerfPricer}


def cluster_shape(cluster: Cluster, machines: Iterable[str] | None = None) -> tuple[int, tuple[Tier, ...]]:
    """GPUs per machine and the tiers a spread placement can span on ``cluster``."""
    ms = list(machines or cluster.machines)
    per = max(cluster.machine(m).gpus for m in ms)
    racks: dict[str, int] = {}
    for m in ms:
        racks[cluster.rack_of(m)] = racks.get(cluster.rack_of(m), 0) + 1
    tiers = [Tier.MACHINE]
    if max(racks.values()) >= 2:
        tiers.append(Tier.RACK)
    if len(racks) >= 2:
        tiers.append(Tier.NETWORK)
    return per, tuple(tiers)


class PerfOptions:
    """Option tables from :class:`perfmodel.PerfModel` (module docstring), cached per model."""

    def __init__(self, cluster: Cluster, max_gpus: int) -> None:
        from schedlab.perfmodel import MODELS, PerfModel

        src = "<generate_joint>"
        specs = {(cluster.machine(m).gpus, cluster.machine(m).gpu_model, cluster.machine(m).cpus)
                 for m in cluster.machines}
        if len(specs) > 1:
            raise SpecError("perf-model joint instances need a homogeneous cluster (one machine type); "
                            f"{cluster.name} has {len(specs)}", source=src, field="cluster")
        order = [cluster.rack_of(m) for m in sorted(cluster.machines)]
        if len(cluster.racks) > 1:
            if sum(a != b for a, b in zip(order, order[1:], strict=False)) != len(cluster.racks) - 1:
                raise SpecError(f"perf-model joint instances need each rack's machines consecutive in name order "
                                f"(the perf model lays ranks out by name); {cluster.name}'s are not",
                                source=src, field="cluster")
            bws = {cluster.spec.rack_uplinks[r].bandwidth_gbps for r in cluster.racks}
            if len(bws) > 1:
                raise SpecError(f"perf-model joint instances need one spine bandwidth; {cluster.name} has "
                                f"{sorted(bws)} GB/s", source=src, field="cluster")
        self.pm, self.cluster, self.max_gpus, self.cache = PerfModel(cluster), cluster, max_gpus, {}
        self.per, self.tiers = cluster_shape(cluster)
        self.racks = [list(cluster.machines_in(r)) for r in cluster.racks]
        self.models = sorted(m for m in MODELS if not m.startswith("llama30"))

    def _placement(self, g: int, q: int, tier: Tier) -> dict[str, int] | None:
        """A consolidated placement (requests): one machine, or ``q``-GPU chunks inside the largest rack."""
        if tier is Tier.MACHINE:
            return {self.racks[0][0]: g}
        ms = max(self.racks, key=len)
        rest = chunks(g - q, q, self.per)
        return dict(zip(ms, [q] + rest, strict=False)) if 1 + len(rest) <= len(ms) else None

    def classes(self, model: str, g: int) -> list[tuple[Tier, int, int, dict[str, int]]]:
        """``(tier, divisor, granule, canonical placement)`` of every non-empty class of ``g`` GPUs."""
        out = [(Tier.MACHINE, g, g, {self.racks[0][0]: g})] if g <= self.per else []
        qs = [q for q in range(1, min(g - 1, self.per) + 1) if g % q == 0]
        three_d = self.pm.spec(model).allow_3d
        for tier in self.tiers:
            if tier is Tier.MACHINE:
                continue
            for q in qs:
                if tier is Tier.RACK:
                    grans: list[int | None] = [g]
                elif three_d and len(self.racks) > 1:
                    grans = [r for r in range(q, g // 2 + 1, q) if g % r == 0]
                else:
                    grans = [None]
                for r in grans:
                    pl = layout(self.racks, self.per, g, q, None if tier is Tier.RACK else r, tier)
                    if pl is not None:
                        out.append((tier, q, q if r is None or tier is Tier.RACK else r, pl))
        return out

    def options(self, model: str, batch: int | None, plan: ExecutionPlan | None = None) -> list[JobOption]:
        """The option table of ``model`` at global batch ``batch``; with ``plan``, only that plan at its
        GPU count (a job that may not change its plan)."""
        from schedlab.perfmodel.memory import plan_host_memory_gb

        key = (model, batch, plan)
        if key in self.cache:
            return self.cache[key]
        spec = self.pm.spec(model)
        out = []
        sizes = [plan.gpus] if plan is not None else range(1, min(self.max_gpus, self.cluster.total_gpus) + 1)
        for g in sizes:
            for tier, q, r, pl in self.classes(model, g):
                if plan is None:
                    plans = self.pm.enumerate_plans(model, pl, global_batch=batch)
                else:
                    plans = [plan] if self.pm.plan_problem(model, plan, pl, global_batch=batch) is None else []
                if not plans:
                    continue
                host = [plan_host_memory_gb(spec, p) for p in plans]
                spread = tier is not Tier.MACHINE
                for lv in PERF_CPU_LEVELS:
                    t = self.pm.throughputs(model, plans, pl, lv * g, global_batch=batch)
                    for k in _pareto_plans(host, t):
                        out.append(JobOption(g, lv * g, 2 if spread else 1, float(t[k]), plans[k],
                                             math.ceil(host[k] * 1e6) / 1e6, q if spread else 0,
                                             tier if spread else 0, r if spread else 0))
        self.cache[key] = pareto(out)
        return self.cache[key]

    def request(self, model: str, g: int, batch: int | None) -> tuple[ExecutionPlan, dict[str, int], int, float] | None:
        """Plain-DP request on a consolidated placement: (plan, placement, cpus, throughput) or None."""
        plan = ExecutionPlan(dp=g)
        pl = self._placement(g, self.per if g > self.per else g, Tier.MACHINE if g <= self.per else Tier.RACK)
        if pl is None or self.pm.plan_problem(model, plan, pl, 4 * g, global_batch=batch) is not None:
            return None
        return plan, pl, 4 * g, float(self.pm.throughput(model, plan, pl, 4 * g, global_batch=batch))


def _pareto_plans(host: list[float], t) -> list[int]:
    """Plans not beaten by another at no more host memory (ties: the first)."""
    order = sorted(range(len(host)), key=lambda k: (host[k], -float(t[k]), k))
    keep, best = [], -1.0
    for k in order:
        if float(t[k]) > best + 1e-12 and float(t[k]) > 0:
            keep.append(k)
            best = float(t[k])
    return keep


def _contains(p: JobOption, o: JobOption) -> bool:
    """Whether ``p``'s class of placements contains ``o``'s (same GPU count assumed)."""
    if o.single:
        return True  # one machine: covered by any option of the count (divisors divide it)
    return not p.single and p.tier >= o.tier and o.divisor % p.divisor == 0 and o.granule % p.granule == 0


def pareto(opts: list[JobOption]) -> list[JobOption]:
    """Drop options another covers (same GPUs, a class containing theirs, no more CPUs and memory,
    at least the throughput); exact duplicates keep the first."""
    keep: list[JobOption] = []
    for i, o in enumerate(opts):
        dominated = False
        for j, p in enumerate(opts):
            if i == j or p.gpus != o.gpus or p.cpus > o.cpus or p.mem_gb > o.mem_gb + 1e-9 \
                    or p.throughput < o.throughput:
                continue
            if not _contains(p, o):
                continue
            same = (p.cpus, p.mem_gb, p.throughput, p.single, p.tier, p.divisor, p.granule) == \
                (o.cpus, o.mem_gb, o.throughput, o.single, o.tier, o.divisor, o.granule)
            if not same or j < i:
                dominated = True
                break
        if not dominated:
            keep.append(o)
    return keep


# ----------------------------------------------------------------- generator
def _first_fit(cluster: Cluster, jobs: list[Job], rng: random.Random, running_frac: float,
               reserved: dict | None = None) -> Allocation:
    """Running jobs: a fraction started first-fit at their request (even split, plan as requested)."""
    state = ClusterState(cluster, reserved or {})
    placed = []
    per = cluster.max_gpus_per_machine
    for j in jobs:
        if rng.random() >= running_frac:
            continue
        g = j.requested.gpus
        n = -(-g // per)
        share = Resources(g // n, j.requested.cpus // n, j.requested.mem_gb / n)
        if g % n or j.requested.cpus % n:
            continue
        ms = [m for m in cluster.machines if share <= state.free(m)][:n]
        if len(ms) == n and len({cluster.rack_of(m) for m in ms}) == 1:
            pl = {m: share for m in ms}
            state.allocate(j.id, pl)
            placed.append(JobAllocation(j.id, j.requested_plan, pl))
    return Allocation.of(placed)


def generate_joint(cluster: Cluster, n_jobs: int, *, seed: int = 0, guaranteed_frac: float = 0.0,
                   running_frac: float = 0.0, reconfig_penalty: float = 0.0, max_gpus: int | None = None,
                   objective: JointObjective = JointObjective.SUM, source: str = "synthetic",
                   busy: float = 0.0) -> JointInstance:
    """A seeded snapshot: reconfigurable jobs with requested GPUs in {1, 2, 4, 8, 16} (<= ``max_gpus``,
    default the cluster's GPUs; it bounds the option tables' GPU counts, hence every allocation the
    model can hold, so it must be at least what a heuristic may give a job, as Rubick scales jobs up),
    a fraction guaranteed (tenant ``A``, quota half the GPUs, minRes half the request's CPUs) and a
    fraction already running first-fit at their request. ``source="synthetic"``: the synthetic zoo
    (power-of-two GPU counts); ``source="perfmodel"``: a random model of the perf model's zoo with
    option tables for every GPU count up to ``max_gpus`` (requests whose plain-DP plan does not fit
    memory are redrawn). Each job runs a seeded time at its request (:func:`~formulations.neutral.
    generated_durations`, median 240 s; its own random stream, so the other draws are unchanged). ``busy``: each machine is, with this probability, partly used by work outside
    the decision (``reserved``: random GPUs with their share of CPUs and memory): fragmented free
    capacity, as in a running cluster."""
    if source not in ("synthetic", "perfmodel"):
        raise SpecError(f"unknown option source {source!r}", source="<generate_joint>", field="source")
    rng = random.Random(seed)
    max_gpus = cluster.total_gpus if max_gpus is None else max_gpus
    per, tiers = cluster_shape(cluster)
    perf = PerfOptions(cluster, max_gpus) if source == "perfmodel" else None
    sizes = [x for x in (1, 1, 2, 4, 8, 16) if x <= max_gpus]
    jobs, options, ref, weights = [], {}, {}, {}
    durations = generated_durations(n_jobs, seed)
    syn: dict[str, tuple[JobOption, ...]] = {}  # option tables are shared by the jobs of one model
    for i in range(n_jobs):
        jid = f"j{i:04d}"
        guar = rng.random() < guaranteed_frac
        cls = JobClass.GUARANTEED if guar else JobClass.BEST_EFFORT
        if perf is not None:
            for _ in range(100):
                model, g = rng.choice(perf.models), rng.choice(sizes)
                req = perf.request(model, g, None)
                if req is not None:
                    break
            else:
                raise SolverError("no model of the perf model's zoo fits its request")
            plan, _, cpus, tput = req
            from schedlab.perfmodel.memory import plan_host_memory_gb

            mem = plan_host_memory_gb(perf.pm.spec(model), plan)
            opts = tuple(perf.options(model, None))
        else:
            model, g = rng.choice(sorted(_ZOO)), rng.choice(sizes)
            plan = _syn_plans(model, g)[-1]
            cpus, mem = _ZOO[model][3] * g, SYN_MEM_PER_GPU * g
            n = -(-g // per)
            pieces = tuple([g // n] * n)
            tput = synthetic_value(model, plan, g, pieces, Tier.MACHINE if n == 1 else Tier.RACK, cpus)
            if model not in syn:
                syn[model] = tuple(synthetic_options(model, max_gpus, per, tiers))
            opts = syn[model]
        # run time at the request (seconds, formulations.neutral.generated_durations) and the iterations it takes
        # at the request's throughput: est-avg-jct of a generated snapshot is in seconds, like a replay state's
        jobs.append(Job(id=jid, requested=Resources(g, cpus, mem), model=model, tenant="A" if guar else "B",
                        plan=plan, job_class=cls, reconfigurable=True,
                        min_resources=Resources(g, cpus // 2, 0.0) if guar else None,
                        duration=durations[i], iterations=durations[i] * tput))
        options[jid], ref[jid] = tuple(opts), tput
        weights[jid] = float(rng.choice([1, 1, 2]))
    quotas = {"A": Resources(cluster.total_gpus // 2, 0, 0.0)} if guaranteed_frac > 0 else {}
    reserved = {}
    if busy > 0:
        brng = random.Random(seed + 7919)  # its own stream: busy=0 leaves the jobs as they were
        for m in cluster.machines:
            spec = cluster.machine(m)
            if brng.random() < busy:
                g = brng.randint(1, spec.gpus)
                reserved[m] = Resources(g, spec.cpus * g // spec.gpus, spec.host_memory_gb * g / spec.gpus)
    current = _first_fit(cluster, jobs, rng, running_frac, reserved) if running_frac > 0 else Allocation()
    base = Instance(cluster, tuple(jobs), current=current, quotas=quotas, reserved=reserved)
    return JointInstance(base, options, ref, weights, objective, reconfig_penalty, pricing=source)


__all__ = ["PRICERS", "PerfOptions", "PerfPricer", "SYN_MEM_PER_GPU", "SyntheticPricer", "TablePricer",
           "beyond_table", "cluster_shape", "generate_joint", "pareto", "synthetic_options",
           "synthetic_problem", "synthetic_value"]
