r"""Packing checks and shape cuts for the two-stage joint solve (:mod:`formulations.joint_twostage`).

**Place-all check** (:func:`place_all`). A class choice :math:`X` (:func:`~formulations.joint_twostage._choices`)
places a set :math:`P` of jobs, each on one option, and ties a set :math:`K` of running jobs to their
running resources (kept, or preempted and holding them under the holding rule); every other job is
left out. The per-machine model (:func:`formulations.joint.build_machines`) of the instance restricted
to exactly these choices, with rows forcing every job of :math:`P` placed, every kept job kept, every
held job held and every other job out, is feasible if and only if some allocation has exactly the
choice :math:`X`. Its solution then is such an allocation (worth the class MIP's value of :math:`X`).

**Relaxed checks.** :func:`core` also asks the place-all model with some jobs *freed* (``free``: left
out with their running resources free; not kept, not held, though the holding rule would hold them) and
without the per-machine CPU (memory) rows. Each is a relaxation of the place-all model of the choice it
came from: freeing a job only frees capacity, and dropping rows only widens the model.

**Shape cut** (:func:`add_shape_cut`). The *shape* of an option is what the per-machine model's
feasibility reads of it: GPUs, one machine or spread, divisor, rack granule, tier, and its CPUs
(memory) when the model has per-machine CPU (memory) rows. (Values, plans and the job it belongs to
do not enter any row but the objective and the quota rows; quota rows only read which jobs are placed
or held, and every choice of the class MIP meets them already, as the class MIP has the same rows.)
Claim: *if the (possibly relaxed) place-all model of* :math:`X` *(placed options* :math:`c_s` *per
shape* :math:`s`, *tied set* :math:`K`) *is infeasible, then no allocation has any choice*
:math:`X'` *whose tied set contains* :math:`K` *and which places at least* :math:`c_s` *options of
each shape* :math:`s` *(for a core of one option: at least one option* :func:`harder` *than it).*
Proof: take an allocation :math:`A'` with the choice :math:`X'`. Drop from it every placed job beyond
:math:`c_s` per shape and every job not in :math:`K` that it ties (freed and dropped jobs alike):
dropping a job only frees capacity, as every capacity row is a sum of non-negative per-job terms and
no row forces a job in (the checks' rows force only :math:`X`'s own jobs). Then relabel: map the
:math:`c_s` remaining options of shape :math:`s` one to one onto the jobs of :math:`X` that take
shape :math:`s`, giving each the other's pieces, CPUs and memory on each machine. Each job's own rows
(pieces per divisor and granule, racks, CPUs and memory per machine) hold, as they read only the
option's shape (a harder option's placement, with the easier one's CPUs and memory, is one of the
easier option: :func:`harder`); capacities hold because per machine the same amounts are used; the
tied jobs of :math:`K` hold the same running resources in both. The result satisfies :math:`X`'s
check: a contradiction. A check without CPU (memory) rows does not read CPUs (memory), so then the
shapes leave them out.

So the class MIP may exclude all those choices at once (:func:`add_shape_cut`):

.. math::

   \sum_{j \in K} (1 - \mathit{keep}_j - \mathit{hold}_j) + \sum_s d_s \ge 1,\qquad
   n_s + (U_s - c_s + 1)\, d_s \le U_s,\ d_s \in \{0, 1\}

(:math:`n_s` the class MIP's count of placed options of shape :math:`s`, :math:`U_s` its upper bound:
:math:`d_s = 1` forces :math:`n_s \le c_s - 1`). No allocation is lost, so the cut class MIP's bound
stays a valid bound of the whole problem (the cut choices have none to bound).
"""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from schedlab.formulations.base import Built, solve
from schedlab.formulations.joint import JointFormulation, build_machines
from schedlab.formulations.joint_instance import JobOption, JointInstance
from schedlab.formulations.model import LinExpr, Model
from schedlab.formulations.result import SolveParams, SolveResult, Status
from schedlab.topology.errors import SolverError


def shape(o: JobOption, cpus: bool, mem: bool) -> tuple:
    """What the per-machine model's feasibility reads of option ``o`` (module docstring)."""
    return (o.gpus, o.single, o.divisor, o.granule, int(o.tier), o.cpus if cpus else None,
            round(o.mem_gb, 6) if mem else None)


def harder(a: tuple, b: tuple) -> bool:
    """Whether every placement of an option of shape ``a`` (:func:`shape`) is also one of shape ``b``,
    with at least its CPUs and memory: the same GPUs, one machine only if ``b`` is; pieces (divisor) and
    rack amounts (granule) multiples of ``b``'s; a tier no wider; CPUs and memory (where the shapes
    read them) no fewer. Then if no allocation places ``b`` (with the same tied jobs), none places
    ``a``: its placement, with ``b``'s CPUs and memory, would place ``b``."""
    g, single, q, rho, tier, c, h = a
    g2, single2, q2, rho2, tier2, c2, h2 = b
    return (g == g2 and (single or not single2) and q % q2 == 0 and rho % rho2 == 0 and tier <= tier2
            and (c is None or c >= c2) and (h is None or h >= h2 - 1e-9))


class PlaceAll(JointFormulation):
    """The per-machine model restricted to one class choice, with every choice forced (module
    docstring): feasible if and only if some allocation has exactly that choice. ``chosen``: job ->
    option, ``"keep"`` or ``"hold"``; every other job of the instance is forced out (a running job
    under the holding rule held, but those in ``free``: out with their running resources free). Build
    it on the instance whose tables hold only the chosen options (kept and held jobs their whole
    table)."""

    def __init__(self, chosen: Mapping[str, Any], free: frozenset[str] = frozenset(),
                 relax: tuple[bool, bool] = (False, False)) -> None:
        super().__init__(aggregate=False)
        self.chosen = dict(chosen)
        self.free = free
        self.relax = relax
        #: whether the built model could represent every choice (a kept job needs its keep variable)
        self.exact = True
        self.built: Built | None = None

    def build(self, inst: JointInstance, deadline: float | None = None) -> Built:
        built = build_machines(inst, deadline, self.free, self.relax)
        mdl = built.model
        for jid, jr in built.data["rows"].items():
            ch = self.chosen.get(jid)
            if ch == "keep" or ch == "hold":
                var = jr.keep if ch == "keep" else jr.hold
                if var is None:
                    self.exact = False
                    continue
                mdl.add(var.expr() >= 1, f"force[{jid}]")
            elif ch is not None:
                if not jr.z:
                    self.exact = False
                    continue
                mdl.add(jr.placed >= 1, f"force[{jid}]")
            elif jr.placed.terms:
                mdl.add(jr.placed <= 0, f"force[{jid}]")
        self.built = built
        return built


def place_all(inst: JointInstance, opts: Mapping[str, tuple], chosen: Mapping[str, Any], backend: str,
              params: SolveParams, free: frozenset[str] = frozenset(), relax: tuple[bool, bool] = (False, False)
              ) -> tuple[SolveResult, PlaceAll]:
    """Solve the place-all model of ``chosen`` (module docstring) on ``inst`` restricted to the tables
    ``opts`` (:func:`~formulations.joint_twostage._choices`: a kept or held job keeps its whole table, so
    that its running allocation is priced; the forcing rows keep it tied). The formulation says
    whether the model was exact (``.exact``) and which resource rows it had (``.built``)."""
    sub = dataclasses.replace(inst, options={j.id: tuple(opts.get(j.id, ())) for j in inst.base.jobs})
    form = PlaceAll(chosen, free, relax)
    return solve(form, sub, backend, params), form


def _infeasible(inst: JointInstance, opts: Mapping[str, tuple], chosen: Mapping[str, Any], backend: str,
                params: SolveParams, free: frozenset[str], relax: tuple[bool, bool]) -> PlaceAll | None:
    """The check's formulation when it proved the choice infeasible, else ``None`` (feasible, a limit, or
    a solution that cannot be turned into an allocation: a relaxed check without CPU rows may find GPU
    placements whose CPUs cannot be shared, and extraction then raises)."""
    try:
        r, form = place_all(inst, opts, chosen, backend, params, free, relax)
    except SolverError:
        return None
    return form if r.status is Status.INFEASIBLE and form.exact and form.built is not None else None


def core(inst: JointInstance, opts: Mapping[str, tuple], chosen: Mapping[str, Any], backend: str,
         params: SolveParams, flags: tuple[bool, bool], until: float | None = None
         ) -> tuple[dict[str, Any], tuple[bool, bool], int]:
    """A smaller choice whose place-all model is still infeasible (a deletion filter): each placed job
    (fewest GPUs first), then each tied job, is in turn left out *with its running resources free*
    (:func:`~formulations.joint.build_machines`' ``free``: a relaxation of both placing and tying it)
    and stays out while the model stays proven infeasible. Every intermediate choice is proven
    infeasible and is a relaxation of the first, so its shape cut is valid and still excludes the first
    choice. ``until``: a :func:`time.perf_counter` reading after which no more jobs are tried;
    ``flags``: whether the first check's model had per-machine CPU and memory rows. Returns the choice,
    the flags of the model that proved it infeasible (for :func:`shape`) and how many checks ran."""
    opts, chosen = dict(opts), dict(chosen)
    free: frozenset[str] = frozenset()
    checks = 0
    relax = (False, False)
    for r2 in ((True, False), (True, True)) if flags[0] else ((False, True),) if flags[1] else ():
        # without the CPU (then memory) rows: a relaxation; still infeasible, the shapes need not read them
        form = _infeasible(inst, opts, chosen, backend, params, free, r2)
        checks += 1
        if form is not None:
            relax, flags = r2, (form.built.data["cpu_rows"], form.built.data["mem_rows"])
        else:
            break
    order = sorted((jid for jid, ch in chosen.items() if isinstance(ch, JobOption)),
                   key=lambda j: (chosen[j].gpus, j))
    order += sorted(jid for jid, ch in chosen.items() if ch == "keep" or ch == "hold")
    for jid in order:
        if until is not None and time.perf_counter() > until:
            break
        o2, c2 = dict(opts), dict(chosen)
        del c2[jid]
        o2[jid] = ()
        f2 = free | {jid}
        form = _infeasible(inst, o2, c2, backend, params, f2, relax)
        checks += 1
        if form is not None:
            opts, chosen, free = o2, c2, f2
            flags = form.built.data["cpu_rows"], form.built.data["mem_rows"]
    return chosen, flags, checks


def add_shape_cut(mdl: Model, rows: Mapping[str, Any], inst: JointInstance, chosen: Mapping[str, Any],
                  cpus: bool, mem: bool, name: str) -> dict[tuple, int]:
    """Exclude from the class MIP ``mdl`` (job rows ``rows``) every choice whose tied set contains
    ``chosen``'s and whose placed shapes contain ``chosen``'s (module docstring). Returns the cut
    multiset (shape -> count)."""
    counts: dict[tuple, int] = defaultdict(int)
    placed = [ch for ch in chosen.values() if isinstance(ch, JobOption)]
    for ch in placed:
        counts[shape(ch, cpus, mem)] += 1
    # one placed option in the core: every option at least as hard to place counts as its shape
    one = shape(placed[0], cpus, mem) if len(placed) == 1 else None
    n: dict[tuple, LinExpr] = defaultdict(LinExpr)
    ub: dict[tuple, float] = defaultdict(float)
    expr = LinExpr()
    for r in rows.values():
        jid = r.jobs[0].id
        for k, z in r.z.items():
            s = shape(inst.option(jid, k), cpus, mem)
            if one is not None and harder(s, one):
                s = one
            if s in counts:
                n[s].add_term(z.index, 1.0)
                ub[s] += z.ub
        tied = chosen.get(jid) in ("keep", "hold") and len(r.jobs) == 1
        if tied:  # 1 - keep - hold: the job is not tied in the other choice
            expr.const += 1.0
            for v in (r.keep, r.hold):
                if v is not None:
                    expr.add_term(v.index, -1.0)
    for i, (s, c) in enumerate(sorted(counts.items(), key=repr)):
        u = ub[s]
        d = mdl.binary(f"{name}.d[{i}]")
        mdl.add(n[s] + LinExpr({d.index: u - c + 1}) <= u, f"{name}.n[{i}]")
        expr.add_term(d.index, 1.0)
    mdl.add(expr >= 1, name)
    return dict(counts)


__all__ = ["PlaceAll", "add_shape_cut", "core", "harder", "place_all", "shape"]
