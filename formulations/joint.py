r"""Joint execution plan + allocation (Rubick's problem, exactly, over the perf model's option table).

Sets: jobs :math:`J`, options :math:`O_j` (admissible shapes: GPUs :math:`g_o`, CPUs :math:`c_o`,
memory :math:`h_o` over :math:`n_o` machines, share :math:`s_o = (g_o, c_o, h_o)/n_o` per machine,
throughput :math:`\tau_o`), eligible machines :math:`M` with free capacity :math:`C_m`.

Variables: :math:`z_{jo}\in\{0,1\}` (job j runs option o), :math:`x_{jom}\in\{0,1\}` (it uses
machine m), :math:`k_j\in\{0,1\}` (running job j keeps its current plan and machines).

.. math::

   \max\ \sum_j \sum_o w_j \frac{\tau_o}{\tau^{ref}_j} z_{jo} - \pi \sum_{j \in R} (1 - k_j)
   \quad\text{(max-min: } \max t,\ t \le \sum_o w_j \tau_o z_{jo}/\tau^{ref}_j\ \forall j)

   \sum_o z_{jo} \le 1\ (=1 \text{ for guaranteed jobs if required}),\quad
   \sum_m x_{jom} = n_o z_{jo},\quad
   \sum_{j,o} s_{o,r}\, x_{jom} \le C_{m,r}\ \forall m, r \in \{gpu, cpu, mem\}

   \sum_{j \in G_t} q_{j,r} \sum_o z_{jo} \le Q_{t,r}\ \text{(tenant quotas on minRes)},\quad
   k_j \le x_{j o^*_j m}\ \forall m \in M^*_j

Guaranteed jobs only get options reaching their SLO (requested throughput) and minRes; TP inside a
machine holds by construction of the options. **Symmetry**: machines with equal free capacity and
GPU model that host no running job are interchangeable; within each such class the GPU load is
ordered, :math:`\sum s_{o,gpu} x_{jom_i} \ge \sum s_{o,gpu} x_{jom_{i+1}}` (valid: any solution can
be permuted into this order with the same objective). :func:`relaxation_bound` aggregates those
classes into counts and solves the LP relaxation: a valid upper bound for the whole problem (used
by POP and as a second bound).

**Exact aggregation** (used automatically when it is exact, see :func:`aggregation_ok`): when no
reconfiguration penalty ties jobs to machines, every class's free GPU count is a multiple of every
per-machine GPU share that fits it, shares form a divisibility chain, CPU and memory per GPU of
every share are within the class's ratio (so GPUs bind first) and multi-machine options take whole
machines, then a class of :math:`N_c` machines is one bin of :math:`N_c G_c` GPUs: integer
:math:`y_{joc}` machines of class c replace :math:`x_{jom}`, with
:math:`\sum_c y_{joc} = n_o z_{jo}` and :math:`\sum_{j,o} g_o/n_o\, y_{joc} \le N_c G_c`; any such
solution packs onto the real machines (whole-machine shares first, then first-fit decreasing,
which is perfect for divisible sizes). No machine symmetry is left.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from schedlab.formulations.base import Built
from schedlab.formulations.joint_instance import (
    JointInstance,
    JointObjective,
    joint_objective,
    option_throughput,
)
from schedlab.formulations.model import LinExpr, Model, lsum
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.errors import SolverError


def _current_option(inst: JointInstance, ja: JobAllocation) -> int | None:
    n = len(ja.placement)
    for k, o in enumerate(inst.options.get(ja.job_id, ())):
        if o.plan == ja.plan and o.machines == n and all(r == o.share for r in ja.placement.values()):
            return k
    return None


def machine_classes(inst: JointInstance, caps: dict[str, Resources]) -> list[list[str]]:
    """Groups of interchangeable eligible machines (equal free capacity and GPU model, hosting no
    running job), in cluster order."""
    busy = {m for ja in inst.base.current for m in ja.placement}
    groups: dict[tuple, list[str]] = defaultdict(list)
    for m in inst.eligible_machines:
        if m in busy:
            continue
        c = caps[m]
        groups[(c.gpus, c.cpus, round(c.mem_gb, 6), inst.base.cluster.machine(m).gpu_model)].append(m)
    return [g for g in groups.values() if len(g) > 1]


def _classes_all(inst: JointInstance, caps: dict[str, Resources]) -> dict[tuple, list[str]]:
    groups: dict[tuple, list[str]] = defaultdict(list)
    for m in inst.eligible_machines:
        c = caps[m]
        groups[(c.gpus, c.cpus, round(c.mem_gb, 6), inst.base.cluster.machine(m).gpu_model)].append(m)
    return groups


def aggregation_ok(inst: JointInstance) -> tuple[bool, str]:
    """Whether the machine-class aggregation is exact for ``inst`` (and why not)."""
    if inst.reconfig_penalty and len(inst.base.current):
        return False, "reconfiguration penalty ties running jobs to machines"
    caps = {m: inst.base.capacity(m) for m in inst.eligible_machines}
    keys = list(_classes_all(inst, caps))
    shares = {(o.share, o.machines) for j in inst.base.jobs for _, o in inst.admissible(j)}
    sizes = sorted({sh.gpus for sh, _ in shares})
    if any(b % a for a, b in zip(sizes, sizes[1:], strict=False)):
        return False, f"per-machine GPU shares {sizes} are not a divisibility chain"
    for g, c, mem, _ in keys:
        if g <= 0:
            continue
        for sh, n in shares:
            if sh.gpus > g:
                continue
            if g % sh.gpus:
                return False, f"share of {sh.gpus} GPUs does not divide a class of {g} free GPUs"
            if sh.cpus * g > c * sh.gpus or sh.mem_gb * g > mem * sh.gpus + 1e-9:
                return False, "CPU or memory per GPU of a share exceeds a class's ratio"
            if n > 1 and sh.gpus != g:
                return False, "a multi-machine option takes part of a machine"
    return True, ""


class JointFormulation:
    """``aggregate``: ``None`` = use the exact machine-class aggregation when :func:`aggregation_ok`,
    ``False`` = always the per-machine model (with symmetry breaking)."""

    name = "joint"

    def __init__(self, aggregate: bool | None = None) -> None:
        self.aggregate = aggregate

    def build(self, inst: JointInstance) -> Built:
        if self.aggregate is not False and aggregation_ok(inst)[0]:
            return self._build_aggregated(inst)
        return self._build_machines(inst)

    def _build_aggregated(self, inst: JointInstance) -> Built:
        base = inst.base
        caps = {m: base.capacity(m) for m in inst.eligible_machines}
        classes = {k: v for k, v in _classes_all(inst, caps).items() if k[0] > 0}
        mdl = Model("joint-aggregated", sense="max")
        z, y = {}, {}
        load = {k: LinExpr() for k in classes}
        value, placed = {}, {}
        for job in base.jobs:
            pj, vj = LinExpr(), LinExpr()
            w = inst.weight(job.id) / inst.ref_throughput[job.id]
            for k, o in inst.admissible(job):
                sh = o.share
                fit = [key for key in classes if sh.gpus <= key[0]]
                if sum(len(classes[key]) for key in fit) < o.machines:
                    continue
                zv = mdl.binary(f"z[{job.id},{k}]")
                z[job.id, k] = zv
                ys = LinExpr()
                for key in fit:
                    yv = mdl.integer(f"y[{job.id},{k},{key}]", 0, min(o.machines, len(classes[key])))
                    y[job.id, k, key] = yv
                    ys.add_term(yv.index, 1)
                    load[key].add_term(yv.index, sh.gpus)
                mdl.add(ys - o.machines * zv == 0, f"span[{job.id},{k}]")
                pj.add_term(zv.index, 1)
                vj.add_term(zv.index, w * o.throughput)
            placed[job.id], value[job.id] = pj, vj
            self._place_rows(inst, mdl, job, pj)
        for key, ms in classes.items():
            if load[key].terms:
                mdl.add(load[key] <= len(ms) * key[0], f"cap[{key}]")
        self._quota_rows(inst, mdl, placed)
        self._objective(inst, mdl, value, {}, {})
        return Built(mdl, {"mode": "aggregated", "z": z, "y": y, "classes": classes, "keep": {}})

    @staticmethod
    def _place_rows(inst: JointInstance, mdl: Model, job, pj: LinExpr) -> None:
        if pj.terms:
            if job.guaranteed and inst.place_guaranteed:
                mdl.add(pj == 1, f"place[{job.id}]")
            else:
                mdl.add(pj <= 1, f"one[{job.id}]")
        elif job.guaranteed and inst.place_guaranteed:
            d = mdl.binary(f"unplaceable[{job.id}]")  # no admissible option: infeasible
            mdl.add(d >= 1, f"place[{job.id}]")
            mdl.add(d <= 0, f"place0[{job.id}]")

    @staticmethod
    def _quota_rows(inst: JointInstance, mdl: Model, placed: dict[str, LinExpr]) -> None:
        for tenant, q in inst.base.quotas.items():
            for r, cap in (("gpus", q.gpus), ("cpus", q.cpus), ("mem_gb", q.mem_gb)):
                if not cap:
                    continue
                e = LinExpr()
                for job in inst.base.jobs:
                    if job.guaranteed and job.tenant == tenant:
                        e.iadd(placed[job.id], getattr(job.quota_usage, r))
                if e.terms:
                    mdl.add(e <= cap, f"quota[{tenant},{r}]")

    def _objective(self, inst: JointInstance, mdl: Model, value: dict[str, LinExpr], x: dict, keep: dict) -> None:
        base = inst.base
        if inst.objective is JointObjective.MAXMIN:
            hi = max((inst.weight(j.id) * max((o.throughput for o in inst.options.get(j.id, ())), default=0.0)
                      / inst.ref_throughput[j.id] for j in base.jobs), default=0.0)
            t = mdl.var("t", 0.0, hi)
            for job in base.jobs:
                mdl.add(t - value[job.id] <= 0, f"min[{job.id}]")
            mdl.maximize(t)
            return
        obj = lsum(value.values())
        pen = inst.reconfig_penalty
        if pen:
            obj.const -= pen * len(base.current)
            for cur in base.current:
                k = _current_option(inst, cur)
                xs = dict(x.get((cur.job_id, k), ())) if k is not None else {}
                if k is None or not all(m in xs for m in cur.placement):
                    continue
                kv = mdl.binary(f"keep[{cur.job_id}]")
                keep[cur.job_id] = kv
                for m in cur.placement:
                    mdl.add(kv - xs[m] <= 0, f"keep[{cur.job_id},{m}]")
                obj.add_term(kv.index, pen)
        mdl.maximize(obj)

    def _build_machines(self, inst: JointInstance) -> Built:
        base = inst.base
        mach = list(inst.eligible_machines)
        caps = {m: base.capacity(m) for m in mach}
        mdl = Model("joint", sense="max")
        z: dict[tuple[str, int], Any] = {}
        x: dict[tuple[str, int], list[tuple[str, Any]]] = {}
        load: dict[str, LinExpr] = {m: LinExpr() for m in mach}
        cpu: dict[str, LinExpr] = {m: LinExpr() for m in mach}
        mem: dict[str, LinExpr] = {m: LinExpr() for m in mach}
        value: dict[str, LinExpr] = {}
        placed: dict[str, LinExpr] = {}
        for job in base.jobs:
            pj = LinExpr()
            vj = LinExpr()
            w = inst.weight(job.id) / inst.ref_throughput[job.id]
            for k, o in inst.admissible(job):
                sh = o.share
                fits = [m for m in mach if sh <= caps[m]]
                if len(fits) < o.machines:
                    continue
                zv = mdl.binary(f"z[{job.id},{k}]")
                z[job.id, k] = zv
                xs = []
                for m in fits:
                    xv = mdl.binary(f"x[{job.id},{k},{m}]")
                    xs.append((m, xv))
                    load[m].add_term(xv.index, sh.gpus)
                    cpu[m].add_term(xv.index, sh.cpus)
                    mem[m].add_term(xv.index, sh.mem_gb)
                x[job.id, k] = xs
                mdl.add(lsum(v for _, v in xs) == o.machines * zv, f"span[{job.id},{k}]")
                pj.add_term(zv.index, 1.0)
                vj.add_term(zv.index, w * o.throughput)
            placed[job.id] = pj
            value[job.id] = vj
            self._place_rows(inst, mdl, job, pj)
        for m in mach:
            c = caps[m]
            for e, cap, r in ((load[m], c.gpus, "gpu"), (cpu[m], c.cpus, "cpu"), (mem[m], c.mem_gb, "mem")):
                if e.terms:
                    mdl.add(e <= cap, f"cap[{m},{r}]")
        self._quota_rows(inst, mdl, placed)
        for cls in machine_classes(inst, caps):
            for a, b in zip(cls, cls[1:], strict=False):
                if load[a].terms:
                    mdl.add(load[a] - load[b] >= 0, f"sym[{a},{b}]")
        keep: dict = {}
        self._objective(inst, mdl, value, x, keep)
        return Built(mdl, {"mode": "machines", "z": z, "x": x, "keep": keep})

    def extract(self, inst: JointInstance, built: Built, values: list[float]) -> Allocation:
        if built.data["mode"] == "aggregated":
            return self._extract_aggregated(inst, built, values)
        out = []
        for (jid, k), zv in built.data["z"].items():
            if values[zv.index] > 0.5:
                o = inst.options[jid][k]
                ms = [m for m, xv in built.data["x"][jid, k] if values[xv.index] > 0.5]
                out.append(JobAllocation(jid, o.plan, {m: o.share for m in ms}))
        return Allocation.of(out)

    @staticmethod
    def _extract_aggregated(inst: JointInstance, built: Built, values: list[float]) -> Allocation:
        """Pack each class: whole-machine shares first, then first-fit decreasing (perfect for
        divisible sizes, so it never fails when :func:`aggregation_ok` holds)."""
        chosen = [(jid, k) for (jid, k), zv in built.data["z"].items() if values[zv.index] > 0.5]
        placement: dict[str, dict[str, Resources]] = {jid: {} for jid, _ in chosen}
        for key, ms in built.data["classes"].items():
            free = {m: key[0] for m in ms}
            items = []
            for jid, k in chosen:
                yv = built.data["y"].get((jid, k, key))
                cnt = int(round(values[yv.index])) if yv is not None else 0
                if cnt:
                    o = inst.options[jid][k]
                    items.append((o.share.gpus == key[0] and o.machines > 1, o.share.gpus, jid, k, cnt))
            items.sort(key=lambda t: (not t[0], -t[1], t[2]))
            for _, g, jid, k, cnt in items:
                o = inst.options[jid][k]
                for _ in range(cnt):
                    m = next((m for m in ms if free[m] >= g and m not in placement[jid]), None)
                    if m is None:
                        raise SolverError(f"aggregated joint model could not be packed for job {jid!r} "
                                          "(aggregation_ok should have prevented this)")
                    free[m] -= g
                    placement[jid][m] = o.share
        return Allocation.of(JobAllocation(jid, inst.options[jid][k].plan, placement[jid]) for jid, k in chosen)

    def objective(self, inst: JointInstance, solution: Allocation) -> float:
        return joint_objective(inst, solution)

    def allocation_of(self, solution: Allocation) -> Allocation:
        return solution

    def verify(self, inst: JointInstance, solution: Allocation) -> list[str]:
        out = [str(v) for v in validate_allocation(inst.base, solution)]
        elig = set(inst.eligible_machines)
        for ja in solution:
            job = inst.base.job(ja.job_id)
            if job.guaranteed and option_throughput(inst, ja) < inst.ref_throughput[job.id] * (1 - 1e-9):
                out.append(f"[slo] guaranteed job {job.id!r} runs below its requested throughput")
            if not set(ja.placement) <= elig:
                out.append(f"[eligible] job {job.id!r} uses machines outside the sub-problem")
        if inst.place_guaranteed:
            out += [f"[slo] guaranteed job {j.id!r} not placed" for j in inst.base.jobs
                    if j.guaranteed and j.id not in solution]
        return out

    def hints(self, inst: JointInstance, built: Built, allocation: Allocation) -> dict[int, float]:
        h = {v.index: 0.0 for v in built.model.vars}
        if built.data["mode"] == "aggregated":
            cls_of = {m: key for key, ms in built.data["classes"].items() for m in ms}
            for ja in allocation:
                k = _current_option(inst, ja)
                if k is None or (ja.job_id, k) not in built.data["z"]:
                    continue
                h[built.data["z"][ja.job_id, k].index] = 1.0
                for m in ja.placement:
                    yv = built.data["y"].get((ja.job_id, k, cls_of.get(m)))
                    if yv is not None:
                        h[yv.index] += 1.0
            return h
        for ja in allocation:
            k = _current_option(inst, ja)
            if k is None or (ja.job_id, k) not in built.data["z"]:
                continue
            xs = dict(built.data["x"][ja.job_id, k])
            if not all(m in xs for m in ja.placement):
                continue
            h[built.data["z"][ja.job_id, k].index] = 1.0
            for m in ja.placement:
                h[xs[m].index] = 1.0
            kv = built.data["keep"].get(ja.job_id)
            cur = inst.base.current.get(ja.job_id)
            if kv is not None and cur is not None and dict(cur.placement) == dict(ja.placement) and cur.plan == ja.plan:
                h[kv.index] = 1.0
        return h


def relaxation_model(inst: JointInstance) -> Model:
    """LP over machine classes (equal free capacity): ``y_{joc}`` = machines of class c used by
    option o of job j. Every integral solution of the per-machine model maps to a feasible point, so
    its optimum bounds the problem from above."""
    return class_model(inst, integral=False)[0]


def class_model(inst: JointInstance, integral: bool) -> tuple[Model, dict[tuple[str, int], Any]]:
    """The machine-class model (LP or, with ``integral``, MIP) and its ``z[(job, option)]`` variables.
    Both are relaxations of the per-machine model (per-class pooled capacity)."""
    base = inst.base
    caps = {m: base.capacity(m) for m in inst.eligible_machines}
    classes: dict[tuple, int] = defaultdict(int)
    for c in caps.values():
        classes[(c.gpus, c.cpus, round(c.mem_gb, 6))] += 1
    mdl = Model("joint-relaxation", sense="max")
    loads = {key: [LinExpr(), LinExpr(), LinExpr()] for key in classes}
    value, placed = {}, {}
    zs = {}
    for job in base.jobs:
        pj, vj = LinExpr(), LinExpr()
        w = inst.weight(job.id) / inst.ref_throughput[job.id]
        for k, o in inst.admissible(job):
            sh = o.share
            fit = [key for key in classes if sh <= Resources(key[0], key[1], key[2])]
            if sum(classes[key] for key in fit) < o.machines:
                continue
            zv = mdl.var(f"z[{job.id},{k}]", 0, 1, integer=integral)
            zs[job.id, k] = zv
            ys = LinExpr()
            for key in fit:
                yv = mdl.var(f"y[{job.id},{k},{key}]", 0, min(o.machines, classes[key]), integer=integral)
                ys.add_term(yv.index, 1.0)
                for r, amt in enumerate((sh.gpus, sh.cpus, sh.mem_gb)):
                    loads[key][r].add_term(yv.index, amt)
            mdl.add(ys - o.machines * zv == 0)
            pj.add_term(zv.index, 1.0)
            vj.add_term(zv.index, w * o.throughput)
        placed[job.id], value[job.id] = pj, vj
        if job.guaranteed and inst.place_guaranteed:
            mdl.add(pj == 1)
        elif pj.terms:
            mdl.add(pj <= 1)
    for key, n in classes.items():
        for r, e in enumerate(loads[key]):
            if e.terms:
                mdl.add(e <= n * key[r])
    for tenant, q in base.quotas.items():
        for r, cap in (("gpus", q.gpus), ("cpus", q.cpus), ("mem_gb", q.mem_gb)):
            if cap:
                e = LinExpr()
                for job in base.jobs:
                    if job.guaranteed and job.tenant == tenant:
                        e.iadd(placed[job.id], getattr(job.quota_usage, r))
                if e.terms:
                    mdl.add(e <= cap)
    if inst.objective is JointObjective.MAXMIN:
        t = mdl.var("t", 0.0, 1e9)
        for job in base.jobs:
            mdl.add(t - value[job.id] <= 0)
        mdl.maximize(t)
    else:
        obj = lsum(value.values())
        pen = inst.reconfig_penalty
        if pen:
            obj.const -= pen * len(base.current)
            for cur in base.current:
                k = _current_option(inst, cur)
                if k is not None and (cur.job_id, k) in zs:
                    kv = mdl.var(f"keep[{cur.job_id}]", 0, 1, integer=integral)
                    mdl.add(kv - zs[cur.job_id, k] <= 0)
                    obj.add_term(kv.index, pen)
        mdl.maximize(obj)
    return mdl, zs


def relaxation_bound(inst: JointInstance, backend: str = "highs") -> float | None:
    """Optimal value of :func:`relaxation_model` (an upper bound), ``None`` if the LP was not solved."""
    from schedlab.formulations.backends import get_backend
    from schedlab.formulations.result import SolveParams, Termination

    mdl = relaxation_model(inst)
    raw = get_backend(backend).solve(mdl, SolveParams(time_limit_s=120))
    if raw.termination is not Termination.OPTIMAL:
        return None
    return raw.dual_bound if raw.dual_bound is not None else raw.primal_bound
