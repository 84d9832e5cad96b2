r"""Exact two-stage solve of the joint problem for option tables that do not aggregate exactly.

1. Solve the machine-class MIP (:func:`formulations.joint.class_model`, capacities pooled per class
   of identical machines): a relaxation, so its dual bound :math:`B` bounds the problem and its
   solution picks an option :math:`o_j` per job.
2. Pack exactly those options on the real machines with the per-machine model restricted to them.
   If every chosen job is placed, the allocation's objective equals the relaxation's value, so it is
   optimal whenever stage 1 proved its own optimum (gap to :math:`B` = 0).
3. Otherwise solve the full per-machine model, warm-started from stage 2 where the backend takes
   hints, and keep the better allocation; the bound is the tighter of :math:`B` and stage 3's.

The answer is honest in every case: the objective is recomputed on the whole instance, the bound is
always a valid one, and the result is called optimal only when the two meet (relative gap <= the
tolerance). Time is shared 40 / 30 / 30 % over the stages.
"""

from __future__ import annotations

import dataclasses
import time

from schedlab.formulations.backends import get_backend
from schedlab.formulations.base import solve
from schedlab.formulations.joint import JointFormulation, aggregation_ok, class_model
from schedlab.formulations.joint_instance import JointInstance, joint_objective
from schedlab.formulations.result import SolutionStatus, SolveParams, SolveResult, Termination, relative_gap


class JointTwoStage:
    name = "joint-2stage"

    def solve(self, inst: JointInstance, backend: str = "highs", params: SolveParams | None = None) -> SolveResult:
        params = params or SolveParams()
        form = JointFormulation()
        if aggregation_ok(inst)[0]:
            return solve(form, inst, backend, params)
        be = get_backend(backend)
        lim = params.time_limit_s

        def share(f: float) -> SolveParams:
            return params.with_(warm_start=None, time_limit_s=None if lim is None else max(0.1, f * lim))

        t0 = time.perf_counter()
        mdl, zs = class_model(inst, integral=True)
        build_s = time.perf_counter() - t0
        raw = be.solve(mdl, share(0.4))
        notes = [f"stage 1 (class MIP): {raw.termination.value}, bound {raw.dual_bound}"]
        if raw.termination is Termination.INFEASIBLE:
            return self._result(inst, be, params, Termination.INFEASIBLE, None, None, None, build_s,
                                time.perf_counter() - t0, notes)
        bound = raw.dual_bound if raw.dual_bound is not None else None
        best = None
        if raw.values is not None:
            chosen = {jid: k for (jid, k), z in zs.items() if raw.values[z.index] > 0.5}
            opts = {j.id: (inst.options[j.id][chosen[j.id]],) if j.id in chosen else () for j in inst.base.jobs}
            sub = dataclasses.replace(inst, options=opts)
            r2 = solve(JointFormulation(aggregate=False), sub, backend, share(0.3))
            notes.append(f"stage 2 (pack chosen options): {r2.termination.value}")
            if r2.allocation is not None:
                best = r2.allocation
        best_obj = joint_objective(inst, best) if best is not None else None
        done = (best_obj is not None and bound is not None and relative_gap(best_obj, bound) <= params.rel_gap)
        if not done:
            left = None if lim is None else max(0.1, lim - (time.perf_counter() - t0))
            r3 = solve(form, inst, backend, params.with_(time_limit_s=left, warm_start=best))
            notes.append(f"stage 3 (full per-machine model): {r3.termination.value}, bound {r3.dual_bound}")
            if r3.allocation is not None and (best_obj is None or r3.objective > best_obj):
                best, best_obj = r3.allocation, r3.objective
            if r3.dual_bound is not None:
                bound = r3.dual_bound if bound is None else min(bound, r3.dual_bound)
            if r3.termination is Termination.INFEASIBLE:
                return self._result(inst, be, params, Termination.INFEASIBLE, None, None, None, build_s,
                                    time.perf_counter() - t0, notes)
        gap = relative_gap(best_obj, bound)
        if best is None:
            term = Termination.NO_SOLUTION_AT_LIMIT if params.limited else Termination.ERROR
        elif gap is not None and gap <= params.rel_gap:
            term = Termination.OPTIMAL
        else:
            term = Termination.FEASIBLE_AT_LIMIT
        return self._result(inst, be, params, term, best, best_obj, bound, build_s, time.perf_counter() - t0, notes)

    def _result(self, inst, be, params, term, alloc, obj, bound, build_s, total_s, notes) -> SolveResult:
        status = {Termination.OPTIMAL: SolutionStatus.OPTIMAL, Termination.FEASIBLE_AT_LIMIT: SolutionStatus.FEASIBLE,
                  Termination.INFEASIBLE: SolutionStatus.INFEASIBLE}.get(term, SolutionStatus.UNDETERMINED)
        viol = tuple(JointFormulation().verify(inst, alloc)) if alloc is not None else None
        threads = {"cpsat": params.effective_threads, "cbc": params.effective_threads, "scip": 1, "scipy": 1}
        return SolveResult(self.name, be.name, be.version(), term, status, "max", obj, obj, bound, build_s,
                           total_s - build_s, threads.get(be.name), params.seed,
                           allocation=alloc, solution=alloc, notes=tuple(notes), violations=viol)
