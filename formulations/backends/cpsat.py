"""OR-Tools CP-SAT. Integer variables only; constraint coefficients are scaled by the smallest power
of ten (<= 1e6) that makes them integral (and rounded beyond that, noted in the result); the
objective may have real coefficients (CP-SAT scales it internally and reports bounds in the
original units). ``num_workers = min(threads, cores)``."""

from __future__ import annotations

import math
import time

from schedlab.formulations.backends.base import Availability
from schedlab.formulations.model import Model
from schedlab.formulations.result import RawResult, SolveParams, Termination

_MAX_POW = 6


def integerise(terms: dict[int, float], lb: float, ub: float) -> tuple[dict[int, int], float, float, bool]:
    """Scale a constraint on integer variables to integer coefficients; ``exact`` is False if rounding
    was needed. ``lb`` is rounded up and ``ub`` down (valid since the left side is integral)."""
    for k in range(_MAX_POW + 1):
        f = 10 ** k
        scaled = {i: c * f for i, c in terms.items()}
        if all(abs(v - round(v)) <= 1e-9 * max(1.0, abs(v)) for v in scaled.values()):
            exact = True
            break
    else:
        exact = False
    ic = {i: int(round(v)) for i, v in scaled.items() if round(v) != 0}
    lo = -math.inf if lb == -math.inf else math.ceil(lb * f - 1e-9)
    hi = math.inf if ub == math.inf else math.floor(ub * f + 1e-9)
    return ic, lo, hi, exact


class CpSatBackend:
    name = "cpsat"
    capabilities = frozenset({"mip", "intervals", "warm_start", "dual_bound", "deterministic"})

    def availability(self) -> Availability:
        try:
            from ortools.sat.python import cp_model  # noqa: F401
        except ImportError as e:  # pragma: no cover
            return Availability(False, f"ortools not importable: {e}")
        return Availability(True)

    def version(self) -> str:
        import ortools

        return f"ortools-cpsat {ortools.__version__}"

    def solve(self, model: Model, params: SolveParams) -> RawResult:
        from ortools.sat.python import cp_model

        notes: list[str] = []
        cm = cp_model.CpModel()
        xs = []
        for v in model.vars:
            if not v.integer:
                raise ValueError(f"cpsat: continuous variable {v.name} (CP-SAT needs integer variables)")
            lb = -cp_model.INT32_MAX if v.lb == -math.inf else math.ceil(v.lb - 1e-9)
            ub = cp_model.INT32_MAX if v.ub == math.inf else math.floor(v.ub + 1e-9)
            xs.append(cm.new_int_var(lb, ub, v.name))
        inexact = 0
        scaled = 0
        for c in model.constraints:
            ic, lo, hi, exact = integerise(c.terms, c.lb, c.ub)
            inexact += not exact
            scaled += any(abs(v - round(v)) > 1e-12 for v in c.terms.values())
            expr = cp_model.LinearExpr.weighted_sum([xs[i] for i in ic], list(ic.values()))
            if lo == hi:
                cm.add(expr == lo)
            else:
                if lo != -math.inf:
                    cm.add(expr >= lo)
                if hi != math.inf:
                    cm.add(expr <= hi)
        if scaled:
            notes.append(f"cpsat: {scaled} constraint(s) scaled by powers of ten to integer coefficients")
        if inexact:
            notes.append(f"cpsat: {inexact} constraint(s) rounded after scaling by 1e{_MAX_POW} (approximate)")
        ivs = []
        for iv in model.intervals:
            ivs.append(cm.new_interval_var(xs[iv.start], iv.size, xs[iv.end], iv.name))
        for cu in model.cumulatives:
            dem = [xs[d[1]] if isinstance(d, tuple) else d for d in cu.demands]
            cm.add_cumulative([ivs[i] for i in cu.intervals], dem, cu.capacity)
        obj = model.objective
        idx = list(obj.terms)
        oexpr = cp_model.LinearExpr.weighted_sum([xs[i] for i in idx], [obj.terms[i] for i in idx])
        if model.maximizing:
            cm.maximize(oexpr)
        else:
            cm.minimize(oexpr)
        hints = dict(model.hints)
        for i, val in hints.items():
            cm.add_hint(xs[i], int(round(val)))

        solver = cp_model.CpSolver()
        p = solver.parameters
        p.num_workers = params.effective_threads
        p.random_seed = params.seed
        p.relative_gap_limit = params.rel_gap
        if params.time_limit_s is not None:
            p.max_time_in_seconds = params.time_limit_s
        if params.deterministic_limit is not None:
            p.max_deterministic_time = params.deterministic_limit
        p.log_search_progress = params.verbose
        t0 = time.perf_counter()
        st = solver.solve(cm)
        dt = time.perf_counter() - t0
        has = st in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        values = [float(solver.value(x)) for x in xs] if has else None
        primal = solver.objective_value + obj.const if has else None
        # the bound is only meaningful once the search has started proving (a solution or optimality)
        dual = solver.best_objective_bound + obj.const if has else None
        term = {cp_model.OPTIMAL: Termination.OPTIMAL, cp_model.FEASIBLE: Termination.FEASIBLE_AT_LIMIT,
                cp_model.INFEASIBLE: Termination.INFEASIBLE, cp_model.UNKNOWN: Termination.NO_SOLUTION_AT_LIMIT,
                cp_model.MODEL_INVALID: Termination.ERROR}.get(st, Termination.ERROR)
        msg = solver.status_name(st)
        if st == cp_model.MODEL_INVALID:
            msg += ": " + cm.validate()
        if term is Termination.OPTIMAL and dual is not None and primal is not None:
            notes.append(f"cpsat: optimal within relative gap {params.rel_gap:g}")
        return RawResult(term, values, primal, dual, dt, p.num_workers, msg, tuple(notes))
