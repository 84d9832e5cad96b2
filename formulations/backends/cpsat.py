"""OR-Tools CP-SAT with an exactly stated integer scaling.

CP-SAT works on integers. This backend makes the translation explicit instead of leaving it to
CP-SAT's own floating-point objective scaling (which can call a solution optimal while the gap in
the original units is above the tolerance):

* an **epigraph variable** (continuous, pushed up by the objective, bounded by exactly one row
  ``v <= e`` over integer variables, e.g. a job's achieved throughput) is substituted by ``e``: exact;
* any other **continuous variable** ``v`` becomes an integer ``v'`` on a fixed-point grid,
  ``v = v' / s_v`` with ``s_v = 10^min(MAX_POW, CONT_DIGITS - digits of its bound)``;
* each **constraint row** is multiplied by the smallest power of ten (<= ``10^MAX_POW``) that makes
  its coefficients integral (rounded beyond that; counted in the notes as approximate). The cap is
  deliberate: CP-SAT 9.15 proved a wrong optimum on a tier model whose rows had coefficients near
  10^10 (the true optimum was feasible in its model);
* the **objective** is multiplied by ``F = 10^f``, the smallest power making its coefficients integral
  (at most what keeps it within 2^53); what is rounded beyond that, one grid step of every
  continuous objective variable and the rounding of rows that bound one, is the stated **precision**
  (``SolveResult.objective_precision``, absolute, in the objective's units). The dual bound is
  CP-SAT's integer bound divided by ``F`` and widened by the precision, so it stays valid.

``num_workers = min(threads, cores)``; the relative gap asked of CP-SAT is half the stated tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from schedlab.formulations.backends.base import Availability, importable, rows, solve_in_phases, versioned
from schedlab.formulations.model import LinExpr, Model
from schedlab.formulations.result import Limit, RawResult, Reason, SolveParams, Termination

__all__ = ["CONT_DIGITS", "MAX_POW", "CpSatBackend", "epigraphs", "grid_scale", "integerise", "scale_objective"]

MAX_POW = 6
CONT_DIGITS = 9
_INT_CAP = 2 ** 53
_DOMAIN_CAP = 2 ** 50  # finite stand-in for an infinite bound


def _integral(x: float) -> bool:
    """Integral up to float noise (relative 1e-9, never more than 1e-6 absolute)."""
    return abs(x - round(x)) <= min(1e-6, 1e-9 * abs(x))


def integerise(terms: dict[int, float], lb: float, ub: float, max_pow: int = MAX_POW
               ) -> tuple[dict[int, int], float, float, bool]:
    """Scale a constraint on integer variables to integer coefficients; ``exact`` is False if rounding
    was needed. ``lb`` is rounded up and ``ub`` down (valid since the left side is integral)."""
    f = 1
    exact = False
    for k in range(max_pow + 1):
        f = 10 ** k
        if all(_integral(c * f) for c in terms.values()):
            exact = True
            break
    ic = {i: int(round(c * f)) for i, c in terms.items() if round(c * f) != 0}
    lo = -math.inf if lb == -math.inf else math.ceil(lb * f - 1e-9)
    hi = math.inf if ub == math.inf else math.floor(ub * f + 1e-9)
    return ic, lo, hi, exact


def grid_scale(lb: float, ub: float) -> int:
    """``s`` of a continuous variable's grid ``v = v' / s`` (9 significant digits of its bound)."""
    b = max(1.0, *(abs(x) for x in (lb, ub) if math.isfinite(x)))
    return 10 ** max(0, min(MAX_POW, CONT_DIGITS - int(math.floor(math.log10(b))) - 1))


def scale_objective(coefs: dict[int, float], bounds: dict[int, float]) -> tuple[int, dict[int, int], float]:
    """``(F, integer coefficients, precision)``: the smallest ``F = 10^f`` making every coefficient
    integral within the int64-safe range; ``precision`` = what rounding beyond that can change the
    objective by, ``sum |c F - round(c F)| / F * max|x|``."""
    mag = sum(abs(c) * bounds[i] for i, c in coefs.items()) or 1.0
    f_cap = max(0, min(15, int(math.floor(math.log10(_INT_CAP / mag)))))
    for f in range(f_cap + 1):
        F = 10 ** f
        if all(_integral(c * F) for c in coefs.values()):
            return F, {i: int(round(c * F)) for i, c in coefs.items() if round(c * F)}, 0.0
    F = 10 ** f_cap
    prec = sum(abs(c * F - round(c * F)) / F * bounds[i] for i, c in coefs.items())
    return F, {i: int(round(c * F)) for i, c in coefs.items() if round(c * F)}, prec


def epigraphs(model: Model) -> dict[int, tuple[int, float, float, dict[int, float]]]:
    """Continuous variables that can be substituted exactly: ``v -> (row, bound, a_v, rest)`` with
    ``v = (bound - rest) / a_v`` at every optimum (see the module docstring)."""
    rows_of: dict[int, list[int]] = {}
    for r, c in enumerate(model.constraints):
        for i in c.terms:
            rows_of.setdefault(i, []).append(r)
    out = {}
    for i, cobj in model.objective.terms.items():
        v = model.vars[i]
        rs = rows_of.get(i, [])
        if v.integer or not cobj or len(rs) != 1:
            continue
        c = model.constraints[rs[0]]
        rest = {j: k for j, k in c.terms.items() if j != i}
        if any(not model.vars[j].integer or j in out or not math.isfinite(model.vars[j].lb)
               or not math.isfinite(model.vars[j].ub) for j in rest):
            continue
        a = c.terms[i]
        up = (cobj > 0) == model.maximizing
        upper_side = (a > 0) == up  # the row's finite side must stop v in the improving direction
        if upper_side and c.lb == -math.inf and math.isfinite(c.ub):
            bnd = c.ub
        elif not upper_side and c.ub == math.inf and math.isfinite(c.lb):
            bnd = c.lb
        else:
            continue
        lo = sum(k * (model.vars[j].lb if k > 0 else model.vars[j].ub) for j, k in rest.items())
        hi = sum(k * (model.vars[j].ub if k > 0 else model.vars[j].lb) for j, k in rest.items())
        vals = ((bnd - lo) / a, (bnd - hi) / a)
        if min(vals) < v.lb - 1e-9 or max(vals) > v.ub + 1e-9:
            continue
        out[i] = (rs[0], bnd, a, rest)
    return out


@dataclass
class _Native:
    """The CP-SAT model and what parsing its answer needs: the variables (``None``: an epigraph
    variable, substituted), the grid ``scale`` of continuous ones, the substituted ``epi``graphs, the
    objective after substitution, its scale ``F`` and ``precision``, and the notes so far."""

    cm: Any
    xs: list[Any]
    scale: dict[int, int]
    epi: dict[int, tuple[int, float, float, dict[int, float]]]
    bound: dict[int, float]
    obj: LinExpr | None = None
    F: int = 1
    prec: float = 0.0
    notes: list[str] = field(default_factory=list)


class CpSatBackend:
    name = "cpsat"
    capabilities = frozenset({"mip", "continuous", "intervals", "warm_start", "dual_bound", "deterministic"})

    def availability(self) -> Availability:
        return importable("ortools.sat.python.cp_model", "ortools")

    def version(self) -> str:
        return versioned("ortools-cpsat", "ortools")

    def solve(self, model: Model, params: SolveParams) -> RawResult:
        return solve_in_phases(self, model, params)

    def threads(self, params: SolveParams) -> int | None:
        return params.effective_threads

    def translate(self, model: Model, params: SolveParams, t0: float) -> _Native:
        from ortools.sat.python import cp_model

        nat = _Native(cp_model.CpModel(), [], {}, epigraphs(model), {})
        self._variables(model, nat)
        row_err = self._rows(model, params, t0, nat)
        ivs = [nat.cm.new_interval_var(nat.xs[iv.start], iv.size, nat.xs[iv.end], iv.name) for iv in model.intervals]
        for cu in model.cumulatives:
            dem = [nat.xs[d[1]] if isinstance(d, tuple) else d for d in cu.demands]
            nat.cm.add_cumulative([ivs[i] for i in cu.intervals], dem, cu.capacity)
        self._objective(model, nat, row_err)
        for i, val in model.hints.items():
            if nat.xs[i] is not None:
                nat.cm.add_hint(nat.xs[i], int(round(val * nat.scale.get(i, 1))))
        return nat

    @staticmethod
    def _variables(model: Model, nat: _Native) -> None:
        for v in model.vars:
            if v.index in nat.epi:
                nat.xs.append(None)
                nat.bound[v.index] = 0.0
                continue
            s = 1 if v.integer else grid_scale(v.lb, v.ub)
            lo = -_DOMAIN_CAP if v.lb == -math.inf else math.ceil(v.lb * s - 1e-9)
            hi = _DOMAIN_CAP if v.ub == math.inf else math.floor(v.ub * s + 1e-9)
            if not v.integer:
                nat.scale[v.index] = s
            nat.bound[v.index] = max(abs(lo), abs(hi)) / s
            nat.xs.append(nat.cm.new_int_var(lo, hi, v.name))

    @staticmethod
    def _rows(model: Model, params: SolveParams, t0: float, nat: _Native) -> float:
        """Add the integerised rows; returns the rounding error, in units of a continuous variable a
        row bounds."""
        from ortools.sat.python import cp_model

        dropped = {r for r, _, _, _ in nat.epi.values()}
        scale, bound = nat.scale, nat.bound
        inexact = 0
        row_err = 0.0
        for r, c in rows(model, params, t0):
            if r in dropped:
                continue
            terms = {i: k / scale.get(i, 1) for i, k in c.terms.items()}
            ic, lo, hi, exact = integerise(terms, c.lb, c.ub)
            inexact += not exact
            if not exact:
                f = 10 ** MAX_POW
                err = sum(abs(k * f - round(k * f)) * bound[i] * scale.get(i, 1) for i, k in terms.items()) / f
                for i in c.terms:
                    if i in scale:
                        row_err = max(row_err, err / abs(c.terms[i]))
            expr = cp_model.LinearExpr.weighted_sum([nat.xs[i] for i in ic], list(ic.values()))
            if lo == hi:
                nat.cm.add(expr == lo)
            else:
                if lo != -math.inf:
                    nat.cm.add(expr >= lo)
                if hi != math.inf:
                    nat.cm.add(expr <= hi)
        if inexact:
            nat.notes.append(f"cpsat: {inexact} constraint row(s) rounded after scaling by 1e{MAX_POW} (approximate)")
        return row_err

    @staticmethod
    def _objective(model: Model, nat: _Native, row_err: float) -> None:
        from ortools.sat.python import cp_model

        scale = nat.scale
        obj = model.objective.copy()
        for i, (_, bnd, a, rest) in nat.epi.items():  # v = (bnd - rest) / a
            c = obj.terms.pop(i)
            obj.const += c * bnd / a
            for j, k in rest.items():
                obj.add_term(j, -c * k / a)
        obj.terms = {i: k for i, k in obj.terms.items() if k}
        coefs = {i: k / scale.get(i, 1) for i, k in obj.terms.items()}
        F, icoef, prec = scale_objective(coefs, {i: nat.bound[i] * scale.get(i, 1) for i in coefs})
        cont = [i for i in obj.terms if i in scale]
        prec += sum(abs(obj.terms[i]) / scale[i] for i in cont)  # one grid step each
        if cont:
            prec += row_err * sum(abs(obj.terms[i]) for i in cont)
        if nat.epi:
            nat.notes.append(f"cpsat: {len(nat.epi)} epigraph variable(s) substituted exactly")
        oexpr = cp_model.LinearExpr.weighted_sum([nat.xs[i] for i in icoef], list(icoef.values()))
        if model.maximizing:
            nat.cm.maximize(oexpr)
        else:
            nat.cm.minimize(oexpr)
        if F > 1 or scale:
            nat.notes.append(f"cpsat: objective scaled by {F:g} to integers, precision {prec:.3g}")
        nat.obj, nat.F, nat.prec = obj, F, prec

    def run(self, native: _Native, params: SolveParams, time_left_s: float | None) -> tuple[Any, int]:
        from ortools.sat.python import cp_model

        solver = cp_model.CpSolver()
        p = solver.parameters
        p.num_workers = params.effective_threads
        p.random_seed = params.seed
        p.relative_gap_limit = params.backend_rel_gap
        if time_left_s is not None:
            p.max_time_in_seconds = time_left_s
        if params.work_limit is not None:
            p.max_deterministic_time = params.work_limit
        p.log_search_progress = params.verbose
        return solver, solver.solve(native.cm)

    def parse(self, model: Model, native: _Native, answer: tuple[Any, int], params: SolveParams) -> RawResult:
        from ortools.sat.python import cp_model

        solver, st = answer
        scale, epi, obj, F, prec = native.scale, native.epi, native.obj, native.F, native.prec
        has = st in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        values = None
        if has:
            sol = solver.response_proto.solution  # in variable creation order (None entries were skipped)
            it = iter(sol)
            values = [0.0 if x is None else next(it) / scale.get(i, 1) for i, x in enumerate(native.xs)]
            for i, (_, bnd, a, rest) in epi.items():
                values[i] = (bnd - sum(k * values[j] for j, k in rest.items())) / a
        primal = solver.objective_value / F + obj.const if has else None
        dual = None
        if has:  # the bound is only meaningful once the search has started proving
            widen = prec if model.maximizing else -prec
            dual = solver.best_objective_bound / F + obj.const + widen
        reason = {cp_model.OPTIMAL: Reason.OPTIMAL, cp_model.FEASIBLE: Reason.FEASIBLE,
                  cp_model.INFEASIBLE: Reason.INFEASIBLE, cp_model.UNKNOWN: Reason.NO_SOLUTION_FOUND,
                  cp_model.MODEL_INVALID: Reason.ERROR}.get(st, Reason.ERROR)
        msg = solver.status_name(st)
        if st == cp_model.MODEL_INVALID:
            msg += ": " + native.cm.validate()
        limit = _limit(solver, params) if st in (cp_model.FEASIBLE, cp_model.UNKNOWN) else None
        return RawResult(Termination(reason, limit, msg), values, primal, dual, params.effective_threads,
                         tuple(native.notes), precision=prec)


def _limit(solver: Any, params: SolveParams) -> Limit:
    """Which limit stopped CP-SAT: its work (deterministic time) or its wall clock."""
    if params.work_limit is not None and solver.response_proto.deterministic_time >= 0.99 * params.work_limit:
        return Limit.WORK
    return Limit.TIME if params.time_limit_s is not None else Limit.UNDETERMINED
