"""``scipy.optimize.milp`` (HiGHS inside scipy). Minimises; a maximisation is negated on the way in
and out. The dual bound comes from ``res.mip_dual_bound``. Single-threaded, no hints."""

from __future__ import annotations

import math
from typing import Any

from schedlab.formulations.backends.base import (
    Availability,
    importable,
    quiet_stdout,
    rows,
    solve_in_phases,
    time_or,
    versioned,
)
from schedlab.formulations.model import Model
from schedlab.formulations.result import Limit, RawResult, Reason, SolveParams, Termination

__all__ = ["ScipyBackend"]


class ScipyBackend:
    name = "scipy"
    capabilities = frozenset({"mip", "continuous", "dual_bound"})

    def availability(self) -> Availability:
        return importable("scipy.optimize", "scipy.optimize.milp", "milp")

    def version(self) -> str:
        return versioned("scipy-milp", "scipy")

    def solve(self, model: Model, params: SolveParams) -> RawResult:
        return solve_in_phases(self, model, params)

    def threads(self, params: SolveParams) -> int | None:
        return 1

    def translate(self, model: Model, params: SolveParams, t0: float) -> dict[str, Any]:
        """``milp``'s arguments: the (minimised) cost vector, the sparse rows, bounds, integrality."""
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint
        from scipy.sparse import csr_array

        n = len(model.vars)
        sign = -1.0 if model.maximizing else 1.0
        c = np.zeros(n)
        for i, k in model.objective.terms.items():
            c[i] = sign * k
        integrality = np.array([1 if v.integer else 0 for v in model.vars])
        bounds = Bounds(np.array([v.lb for v in model.vars]), np.array([v.ub for v in model.vars]))
        rs, cols, data = [], [], []
        lbs, ubs = [], []
        for r, con in rows(model, params, t0):
            for i, k in con.terms.items():
                rs.append(r)
                cols.append(i)
                data.append(k)
            lbs.append(con.lb)
            ubs.append(con.ub)
        cons = []
        if model.constraints:
            A = csr_array((data, (rs, cols)), shape=(len(model.constraints), n))
            cons = [LinearConstraint(A, np.array(lbs), np.array(ubs))]
        return {"c": c, "constraints": cons, "integrality": integrality, "bounds": bounds}

    def run(self, native: dict[str, Any], params: SolveParams, time_left_s: float | None) -> Any:
        from scipy.optimize import milp

        opts = {"disp": params.verbose, "mip_rel_gap": params.backend_rel_gap}
        if time_left_s is not None:
            opts["time_limit"] = time_left_s
        if params.node_limit is not None:
            opts["node_limit"] = params.node_limit
        with quiet_stdout(not params.verbose):
            return milp(**native, options=opts)

    def parse(self, model: Model, native: dict[str, Any], answer: Any, params: SolveParams) -> RawResult:
        res = answer
        sign = -1.0 if model.maximizing else 1.0
        values = [float(x) for x in res.x] if res.x is not None else None
        const = model.objective.const
        primal = sign * res.fun + const if values is not None and res.fun is not None else None
        db = getattr(res, "mip_dual_bound", None)
        dual = sign * db + const if db is not None and math.isfinite(db) else None
        if res.status == 0:
            reason = Reason.OPTIMAL
            if dual is None:
                dual = primal
        elif res.status == 1:
            reason = Reason.FEASIBLE if values is not None else Reason.NO_SOLUTION_FOUND
        elif res.status == 2:
            reason, dual = Reason.INFEASIBLE, None
        elif res.status == 3:
            reason = Reason.UNBOUNDED
        elif values is not None:  # e.g. HiGHS "solution limit reached", which scipy does not name
            reason = Reason.FEASIBLE
        else:
            reason = Reason.ERROR
        limit = None
        if res.status == 1:  # "Iteration or time limit reached"
            limit = time_or(params, Limit.NODE if params.node_limit is not None else Limit.UNDETERMINED)
        elif res.status not in (0, 2, 3):
            limit = Limit.UNDETERMINED
        return RawResult(Termination(reason, limit, f"status={res.status}: {res.message}"), values, primal, dual, 1)
