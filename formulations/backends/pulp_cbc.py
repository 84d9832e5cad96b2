"""PuLP + its bundled CBC. CBC's "Optimal" at a time limit is not trusted: the termination comes from
``prob.sol_status`` (and a hit limit is never reported optimal). PuLP gives no dual bound (``None``)."""

from __future__ import annotations

import math
import time
import warnings

from schedlab.formulations.backends.base import Availability, out_of_time, spent
from schedlab.formulations.model import Model
from schedlab.formulations.result import RawResult, SolveParams, Termination


class CbcBackend:
    name = "cbc"
    capabilities = frozenset({"mip", "continuous", "warm_start"})

    def availability(self) -> Availability:
        try:
            import pulp

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                ok = pulp.PULP_CBC_CMD(msg=False).available()
            if not ok:
                return Availability(False, "PuLP's bundled CBC binary is not available")
        except Exception as e:  # noqa: BLE001
            return Availability(False, f"pulp not usable: {type(e).__name__}: {e}")
        return Availability(True)

    def version(self) -> str:
        import pulp

        return f"pulp {pulp.__version__} + CBC"

    def solve(self, model: Model, params: SolveParams) -> RawResult:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # PuLP 3.3 announces its 4.0 API
            return self._solve(model, params)

    def _solve(self, model: Model, params: SolveParams) -> RawResult:
        import pulp

        t0 = time.perf_counter()
        prob = pulp.LpProblem("m", pulp.LpMaximize if model.maximizing else pulp.LpMinimize)
        xs = []
        for v in model.vars:
            cat = pulp.LpInteger if v.integer else pulp.LpContinuous
            xs.append(pulp.LpVariable(f"x{v.index}", None if v.lb == -math.inf else v.lb,
                                      None if v.ub == math.inf else v.ub, cat))
        for k, c in enumerate(model.constraints):
            if spent(params, t0, k):
                return out_of_time(t0, params.effective_threads)
            e = pulp.LpAffineExpression([(xs[i], a) for i, a in c.terms.items()])
            if c.lb == c.ub:
                prob += (e == c.lb, f"c{k}")
            else:
                if c.lb != -math.inf:
                    prob += (e >= c.lb, f"c{k}l")
                if c.ub != math.inf:
                    prob += (e <= c.ub, f"c{k}u")
        prob += pulp.LpAffineExpression([(xs[i], a) for i, a in model.objective.terms.items()],
                                        constant=model.objective.const)
        warm = bool(model.hints)
        for i, val in model.hints.items():
            xs[i].setInitialValue(val)
        opts = [f"randomSeed {params.seed + 1}", f"randomCbcSeed {params.seed + 1}"]
        if params.node_limit is not None:
            opts.append(f"maxNodes {params.node_limit}")
        translate_s = time.perf_counter() - t0
        limit = None if params.time_limit_s is None else max(0.01, params.time_limit_s - translate_s)
        solver = pulp.PULP_CBC_CMD(msg=params.verbose, timeLimit=limit,
                                   threads=params.effective_threads, gapRel=params.backend_rel_gap,
                                   warmStart=warm, options=opts)
        t1 = time.perf_counter()
        try:
            prob.solve(solver)
        except Exception as e:  # noqa: BLE001
            return RawResult(Termination.ERROR, None, None, None, time.perf_counter() - t1,
                             params.effective_threads, f"{type(e).__name__}: {e}", translate_s=translate_s,
                             limit_hit=False)
        el = time.perf_counter() - t1
        ss = prob.sol_status
        values = None
        if ss in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            values = [float(x.varValue) if x.varValue is not None else 0.0 for x in xs]
        limit_hit = limit is not None and el >= 0.98 * limit
        if ss == pulp.LpSolutionOptimal and not limit_hit:
            term = Termination.OPTIMAL
        elif values is not None:
            term = Termination.FEASIBLE_AT_LIMIT
        elif ss == pulp.LpSolutionInfeasible or prob.status == pulp.LpStatusInfeasible:
            term = Termination.INFEASIBLE
        elif ss == pulp.LpSolutionUnbounded or prob.status == pulp.LpStatusUnbounded:
            term = Termination.UNBOUNDED
        elif ss == pulp.LpSolutionNoSolutionFound and params.limited:
            term = Termination.NO_SOLUTION_AT_LIMIT
        else:
            term = Termination.ERROR
        primal = model.objective.value(values) if values is not None else None
        dual = primal if term is Termination.OPTIMAL else None
        if ss == pulp.LpSolutionIntegerFeasible and params.node_limit is not None:
            limit_hit = True  # CBC stopped at its node limit (PuLP reports no reason otherwise)
        return RawResult(term, values, primal, dual, el, params.effective_threads,
                         f"status={pulp.LpStatus[prob.status]} sol_status={ss}",
                         ("cbc: no dual bound through PuLP",) if term is not Termination.OPTIMAL else (),
                         translate_s=translate_s, limit_hit=limit_hit or term is Termination.FEASIBLE_AT_LIMIT)
