"""Pieces shared by the joint models (per-machine, pooled, class relaxation): per-job value and
achieved-throughput rows, placement and quota rows, the objective, and turning GPU counts back into
a priced :class:`~scheduling.JobAllocation` (CPUs and memory shared out, best plan chosen).

Every model gives job ``j`` an *achieved throughput* ``theta_j`` (continuous, weighted and
normalised) with ``theta_j <= sum_o v_o z_jo`` (``v_o`` = the option's value): at an optimum it equals
the chosen option's value; fixed to a heuristic's allocation it equals that allocation's price even
when the heuristic runs a slower plan than the option's best (containment with the same objective
value, :mod:`formulations.containment`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from schedlab.formulations.joint_instance import (
    JobOption,
    JointInstance,
    JointObjective,
    covering_option,
    footprint,
)
from schedlab.formulations.model import LinExpr, Model
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.errors import SolverError


@dataclass
class JobRows:
    """The model pieces of a job, or of a class of identical jobs (``jobs``; then ``z`` counts how
    many of them take each option): option variables, keep variable, placed and value expressions."""

    z: dict[int, Any] = field(default_factory=dict)
    keep: Any = None
    placed: LinExpr = field(default_factory=LinExpr)
    value: LinExpr = field(default_factory=LinExpr)
    theta: Any = None
    jobs: tuple[Job, ...] = ()
    #: the holding rule's binary (a running job left out keeps its resources): ``placed + hold == 1``
    hold: Any = None


def option_value(inst: JointInstance, job: Job, o: JobOption) -> float:
    """The objective's value of ``job`` on option ``o`` (:meth:`JointInstance.gain`). A negative neutral
    gain (a job slower than worth placing) is clamped to -1: any negative value makes the option
    infeasible (``0 <= theta <= value``), and a bounded one keeps the model's coefficients sane."""
    v = inst.gain(job.id, o.throughput / inst.ref_throughput[job.id])
    return max(v, -1.0)


def keep_value(inst: JointInstance, job: Job) -> float | None:
    """Value of keeping the running job's current allocation, if it may keep it (machines eligible,
    priceable, a guaranteed job at its SLO); ``None`` otherwise."""
    cur = inst.base.current.get(job.id)
    if cur is None or not inst.reconfig_penalty or not set(cur.placement) <= set(inst.eligible_machines):
        return None
    try:
        n = inst.norm(cur)
    except SolverError:
        return None
    if job.guaranteed and inst.weight(job.id) > 0 and n < 1 - 1e-9:
        return None
    v = inst.gain(job.id, n)
    return v if v >= 0 else None  # a negative value could never be kept (0 <= theta <= value)


def add_job_rows(inst: JointInstance, mdl: Model, job: Job, options: list[tuple[int, JobOption]],
                 keepable: bool = True, integral: bool = True, members: tuple[Job, ...] | None = None,
                 holdable: bool = False) -> JobRows:
    """Option variables, the keep binary, ``theta_j <= value`` and the one-option row; with
    ``members`` (identical jobs, ``job`` first) the variables count how many of them take each
    option. ``holdable`` (a running job under the holding rule, :meth:`JointInstance.holds`): a
    ``hold`` binary, 1 when the job is left out, with ``placed + hold == 1`` (the caller charges its
    running resources to ``hold``)."""
    members = members or (job,)
    n = len(members)
    jr = JobRows(jobs=members)
    for k, o in options:
        z = mdl.var(f"z[{job.id},{k}]", 0, n, integer=integral)
        jr.z[k] = z
        jr.placed.add_term(z.index, 1.0)
        jr.value.add_term(z.index, option_value(inst, job, o))
    kv = keep_value(inst, job) if keepable and n == 1 else None
    if kv is not None:
        jr.keep = mdl.var(f"keep[{job.id}]", 0, 1, integer=integral)
        jr.placed.add_term(jr.keep.index, 1.0)
        jr.value.add_term(jr.keep.index, kv)
    # the bound lets CP-SAT substitute theta exactly (its row alone, summed over every option, fits)
    vsum = n * sum(max(0.0, v) for v in jr.value.terms.values())
    jr.theta = mdl.var(f"theta[{job.id}]", 0.0, vsum)
    if jr.value.terms:
        mdl.add(jr.theta - jr.value <= 0, f"value[{job.id}]")
    else:
        mdl.add(jr.theta.expr() <= 0, f"value[{job.id}]")
    if holdable and n == 1:
        jr.hold = mdl.var(f"hold[{job.id}]", 0, 1, integer=integral)
        mdl.add(jr.placed + jr.hold.expr() == 1, f"hold[{job.id}]")
    elif jr.placed.terms:
        if job.guaranteed and inst.place_guaranteed:
            mdl.add(jr.placed == n, f"place[{job.id}]")
        else:
            mdl.add(jr.placed <= n, f"one[{job.id}]")
    elif job.guaranteed and inst.place_guaranteed:
        d = mdl.binary(f"unplaceable[{job.id}]")  # no admissible option: infeasible
        mdl.add(d >= 1, f"place[{job.id}]")
        mdl.add(d <= 0, f"place0[{job.id}]")
    return jr


def add_quota_rows(inst: JointInstance, mdl: Model, rows: Mapping[str, JobRows]) -> None:
    for tenant, q in inst.base.quotas.items():
        for r, cap in (("gpus", q.gpus), ("cpus", q.cpus), ("mem_gb", q.mem_gb)):
            if not cap:
                continue
            e = LinExpr()
            for jr in rows.values():
                job = jr.jobs[0]
                if job.guaranteed and job.tenant == tenant:
                    e.iadd(jr.placed, getattr(job.quota_usage, r))
                    if jr.hold is not None:  # a preempted job's quota stays charged until its checkpoint
                        e.add_term(jr.hold.index, float(getattr(job.quota_usage, r)))
            if e.terms:
                mdl.add(e <= cap, f"quota[{tenant},{r}]")


def set_objective(inst: JointInstance, mdl: Model, rows: Mapping[str, JobRows]) -> Any:
    """SUM/WEIGHTED: ``sum theta + pi * sum keep - pi * |current|``; MAXMIN: ``max t, t <= theta_j``.
    Returns ``t`` (MAXMIN) or ``None``."""
    if inst.objective is JointObjective.MAXMIN:
        hi = max((r.theta.ub for r in rows.values()), default=0.0)
        t = mdl.var("t", 0.0, hi)
        for jid, r in rows.items():
            mdl.add(t - r.theta <= 0, f"min[{jid}]")
        mdl.maximize(t)
        return t
    obj = LinExpr()
    for r in rows.values():
        obj.add_term(r.theta.index, 1.0)
    pen = inst.reconfig_penalty
    if pen:
        obj.const -= pen * len(inst.base.current)
        for r in rows.values():
            if r.keep is not None:
                obj.add_term(r.keep.index, pen)
    mdl.maximize(obj)
    return None


def point_common(inst: JointInstance, rows: Mapping[str, JobRows], t: Any, values: dict[str, float],
                 choice: Mapping[str, int | str]) -> dict[int, float]:
    """Variable values of the job-level pieces for a solution: ``choice[job]`` = option index or
    ``"keep"``; ``values[job]`` = its weighted normalised price (rows of job classes add up)."""
    out: dict[int, float] = {}
    for r in rows.values():
        total = 0.0
        for job in r.jobs:
            ch = choice.get(job.id)
            if ch == "keep":
                out[r.keep.index] = 1.0
            elif ch is not None:
                out[r.z[ch].index] = out.get(r.z[ch].index, 0.0) + 1.0
            total += values.get(job.id, 0.0)
        out[r.theta.index] = total
        if r.hold is not None:
            out[r.hold.index] = 0.0 if r.jobs[0].id in choice else 1.0
    if t is not None:
        out[t.index] = min((values.get(j.id, 0.0) for j in inst.base.jobs), default=0.0)
    return out


def covering_choice(inst: JointInstance, ja: JobAllocation, jr: JobRows, problems: list[str],
                    priced: JobAllocation | None = None) -> tuple[float, int | str] | None:
    """``(value, choice)`` of an allocation in a model: its weighted normalised price and the option
    index that covers it (or ``"keep"``: the running allocation, unchanged); ``None`` with the reason
    appended to ``problems`` when it cannot run or no option of the model covers it. ``priced``: the
    allocation whose price counts when ``ja`` is its relabelling by the model's machine symmetries (the
    perf model lays ranks out by machine name, so a relabelled 3D plan can straddle differently; the
    option covers both, and the point keeps the original's value)."""
    try:
        v = inst.value(priced if priced is not None else ja)
    except SolverError as e:
        problems.append(str(e))
        return None
    cur = inst.base.current.get(ja.job_id)
    if jr.keep is not None and cur is not None and cur.plan == ja.plan and dict(cur.placement) == dict(ja.placement):
        return v, "keep"
    k = covering_option(inst, ja, v)
    if k is None or k not in jr.z:
        problems.append(f"job {ja.job_id!r}: no option of the model covers {footprint(inst, ja)}")
        return None
    return v, k


def job_classes(inst: JointInstance, aggregate: bool = True) -> list[tuple[Job, ...]]:
    """Groups of interchangeable jobs (same option table, reference throughput, weight, class,
    tenant, quota usage and reconfigurability; none running): the pooled models count them instead
    of deciding each. Singletons when ``aggregate`` is off (max-min needs every job's own value)."""
    groups: dict[Any, list[Job]] = {}
    running = {ja.job_id for ja in inst.base.current}
    tables: dict[int, int] = {}  # id of an option tuple -> canonical id (equal tuples share one)
    canon: dict[tuple, int] = {}
    for j in inst.base.jobs:
        if not aggregate or j.id in running:
            key: Any = ("job", j.id)
        else:
            opts = inst.options.get(j.id, ())
            if id(opts) not in tables:  # hash a table once, not once per job
                tables[id(opts)] = canon.setdefault(opts, len(canon))
            g = j.guaranteed
            key = (tables[id(opts)], inst.ref_throughput[j.id], inst.weight(j.id),
                   inst.neutral_terms[j.id] if inst.objective is JointObjective.NEUTRAL else None, g, j.tenant,
                   j.quota_usage if g else None, j.reconfigurable, j.requested.gpus, j.min_resources if g else None)
        groups.setdefault(key, []).append(j)
    return [tuple(g) for g in groups.values()]


def ratio_ok(inst: JointInstance, machines: list[str], attr: str) -> bool:
    """Whether every admissible option's CPUs (or memory) per GPU fit every machine's free ratio, so
    that sharing them in proportion to GPUs never overfills a machine (then the model needs no
    per-machine rows for them)."""
    worst = min(((getattr(inst.base.capacity(m), attr) / inst.base.capacity(m).gpus) for m in machines
                 if inst.base.capacity(m).gpus > 0), default=0.0)
    need = max(((o.cpus if attr == "cpus" else o.mem_gb) / o.gpus for members in job_classes(inst)
                for _, o in inst.admissible(members[0])), default=0.0)
    return need <= worst + 1e-9


def split_evenly(amount: float, gpus: Mapping[str, int], *, integral: bool) -> dict[str, float]:
    """``amount`` shared over machines in proportion to their GPUs (integers: remainders to the
    first machines)."""
    tot = sum(gpus.values())
    if not integral:
        return {m: amount * g / tot for m, g in gpus.items()}
    base = {m: int(amount) * g // tot for m, g in gpus.items()}
    left = int(amount) - sum(base.values())
    for m in list(gpus)[:left]:
        base[m] += 1
    return {m: float(v) for m, v in base.items()}


def make_allocation(job_id: str, plan: ExecutionPlan, gpus: Mapping[str, int], cpus: Mapping[str, float],
                    mem: Mapping[str, float]) -> JobAllocation:
    return JobAllocation(job_id, plan, {m: Resources(int(g), int(round(cpus.get(m, 0))),
                                                              max(0.0, float(mem.get(m, 0.0))))
                                        for m, g in gpus.items() if g > 0})


def share_resources(inst: JointInstance, chosen: Mapping[str, tuple[JobOption, Mapping[str, int]]]
                    ) -> dict[str, tuple[dict[str, float], dict[str, float]]]:
    """CPUs (whole) and memory of each chosen option shared over its machines in proportion to GPUs;
    where rounding would overfill a machine, an integral max-flow (networkx) shares the CPUs (one
    exists when the fractional share fits, which :func:`ratio_ok` guarantees)."""
    out = {j: (split_evenly(o.cpus, g, integral=True), split_evenly(o.mem_gb, g, integral=False))
           for j, (o, g) in chosen.items()}
    used: dict[str, float] = {}
    for cpus, _ in out.values():
        for m, c in cpus.items():
            used[m] = used.get(m, 0) + c
    if all(used[m] <= inst.base.capacity(m).cpus for m in used):
        return out
    import networkx as nx

    G = nx.DiGraph()
    for j, (o, g) in chosen.items():
        G.add_edge("s", ("j", j), capacity=o.cpus)
        for m in g:
            G.add_edge(("j", j), ("m", m), capacity=inst.base.capacity(m).cpus)
    for m in used:
        G.add_edge(("m", m), "t", capacity=max(0, inst.base.capacity(m).cpus))
    val, flow = nx.maximum_flow(G, "s", "t")
    if val < sum(o.cpus for o, _ in chosen.values()):
        raise SolverError("the CPUs of the chosen options cannot be shared over their machines")
    for j, (_o, g) in chosen.items():
        out[j] = ({m: float(flow[("j", j)][("m", m)]) for m in g}, out[j][1])
    return out


def priced_allocation(inst: JointInstance, job: Job, o: JobOption, gpus: Mapping[str, int],
                      cpus: Mapping[str, float], mem: Mapping[str, float]) -> JobAllocation:
    """The job on ``gpus`` with the fastest plan the pricer finds for that footprint (the option's
    plan with table pricing, with ``inst.fixed_plans`` or when none is found)."""
    ja = make_allocation(job.id, o.plan, gpus, cpus, mem)
    if inst.pricing != "table" and not inst.fixed_plans:
        best = inst.pricer.best(job, footprint(inst, ja))
        if best is not None:
            ja = make_allocation(job.id, best[0], gpus, cpus, mem)
    return ja


__all__ = ["JobRows", "add_job_rows", "add_quota_rows", "covering_choice", "job_classes", "keep_value",
           "make_allocation", "option_value", "point_common", "priced_allocation", "ratio_ok", "set_objective",
           "share_resources", "split_evenly"]
