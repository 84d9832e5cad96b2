"""The one independent verifier every method's output goes through.

``validate_allocation(instance, allocation)`` returns every :class:`Violation` found (empty = valid).
It reads capacities and rack membership straight from the networkx graph's node attributes and
recomputes everything itself: it does not use :class:`~scheduling.state.ClusterState`,
``Cluster.tier_of`` or any code that builds allocations, so a bug there cannot hide here.

Checks (each a function in :data:`CHECKS`, a dict registry):

* ``structure``: known jobs and machines, non-empty placements, non-negative entries;
* ``capacity``: per machine and resource, ``reserved + sum of placements <= capacity``;
* ``gang``: rigid jobs get exactly their requested GPUs (all or nothing); every job >= 1 GPU;
* ``plan``: ``d * t * p`` = allocated GPUs; each machine's GPU share is a multiple of ``t`` (TP
  groups never straddle machines); ``p`` divides the job's layers when known; ``d * a * m`` divides the
  job's global batch (its own, else its model's default in the zoo; not checked when neither is known:
  :func:`~schedlab.perfmodel.search.batch_problem`, the perf model's own rule, so a plan the verifier
  accepts is one the perf model can price);
* ``memory``: the plan's per-GPU memory estimate fits the GPUs it runs on (when the perf model
  knows the job's model);
* ``tier``: the placement's tier is not above the job's ``max_tier``;
* ``quota``: per tenant, the quota usage of its placed guaranteed jobs fits the tenant's quota;
* ``guarantee``: a placed guaranteed job gets at least its minRes GPUs and CPUs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from schedlab.perfmodel.memory import plan_memory_violation
from schedlab.perfmodel.search import plan_batch_violation
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.resources import Resources
from schedlab.topology.errors import PolicyError


class ViolationKind(Enum):
    UNKNOWN_JOB = "unknown-job"
    UNKNOWN_MACHINE = "unknown-machine"
    EMPTY_PLACEMENT = "empty-placement"
    NEGATIVE = "negative-resources"
    CAPACITY = "capacity"
    GANG = "gang"
    PLAN_GPUS = "plan-gpus"
    TP_SPLIT = "tp-across-machines"
    PP_LAYERS = "pp-layers"
    PLAN_BATCH = "plan-batch"
    MEMORY = "memory"
    TIER = "tier"
    QUOTA = "quota"
    GUARANTEE = "guarantee"


@dataclass(frozen=True, slots=True)
class Violation:
    kind: ViolationKind
    message: str
    job_id: str | None = None
    machine: str | None = None
    tenant: str | None = None

    def __str__(self) -> str:
        return f"[{self.kind.value}] {self.message}"


Check = Callable[[Instance, Allocation], Iterable[Violation]]


def _machine_attrs(instance: Instance, machine: str) -> dict | None:
    data = instance.cluster.graph.nodes.get(machine)
    if data is None or data.get("kind") != "machine":
        return None
    return data


def check_structure(instance: Instance, allocation: Allocation) -> Iterable[Violation]:
    jobs = instance.job_by_id
    for ja in allocation:
        if ja.job_id not in jobs:
            yield Violation(ViolationKind.UNKNOWN_JOB, f"allocation names job {ja.job_id!r}, not in the instance",
                            job_id=ja.job_id)
        if not ja.placement:
            yield Violation(ViolationKind.EMPTY_PLACEMENT, f"job {ja.job_id!r} has an empty placement",
                            job_id=ja.job_id)
        for m, r in ja.placement.items():
            if _machine_attrs(instance, m) is None:
                yield Violation(ViolationKind.UNKNOWN_MACHINE, f"job {ja.job_id!r} is placed on unknown machine "
                                f"{m!r}", job_id=ja.job_id, machine=m)
            if r.gpus < 0 or r.cpus < 0 or r.mem_gb < 0:
                yield Violation(ViolationKind.NEGATIVE, f"job {ja.job_id!r} has negative resources {r} on {m!r}",
                                job_id=ja.job_id, machine=m)


def check_capacity(instance: Instance, allocation: Allocation) -> Iterable[Violation]:
    used: dict[str, list[float]] = {}
    for ja in allocation:
        for m, r in ja.placement.items():
            u = used.setdefault(m, [0, 0, 0.0])
            u[0] += r.gpus
            u[1] += r.cpus
            u[2] += r.mem_gb
    for m, (g, c, mem) in used.items():
        a = _machine_attrs(instance, m)
        if a is None:
            continue
        res = instance.reserved.get(m, Resources())
        for name, val, cap in (("gpus", g + res.gpus, a["gpus"]), ("cpus", c + res.cpus, a["cpus"]),
                               ("mem_gb", mem + res.mem_gb, a["host_memory_gb"])):
            if val > cap + 1e-9:
                yield Violation(ViolationKind.CAPACITY,
                                f"machine {m!r}: {name} used {val:g} > capacity {cap:g}", machine=m)


def check_gang(instance: Instance, allocation: Allocation) -> Iterable[Violation]:
    jobs = instance.job_by_id
    for ja in allocation:
        job = jobs.get(ja.job_id)
        if job is None:
            continue
        g = sum(r.gpus for r in ja.placement.values())
        if g < 1:
            yield Violation(ViolationKind.GANG, f"job {job.id!r} is placed with no GPU", job_id=job.id)
        elif not job.reconfigurable and g != job.requested.gpus:
            yield Violation(ViolationKind.GANG, f"rigid job {job.id!r} got {g} of its {job.requested.gpus} GPUs "
                            "(gangs are all or nothing)", job_id=job.id)


def check_plan(instance: Instance, allocation: Allocation) -> Iterable[Violation]:
    jobs = instance.job_by_id
    for ja in allocation:
        p = ja.plan
        g = sum(r.gpus for r in ja.placement.values())
        if p.dp * p.tp * p.pp != g:
            yield Violation(ViolationKind.PLAN_GPUS, f"job {ja.job_id!r}: plan {p.name} needs dp*tp*pp = "
                            f"{p.dp * p.tp * p.pp} GPUs but has {g}", job_id=ja.job_id)
        if p.tp > 1:
            for m, r in ja.placement.items():
                if r.gpus % p.tp:
                    yield Violation(ViolationKind.TP_SPLIT, f"job {ja.job_id!r}: {r.gpus} GPUs on {m!r} is not a "
                                    f"multiple of TP degree {p.tp}, so a TP group crosses machines",
                                    job_id=ja.job_id, machine=m)
        job = jobs.get(ja.job_id)
        if job is not None and job.num_layers is not None and job.num_layers % p.pp:
            yield Violation(ViolationKind.PP_LAYERS, f"job {ja.job_id!r}: PP degree {p.pp} does not divide its "
                            f"{job.num_layers} layers", job_id=ja.job_id)
        if job is not None and (msg := plan_batch_violation(job.model, job.global_batch, p)):
            yield Violation(ViolationKind.PLAN_BATCH, f"job {ja.job_id!r}: plan {p.canonical()}: {msg}",
                            job_id=ja.job_id)


def check_tier(instance: Instance, allocation: Allocation) -> Iterable[Violation]:
    from schedlab.topology.tiers import Tier

    nodes = instance.cluster.graph.nodes
    for ja in allocation:
        job = instance.job_by_id.get(ja.job_id)
        if job is None or job.max_tier is None:
            continue
        machines = [m for m, r in ja.placement.items() if r.gpus > 0 and m in nodes]
        racks = {nodes[m]["rack"] for m in machines}
        tier = Tier.MACHINE if len(machines) <= 1 else (Tier.RACK if len(racks) == 1 else Tier.NETWORK)
        if tier > job.max_tier:
            yield Violation(ViolationKind.TIER, f"job {job.id!r} spans tier {tier.label}, above its limit "
                            f"{job.max_tier.label}", job_id=job.id)


def check_quota(instance: Instance, allocation: Allocation) -> Iterable[Violation]:
    usage: dict[str, list[float]] = {}
    for ja in allocation:
        job = instance.job_by_id.get(ja.job_id)
        if job is None or not job.guaranteed or job.tenant not in instance.quotas:
            continue
        q = job.quota_usage
        u = usage.setdefault(job.tenant, [0, 0, 0.0])
        u[0] += q.gpus
        u[1] += q.cpus
        u[2] += q.mem_gb
    for tenant, (g, c, m) in usage.items():
        quota = instance.quotas[tenant]
        for name, val, cap in (("gpus", g, quota.gpus), ("cpus", c, quota.cpus), ("mem_gb", m, quota.mem_gb)):
            if cap and val > cap + 1e-9:  # a zero component means "no quota on this resource"
                yield Violation(ViolationKind.QUOTA, f"tenant {tenant!r}: guaranteed jobs use {val:g} {name}, "
                                f"quota {cap:g}", tenant=tenant)


def check_guarantee(instance: Instance, allocation: Allocation) -> Iterable[Violation]:
    for ja in allocation:
        job = instance.job_by_id.get(ja.job_id)
        if job is None or not job.guaranteed or job.min_resources is None:
            continue
        got = Resources.total(ja.placement.values())
        mr = job.min_resources
        if got.gpus < mr.gpus or got.cpus < mr.cpus:
            yield Violation(ViolationKind.GUARANTEE, f"guaranteed job {job.id!r} got {got.gpus} GPUs/{got.cpus} "
                            f"CPUs, below its minRes {mr.gpus}/{mr.cpus}", job_id=job.id)


def check_memory(instance: Instance, allocation: Allocation) -> Iterable[Violation]:
    """Per-GPU memory of the plan vs. the smallest GPU it runs on (perf model's estimator).

    Jobs whose model the perf model does not know are not checked here.
    """
    nodes = instance.cluster.graph.nodes
    for ja in allocation:
        job = instance.job_by_id.get(ja.job_id)
        if job is None:
            continue
        mems = [nodes[m]["gpu_memory_gb"] for m, r in ja.placement.items() if r.gpus > 0 and m in nodes]
        if not mems:
            continue
        msg = plan_memory_violation(job.model, job.global_batch, ja.plan, min(mems))
        if msg:
            yield Violation(ViolationKind.MEMORY, f"job {job.id!r}: {msg}", job_id=job.id)


CHECKS: dict[str, Check] = {
    "structure": check_structure,
    "capacity": check_capacity,
    "gang": check_gang,
    "plan": check_plan,
    "memory": check_memory,
    "tier": check_tier,
    "quota": check_quota,
    "guarantee": check_guarantee,
}


def validate_allocation(instance: Instance, allocation: Allocation, *,
                        skip: Iterable[str] = ()) -> list[Violation]:
    """Every violation of ``allocation`` on ``instance`` (``skip`` names checks to leave out)."""
    skipped = set(skip)
    unknown = skipped - CHECKS.keys()
    if unknown:
        raise ValueError(f"unknown verifier checks {sorted(unknown)}; known: {sorted(CHECKS)}")
    out: list[Violation] = []
    for name, check in CHECKS.items():
        if name not in skipped:
            out.extend(check(instance, allocation))
    return out


def assert_valid(instance: Instance, allocation: Allocation, *, who: str = "allocation",
                 skip: Iterable[str] = ()) -> None:
    """Raise :class:`PolicyError` naming ``who`` and every violation, if there is any."""
    violations = validate_allocation(instance, allocation, skip=skip)
    if violations:
        lines = "\n  ".join(str(v) for v in violations)
        raise PolicyError(f"{who} produced an invalid allocation ({len(violations)} violation(s)):\n  {lines}")


__all__ = ["CHECKS", "Check", "Violation", "ViolationKind", "assert_valid", "check_capacity", "check_gang",
           "check_guarantee", "check_memory", "check_plan", "check_quota", "check_structure", "check_tier",
           "validate_allocation"]
