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

from schedlab.formulations.backends.base import (
    Availability,
    quiet_stdout,
    rows,
    solve_in_phases,
    versioned,
)
from schedlab.formulations.model import Model
from schedlab.formulations.result import Limit, RawResult, Reason, SolveParams, Termination

__all__ = ["MathOptBackend", "highs", "scip"]


def _model_proto(model: Model, params: SolveParams, t0: float):
    """``model`` as a MathOpt ``ModelProto``, its arrays filled in bulk from :meth:`Model.arrays` (adding
    variables and setting coefficients one by one through the Python API was a quarter of an
    exact-in-the-loop replay's CPU time). The shared :func:`rows` loop raises ``OutOfTime`` when the
    budget is spent."""
    from ortools.math_opt import model_pb2

    for _ in rows(model, params, t0):  # the budget check of every backend's translation
        pass
    a = model.arrays()
    p = model_pb2.ModelProto(name=model.name)
    n = len(model.vars)
    v = p.variables
    v.ids.extend(range(n))
    v.lower_bounds.extend(a.var_lb.tolist())
    v.upper_bounds.extend(a.var_ub.tolist())
    v.integers.extend(a.integer.tolist())
    v.names.extend([x.name for x in model.vars])
    lc, mat = p.linear_constraints, p.linear_constraint_matrix
    lc.ids.extend(range(len(model.constraints)))
    lc.lower_bounds.extend(a.row_lb.tolist())
    lc.upper_bounds.extend(a.row_ub.tolist())
    lc.names.extend([c.name for c in model.constraints])
    mat.row_ids.extend(a.rows.tolist())
    mat.column_ids.extend(a.cols.tolist())
    mat.coefficients.extend(a.coefs.tolist())
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
    def __init__(self, name: str, solver: str, hints: bool, threads_param: bool, options: bool = False) -> None:
        self.name = name
        self._solver = solver
        self._threads_param = threads_param
        caps = {"mip", "continuous", "dual_bound"}
        if hints:
            caps.add("warm_start")
        if options:
            caps.add("options")
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

    def translate(self, model: Model, params: SolveParams, t0: float) -> tuple[Any, int, dict[int, float]]:
        """The ``ModelProto`` (solved as is: no MathOpt Python model, whose per-variable objects and
        result parsing cost more than HiGHS on small rounds), the number of variables, the hints."""
        return _model_proto(model, params, t0), len(model.vars), model.hints

    def run(self, native: tuple[Any, int, dict[int, float]], params: SolveParams, time_left_s: float | None) -> Any:
        """``mathopt.solve`` without its Python model: the same protos to the same C++ solve."""
        from ortools.math_opt import model_parameters_pb2, parameters_pb2
        from ortools.math_opt.core.python import solver
        from ortools.math_opt.python import mathopt

        proto, _n, hints = native
        sp = mathopt.SolveParameters(relative_gap_tolerance=params.backend_rel_gap, random_seed=params.seed,
                                     enable_output=params.verbose)
        if self._threads_param:
            sp.threads = params.effective_threads
        if params.node_limit is not None:
            sp.node_limit = params.node_limit
        if time_left_s is not None:
            sp.time_limit = dt.timedelta(seconds=time_left_s)
        pp = sp.to_proto()
        for k, v in params.backend_options:  # by HiGHS's own names (SolveParams.backend_options)
            opts = pp.highs
            if isinstance(v, bool):
                opts.bool_options[k] = v
            elif isinstance(v, int):
                opts.int_options[k] = v
            elif isinstance(v, float):
                opts.double_options[k] = v
            else:
                opts.string_options[k] = str(v)
        mp = model_parameters_pb2.ModelSolveParametersProto()
        if hints and "warm_start" in self.capabilities:
            ids = sorted(hints)
            h = mp.solution_hints.add()
            h.variable_values.ids.extend(ids)
            h.variable_values.values.extend([hints[i] for i in ids])
        try:
            with quiet_stdout(not params.verbose):
                return solver.solve(proto, self._type().value, parameters_pb2.SolverInitializerProto(), pp, mp,
                                    None, _callbacks(), None, None)
        except Exception as e:  # noqa: BLE001
            return e

    def parse(self, model: Model, native: tuple[Any, int, dict[int, float]], answer: Any,
              params: SolveParams) -> RawResult:
        from ortools.math_opt import result_pb2, solution_pb2

        threads = self.threads(params)
        if isinstance(answer, Exception):
            return RawResult(Termination(Reason.ERROR, None, f"{type(answer).__name__}: {answer}"), threads=threads)
        r, n = answer, native[1]
        term = r.termination
        reason = term.reason
        has = bool(r.solutions) and r.solutions[0].HasField("primal_solution") and (
            r.solutions[0].primal_solution.feasibility_status == solution_pb2.SOLUTION_STATUS_FEASIBLE)
        values = None
        if has:
            values = [0.0] * n
            vv = r.solutions[0].primal_solution.variable_values
            for i, x in zip(vv.ids, vv.values, strict=True):
                values[i] = float(x)
        b = term.objective_bounds if term.HasField("objective_bounds") else r.solve_stats
        pb = b.primal_bound if term.HasField("objective_bounds") else b.best_primal_bound
        db = b.dual_bound if term.HasField("objective_bounds") else b.best_dual_bound
        primal = pb if has and math.isfinite(pb) else None
        dual = db if math.isfinite(db) else None
        R = result_pb2
        if reason == R.TERMINATION_REASON_OPTIMAL:
            ours = Reason.OPTIMAL
        elif reason == R.TERMINATION_REASON_FEASIBLE:
            ours = Reason.FEASIBLE
        elif reason == R.TERMINATION_REASON_NO_SOLUTION_FOUND:
            ours = Reason.NO_SOLUTION_FOUND
        elif reason == R.TERMINATION_REASON_INFEASIBLE:
            ours, dual = Reason.INFEASIBLE, None
        elif reason in (R.TERMINATION_REASON_UNBOUNDED, R.TERMINATION_REASON_INFEASIBLE_OR_UNBOUNDED):
            ours = Reason.UNBOUNDED if reason == R.TERMINATION_REASON_UNBOUNDED else Reason.ERROR
        else:
            ours = Reason.FEASIBLE if has else Reason.ERROR
        limit = None
        if reason in (R.TERMINATION_REASON_FEASIBLE, R.TERMINATION_REASON_NO_SOLUTION_FOUND):
            limit = _LIMITS.get(R.LimitProto.Name(term.limit).removeprefix("LIMIT_"), Limit.UNDETERMINED)
        name = R.TerminationReasonProto.Name(reason).removeprefix("TERMINATION_REASON_")
        return RawResult(Termination(ours, limit, f"{name}: {term.detail}".strip(": ")), values,
                         primal, dual, threads)


#: MathOpt's limits by name -> ours
_LIMITS = {"TIME": Limit.TIME, "NODE": Limit.NODE, "SOLUTION": Limit.SOLUTION, "INTERRUPTED": Limit.INTERRUPTED,
           "ITERATION": Limit.WORK}


def _callbacks():
    from ortools.math_opt import callback_pb2

    return callback_pb2.CallbackRegistrationProto()


def highs() -> MathOptBackend:
    return MathOptBackend("highs", "HIGHS", hints=True, threads_param=False, options=True)


def scip() -> MathOptBackend:
    return MathOptBackend("scip", "GSCIP", hints=True, threads_param=False)
