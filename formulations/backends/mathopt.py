"""OR-Tools MathOpt with HiGHS (``highs``) or SCIP (``scip``, GSCIP).

HiGHS through MathOpt rejects ``threads`` (and the error path itself crashes), so it is never passed;
the result reports the threads as ``None`` = HiGHS's own default. SCIP is single-threaded (1).
Solution hints (warm starts) are passed to both: MathOpt hands them to HiGHS as a MIP start
(``setSolution``; HiGHS checks it and keeps it as its first incumbent when feasible) and to SCIP.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from typing import Any

from schedlab.formulations.backends.base import Availability, quiet_stdout, rows, solve_in_phases, versioned
from schedlab.formulations.model import Model
from schedlab.formulations.result import Limit, RawResult, Reason, SolveParams, Termination

__all__ = ["MathOptBackend", "highs", "scip"]


def _model_proto(model: Model, params: SolveParams, t0: float):
    """``model`` as a MathOpt ``ModelProto``, its arrays filled in bulk (adding variables and setting
    coefficients one by one through the Python API was a quarter of an exact-in-the-loop replay's CPU
    time); the shared :func:`rows` loop raises ``OutOfTime`` when the budget is spent translating."""
    from ortools.math_opt import model_pb2

    p = model_pb2.ModelProto(name=model.name)
    n = len(model.vars)
    v = p.variables
    v.ids.extend(range(n))
    v.lower_bounds.extend([x.lb for x in model.vars])
    v.upper_bounds.extend([x.ub for x in model.vars])
    v.integers.extend([x.integer for x in model.vars])
    v.names.extend([x.name for x in model.vars])
    lc, mat = p.linear_constraints, p.linear_constraint_matrix
    rws, cols, coefs = [], [], []
    for r, c in rows(model, params, t0):
        terms = c.terms
        for i in sorted(terms):
            if terms[i] != 0:
                rws.append(r)
                cols.append(i)
                coefs.append(terms[i])
    lc.ids.extend(range(len(model.constraints)))
    lc.lower_bounds.extend([c.lb for c in model.constraints])
    lc.upper_bounds.extend([c.ub for c in model.constraints])
    lc.names.extend([c.name for c in model.constraints])
    mat.row_ids.extend(rws)
    mat.column_ids.extend(cols)
    mat.coefficients.extend(coefs)
    obj = model.objective.terms
    ids = sorted(i for i in obj if obj[i] != 0)
    p.objective.linear_coefficients.ids.extend(ids)
    p.objective.linear_coefficients.values.extend([obj[i] for i in ids])
    p.objective.offset = model.objective.const
    p.objective.maximize = model.maximizing
    return p


@functools.cache
def _smoke_test(solver: str) -> Availability:
    """Whether MathOpt's ``solver`` solves a one-variable MIP: a fact of the installation, tested once per
    process (it was run before every solve: ~12 ms each, 3 % of an exact-in-the-loop replay)."""
    try:
        from ortools.math_opt.python import mathopt

        m = mathopt.Model()
        x = m.add_variable(lb=0, ub=1, is_integer=True)
        m.objective.set_linear_coefficient(x, 1.0)
        m.objective.is_maximize = True
        r = mathopt.solve(m, getattr(mathopt.SolverType, solver))
        if r.termination.reason != mathopt.TerminationReason.OPTIMAL:
            return Availability(False, f"{solver} smoke test ended {r.termination.reason}")
    except Exception as e:  # noqa: BLE001 - any failure makes the backend unavailable
        return Availability(False, f"MathOpt {solver} not usable: {type(e).__name__}: {e}")
    return Availability(True)


class MathOptBackend:
    def __init__(self, name: str, solver: str, hints: bool, threads_param: bool) -> None:
        self.name = name
        self._solver = solver
        self._threads_param = threads_param
        caps = {"mip", "continuous", "dual_bound"}
        if hints:
            caps.add("warm_start")
        self.capabilities = frozenset(caps)

    def _type(self):
        from ortools.math_opt.python import mathopt

        return getattr(mathopt.SolverType, self._solver)

    def availability(self) -> Availability:
        return _smoke_test(self._solver)

    def version(self) -> str:
        return versioned(f"ortools-mathopt-{self._solver.lower()}", "ortools")

    def solve(self, model: Model, params: SolveParams) -> RawResult:
        return solve_in_phases(self, model, params)

    def threads(self, params: SolveParams) -> int | None:
        if self._threads_param:
            return params.effective_threads
        return 1 if self._solver == "GSCIP" else None

    def translate(self, model: Model, params: SolveParams, t0: float) -> tuple[Any, list[Any], dict[int, float]]:
        from ortools.math_opt.python import mathopt

        m = mathopt.Model.from_model_proto(_model_proto(model, params, t0))
        return m, [m.get_variable(i) for i in range(len(model.vars))], model.hints

    def run(self, native: tuple[Any, list[Any], dict[int, float]], params: SolveParams, time_left_s: float | None) -> Any:
        from ortools.math_opt.python import mathopt

        m, xs, hints = native
        sp = mathopt.SolveParameters(relative_gap_tolerance=params.backend_rel_gap, random_seed=params.seed,
                                     enable_output=params.verbose)
        if self._threads_param:
            sp.threads = params.effective_threads
        if params.node_limit is not None:
            sp.node_limit = params.node_limit
        mp = None
        if hints and "warm_start" in self.capabilities:
            hint = mathopt.SolutionHint(variable_values={xs[i]: v for i, v in hints.items()})
            mp = mathopt.ModelSolveParameters(solution_hints=[hint])
        if time_left_s is not None:
            sp.time_limit = dt.timedelta(seconds=time_left_s)
        try:
            with quiet_stdout(not params.verbose):
                return mathopt.solve(m, self._type(), params=sp, model_params=mp)
        except Exception as e:  # noqa: BLE001
            return e

    def parse(self, model: Model, native: tuple[Any, list[Any], dict[int, float]], answer: Any, params: SolveParams) -> RawResult:
        from ortools.math_opt.python import mathopt

        threads = self.threads(params)
        if isinstance(answer, Exception):
            return RawResult(Termination(Reason.ERROR, None, f"{type(answer).__name__}: {answer}"), threads=threads)
        r, xs = answer, native[1]
        R = mathopt.TerminationReason
        reason = r.termination.reason
        has = r.has_primal_feasible_solution()
        values = None
        if has:
            values = [float(v) for v in r.variable_values(xs)]
        b = r.termination.objective_bounds
        primal = b.primal_bound if has and math.isfinite(b.primal_bound) else None
        dual = b.dual_bound if math.isfinite(b.dual_bound) else None
        if reason == R.OPTIMAL:
            ours = Reason.OPTIMAL
        elif reason == R.FEASIBLE:
            ours = Reason.FEASIBLE
        elif reason == R.NO_SOLUTION_FOUND:
            ours = Reason.NO_SOLUTION_FOUND
        elif reason == R.INFEASIBLE:
            ours, dual = Reason.INFEASIBLE, None
        elif reason in (R.UNBOUNDED, R.INFEASIBLE_OR_UNBOUNDED):
            ours = Reason.UNBOUNDED if reason == R.UNBOUNDED else Reason.ERROR
        else:
            ours = Reason.FEASIBLE if has else Reason.ERROR
        limit = None
        if reason in (R.FEASIBLE, R.NO_SOLUTION_FOUND):
            limit = _LIMITS.get(getattr(r.termination.limit, "name", ""), Limit.UNDETERMINED)
        return RawResult(Termination(ours, limit, f"{reason.name}: {r.termination.detail}".strip(": ")), values,
                         primal, dual, threads)


#: MathOpt's limits by name -> ours
_LIMITS = {"TIME": Limit.TIME, "NODE": Limit.NODE, "SOLUTION": Limit.SOLUTION, "INTERRUPTED": Limit.INTERRUPTED,
           "ITERATION": Limit.WORK}


def highs() -> MathOptBackend:
    return MathOptBackend("highs", "HIGHS", hints=True, threads_param=False)


def scip() -> MathOptBackend:
    return MathOptBackend("scip", "GSCIP", hints=True, threads_param=False)
