"""Tiresias instances: the generator, a quick greedy placement, the parameter-server completion
of a worker-only (heuristic) allocation, and the maps from a solution onto the ILP's variables."""

from __future__ import annotations

import random
from collections import defaultdict

from schedlab.formulations.base import Built
from schedlab.formulations.neutral import generated_durations
from schedlab.formulations.tiresias import (
    PSJob,
    TiresiasInstance,
    TiresiasSolution,
    node_traffic,
    tiresias_objective,
)
from schedlab.perfmodel.network import tensor_sizes
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError


def greedy_placement(inst: TiresiasInstance) -> TiresiasSolution | None:
    """A quick feasible single-job placement (consolidate workers on the freest, quietest nodes; each
    PS on the worker node with most workers and a free CPU, else any node with one), or ``None``."""
    (job,) = inst.base.jobs
    ps = inst.ps[job.id]
    caps = {m: inst.base.capacity(m) for m in inst.eligible_machines}
    order = sorted(caps, key=lambda m: (-caps[m].gpus, inst.traffic.get(m, 0)))
    left, w = job.requested.gpus, {}
    cpu = {m: caps[m].cpus for m in caps}
    for m in order:
        k = min(left, max(0, caps[m].gpus), cpu[m] // ps.cpus_per_worker if ps.cpus_per_worker else left)
        if k > 0:
            w[m] = k
            cpu[m] -= k * ps.cpus_per_worker
            left -= k
        if left == 0:
            break
    if left:
        return None
    where = []
    for _ in ps.ps_sizes:
        cands = sorted((m for m in caps if cpu[m] >= ps.cpus_per_ps), key=lambda m: (-w.get(m, 0), inst.traffic.get(m, 0)))
        if not cands:
            return None
        where.append(cands[0])
        cpu[cands[0]] -= ps.cpus_per_ps
    pl = {m: Resources(w.get(m, 0), w.get(m, 0) * ps.cpus_per_worker + where.count(m) * ps.cpus_per_ps, 0.0)
          for m in set(w) | set(where)}
    return TiresiasSolution(Allocation.of([JobAllocation(job.id, ExecutionPlan(dp=job.requested.gpus), pl)]),
                            {job.id: tuple(where)})


#: parameter-server models (tensor sizes from :func:`perfmodel.tensor_sizes`)
PS_MODELS = ("vgg16", "alexnet", "resnet50", "inception3")


def split_tensors(tensors: tuple[float, ...], k: int) -> tuple[int, ...]:
    """Largest-first onto the least-loaded of ``k`` parameter servers; PS sizes rounded to whole MB
    (at least 1) so traffic stays integral."""
    loads = [0.0] * k
    for t in sorted(tensors, reverse=True):
        loads[loads.index(min(loads))] += t
    return tuple(max(1, round(x)) for x in loads if x > 0)


def generate_tiresias(cluster: Cluster, n_jobs: int = 1, *, seed: int = 0, gpus: int = 32, busy: float = 0.5,
                      ps_per_job: int | None = None, cpus_per_worker: int = 2, cpus_per_ps: int = 2,
                      background: float = 0.1) -> TiresiasInstance:
    """A seeded snapshot: each machine is busy with probability ``busy`` (random used GPUs, CPUs, and
    existing traffic ``background`` x 100-500 MB per used GPU: at the old scale, 1.0, the busiest node's
    traffic was the optimum of 8 of 12 gap-suite instances, so no decision changed the objective; at
    0.1 it is below what the first job's spread workers add, issue 21 P3); ``n_jobs`` jobs, the first of ``gpus`` workers, later
    ones random powers of two up to it, ``ps_per_job`` PS (default ``max(1, W // 8)``). Every instance
    is feasible: a job's workers are capped at the largest power of two that the GPUs left free by
    the busy machines and the earlier jobs can hold (raises :class:`SpecError` when fewer free GPUs
    than jobs remain)."""
    rng = random.Random(seed)
    reserved, traffic = {}, {}
    for m in cluster.machines:
        spec = cluster.machine(m)
        if rng.random() < busy:
            used = rng.randint(1, spec.gpus)
            reserved[m] = Resources(used, min(spec.cpus, used * cpus_per_worker), 0.0)
            traffic[m] = int(round(used * rng.randint(100, 500) * background))
    free = {m: cluster.machine(m).gpus - reserved.get(m, Resources()).gpus for m in cluster.machines}
    spare = {m: cluster.machine(m).cpus - reserved.get(m, Resources()).cpus for m in cluster.machines}
    left = sum(max(0, min(free[m], spare[m] // max(1, cpus_per_worker))) for m in cluster.machines)
    if left < n_jobs:
        raise SpecError(f"{cluster.name}: {left} GPUs free after the busy machines, fewer than {n_jobs} jobs",
                        source="<generate_tiresias>", field="n_jobs")
    jobs, ps = [], {}
    durations = generated_durations(n_jobs, seed)
    for a in range(n_jobs):
        want = gpus if a == 0 else rng.choice([x for x in (1, 2, 4, 8, 16, 32) if x <= gpus])
        cap = left - (n_jobs - a - 1)  # keep one GPU for every later job
        g = max(1, min(want, 1 << (cap.bit_length() - 1)))
        left -= g
        model = rng.choice(PS_MODELS)
        k = ps_per_job or max(1, g // 8)
        jid = f"t{a:03d}"
        jobs.append(Job(id=jid, requested=Resources(g, g * cpus_per_worker), model=model, global_batch=32 * g,
                        duration=durations[a]))
        ps[jid] = PSJob(split_tensors(tuple(t / 1e6 for t in tensor_sizes(model)), k), cpus_per_worker, cpus_per_ps)
    return TiresiasInstance(Instance(cluster, tuple(jobs), reserved=reserved), ps, traffic)


def _usage(inst: TiresiasInstance, sol: TiresiasSolution) -> tuple[dict[str, int], dict[str, int]]:
    workers: dict[str, int] = defaultdict(int)
    hosted: dict[str, int] = defaultdict(int)
    for job in inst.base.jobs:
        ja = sol.allocation.get(job.id)
        for m, r in (ja.placement.items() if ja is not None else ()):
            workers[m] += r.gpus
        for j, m in enumerate(sol.ps_hosts.get(job.id, ())):
            hosted[m] += inst.ps[job.id].ps_sizes[j]
    return workers, hosted


def _renamed(sol: TiresiasSolution, rename: dict[str, str]) -> TiresiasSolution:
    alloc = Allocation.of(JobAllocation(ja.job_id, ja.plan, {rename.get(m, m): r for m, r in ja.placement.items()})
                          for ja in sol.allocation)
    return TiresiasSolution(alloc, {j: tuple(rename.get(m, m) for m in h) for j, h in sol.ps_hosts.items()})


def point_bilinear(inst: TiresiasInstance, built: Built, sol: TiresiasSolution, reps: list[list[str]]
                   ) -> tuple[dict[int, float], list[str]]:
    """Variables of the bilinear model at ``sol``: nodes of each class are permuted so the used ones
    are its kept representatives, in the model's (workers, hosted MB) order."""
    d = built.data
    workers, hosted = _usage(inst, sol)
    S = sum(inst.ps[j.id].model_size for j in inst.base.jobs)
    members: dict[tuple, list[str]] = defaultdict(list)
    for m in inst.eligible_machines:
        c = inst.base.capacity(m)
        members[(c.gpus, c.cpus, inst.traffic.get(m, 0))].append(m)
    rename, problems = {}, []
    for cls in reps:
        c = inst.base.capacity(cls[0])
        full = members[(c.gpus, c.cpus, inst.traffic.get(cls[0], 0))]
        ranked = sorted(full, key=lambda m: -(workers[m] * (S + 1) + hosted[m]))
        rename.update(zip(ranked, cls, strict=False))
        problems += [f"node {m!r} is used but the class keeps {len(cls)} representatives" for m in ranked[len(cls):]
                     if workers[m] or hosted[m]]
    sol = _renamed(sol, rename)
    vals: dict[int, float] = {d["T"].index: max(node_traffic(inst, sol).values(), default=0.0)}
    for job in inst.base.jobs:
        ja = sol.allocation.get(job.id)
        if job.id in d.get("z", {}):
            vals[d["z"][job.id].index] = 1.0 if ja is not None else 0.0
        for (jid, i), w in d["w"].items():
            if jid == job.id and ja is not None and i in ja.placement:
                vals[w.index] = float(ja.placement[i].gpus)
        for j, m in enumerate(sol.ps_hosts.get(job.id, ())):
            p = d["p"].get((job.id, j, m))
            if p is None:
                problems.append(f"job {job.id!r}: PS {j} on node {m!r} outside the model")
                continue
            vals[p.index] = 1.0
            q = d["q"].get((job.id, j, m))
            if q is not None and ja is not None and m in ja.placement:
                vals[q.index] = float(ja.placement[m].gpus)
        if ja is not None:
            problems += [f"job {job.id!r}: node {m!r} outside the model" for m in ja.placement
                         if (job.id, m) not in d["w"]]
    return vals, problems


def point_configs(inst: TiresiasInstance, built: Built, sol: TiresiasSolution) -> tuple[dict[int, float], list[str]]:
    """Variables of the configuration model at ``sol`` (one job): each used node adds one to its
    class's (workers, PS set) configuration."""
    d = built.data
    (job,) = inst.base.jobs
    key_of = {m: key for key, ms in d["groups"].items() for m in ms}
    ja = sol.allocation.get(job.id)
    used: dict[str, tuple[int, int]] = defaultdict(lambda: (0, 0))
    for m, r in (ja.placement.items() if ja is not None else ()):
        if r.gpus:
            used[m] = (r.gpus, used[m][1])
    for j, m in enumerate(sol.ps_hosts.get(job.id, ())):
        used[m] = (used[m][0], used[m][1] | 1 << j)
    vals: dict[int, float] = {d["T"].index: tiresias_objective(inst, sol)}
    problems = []
    for m, (w, mask) in used.items():
        key = (key_of.get(m), w, mask)
        n = d["n"].get(key)
        if n is None:
            problems.append(f"node {m!r}: configuration ({w} workers, PS mask {mask}) is not in the model")
            continue
        vals[n.index] = vals.get(n.index, 0.0) + 1.0
        if key in d["u"]:
            vals[d["u"][key].index] = 1.0
    return vals, problems


__all__ = ["PS_MODELS", "generate_tiresias", "greedy_placement", "point_bilinear", "point_configs",
           "split_tensors"]
