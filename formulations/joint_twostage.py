r"""Exact two-stage solve of the joint problem for option tables that do not aggregate exactly.

1. Solve the class MIP (:func:`formulations.joint_pooled.class_model`: capacities pooled per class
   of identical machines, racks ignored): a relaxation, so its dual bound :math:`B` bounds the
   problem and its solution picks an option (or keeping the running allocation) per job.
2. Pack exactly those choices on the real machines: first greedily (:mod:`formulations.joint_pack`,
   O(jobs x machines)); if some choice did not fit, *repair* it (a running job under the holding
   rule that did not fit is tied to its running resources first, so that the repaired allocation
   verifies; then each other such job takes its fastest other admissible option that fits the
   leftover capacity: an incumbent). If every chosen job is placed, the allocation's objective equals
   the relaxation's value, so it is optimal whenever stage 1 proved its own optimum (gap to :math:`B`
   within the tolerance). Otherwise the *place-all check* (:func:`formulations.joint_cuts.place_all`:
   the per-machine model restricted to exactly this choice, every choice forced): feasible, its
   solution has the choice's value (optimal as above); infeasible, no allocation has this choice.
2c. *Shape cuts* (:mod:`formulations.joint_cuts`, which states and proves the claim). A choice proven
   unpackable is reduced to a smaller unpackable core (a deletion filter of place-all checks; first
   without the CPU, then memory rows where those alone do not matter), and every class choice that
   ties the core's tied jobs and places at least the core's option shapes (or, for a one-option core,
   any option at least as hard to place) is cut from the class MIP at once: none of them has an
   allocation, so the cut class MIP's bound :math:`B'` stays valid. After
   :attr:`JointTwoStage.max_shape_cuts` shape cuts (or with it 0), round 7b's *class-choice cuts*
   instead: the restricted model's proven bound :math:`D` bounds every allocation whose class choice
   (option counts, keep and hold per job or class of identical jobs) is exactly this one (a kept or
   held job keeps its whole table there, so its running allocation is priced); the choice is cut
   (an exact no-good cut: :func:`_no_good`) and :math:`\max(B', D_1, \dots, D_k)` is the valid bound,
   and so is the first :math:`B`. Stages 2a-2c repeat on the new choice until the best allocation meets
   that bound (proven optimal), :attr:`JointTwoStage.max_cuts` cuts were added, a check or the
   restricted model gives no answer (a limit), or 60 % of the time limit is spent. A choice is never
   cut on the greedy packer's word, only on a proof.
3. Otherwise solve the full per-machine model, warm-started from the best allocation so far where the
   backend takes a start, and keep the better allocation; the bound is the tighter of :math:`B` and
   stage 3's.

A caller's warm start (``SolveParams.warm_start``, e.g. a heuristic's allocation) is verified and
priced first; when valid it is the first incumbent (stages 2 and 3 start from the best so far), and
``SolveResult.warm_start_used`` says so.

The objective is recomputed on the whole instance, the bound is always a valid one, and the status
follows the one rule (:func:`~formulations.result.termination_of`): optimal only when objective and
bound meet within the tolerance. The time limit is a wall-clock budget over all stages: the first class
MIP may use 40 % of what is left when it starts, each later (cut) class MIP 15 %, each place-all check,
core check or restricted model 50 % (``share`` in the code; each share is of what is left at that
moment, so a stage that ends early leaves its rest to the next); no cut starts past 60 % of the limit,
and stage 3 gets all that is left. Each stage is reported in the notes.

:data:`FASTEST_EXACT` names, per instance kind, the exact method that proves optima fastest (measured
by ``python -m schedlab.benchmarks.bench_joint_methods``; the figures are beside it).
"""

from __future__ import annotations

import dataclasses
import time

from schedlab.formulations.backends import get_backend, incompatibility
from schedlab.formulations.base import solve
from schedlab.formulations.joint import JointFormulation, pooled_ok
from schedlab.formulations.joint_cuts import add_shape_cut, core, place_all
from schedlab.formulations.joint_instance import JointInstance
from schedlab.formulations.joint_pack import pack_greedy
from schedlab.formulations.joint_pooled import class_model
from schedlab.formulations.joint_rules import joint_objective
from schedlab.formulations.model import LinExpr, Model
from schedlab.formulations.result import (
    Bounds,
    Limit,
    Provenance,
    Reason,
    SolveParams,
    SolveResult,
    Status,
    Termination,
    Timing,
    relative_gap,
    termination_of,
)
from schedlab.topology.errors import SolverError


class JointTwoStage:
    name = "joint-2stage"
    #: class choices cut at most per solve (each costs a class MIP and a restricted per-machine MIP)
    max_cuts: int = 2
    #: of those, how many may be shape cuts (place-all check, then cut every choice with the same shapes);
    #: past it, exact no-good cuts on the restricted model's bound (round 7b)
    max_shape_cuts: int = 2
    #: no cut starts (and no core check) past this share of the time limit: the rest is stage 3's
    cut_share: float = 0.6

    def solve(self, inst: JointInstance, backend: str = "highs", params: SolveParams | None = None) -> SolveResult:
        params = params or SolveParams()
        form = JointFormulation()
        if pooled_ok(inst)[0]:
            return solve(form, inst, backend, params)
        be = get_backend(backend)
        t0 = time.perf_counter()
        lim = params.time_limit_s

        def share(f: float) -> SolveParams:
            if lim is None:
                return params.with_(warm_start=None)
            return params.with_(warm_start=None, time_limit_s=max(0.05, f * (lim - (time.perf_counter() - t0))))

        mdl, rows = class_model(inst, integral=True)
        why = incompatibility(be, mdl)
        if why:
            raise SolverError(why)
        build_s = time.perf_counter() - t0
        best = best_obj = None
        used = None
        notes: list[str] = []
        if params.warm_start is not None:
            used = not form.verify(inst, params.warm_start)
            if used:
                best, best_obj = params.warm_start, joint_objective(inst, params.warm_start)
            notes.append(f"warm start {'used' if used else 'not used (it does not verify)'}: "
                         f"{len(params.warm_start)} jobs" + (f", objective {best_obj:g}" if used else ""))

        def offer(alloc) -> float | None:
            nonlocal best, best_obj
            if form.verify(inst, alloc):
                return None
            obj = joint_objective(inst, alloc)
            if best_obj is None or obj > best_obj:
                best, best_obj = alloc, obj
            return obj

        def pack_choice(opts, chosen, bound, it) -> tuple[str, float | None, bool]:
            """Stage 2 for one class choice: greedy packing, repair, then (if still short of ``bound``)
            the place-all check (:func:`formulations.joint_cuts.place_all`): ``("done", None, hit)`` when
            the gap is closed or the check found no answer (a limit, or a choice it cannot state);
            ``("shape", (cpu_rows, mem_rows), False)`` when no allocation has this choice (the caller cuts
            its shapes; whether the check's model had per-machine CPU / memory rows).
            Where the shape cuts are spent (``max_shape_cuts``), the per-machine model restricted to the
            chosen options instead: ``("bound", D, hit)`` with its proven bound ``D`` (every allocation
            with exactly this choice is worth at most it; ``None`` when it gave none)."""
            t2 = time.perf_counter()
            greedy = pack_greedy(inst, chosen)
            n_place = sum(1 for c in chosen.values() if c != "hold")
            obj = offer(greedy)
            notes.append(f"stage 2a (greedy packing): {len(greedy)} of {n_place} choices placed, objective "
                         f"{'invalid' if obj is None else f'{obj:g}'}, {time.perf_counter() - t2:.2f} s")
            if len(greedy) < n_place:
                t2 = time.perf_counter()
                fixed = pack_greedy(inst, chosen, repair=True)
                obj = offer(fixed)
                notes.append(f"stage 2b (repair on the leftover capacity): {len(fixed) - len(greedy)} of "
                             f"{n_place - len(greedy)} unplaced jobs placed (another option, or kept where they "
                             f"run), objective {'invalid' if obj is None else f'{obj:g}'}, "
                             f"{time.perf_counter() - t2:.2f} s")
            gap = relative_gap(best_obj, bound)
            if gap is not None and gap <= params.rel_gap:
                return "done", None, False
            if it < self.max_shape_cuts or (it == self.max_cuts and self.max_shape_cuts > 0):
                t2 = time.perf_counter()
                try:
                    r2, form2 = place_all(inst, opts, chosen, backend, share(0.5).with_(rel_gap=0.5))
                except SolverError as e:  # a solution whose CPUs cannot be shared: no proof either way
                    notes.append(f"stage 2 (place-all check): no answer ({e})")
                    return "done", None, False
                notes.append(f"stage 2 (place-all check): {r2.status.value}, {time.perf_counter() - t2:.2f} s")
                if r2.allocation is not None:
                    offer(r2.allocation)
                    return "done", None, False
                if r2.status is Status.INFEASIBLE and form2.exact and form2.built is not None:
                    return "shape", (form2.built.data["cpu_rows"], form2.built.data["mem_rows"]), False
                return "done", None, r2.status in (Status.FEASIBLE_AT_LIMIT, Status.NO_SOLUTION_AT_LIMIT)
            sub = dataclasses.replace(inst, options=opts)
            r2 = solve(JointFormulation(aggregate=False), sub, backend, share(0.5).with_(warm_start=best))
            notes.append(f"stage 2 (pack the chosen options, MIP): {r2.status.value}, bound {r2.bounds.dual}, "
                         f"{r2.timing.phases['wall_s']:.2f} s")
            if r2.allocation is not None:
                offer(r2.allocation)
            if r2.status is Status.INFEASIBLE:  # no allocation has this class choice (nor a subset of it)
                return "bound", float("-inf"), False
            return "bound", r2.bounds.dual, r2.status is Status.FEASIBLE_AT_LIMIT

        bound = None      # a valid bound: min(first class bound, max(cut class bound, excluded choices' bounds))
        first = None      # the first class MIP's bound (no cut)
        cut_bounds: list[float] = []  # the restricted model's proven bound of each choice cut by a no-good cut
        limit_hit = False
        decision = [v for r in rows.values() for v in (*r.z.values(), r.keep, r.hold) if v is not None]
        for it in range(self.max_cuts + 1):
            t1 = time.perf_counter()
            raw = be.solve(mdl, share(0.4 if it == 0 else 0.15))
            limit_hit |= raw.termination.limit is not None
            stage = "stage 1 (class MIP)" if it == 0 else f"stage 1, cut {it} (class MIP with {it} cuts)"
            notes.append(f"{stage}: {raw.termination.status.value}, bound {raw.dual_bound}, "
                         f"{time.perf_counter() - t1:.2f} s")
            if raw.termination.reason is Reason.INFEASIBLE:
                if it == 0:
                    return self._result(inst, be, params, Termination(Reason.INFEASIBLE), None, None, build_s, t0,
                                        notes, False)
                bound = _cut_bound(first, None, cut_bounds, everything_cut=True)
                break
            b = raw.dual_bound if raw.termination.status.has_solution else None
            if it == 0:
                first = b
            bound = _cut_bound(first, b, cut_bounds)
            if raw.values is None or b is None:
                break
            opts, chosen = _choices(inst, rows, raw.values)
            kind, d2, hit = pack_choice(opts, chosen, bound, it)
            limit_hit |= hit
            gap = relative_gap(best_obj, bound)
            if (gap is not None and gap <= params.rel_gap) or it == self.max_cuts or kind == "done" or \
                    (kind == "bound" and d2 is None):
                break
            if lim is not None and time.perf_counter() - t0 > self.cut_share * lim:
                break
            if kind == "shape":
                # no allocation has this choice, nor any choice with its tied jobs and its shapes (the
                # claim of formulations.joint_cuts): cut them all; they have no allocation to bound
                t2 = time.perf_counter()
                until = None if lim is None else t0 + self.cut_share * lim
                small, flags, checks = core(inst, opts, chosen, backend, share(0.5).with_(rel_gap=0.5), d2,
                                               until)
                cut = add_shape_cut(mdl, rows, inst, small, *flags, f"shape[{it}]")
                notes.append(f"shape cut {it + 1}: {sum(cut.values())} of {len(chosen)} choices left in the core "
                             f"({checks} checks, {time.perf_counter() - t2:.2f} s)")
            else:
                # every allocation with this class choice is worth at most ``d2`` (the restricted model's
                # proven bound), so the choice is cut from the class MIP and ``d2`` stays in the bound
                cut_bounds.append(d2)
                _no_good(mdl, decision, raw.values, f"nogood[{it}]")
        gap = relative_gap(best_obj, bound)
        if gap is None or gap > params.rel_gap:
            left = None if lim is None else max(0.05, lim - (time.perf_counter() - t0))
            r3 = solve(form, inst, backend, params.with_(time_limit_s=left, warm_start=best))
            limit_hit |= r3.status in (Status.FEASIBLE_AT_LIMIT, Status.NO_SOLUTION_AT_LIMIT)
            notes.append(f"stage 3 (full per-machine model): {r3.status.value}, bound {r3.bounds.dual}, "
                         f"{r3.timing.phases['wall_s']:.2f} s")
            if r3.status is Status.INFEASIBLE:
                return self._result(inst, be, params, Termination(Reason.INFEASIBLE), None, None, build_s, t0, notes,
                                    False,
                                    used)
            if r3.allocation is not None and (best_obj is None or r3.objective > best_obj):
                best, best_obj = r3.allocation, r3.objective
            if r3.bounds.dual is not None:
                bound = r3.bounds.dual if bound is None else min(bound, r3.bounds.dual)
        raw_term = Termination(Reason.OPTIMAL if best is not None else Reason.NO_SOLUTION_FOUND,
                               Limit.UNDETERMINED if limit_hit or best is None else None)
        term = termination_of(raw_term, best_obj, bound, params.rel_gap)
        return self._result(inst, be, params, term, best, bound, build_s, t0, notes, limit_hit, used)

    def _result(self, inst, be, params, term, alloc, bound, build_s, t0, notes, limit_hit, used=None) -> SolveResult:
        wall = time.perf_counter() - t0
        obj = joint_objective(inst, alloc) if alloc is not None else None
        t = time.perf_counter()
        viol = tuple(JointFormulation().verify(inst, alloc)) if alloc is not None else None
        verify_s = time.perf_counter() - t
        threads = {"cpsat": params.effective_threads, "cbc": params.effective_threads, "scip": 1, "scipy": 1}
        return SolveResult(term, Provenance(self.name, be.name, be.version(), threads.get(be.name), params.seed,
                                            warm_start_used=used),
                           Bounds("max", obj, bound, params.rel_gap),
                           Timing(build_s=build_s, solve_s=wall - build_s, verify_s=verify_s,
                                  wall_s=time.perf_counter() - t0, time_limit_s=params.time_limit_s),
                           objective=obj, allocation=alloc, solution=alloc, violations=viol, notes=tuple(notes))


def _choices(inst: JointInstance, rows: dict, values) -> tuple[dict, dict]:
    """The class MIP's choice as per-job restricted option tables (the chosen option; a job left out
    none; a kept or held job its whole table) and the chosen option per job ("keep" the running
    allocation, "hold": preempted, holding it). A row may count a class of
    identical (interchangeable, none running) jobs: its counts go to its jobs in order."""
    opts, chosen = {}, {}
    for r in rows.values():
        todo = [j.id for j in r.jobs]
        for k, z in sorted(r.z.items()):
            for _ in range(int(round(values[z.index]))):
                jid = todo.pop(0)
                opts[jid] = (inst.option(jid, k),)
                chosen[jid] = inst.option(jid, k)
        if r.keep is not None and values[r.keep.index] > 0.5:
            chosen[todo[0]] = "keep"
        elif r.hold is not None and values[r.hold.index] > 0.5:
            chosen[todo[0]] = "hold"  # preempted: holds its running resources (the holding rule)
        for jid in todo:
            # a kept or held job keeps its whole table: its running allocation is priced from it (with
            # none, the restricted model could not keep it). A superset of the choice is still a valid
            # restriction for the bound (every allocation with this choice stays in the restricted model)
            opts[jid] = inst.options.get(jid, ()) if jid in chosen else ()
    return opts, chosen


def _no_good(mdl: Model, decision: list, values, name: str) -> None:
    r"""Cut exactly the class choice ``values`` (over the integer ``decision`` variables: option counts,
    keep and hold) from ``mdl``: :math:`\sum_{x^*_i = 0} x_i + \sum_{x^*_i = U_i} (U_i - x_i) +
    \sum_{0 < x^*_i < U_i} (a_i + b_i) \ge 1` with binaries :math:`a_i \Rightarrow x_i \le x^*_i - 1`
    and :math:`b_i \Rightarrow x_i \ge x^*_i + 1`. Every other integer point stays feasible."""
    expr = LinExpr()
    for v in decision:
        x = int(round(values[v.index]))
        u = int(round(v.ub))
        if x == 0:
            expr.add_term(v.index, 1.0)
        elif x == u:
            expr.add_term(v.index, -1.0)
            expr.const += u
        else:
            a, b = mdl.binary(f"{name}.lo[{v.name}]"), mdl.binary(f"{name}.hi[{v.name}]")
            mdl.add(LinExpr({v.index: 1.0, a.index: float(u - x + 1)}) <= u, f"{name}.lo[{v.name}]")
            mdl.add(LinExpr({v.index: 1.0, b.index: -float(x + 1)}) >= 0, f"{name}.hi[{v.name}]")
            expr.add_term(a.index, 1.0).add_term(b.index, 1.0)
    mdl.add(expr >= 1, name)


def _cut_bound(first: float | None, cut: float | None, excluded: list[float], *, everything_cut: bool = False
               ) -> float | None:
    """A valid bound after cuts: every allocation either has an excluded class choice (worth at most that
    choice's restricted bound) or one left in the cut class MIP (worth at most its bound ``cut``), so
    ``max(cut, excluded)`` bounds it, and so does the uncut bound ``first``. ``cut`` is ``None`` when the
    cut MIP gave no bound (then only ``first`` holds) unless ``everything_cut`` (it is infeasible)."""
    if cut is None and not everything_cut:
        return first
    val = max([*([] if cut is None else [cut]), *excluded], default=float("-inf"))
    return val if first is None else min(first, val)


#: instance kind -> the exact method that proves optima fastest, for the harness's exact twin. Measured
#: (``python -m schedlab.benchmarks.bench_joint_methods``, 20 s and one thread per solve, the gap suite's
#: perf-model joint instances on ``rubick-64``, 30 % busy, seed 0; shared 2-core machine, load 6-7): up to
#: 32 jobs the pooled model is exact and ``joint`` = ``joint-2stage`` (0.05-0.25 s on every backend); from
#: 64 jobs (option sizes 1, 2, 3, 4, 6, 8: no divisibility chain) ``joint`` is the per-machine model and
#: ``joint-2stage`` proves every optimum in 0.4-1.0 s on HiGHS and CP-SAT at 64, 128 and 256 jobs, where
#: ``joint`` takes 4.8 / 5.5 / 9.3 s on HiGHS and is cut at 20 s without proof on CP-SAT (gap 8.0 % / 1.4 %
#: / no solution). docs/formulations.md ("Exact joint methods") has the whole table.
FASTEST_EXACT: dict[str, str] = {"joint": "joint-2stage"}


__all__ = ["FASTEST_EXACT", "JointTwoStage"]
