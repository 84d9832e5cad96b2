"""PuLP + its bundled CBC. CBC's "Optimal" at a time limit is not trusted: the termination comes from
``prob.sol_status`` (and a hit limit is never reported optimal). PuLP gives no dual bound (``None``).

CBC checks its ``-sec`` limit only in branch-and-bound: on a large model it stayed 12 minutes in
its root for a 60 s limit. A watchdog therefore kills the CBC child process once the limit is
overrun by 10 % + 2 s (Linux: found through ``/proc``; elsewhere the overrun is only reported), and
the result says so (``no-solution-at-limit``)."""

from __future__ import annotations

import math
import os
import signal
import threading
import time
import warnings

from schedlab.formulations.backends.base import Availability, out_of_time, spent
from schedlab.formulations.model import Model
from schedlab.formulations.result import RawResult, SolveParams, Termination


def _kill_cbc_children() -> int:
    """Kill this process's CBC children (Linux ``/proc``); returns how many were killed."""
    me, n = os.getpid(), 0
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return 0
    for d in pids:
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.find("(") + 1: stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1] == str(me) and comm.startswith("cbc"):
            try:
                os.kill(int(d), signal.SIGKILL)
                n += 1
            except OSError:
                pass
    return n


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
        killed: list[int] = []
        dog = None
        if limit is not None:
            dog = threading.Timer(1.1 * limit + 2.0, lambda: killed.append(_kill_cbc_children()))
            dog.daemon = True
            dog.start()
        try:
            prob.solve(solver)
        except Exception as e:  # noqa: BLE001
            if killed:
                return RawResult(Termination.NO_SOLUTION_AT_LIMIT, None, None, None, time.perf_counter() - t1,
                                 params.effective_threads, "CBC overran its time limit and was stopped",
                                 ("cbc: overran its limit in the root, killed by the watchdog",),
                                 translate_s=translate_s, limit_hit=True)
            return RawResult(Termination.ERROR, None, None, None, time.perf_counter() - t1,
                             params.effective_threads, f"{type(e).__name__}: {e}", translate_s=translate_s,
                             limit_hit=False)
        finally:
            if dog is not None:
                dog.cancel()
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
