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
from dataclasses import dataclass
from typing import Any

from schedlab.formulations.backends.base import Availability, rows, solve_in_phases, versioned
from schedlab.formulations.model import Model
from schedlab.formulations.result import Limit, RawResult, Reason, SolveParams, Termination

__all__ = ["CbcBackend"]


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
        return versioned("pulp", "pulp") + " + CBC"

    def solve(self, model: Model, params: SolveParams) -> RawResult:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # PuLP 3.3 announces its 4.0 API
            return solve_in_phases(self, model, params)

    def threads(self, params: SolveParams) -> int | None:
        return params.effective_threads

    def translate(self, model: Model, params: SolveParams, t0: float) -> tuple[Any, list[Any], bool]:
        import pulp

        prob = pulp.LpProblem("m", pulp.LpMaximize if model.maximizing else pulp.LpMinimize)
        xs = []
        for v in model.vars:
            cat = pulp.LpInteger if v.integer else pulp.LpContinuous
            xs.append(pulp.LpVariable(f"x{v.index}", None if v.lb == -math.inf else v.lb,
                                      None if v.ub == math.inf else v.ub, cat))
        for k, c in rows(model, params, t0):
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
        for i, val in model.hints.items():
            xs[i].setInitialValue(val)
        return prob, xs, bool(model.hints)

    def run(self, native: tuple[Any, list[Any], bool], params: SolveParams, time_left_s: float | None) -> _Answer:
        import pulp

        prob, _, warm = native
        opts = [f"randomSeed {params.seed + 1}", f"randomCbcSeed {params.seed + 1}"]
        if params.node_limit is not None:
            opts.append(f"maxNodes {params.node_limit}")
        solver = pulp.PULP_CBC_CMD(msg=params.verbose, timeLimit=time_left_s,
                                   threads=params.effective_threads, gapRel=params.backend_rel_gap,
                                   warmStart=warm, options=opts)
        t1 = time.perf_counter()
        killed: list[int] = []
        dog = None
        if time_left_s is not None:
            dog = threading.Timer(1.1 * time_left_s + 2.0, lambda: killed.append(_kill_cbc_children()))
            dog.daemon = True
            dog.start()
        try:
            prob.solve(solver)
        except Exception as e:  # noqa: BLE001
            return _Answer(time.perf_counter() - t1, time_left_s, error=e, killed=bool(killed))
        finally:
            if dog is not None:
                dog.cancel()
        return _Answer(time.perf_counter() - t1, time_left_s)

    def parse(self, model: Model, native: tuple[Any, list[Any], bool], answer: _Answer,
              params: SolveParams) -> RawResult:
        import pulp

        threads = params.effective_threads
        if answer.killed:
            return RawResult(Termination(Reason.NO_SOLUTION_FOUND, Limit.TIME,
                                         "CBC overran its time limit and was stopped"), threads=threads,
                             notes=("cbc: overran its limit in the root, killed by the watchdog",))
        if answer.error is not None:
            return RawResult(Termination(Reason.ERROR, None, f"{type(answer.error).__name__}: {answer.error}"),
                             threads=threads)
        prob, xs, _ = native
        ss = prob.sol_status
        values = None
        if ss in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            values = [float(x.varValue) if x.varValue is not None else 0.0 for x in xs]
        limit = None
        if answer.time_limit_s is not None and answer.elapsed_s >= 0.98 * answer.time_limit_s:
            limit = Limit.TIME
        if ss == pulp.LpSolutionOptimal and limit is None:
            reason = Reason.OPTIMAL
        elif values is not None:
            reason, limit = Reason.FEASIBLE, limit or Limit.UNDETERMINED
        elif ss == pulp.LpSolutionInfeasible or prob.status == pulp.LpStatusInfeasible:
            reason = Reason.INFEASIBLE
        elif ss == pulp.LpSolutionUnbounded or prob.status == pulp.LpStatusUnbounded:
            reason = Reason.UNBOUNDED
        elif ss == pulp.LpSolutionNoSolutionFound and params.limited:
            reason = Reason.NO_SOLUTION_FOUND
        else:
            reason = Reason.ERROR
        primal = model.objective.value(values) if values is not None else None
        dual = primal if reason is Reason.OPTIMAL else None
        if ss == pulp.LpSolutionIntegerFeasible and params.node_limit is not None:
            limit = Limit.NODE  # CBC stopped at its node limit (PuLP reports no reason otherwise)
        return RawResult(Termination(reason, limit, f"status={pulp.LpStatus[prob.status]} sol_status={ss}"),
                         values, primal, dual, threads,
                         ("cbc: no dual bound through PuLP",) if reason is not Reason.OPTIMAL else ())


@dataclass(frozen=True, slots=True)
class _Answer:
    """How CBC's run ended: its seconds, the limit it had, the exception it raised and whether the
    watchdog killed it."""

    elapsed_s: float
    time_limit_s: float | None
    error: Exception | None = None
    killed: bool = False
