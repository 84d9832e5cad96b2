"""POP-style partitioning (Narayanan et al., SOSP'21): split an instance's jobs and machines ``k``
ways, solve the sub-problems independently (in worker processes when ``parallel``), merge.

Jobs are shuffled with ``seed`` and dealt round-robin; machines are dealt round-robin in an order
that spreads every capacity class (and, for tier placement, whole racks when there are at least
``k``) evenly. Tenant quotas are split evenly. The merged solution is evaluated with the whole
problem's objective function and verified on the whole instance; the bound is the whole problem's
relaxation bound where the formulation has one (joint: machine-class LP; tier: fractional
knapsack), else ``None``. A merged result is never called optimal unless it meets that bound.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from schedlab.formulations import io
from schedlab.formulations.base import Formulation, solve
from schedlab.formulations.joint import JointFormulation, relaxation_bound
from schedlab.formulations.joint_instance import JointInstance
from schedlab.formulations.joint_twostage import JointTwoStage
from schedlab.formulations.result import SolutionStatus, SolveParams, SolveResult, Termination, relative_gap
from schedlab.formulations.tier import TierFormulation, TierInstance, TierMode, tier_relaxation_bound
from schedlab.formulations.tiresias import TiresiasFormulation, TiresiasInstance, TiresiasSolution
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.resources import Resources


def _deal(items: list, k: int) -> list[list]:
    return [items[i::k] for i in range(k)]


def _machine_parts(inst: Any, k: int, by_rack: bool) -> list[list[str]]:
    cl = inst.base.cluster
    elig = list(inst.eligible_machines)
    if by_rack and len(cl.racks) >= k:
        es = set(elig)
        return [[m for r in racks for m in cl.machines_in(r) if m in es] for racks in _deal(list(cl.racks), k)]
    byc: dict[tuple, list[str]] = defaultdict(list)
    for m in elig:
        c = inst.base.capacity(m)
        byc[(c.gpus, c.cpus, c.mem_gb)].append(m)
    order = [m for key in sorted(byc) for m in byc[key]]
    return _deal(order, k)


def _sub_base(base: Instance, jobs: list, machines: set[str], k: int) -> Instance:
    ids = {j.id for j in jobs}
    cur = Allocation.of(ja for ja in base.current if ja.job_id in ids and set(ja.placement) <= machines)
    quotas = {t: Resources(q.gpus // k, q.cpus // k, q.mem_gb / k) for t, q in base.quotas.items()}
    return Instance(base.cluster, tuple(jobs), current=cur, quotas=quotas, reserved=base.reserved, time=base.time)


def partition(inst: Any, k: int, seed: int) -> list[Any]:
    """``k`` sub-instances with disjoint jobs and machines."""
    rng = random.Random(seed)
    jobs = list(inst.base.jobs)
    # running jobs go with the part holding their machines; the rest are dealt round-robin
    mparts = _machine_parts(inst, k, isinstance(inst, TierInstance))
    owner = {m: i for i, p in enumerate(mparts) for m in p}
    buckets: list[list] = [[] for _ in range(k)]
    free = []
    for j in jobs:
        cur = inst.base.current.get(j.id)
        parts = {owner.get(m) for m in cur.placement} if cur is not None else set()
        if len(parts) == 1 and None not in parts:
            buckets[parts.pop()].append(j)
        else:
            free.append(j)
    rng.shuffle(free)
    free.sort(key=lambda j: -j.requested.gpus)  # deal big jobs first so parts balance (stable after shuffle)
    for j in free:
        i = min(range(k), key=lambda i: sum(x.requested.gpus for x in buckets[i]))
        buckets[i].append(j)
    out = []
    for i in range(k):
        ms = set(mparts[i])
        order = tuple(m for m in inst.eligible_machines if m in ms)
        out.append(dataclasses.replace(inst, base=_sub_base(inst.base, buckets[i], ms, k), machines=order))
    return out


def _encode(sol: Any) -> Any:
    if isinstance(sol, TiresiasSolution):
        return {"allocation": io.allocation_to_dict(sol.allocation), "ps_hosts": {j: list(h) for j, h in sol.ps_hosts.items()}}
    return None if sol is None else io.allocation_to_dict(sol)


def _decode(kind: str, d: Any) -> Any:
    if d is None:
        return None
    if kind == TiresiasInstance.KIND:
        return TiresiasSolution(io.allocation_from_dict(d["allocation"]), {j: tuple(h) for j, h in d["ps_hosts"].items()})
    return io.allocation_from_dict(d)


def _merge(kind: str, sols: list[Any]) -> Any:
    if kind == TiresiasInstance.KIND:
        return TiresiasSolution(Allocation.of(ja for s in sols for ja in s.allocation),
                                {j: h for s in sols for j, h in s.ps_hosts.items()})
    return Allocation.of(ja for s in sols for ja in s)


#: instance kind -> (formulation factory, whole-problem bound or None)
POP_KINDS: dict[str, tuple[Callable[[], Formulation], Callable[[Any], float | None] | None]] = {
    JointInstance.KIND: (JointFormulation, relaxation_bound),
    TierInstance.KIND: (TierFormulation, tier_relaxation_bound),
    TiresiasInstance.KIND: (TiresiasFormulation, None),
}


def _solve_part(kind: str, sub: dict, backend: str, params: SolveParams) -> dict:
    inst = io.INSTANCE_KINDS[kind].from_dict(sub)
    if kind == JointInstance.KIND:  # exact two-stage (= the direct model when aggregation is exact)
        r = JointTwoStage().solve(inst, backend, params)
    else:
        r = solve(POP_KINDS[kind][0](), inst, backend, params)
    return {"termination": r.termination.value, "solution": _encode(r.solution), "primal": r.primal_bound,
            "dual": r.dual_bound, "build_s": r.build_s, "solve_s": r.solve_s, "threads": r.threads,
            "version": r.backend_version, "message": r.message}


class POP:
    """``POP(k).solve(inst, backend, params)``: partitioned solve of a joint, tier or Tiresias instance.
    Each sub-problem gets ``time_limit_s * min(k, workers) / k`` so the whole run fits the limit."""

    def __init__(self, k: int = 4, *, parallel: bool = False, workers: int | None = None) -> None:
        if k < 1:
            raise ValueError("POP needs k >= 1")
        self.k, self.parallel, self.workers = k, parallel, workers

    def solve(self, inst: Any, backend: str = "cpsat", params: SolveParams | None = None) -> SolveResult:
        params = params or SolveParams()
        kind = inst.KIND
        form_f, bound_f = POP_KINDS[kind]
        form = form_f()
        t0 = time.perf_counter()
        subs = partition(inst, self.k, params.seed)
        workers = min(self.k, self.workers or params.effective_threads) if self.parallel else 1
        sub_params = params.with_(warm_start=None, threads=1 if self.parallel else params.threads)
        if params.time_limit_s is not None:
            sub_params = sub_params.with_(time_limit_s=max(0.1, params.time_limit_s * workers / self.k))
        bound = bound_f(inst) if bound_f is not None else None
        build_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        payloads = [s.to_dict() for s in subs]
        if self.parallel and workers > 1:
            with ProcessPoolExecutor(max_workers=workers) as ex:
                parts = list(ex.map(_solve_part, [kind] * self.k, payloads, [backend] * self.k, [sub_params] * self.k))
        else:
            parts = [_solve_part(kind, p, backend, sub_params) for p in payloads]
        solve_s = time.perf_counter() - t1
        terms = [Termination(p["termination"]) for p in parts]
        notes = [f"pop: k={self.k}, {'parallel x' + str(workers) if workers > 1 else 'sequential'}, "
                 f"sub-problem terminations: {', '.join(t.value for t in terms)}"]
        if not all(t.has_solution for t in terms):
            bad = next(t for t in terms if not t.has_solution)
            return SolveResult(f"pop-{form.name}", backend, parts[0]["version"], bad, SolutionStatus.UNDETERMINED,
                               "max" if kind != TiresiasInstance.KIND else "min", None, None, bound, build_s, solve_s,
                               parts[0]["threads"], params.seed, message="a sub-problem has no solution",
                               notes=tuple(notes))
        merged = _merge(kind, [_decode(kind, p["solution"]) for p in parts])
        obj = form.objective(inst, merged)
        viol = tuple(form.verify(inst, merged))
        sense = "min" if kind == TiresiasInstance.KIND or (kind == TierInstance.KIND and inst.mode is TierMode.MIN_OVERHEAD) else "max"
        gap = relative_gap(obj, bound)
        term = Termination.OPTIMAL if gap is not None and gap <= params.rel_gap else Termination.FEASIBLE_AT_LIMIT
        return SolveResult(f"pop-{form.name}", backend, parts[0]["version"], term,
                           SolutionStatus.OPTIMAL if term is Termination.OPTIMAL else SolutionStatus.FEASIBLE, sense,
                           obj, obj, bound, build_s, solve_s, parts[0]["threads"], params.seed,
                           allocation=form.allocation_of(merged), solution=merged, notes=tuple(notes),
                           model_stats={"parts": self.k,
                                        "sub_build_s_max": round(max(p["build_s"] for p in parts), 3),
                                        "sub_solve_s_max": round(max(p["solve_s"] for p in parts), 3)},
                           violations=viol)
