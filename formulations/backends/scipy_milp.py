"""``scipy.optimize.milp`` (HiGHS inside scipy). Minimises; a maximisation is negated on the way in
and out. The dual bound comes from ``res.mip_dual_bound``. Single-threaded, no hints."""

from __future__ import annotations

import math
import time

from schedlab.formulations.backends.base import Availability, out_of_time, quiet_stdout, spent
from schedlab.formulations.model import Model
from schedlab.formulations.result import RawResult, SolveParams, Termination


class ScipyBackend:
    name = "scipy"
    capabilities = frozenset({"mip", "continuous", "dual_bound"})

    def availability(self) -> Availability:
        try:
            from scipy.optimize import milp  # noqa: F401
        except ImportError as e:  # pragma: no cover
            return Availability(False, f"scipy.optimize.milp not importable: {e}")
        return Availability(True)

    def version(self) -> str:
        import scipy

        return f"scipy-milp {scipy.__version__}"

    def solve(self, model: Model, params: SolveParams) -> RawResult:
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import csr_array

        t0 = time.perf_counter()
        n = len(model.vars)
        sign = -1.0 if model.maximizing else 1.0
        c = np.zeros(n)
        for i, k in model.objective.terms.items():
            c[i] = sign * k
        integrality = np.array([1 if v.integer else 0 for v in model.vars])
        bounds = Bounds(np.array([v.lb for v in model.vars]), np.array([v.ub for v in model.vars]))
        rows, cols, data = [], [], []
        lbs, ubs = [], []
        for r, con in enumerate(model.constraints):
            if spent(params, t0, r):
                return out_of_time(t0, 1)
            for i, k in con.terms.items():
                rows.append(r)
                cols.append(i)
                data.append(k)
            lbs.append(con.lb)
            ubs.append(con.ub)
        cons = []
        if model.constraints:
            A = csr_array((data, (rows, cols)), shape=(len(model.constraints), n))
            cons = [LinearConstraint(A, np.array(lbs), np.array(ubs))]
        opts = {"disp": params.verbose, "mip_rel_gap": params.backend_rel_gap}
        translate_s = time.perf_counter() - t0
        if params.time_limit_s is not None:
            opts["time_limit"] = max(0.01, params.time_limit_s - translate_s)
        if params.node_limit is not None:
            opts["node_limit"] = params.node_limit
        t1 = time.perf_counter()
        with quiet_stdout(not params.verbose):
            res = milp(c, constraints=cons, integrality=integrality, bounds=bounds, options=opts)
        values = [float(x) for x in res.x] if res.x is not None else None
        const = model.objective.const
        primal = sign * res.fun + const if values is not None and res.fun is not None else None
        db = getattr(res, "mip_dual_bound", None)
        dual = sign * db + const if db is not None and math.isfinite(db) else None
        if res.status == 0:
            term = Termination.OPTIMAL
            if dual is None:
                dual = primal
        elif res.status == 1:
            term = Termination.FEASIBLE_AT_LIMIT if values is not None else Termination.NO_SOLUTION_AT_LIMIT
        elif res.status == 2:
            term, dual = Termination.INFEASIBLE, None
        elif res.status == 3:
            term = Termination.UNBOUNDED
        elif values is not None:  # e.g. HiGHS "solution limit reached", which scipy does not name
            term = Termination.FEASIBLE_AT_LIMIT
        else:
            term = Termination.ERROR
        el = time.perf_counter() - t1  # the solve and reading its answer
        return RawResult(term, values, primal, dual, el, 1, f"status={res.status}: {res.message}",
                         translate_s=translate_s, limit_hit=res.status not in (0, 2, 3))
