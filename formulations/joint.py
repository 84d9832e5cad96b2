r"""Joint execution plan + allocation (Rubick's problem) over per-machine GPU counts.

Sets: jobs :math:`J`, admissible options :math:`O_j` (:mod:`formulations.joint_instance`: a class of
placements, GPUs :math:`g_o`, divisor :math:`q_o` (:math:`q_o = g_o` for one machine), tier
:math:`\ell_o`, CPUs :math:`c_o`, memory :math:`h_o`, value :math:`v_o = w_j \tau_o / \tau^{ref}_j`),
eligible machines :math:`M` with free :math:`(G_m, C_m, H_m)`, divisors :math:`Q_j = \{q_o\}`.

Variables: :math:`z_{jo}\in\{0,1\}`; :math:`y_{jqm}\in\mathbb{Z}_{\ge 0}` pieces of :math:`q` GPUs of
job j on machine m, so job j holds :math:`x_{jm} = \sum_q q\, y_{jqm}` GPUs there (uneven splits such
as 3 + 1 are ordinary values; :math:`q` stands for the option's (divisor, rack granule :math:`\rho`)
pair, and a granule above the divisor adds :math:`\sum_{m \in R} q\, y_{jqm} = \rho\, w_{jqR}`,
:math:`w \in \mathbb{Z}_{\ge 0}`, per rack R); :math:`k_j` keeps the running allocation (only with a
reconfiguration penalty; it holds exactly the running resources); :math:`r_{jR}` (multi-rack
clusters, rack-tier options); per-machine CPUs and memory :math:`c_{jm}, h_{jm}` only when some
option's CPUs (memory) per GPU exceed a machine's free ratio or a job may keep its allocation
(otherwise sharing them in proportion to GPUs always fits); :math:`\theta_j` achieved value.

.. math::

   \max \sum_j \theta_j + \pi \sum_j k_j - \pi |R| \quad (\text{max-min: } \max t,\ t \le \theta_j)

   \theta_j \le \sum_o v_o z_{jo} + v^{cur}_j k_j,\qquad \sum_o z_{jo} + k_j \le 1

   \sum_m q\, y_{jqm} = \sum_{o: q_o = q} g_o z_{jo}\ \forall q \in Q_j \quad(\text{pieces match the option})

   \sum_{m \in R} \sum_q q\, y_{jqm} \le U_R r_{jR},\quad \sum_R r_{jR} \le 1 + (|R| - 1)\sum_{o: \ell_o = net} z_{jo}

   \sum_j x_{jm} + \kappa_{jm} k_j \le G_m,\quad c_{jm} \le C_m \textstyle\sum_q y_{jqm},\
   \sum_m c_{jm} \ge \sum_o c_o z_{jo},\ \sum_j c_{jm} + \kappa^{cpu}_{jm} k_j \le C_m\ (\text{memory alike})

plus tenant quotas on the guaranteed jobs' minRes. **Holding rule** (``inst.hold_preempted``): a running
job gets :math:`h_j \in \{0,1\}` with :math:`\sum_o z_{jo} + k_j + h_j = 1`, and :math:`h_j` charges its
running resources (:math:`\kappa_{jm}`, CPUs, memory) and its quota usage like :math:`k_j`: a preempted job
keeps them for the whole decision. **Symmetry**: identical free machines of one
rack hosting no running job are ordered by GPU load (a solution is permuted into that order for
:meth:`JointFormulation.point`). **Aggregation**: when it is exact
(:func:`formulations.joint_pooled.pooled_ok`) the model is built over pools of identical machines
instead (:mod:`formulations.joint_pooled`); ``aggregate=False`` forces the per-machine model.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from schedlab.formulations.base import Built, check_deadline
from schedlab.formulations.joint_common import (
    JobRows,
    add_job_rows,
    add_quota_rows,
    covering_choice,
    keep_value,
    point_common,
    priced_allocation,
    ratio_ok,
    set_objective,
    share_resources,
)
from schedlab.formulations.joint_instance import JointInstance, footprint
from schedlab.formulations.joint_pooled import (
    build_pooled,
    class_model,
    extract_pooled,
    point_pooled,
    pooled_ok,
    relaxation_bound,
)
from schedlab.formulations.joint_rules import joint_objective, joint_rules
from schedlab.formulations.model import LinExpr, Model
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.errors import SolverError
from schedlab.topology.tiers import Tier


def machine_classes(inst: JointInstance, machines: list[str]) -> list[list[str]]:
    """Groups of interchangeable machines (equal free capacity, GPU model and rack, hosting no running
    job), in cluster order."""
    busy = {m for ja in inst.base.current for m in ja.placement}
    cl = inst.base.cluster
    groups: dict[tuple, list[str]] = defaultdict(list)
    for m in machines:
        if m not in busy:
            c = inst.base.capacity(m)
            groups[(c.gpus, c.cpus, round(c.mem_gb, 6), cl.machine(m).gpu_model, cl.rack_of(m))].append(m)
    return [g for g in groups.values() if len(g) > 1]


def canonical(allocation: Allocation, classes: list[list[str]]) -> Allocation:
    """``allocation`` with the machines of each class relabelled so their GPU loads do not increase
    along the class (the order the model's symmetry rows impose). Same footprint classes, so the same
    options cover it; not always the same price: the perf model lays a 3D plan's ranks out by machine
    name, so uneven counts can straddle differently (the containment point keeps the original's value)."""
    load: dict[str, int] = defaultdict(int)
    for ja in allocation:
        for m, r in ja.placement.items():
            load[m] += r.gpus
    rename = {}
    for cls in classes:
        order = sorted(cls, key=lambda m: -load[m])  # stable: ties keep cluster order
        rename.update({old: new for old, new in zip(order, cls, strict=True)})
    return Allocation.of(JobAllocation(ja.job_id, ja.plan, {rename.get(m, m): r for m, r in ja.placement.items()})
                         for ja in allocation)


def _fits(o, caps: dict, racks: dict[str, list[str]]) -> bool:
    if o.single:
        return any(c.gpus >= o.gpus for c in caps.values())
    room = [sum(caps[m].gpus // o.divisor * o.divisor for m in ms) for ms in racks.values()]
    if o.tier is Tier.RACK and len(racks) > 1:
        return max(room) >= o.gpus
    return sum(x // o.granule * o.granule for x in room) >= o.gpus


def slack(inst: JointInstance, mach: list[str], caps: dict, attr: str, keeps: dict[str, bool],
          holds: dict[str, bool]) -> bool:
    """Whether ``attr`` (CPUs or host memory) can never fill any machine of ``mach``: on every machine,
    the jobs' largest claims (a job's largest admissible option's whole amount, or what it runs with
    there when it may be kept or held) sum within the capacity ``caps``. Then every per-machine row of
    ``attr`` is slack at every point of the model, and sharing an option's amount over its machines in
    proportion to GPUs (:func:`share_resources`) always fits: the model without those rows has the same
    feasible GPU decisions and the same optimum."""
    base = inst.base
    total = 0.0
    for job in base.jobs:
        claim = max((getattr(o, attr) for _, o in inst.admissible(job)), default=0.0)
        total += claim
    per: dict[str, float] = {m: total for m in mach}
    for job in base.jobs:
        if keeps[job.id] or holds[job.id]:
            claim = max((getattr(o, attr) for _, o in inst.admissible(job)), default=0.0)
            for m, r in base.current[job.id].placement.items():
                if m in per:
                    per[m] += max(0.0, getattr(r, attr) - claim)
    return all(per[m] <= getattr(caps[m], attr) - (1e-6 if attr == "mem_gb" else 0) for m in mach)


def build_machines(inst: JointInstance, deadline: float | None = None, free: frozenset[str] = frozenset(),
                   relax: tuple[bool, bool] = (False, False)) -> Built:
    """The per-machine model. For :mod:`formulations.joint_cuts`' relaxed place-all checks: ``free``,
    running jobs left out with their running resources free (no keep, no hold; the capacities stay those
    of the whole instance); ``relax``, leave out the per-machine CPU (memory) rows (a relaxation)."""
    base = inst.base
    cl = base.cluster
    mach = [m for m in inst.eligible_machines if base.capacity(m).gpus > 0]
    caps = {m: base.capacity(m) for m in mach}
    racks: dict[str, list[str]] = defaultdict(list)
    for m in mach:
        racks[cl.rack_of(m)].append(m)
    keeps = {j.id: j.id not in free and keep_value(inst, j) is not None
             and set(base.current[j.id].placement) <= set(mach) for j in base.jobs}
    holds = {j.id: inst.holds(j, mach) for j in base.jobs}
    hold_caps = any(holds.values())
    holds = {jid: h and jid not in free for jid, h in holds.items()}
    tied = any(keeps.values()) or any(holds.values())
    cpu_rows = tied or not ratio_ok(inst, mach, "cpus")
    mem_rows = tied or not ratio_ok(inst, mach, "mem_gb")
    if hold_caps:  # the holding rule's capacities (JointInstance.hold_capacity)
        caps = {m: inst.hold_capacity[m] for m in mach}
    cpu_rows = cpu_rows and not relax[0] and not slack(inst, mach, caps, "cpus", keeps, holds)
    mem_rows = mem_rows and not relax[1] and not slack(inst, mach, caps, "mem_gb", keeps, holds)
    mdl = Model("joint", sense="max")
    rows: dict[str, JobRows] = {}
    y: dict[tuple[str, int, str], Any] = {}
    cpu: dict[tuple[str, str], Any] = {}
    mem: dict[tuple[str, str], Any] = {}
    rv: dict[tuple[str, str], Any] = {}
    wv: dict[tuple[str, int, int, str], Any] = {}
    load = {m: [LinExpr(), LinExpr(), LinExpr()] for m in mach}
    fits: dict[tuple, bool] = {}
    for job in base.jobs:
        check_deadline(deadline)
        opts = []
        for k, o in inst.admissible(job):
            key = (o.single, o.gpus, o.divisor, o.tier, o.granule)
            if key not in fits:
                fits[key] = _fits(o, caps, racks)
            if fits[key]:
                opts.append((k, o))
        jr = rows[job.id] = add_job_rows(inst, mdl, job, opts, keepable=keeps[job.id], holdable=holds[job.id])
        held: dict[str, LinExpr] = defaultdict(LinExpr)
        gate: dict[str, LinExpr] = defaultdict(LinExpr)
        for q, rho in sorted({(o.divisor, o.granule) for _, o in opts}):
            tot = LinExpr()
            in_rack: dict[str, LinExpr] = defaultdict(LinExpr)
            tag = f"{q}" if rho == q else f"{q}/{rho}"
            gmax_q = max(o.gpus for _, o in opts if (o.divisor, o.granule) == (q, rho))
            for m in mach:
                if caps[m].gpus >= q:
                    v = y[job.id, q, rho, m] = mdl.integer(f"y[{job.id},{tag},{m}]", 0,
                                                           min(caps[m].gpus, gmax_q) // q)
                    tot.add_term(v.index, q)
                    held[m].add_term(v.index, q)
                    gate[m].add_term(v.index, 1.0)
                    in_rack[cl.rack_of(m)].add_term(v.index, q)
            rhs = LinExpr({jr.z[k].index: float(o.gpus) for k, o in opts if (o.divisor, o.granule) == (q, rho)})
            mdl.add(tot - rhs == 0, f"pieces[{job.id},{tag}]")
            if rho != q:  # every rack holds a multiple of the granule
                for rack, e in in_rack.items():
                    w = wv[job.id, q, rho, rack] = mdl.integer(f"w[{job.id},{tag},{rack}]", 0,
                                                               sum(caps[m].gpus for m in racks[rack]) // rho)
                    e.add_term(w.index, -float(rho))
                    mdl.add(e == 0, f"granule[{job.id},{tag},{rack}]")
        if len(racks) > 1 and any(not o.single and o.tier is Tier.RACK for _, o in opts):
            net = LinExpr({jr.z[k].index: 1.0 for k, o in opts if not o.single and o.tier is Tier.NETWORK})
            rsum = LinExpr()
            gmax = max(o.gpus for _, o in opts)
            for rack, ms in racks.items():
                e = LinExpr()
                for m in ms:
                    e.iadd(held[m])
                if e.terms:
                    r = rv[job.id, rack] = mdl.binary(f"r[{job.id},{rack}]")
                    mdl.add(e - min(gmax, sum(caps[m].gpus for m in ms)) * r <= 0, f"rack[{job.id},{rack}]")
                    rsum.add_term(r.index, 1.0)
            mdl.add(rsum - (len(racks) - 1) * net <= 1, f"racks[{job.id}]")
        for attr, on, store, integral, k in (("cpus", cpu_rows, cpu, True, 1), ("mem_gb", mem_rows, mem, False, 2)):
            if not on or not opts:
                continue
            tot = LinExpr()
            need_max = max(getattr(o, attr) for _, o in opts)
            for m, g in gate.items():
                cap = getattr(caps[m], attr)
                v = store[job.id, m] = mdl.var(f"{attr}[{job.id},{m}]", 0, cap, integer=integral)
                mdl.add(v - min(cap, need_max) * g <= 0, f"{attr}gate[{job.id},{m}]")
                tot.add_term(v.index, 1.0)
                load[m][k].add_term(v.index, 1.0)
            need = LinExpr({jr.z[i].index: float(getattr(o, "cpus" if attr == "cpus" else "mem_gb")) for i, o in opts})
            mdl.add(tot - need >= 0, f"{attr}[{job.id}]")
        for m, e in held.items():
            load[m][0].iadd(e)
        for tied_var in (jr.keep, jr.hold):  # kept, or preempted and holding until its checkpoint
            if tied_var is None:
                continue
            for m, r in base.current[job.id].placement.items():
                for k, amt in enumerate((r.gpus, r.cpus, r.mem_gb)):
                    if amt:
                        load[m][k].add_term(tied_var.index, float(amt))
    for m in mach:
        for k, (on, cap) in enumerate(((True, caps[m].gpus), (cpu_rows, caps[m].cpus), (mem_rows, caps[m].mem_gb))):
            if on and load[m][k].terms:
                mdl.add(load[m][k] <= cap, f"cap[{m},{k}]")
    add_quota_rows(inst, mdl, rows)
    classes = machine_classes(inst, mach)
    for cls in classes:
        for a, b in zip(cls, cls[1:], strict=False):
            if load[a][0].terms:
                mdl.add(load[a][0] - load[b][0] >= 0, f"sym[{a},{b}]")
    t = set_objective(inst, mdl, rows)
    return Built(mdl, {"mode": "machines", "rows": rows, "y": y, "cpu": cpu, "mem": mem, "r": rv, "w": wv, "t": t,
                       "classes": classes, "cpu_rows": cpu_rows, "mem_rows": mem_rows})


def extract_machines(inst: JointInstance, built: Built, values: list[float]) -> Allocation:
    d = built.data
    out, chosen, held = [], {}, defaultdict(dict)
    for (jid, q, _rho, m), v in d["y"].items():
        n = int(round(values[v.index]))
        if n:
            held[jid][m] = held[jid].get(m, 0) + q * n
    for job in inst.base.jobs:
        jr = d["rows"][job.id]
        if jr.keep is not None and values[jr.keep.index] > 0.5:
            out.append(inst.base.current[job.id])
            continue
        k = next((k for k, z in jr.z.items() if values[z.index] > 0.5), None)
        if k is not None:
            chosen[job.id] = (inst.option(job.id, k), held[job.id])
    shares = share_resources(inst, chosen) if chosen and not (d["cpu_rows"] and d["mem_rows"]) else {}
    for jid, (o, gpus) in chosen.items():
        cpus, mem = shares.get(jid, ({}, {}))
        if d["cpu_rows"]:
            cpus = {m: round(values[d["cpu"][jid, m].index]) for m in gpus}
        if d["mem_rows"]:
            mem = {m: values[d["mem"][jid, m].index] for m in gpus}
        out.append(priced_allocation(inst, inst.base.job(jid), o, gpus, cpus, mem))
    return Allocation.of(out)


def point_machines(inst: JointInstance, built: Built, allocation: Allocation) -> tuple[dict[int, float], list[str]]:
    """The model's variables fixed to ``allocation`` (after the symmetry relabelling) and what could
    not be mapped."""
    d = built.data
    alloc = canonical(allocation, d["classes"])
    orig = {ja.job_id: ja for ja in allocation}
    vals: dict[int, float] = {}
    problems: list[str] = []
    choice, price = {}, {}
    for ja in alloc:
        jr = d["rows"].get(ja.job_id)
        if jr is None:
            problems.append(f"job {ja.job_id!r} is not in the instance")
            continue
        got = covering_choice(inst, ja, jr, problems, priced=orig[ja.job_id])
        if got is None:
            continue
        price[ja.job_id], k = got
        choice[ja.job_id] = k
        if k == "keep":
            continue
        o = inst.option(ja.job_id, k)
        fp = footprint(inst, ja)
        for m, g in fp.counts.items():
            v = d["y"].get((ja.job_id, o.divisor, o.granule, m))
            if v is None:
                problems.append(f"job {ja.job_id!r}: machine {m!r} is not eligible for {o.divisor}-GPU pieces")
                continue
            vals[v.index] = g / o.divisor
            for store, attr in ((d["cpu"], "cpus"), (d["mem"], "mem_gb")):
                if (ja.job_id, m) in store:
                    vals[store[ja.job_id, m].index] = float(getattr(ja.placement[m], attr))
            rack = inst.base.cluster.rack_of(m)
            r = d["r"].get((ja.job_id, rack))
            if r is not None:
                vals[r.index] = 1.0
            w = d["w"].get((ja.job_id, o.divisor, o.granule, rack))
            if w is not None:
                vals[w.index] = vals.get(w.index, 0.0) + g / o.granule
    vals.update(point_common(inst, d["rows"], d["t"], price, choice))
    return vals, problems


class JointFormulation:
    """``aggregate``: ``None`` = the pooled model when :func:`pooled_ok` says it is exact, ``False`` =
    always the per-machine model (with symmetry breaking)."""

    name = "joint"

    def __init__(self, aggregate: bool | None = None) -> None:
        self.aggregate = aggregate

    def build(self, inst: JointInstance, deadline: float | None = None) -> Built:
        if self.aggregate is not False and pooled_ok(inst)[0]:
            return build_pooled(inst)
        return build_machines(inst, deadline)

    def extract(self, inst: JointInstance, built: Built, values: list[float]) -> Allocation:
        if built.data["mode"] == "pooled":
            return extract_pooled(inst, built, values)
        return extract_machines(inst, built, values)

    def point(self, inst: JointInstance, built: Built, allocation: Allocation) -> tuple[dict[int, float], list[str]]:
        if built.data["mode"] == "pooled":
            return point_pooled(inst, built, allocation)
        return point_machines(inst, built, allocation)

    def objective(self, inst: JointInstance, solution: Allocation) -> float:
        return joint_objective(inst, solution)

    def allocation_of(self, solution: Allocation) -> Allocation:
        return solution

    def verify(self, inst: JointInstance, solution: Allocation) -> list[str]:
        out = [str(v) for v in validate_allocation(inst.base, solution)]
        elig = set(inst.eligible_machines)
        for ja in solution:
            job = inst.base.job(ja.job_id)
            try:
                inst.value(ja)
            except SolverError as e:
                out.append(f"[price] {e}")
                continue
            if not set(ja.placement) <= elig:
                out.append(f"[eligible] job {job.id!r} uses machines outside the sub-problem")
        out += joint_rules(inst, solution)
        if inst.place_guaranteed:
            out += [f"[slo] guaranteed job {j.id!r} not placed" for j in inst.base.jobs
                    if j.guaranteed and j.id not in solution]
        return out

    def start_problems(self, inst: JointInstance, built: Built, allocation: Allocation) -> list[str]:
        """Why ``allocation`` is not wholly a point of the model (verification failures and parts the
        model cannot map); empty when it is."""
        return self.verify(inst, allocation) + self.point(inst, built, allocation)[1]

    def hints(self, inst: JointInstance, built: Built, allocation: Allocation) -> dict[int, float]:
        """Every variable at the allocation's point (unmapped ones at 0): a complete MIP start."""
        vals, _ = self.point(inst, built, allocation)
        return dict(enumerate(built.model.point(vals)))


__all__ = ["JointFormulation", "build_machines", "canonical", "class_model", "machine_classes", "pooled_ok",
           "relaxation_bound"]
