r"""Joint models over *pools* of identical machines: the exact aggregated model and the class
relaxation (the LP bound and the first stage of :mod:`formulations.joint_twostage`).

**Pools.** On a one-rack cluster a pool is a class of identical free machines (free GPUs :math:`G_p`,
CPUs, memory, GPU model), :math:`N_p` machines. On several racks a pool is a class of identical
*racks* (each rack's free machines identical, :math:`M_p` per rack, :math:`N_p` machines in all).

**Exact aggregation** (:func:`pooled_ok`). Per job and pool: binaries :math:`v_{jgp}` (a one-machine
option of :math:`g` GPUs), :math:`u_{jgp}` (several racks: a rack-tier option inside one rack of the
pool), integers :math:`y_{jqp}` (pieces of :math:`q` GPUs of spread options), with
:math:`\sum_p v_{jgp} = \sum_{o \text{ single}, g_o = g} z_{jo}`, :math:`\sum_p q\, y_{jqp} =
\sum_{o: q_o = q} g_o z_{jo}` and :math:`\sum \text{GPUs in } p \le N_p G_p`. When every item size
(one-machine option sizes, divisors, rack-tier sizes, machine and rack capacities) lies on one
divisibility chain, CPUs and memory per GPU of every option are within every machine's free ratio
and no reconfiguration penalty ties jobs to machines, any pooled solution packs onto the real
machines: first-fit decreasing into racks, then into machines, is perfect for chain sizes; CPUs and
memory are then shared in proportion to GPUs. No machine symmetry is left. Options with a rack
granule above their divisor (:class:`~formulations.joint_instance.JobOption`) are not aggregated.

**Class relaxation** (:func:`class_model`): the same over machine classes that ignores racks (a
rack-tier option may span racks) and pools CPUs and memory over the whole cluster: a relaxation of
every placement (rack granules ignored too), so its optimum (LP or MIP) bounds the problem from above.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from schedlab.formulations.base import Built
from schedlab.formulations.joint_common import (
    JobRows,
    add_job_rows,
    add_quota_rows,
    covering_choice,
    job_classes,
    point_common,
    priced_allocation,
    ratio_ok,
    set_objective,
    share_resources,
)
from schedlab.formulations.joint_instance import JointInstance, JointObjective, footprint
from schedlab.formulations.model import LinExpr, Model
from schedlab.scheduling.allocation import Allocation
from schedlab.topology.errors import SolverError
from schedlab.topology.tiers import Tier


@dataclass(frozen=True)
class Pool:
    name: str
    gpus: int                      # free GPUs per machine
    machines: tuple[str, ...]      # every machine of the pool
    racks: tuple[tuple[str, ...], ...]  # its racks (machines per rack); one entry on a one-rack cluster

    @property
    def capacity(self) -> int:
        return self.gpus * len(self.machines)

    @property
    def rack_gpus(self) -> int:
        return self.gpus * len(self.racks[0])


def _key(inst: JointInstance, m: str) -> tuple:
    c = inst.base.capacity(m)
    return c.gpus, c.cpus, round(c.mem_gb, 6), inst.base.cluster.machine(m).gpu_model


def pools(inst: JointInstance, *, by_rack: bool = True) -> tuple[bool, list[Pool] | str]:
    """``(multi_rack, pools)``, or ``(multi_rack, reason)`` when racks are not uniform."""
    cl = inst.base.cluster
    mach = [m for m in inst.eligible_machines if inst.base.capacity(m).gpus > 0]
    racks: dict[str, list[str]] = defaultdict(list)
    for m in mach:
        racks[cl.rack_of(m)].append(m)
    multi = by_rack and len(racks) > 1
    groups: dict[tuple, list] = defaultdict(list)
    if not multi:
        for m in mach:
            groups[_key(inst, m)].append(m)
        return multi, [Pool(f"p{i}", k[0], tuple(ms), (tuple(ms),)) for i, (k, ms) in enumerate(groups.items())]
    for r, ms in racks.items():
        keys = {_key(inst, m) for m in ms}
        if len(keys) > 1:
            return multi, f"rack {r} mixes free machine shapes"
        groups[(keys.pop(), len(ms))].append(tuple(ms))
    return multi, [Pool(f"p{i}", k[0][0], tuple(m for rs in rl for m in rs), tuple(rl))
                   for i, (k, rl) in enumerate(groups.items())]


def _chain(sizes: set[int]) -> bool:
    s = sorted(x for x in sizes if x > 0)
    return all(b % a == 0 for a, b in zip(s, s[1:], strict=False))


def pooled_ok(inst: JointInstance) -> tuple[bool, str]:
    """Whether the pooled model is exact for ``inst`` (and why not)."""
    if inst.reconfig_penalty and len(inst.base.current):
        return False, "reconfiguration penalty ties running jobs to machines"
    if any(inst.holds(j) for j in inst.base.jobs):
        return False, "the holding rule ties running jobs to machines (a preempted job keeps its resources)"
    multi, ps = pools(inst)
    if isinstance(ps, str):
        return False, ps
    mach = [m for p in ps for m in p.machines]
    sizes = {p.gpus for p in ps} | ({p.rack_gpus for p in ps} if multi else set())
    cap = max((p.rack_gpus if multi else p.gpus for p in ps), default=0)
    for members in job_classes(inst):
        for _, o in inst.admissible(members[0]):
            if o.single:
                if o.gpus <= cap:
                    sizes.add(o.gpus)
            else:
                if o.granule != o.divisor:
                    return False, f"job {members[0].id!r} has rack-granule options (3D plans across racks)"
                sizes.add(o.divisor)
                if multi and o.tier is Tier.RACK and o.gpus <= cap:
                    sizes.add(o.gpus)
    if not _chain(sizes):
        return False, f"item sizes {sorted(sizes)} are not a divisibility chain"
    if not (ratio_ok(inst, mach, "cpus") and ratio_ok(inst, mach, "mem_gb")):
        return False, "CPU or memory per GPU of an option exceeds a machine's free ratio"
    return True, ""


def _admitted(inst: JointInstance, job, ps: list[Pool], multi: bool) -> list:
    out = []
    for k, o in inst.admissible(job):
        if o.single:
            ok = any(p.gpus >= o.gpus for p in ps)
        elif multi and o.tier is Tier.RACK:
            ok = any(p.rack_gpus >= o.gpus and p.gpus >= o.divisor for p in ps)
        else:
            ok = sum(p.capacity // o.divisor * o.divisor for p in ps if p.gpus >= o.divisor) >= o.gpus
        if ok:
            out.append((k, o))
    return out


def _item_rows(mdl: Model, jid: str, opts: list, jr: JobRows, ps: list[Pool], multi: bool, load: dict,
               store: dict, integral: bool = True) -> None:
    """``v`` (one machine), ``u`` (one rack), ``y`` (pieces) variables of one job (or class of
    ``n`` identical jobs: they count jobs) and their rows."""
    n = len(jr.jobs)
    groups: dict[tuple[str, int], LinExpr] = defaultdict(LinExpr)
    for k, o in opts:
        if o.single:
            groups["v", o.gpus].add_term(jr.z[k].index, 1.0)
        elif multi and o.tier is Tier.RACK:
            groups["u", o.gpus].add_term(jr.z[k].index, 1.0)
        else:
            groups["y", o.divisor].add_term(jr.z[k].index, float(o.gpus))
    for (kind, size), rhs in groups.items():
        tot = LinExpr()
        for p in ps:
            if kind == "v" and p.gpus >= size:
                var = mdl.var(f"v[{jid},{size},{p.name}]", 0, min(n, len(p.machines) * (p.gpus // size)),
                              integer=integral)
                tot.add_term(var.index, 1.0)
            elif kind == "u" and p.rack_gpus >= size:
                var = mdl.var(f"u[{jid},{size},{p.name}]", 0, min(n, len(p.racks) * (p.rack_gpus // size)),
                              integer=integral)
                tot.add_term(var.index, 1.0)
            elif kind == "y" and p.gpus >= size:
                var = mdl.var(f"y[{jid},{size},{p.name}]", 0, p.capacity // size, integer=integral)
                tot.add_term(var.index, float(size))
            else:
                continue
            store[kind, jid, size, p.name] = var
            load[p.name].add_term(var.index, float(size))
        mdl.add(tot - rhs == 0, f"{kind}[{jid},{size}]")


def build_pooled(inst: JointInstance) -> Built:
    multi, ps = pools(inst)
    mdl = Model("joint-pooled", sense="max")
    rows: dict[str, JobRows] = {}
    store: dict[tuple, Any] = {}
    load = {p.name: LinExpr() for p in ps}
    for members in job_classes(inst, aggregate=inst.objective is not JointObjective.MAXMIN):
        job = members[0]
        opts = _admitted(inst, job, ps, multi)
        jr = rows[job.id] = add_job_rows(inst, mdl, job, opts, keepable=False, members=members)
        _item_rows(mdl, job.id, opts, jr, ps, multi, load, store)
    for p in ps:
        if load[p.name].terms:
            mdl.add(load[p.name] <= p.capacity, f"cap[{p.name}]")
    add_quota_rows(inst, mdl, rows)
    t = set_objective(inst, mdl, rows)
    return Built(mdl, {"mode": "pooled", "rows": rows, "store": store, "pools": ps, "multi": multi, "t": t})


def _ffd(bins: list, free: dict, items: list[tuple[int, Any]]) -> list[Any]:
    """First-fit decreasing; returns the bin of each item (perfect for divisibility-chain sizes)."""
    where: list[Any] = [None] * len(items)
    for i in sorted(range(len(items)), key=lambda i: -items[i][0]):
        size = items[i][0]
        b = next((b for b in bins if free[b] >= size), None)
        if b is None:
            raise SolverError("pooled joint model could not be packed (pooled_ok should have prevented this)")
        free[b] -= size
        where[i] = b
    return where


def extract_pooled(inst: JointInstance, built: Built, values: list[float]) -> Allocation:
    d = built.data
    chosen_opt = {}
    kind_jobs: dict[tuple[str, str, int], list[str]] = defaultdict(list)  # (class, kind, size) -> jobs
    for key, jr in d["rows"].items():
        todo = list(jr.jobs)
        for k, z in sorted(jr.z.items()):
            o = inst.option(jr.jobs[0].id, k)
            for _ in range(int(round(values[z.index]))):
                jid = todo.pop(0).id
                chosen_opt[jid] = o
                kind = "v" if o.single else ("u" if d["multi"] and o.tier is Tier.RACK else "y")
                kind_jobs[key, kind, o.gpus if kind != "y" else o.divisor].append(jid)
    gpus: dict[str, dict[str, int]] = {j: defaultdict(int) for j in chosen_opt}
    by_pool: dict[str, list[tuple[str, str, int]]] = defaultdict(list)  # kind, job, size
    need = {jid: chosen_opt[jid].gpus // chosen_opt[jid].divisor for jid in chosen_opt}  # chunks left (y)
    for (kind, key, size, pname), var in sorted(d["store"].items(), key=lambda kv: kv[0][3]):
        n = int(round(values[var.index]))
        queue = kind_jobs[key, kind, size]
        for _ in range(n):
            if kind == "y":  # pieces of any job of the class with this divisor
                jid = next(j for j in queue if need[j] > 0)
                need[jid] -= 1
            else:
                jid = queue.pop(0)
            by_pool[pname].append((kind, jid, size))
    for p in d["pools"]:
        entries = by_pool.get(p.name, [])
        if d["multi"]:  # level 1: racks
            items = [(chosen_opt[jid].gpus if kind == "u" else size, (kind, jid, size)) for kind, jid, size in entries]
            racks = list(range(len(p.racks)))
            where = _ffd(racks, {r: p.rack_gpus for r in racks}, items)
            per_rack: dict[int, list] = defaultdict(list)
            for (_size, it), r in zip(items, where, strict=True):
                per_rack[r].append(it)
        else:
            per_rack = {0: entries}
        for r, its in per_rack.items():
            ms = list(p.racks[r])
            items = []
            for kind, jid, size in its:
                o = chosen_opt[jid]
                if kind == "v":
                    items.append((o.gpus, jid))
                elif kind == "u":  # a rack-tier job goes in chunks of its divisor inside its rack
                    items += [(o.divisor, jid)] * (o.gpus // o.divisor)
                else:
                    items.append((size, jid))
            where = _ffd(ms, {m: p.gpus for m in ms}, items)
            for (size, jid), m in zip(items, where, strict=True):
                gpus[jid][m] += size
    chosen = {j: (o, dict(gpus[j])) for j, o in chosen_opt.items()}
    shares = share_resources(inst, chosen)
    return Allocation.of(priced_allocation(inst, inst.base.job(j), o, g, *shares[j]) for j, (o, g) in chosen.items())


def point_pooled(inst: JointInstance, built: Built, allocation: Allocation) -> tuple[dict[int, float], list[str]]:
    d = built.data
    pool_of = {m: p.name for p in d["pools"] for m in p.machines}
    row_of = {j.id: key for key, jr in d["rows"].items() for j in jr.jobs}
    vals: dict[int, float] = {}
    problems, choice, price = [], {}, {}
    for ja in allocation:
        if ja.job_id not in row_of:
            problems.append(f"job {ja.job_id!r} is not in the instance")
            continue
        key = row_of[ja.job_id]
        got = covering_choice(inst, ja, d["rows"][key], problems)
        if got is None:
            continue
        price[ja.job_id], k = got
        choice[ja.job_id] = k
        o = inst.option(ja.job_id, k)
        fp = footprint(inst, ja)
        for m, g in fp.counts.items():
            if m not in pool_of:
                problems.append(f"job {ja.job_id!r}: machine {m!r} is not in any pool")
                continue
            if o.single:
                vk, amount = ("v", key, g, pool_of[m]), 1.0
            elif d["multi"] and o.tier is Tier.RACK:
                vk, amount = ("u", key, o.gpus, pool_of[m]), 1.0 / len(fp.counts)
            else:
                vk, amount = ("y", key, o.divisor, pool_of[m]), g / o.divisor
            var = d["store"].get(vk)
            if var is None:
                problems.append(f"job {ja.job_id!r}: no variable {vk}")
                continue
            vals[var.index] = vals.get(var.index, 0.0) + amount
    vals.update(point_common(inst, d["rows"], d["t"], price, choice))
    return vals, problems


def class_model(inst: JointInstance, integral: bool) -> tuple[Model, dict[str, JobRows]]:
    """The class relaxation (module docstring), LP or MIP, and each job's rows."""
    _, ps = pools(inst, by_rack=False)
    mdl = Model("joint-relaxation", sense="max")
    rows: dict[str, JobRows] = {}
    store: dict[tuple, Any] = {}
    load = {p.name: LinExpr() for p in ps}
    cpu, mem = LinExpr(), LinExpr()
    one = len(ps) == 1
    pool_of = {m: p.name for p in ps for m in p.machines}
    for members in job_classes(inst, aggregate=inst.objective is not JointObjective.MAXMIN):
        job = members[0]
        opts = _admitted(inst, job, ps, False)
        jr = rows[job.id] = add_job_rows(inst, mdl, job, opts, integral=integral, members=members,
                                         holdable=len(members) == 1 and inst.holds(job, pool_of))
        if one:
            for k, o in opts:
                load[ps[0].name].add_term(jr.z[k].index, float(o.gpus))
        else:
            _item_rows(mdl, job.id, opts, jr, ps, False, load, store, integral)
        for k, o in opts:
            cpu.add_term(jr.z[k].index, float(o.cpus))
            mem.add_term(jr.z[k].index, float(o.mem_gb))
        for tied in (jr.keep, jr.hold):  # kept, or preempted and holding until its checkpoint
            if tied is None:
                continue
            for m, r in inst.base.current[job.id].placement.items():
                if m in pool_of:
                    load[pool_of[m]].add_term(tied.index, float(r.gpus))
                cpu.add_term(tied.index, float(r.cpus))
                mem.add_term(tied.index, float(r.mem_gb))
    for p in ps:
        if load[p.name].terms:
            mdl.add(load[p.name] <= p.capacity, f"cap[{p.name}]")
    elig = [m for m in inst.eligible_machines if inst.base.capacity(m).gpus > 0]
    caps = inst.hold_capacity if any(r.hold is not None for r in rows.values()) else \
        {m: inst.base.capacity(m) for m in elig}
    if cpu.terms:
        mdl.add(cpu <= sum(max(0, caps[m].cpus) for m in elig), "cpu")
    if mem.terms:
        mdl.add(mem <= sum(max(0.0, caps[m].mem_gb) for m in elig), "mem")
    add_quota_rows(inst, mdl, rows)
    set_objective(inst, mdl, rows)
    return mdl, rows


def relaxation_bound(inst: JointInstance, backend: str = "highs", time_limit_s: float = 120.0) -> float | None:
    """Optimal value of the class LP (an upper bound on the whole problem); ``None`` if not solved."""
    from schedlab.formulations.backends import get_backend
    from schedlab.formulations.result import Reason, SolveParams

    mdl, _ = class_model(inst, integral=False)
    if not mdl.vars:
        return mdl.objective.const
    raw = get_backend(backend).solve(mdl, SolveParams(time_limit_s=time_limit_s))
    if raw.termination.reason is not Reason.OPTIMAL:
        return None
    return raw.dual_bound if raw.dual_bound is not None else raw.primal_bound


__all__ = ["Pool", "build_pooled", "class_model", "extract_pooled", "point_pooled", "pooled_ok", "pools",
           "relaxation_bound"]
