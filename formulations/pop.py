"""POP-style partitioning (Narayanan et al., SOSP'21): split an instance's jobs and machines ``k``
ways, solve the sub-problems independently (in worker processes when ``parallel``), merge.

**Partition.** Running jobs go with the part holding their machines; the others are shuffled with
``seed`` and dealt, largest first, to the part with the least GPU demand. Machines are dealt as
whole racks when there are at least ``k`` racks (so rack-tier placements stay possible), else
round-robin in an order that spreads every capacity class evenly. Quotas are shared in proportion.

**Repair.** A part that is infeasible on its own (its jobs must all be placed and its machines
cannot hold them) is merged with the part holding the most free GPUs and the merged part is solved
again; this repeats until every part is feasible. The last possible merge is the whole problem, so
POP reports ``infeasible`` only when the whole problem is.

**Status and bound.** The merged solution is re-scored with the whole problem's objective and
verified on the whole instance. The bound is the whole problem's relaxation where the formulation
has one (joint: class LP, first, within a fifth of the time budget; tier: fractional knapsack), else
``None``: it is reported only when it is valid. The status follows the one rule
(:func:`~formulations.result.termination_of`): ``optimal`` only when the objective meets that bound;
otherwise ``feasible-at-limit`` when some part hit its limit and ``feasible`` when none did. A part
without a solution makes POP's status that part's (its worst part's).
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
from schedlab.formulations.result import (
    Bounds,
    Limit,
    Provenance,
    Reason,
    SolveParams,
    SolveResult,
    Status,
    Termination,
    Timing,
    termination_of,
)
from schedlab.formulations.tier import TierFormulation, TierInstance, TierMode, tier_relaxation_bound
from schedlab.formulations.tiresias import TiresiasInstance, TiresiasSolution
from schedlab.formulations.tiresias_ilp import TiresiasFormulation
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.resources import Resources
from schedlab.topology.errors import SolverError


def _deal(items: list, k: int) -> list[list]:
    return [items[i::k] for i in range(k)]


def _machine_parts(inst: Any, k: int) -> list[list[str]]:
    cl = inst.base.cluster
    elig = list(inst.eligible_machines)
    if len(cl.racks) >= k:
        es = set(elig)
        return [[m for r in racks for m in cl.machines_in(r) if m in es] for racks in _deal(list(cl.racks), k)]
    byc: dict[tuple, list[str]] = defaultdict(list)
    for m in elig:
        c = inst.base.capacity(m)
        byc[(c.gpus, c.cpus, c.mem_gb)].append(m)
    order = [m for key in sorted(byc) for m in byc[key]]
    return _deal(order, k)


def partition_groups(inst: Any, k: int, seed: int) -> list[tuple[list, list[str]]]:
    """``k`` groups ``(jobs, machines)``, disjoint and covering (module docstring)."""
    rng = random.Random(seed)
    mparts = _machine_parts(inst, k)
    owner = {m: i for i, p in enumerate(mparts) for m in p}
    buckets: list[list] = [[] for _ in range(k)]
    free = []
    for j in inst.base.jobs:
        cur = inst.base.current.get(j.id)
        parts = {owner.get(m) for m in cur.placement} if cur is not None else set()
        if len(parts) == 1 and None not in parts:
            buckets[parts.pop()].append(j)
        else:
            free.append(j)
    rng.shuffle(free)
    free.sort(key=lambda j: -j.requested.gpus)  # big jobs first so parts balance (stable after shuffle)
    demand = [sum(x.requested.gpus for x in b) for b in buckets]
    for j in free:
        i = min(range(k), key=lambda i: demand[i])
        buckets[i].append(j)
        demand[i] += j.requested.gpus
    return [(buckets[i], mparts[i]) for i in range(k)]


#: per-job mappings of the instance kinds, restricted to a part's jobs (smaller payloads)
JOB_MAPS = ("options", "ref_throughput", "weights", "ps", "overhead")


def sub_instance(inst: Any, jobs: list, machines: list[str], share: float) -> Any:
    """The sub-problem of ``jobs`` on ``machines`` with ``share`` of every quota."""
    base: Instance = inst.base
    ids = {j.id for j in jobs}
    ms = set(machines)
    cur = Allocation.of(ja for ja in base.current if ja.job_id in ids and set(ja.placement) <= ms)
    quotas = {t: Resources(int(q.gpus * share), int(q.cpus * share), q.mem_gb * share) for t, q in base.quotas.items()}
    sub = Instance(base.cluster, tuple(jobs), current=cur, quotas=quotas, reserved=base.reserved, time=base.time)
    order = tuple(m for m in inst.eligible_machines if m in ms)
    per_job = {f: {j: v for j, v in getattr(inst, f).items() if j in ids} for f in JOB_MAPS if hasattr(inst, f)}
    return dataclasses.replace(inst, base=sub, machines=order, **per_job)


def partition(inst: Any, k: int, seed: int) -> list[Any]:
    """``k`` sub-instances with disjoint jobs and machines."""
    return [sub_instance(inst, js, ms, 1 / k) for js, ms in partition_groups(inst, k, seed)]


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


def _joint_bound(inst: JointInstance, time_limit_s: float | None) -> float | None:
    return relaxation_bound(inst, "highs", time_limit_s=time_limit_s or 120.0)


#: instance kind -> (instance type, formulation factory, whole-problem bound (inst, seconds) or None)
POP_KINDS: dict[str, tuple[type, Callable[[], Formulation], Callable[[Any, float | None], float | None] | None]] = {
    JointInstance.KIND: (JointInstance, JointFormulation, _joint_bound),
    TierInstance.KIND: (TierInstance, TierFormulation, lambda inst, _t: tier_relaxation_bound(inst)),
    TiresiasInstance.KIND: (TiresiasInstance, TiresiasFormulation, None),
}


def _solve_part(kind: str, sub: dict, backend: str, params: SolveParams) -> dict:
    inst = POP_KINDS[kind][0].from_dict(sub)
    if kind == JointInstance.KIND:  # exact two-stage (= the direct model when aggregation is exact)
        r = JointTwoStage().solve(inst, backend, params)
    else:
        r = solve(POP_KINDS[kind][1](), inst, backend, params)
    return {"termination": r.status.value, "solution": _encode(r.solution), "primal": r.bounds.primal,
            "dual": r.bounds.dual, "build_s": r.timing.build_s, "solve_s": r.timing.solve_s,
            "threads": r.provenance.threads, "version": r.provenance.backend_version, "message": r.termination.detail}


def _part_until(end: float | None, floor: float, kind: str, sub: dict, backend: str, params: SolveParams) -> dict:
    """One part, its limit cut to what is left until its round's ``end`` (``time.time()``, comparable
    across processes), never below ``floor``: a part that starts late because earlier ones overran
    (deserialisation and packing are outside a solver's limit) gets less, so the rounds' overruns do
    not add up (a 60 s POP k=16 took 99-121 s on 20,000 jobs before)."""
    if end is not None and params.time_limit_s is not None:
        params = params.with_(time_limit_s=max(floor, min(params.time_limit_s, end - time.time())))
    return _solve_part(kind, sub, backend, params)


class POP:
    """``POP(k).solve(inst, backend, params)``: partitioned solve of a joint, tier or Tiresias instance.
    The time limit is a wall-clock budget: each round of parts gets what is left, shared so that
    ``min(k, workers)`` parts run at a time; a part that starts late gets only what is left until its
    round's end (at least a quarter of its share)."""

    def __init__(self, k: int = 4, *, parallel: bool = False, workers: int | None = None) -> None:
        if k < 1:
            raise SolverError(f"POP needs k >= 1, got {k}")
        self.k, self.parallel, self.workers = k, parallel, workers

    def _run(self, kind: str, subs: list, backend: str, params: SolveParams, deadline: float | None) -> list[dict]:
        workers = min(len(subs), self.workers or params.effective_threads) if self.parallel else 1
        sub_params = params.with_(warm_start=None, threads=1 if workers > 1 else params.threads)
        n = len(subs)
        ends: list[float | None] = [None] * n
        floor = 0.05
        if deadline is not None:
            left = max(0.05, deadline - time.perf_counter())
            rounds = -(-n // workers)
            share = max(0.05, left / rounds)
            sub_params = sub_params.with_(time_limit_s=share)
            now, floor = time.time(), max(0.05, 0.25 * share)
            ends = [now + (i // workers + 1) * share for i in range(n)]  # part i runs in round i // workers
        payloads = [s.to_dict() for s in subs]
        if workers > 1:
            with ProcessPoolExecutor(max_workers=workers) as ex:
                return list(ex.map(_part_until, ends, [floor] * n, [kind] * n, payloads, [backend] * n,
                                   [sub_params] * n))
        return [_part_until(e, floor, kind, p, backend, sub_params) for e, p in zip(ends, payloads, strict=True)]

    def solve(self, inst: Any, backend: str = "cpsat", params: SolveParams | None = None) -> SolveResult:
        params = params or SolveParams()
        kind = inst.KIND
        _, form_f, bound_f = POP_KINDS[kind]
        form = form_f()
        t0 = time.perf_counter()
        deadline = None if params.time_limit_s is None else t0 + params.time_limit_s
        groups = partition_groups(inst, self.k, params.seed)
        shares = [1 / self.k] * self.k
        bound = None
        if bound_f is not None:  # the whole problem's relaxation, within a fifth of the budget
            bound = bound_f(inst, None if deadline is None else max(0.05, 0.2 * params.time_limit_s))
        build_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        parts = self._run(kind, [sub_instance(inst, js, ms, sh) for (js, ms), sh in zip(groups, shares, strict=True)],
                          backend, params, deadline)
        notes = []
        # a Tiresias part whose jobs exceed its free GPUs or CPUs leaves some out at the unplaced price (its
        # model has optional jobs, TiresiasFormulation.optional); where the whole places every job, such a
        # part is infeasible alone, as before optional jobs existed
        places_all = kind == TiresiasInstance.KIND and not TiresiasFormulation.optional(inst)

        def infeasible(i: int) -> bool:
            return parts[i]["termination"] == Status.INFEASIBLE.value or (
                places_all and TiresiasFormulation.optional(sub_instance(inst, *groups[i], shares[i])))

        while True:  # repair: merge an infeasible part with the freest other part, solve it again
            bad = next((i for i in range(len(parts)) if infeasible(i)), None)
            if bad is None or len(parts) == 1:
                break
            free = [sum(inst.base.capacity(m).gpus for m in ms) - sum(j.requested.gpus for j in js) for js, ms in groups]
            other = max((i for i in range(len(groups)) if i != bad), key=lambda i: free[i])
            merged = (groups[bad][0] + groups[other][0], groups[bad][1] + groups[other][1])
            share = shares[bad] + shares[other]
            notes.append(f"pop: part {bad} infeasible alone, merged with part {other} and solved again")
            keep = [i for i in range(len(groups)) if i not in (bad, other)]
            groups, shares = [groups[i] for i in keep] + [merged], [shares[i] for i in keep] + [share]
            parts = [parts[i] for i in keep] + self._run(kind, [sub_instance(inst, *merged, share)], backend, params,
                                                         deadline)
        solve_s = time.perf_counter() - t1
        terms = [Status(p["termination"]) for p in parts]
        limit_hit = any(t in (Status.FEASIBLE_AT_LIMIT, Status.NO_SOLUTION_AT_LIMIT) for t in terms)
        notes.insert(0, f"pop: k={self.k}, {len(parts)} part(s) solved, terminations: "
                        f"{', '.join(t.value for t in terms)}")
        sense = "min" if kind == TiresiasInstance.KIND or (kind == TierInstance.KIND and inst.mode is not TierMode.MAX_THROUGHPUT) \
            else "max"
        def provenance(stats: dict[str, int]) -> Provenance:
            return Provenance(f"pop-{form.name}", backend, parts[0]["version"], parts[0]["threads"], params.seed,
                              stats)

        def timing(verify_s: float = 0.0) -> Timing:
            return Timing(build_s=build_s, solve_s=solve_s, verify_s=verify_s, wall_s=time.perf_counter() - t0,
                          time_limit_s=params.time_limit_s)

        worst = max(terms, key=lambda t: t.severity)
        if not worst.has_solution:
            detail = "a part has no solution" if len(parts) > 1 else parts[0]["message"]
            return SolveResult(Termination.of(worst, detail), provenance({}),
                               Bounds(sense, rel_gap_tolerance=params.rel_gap), timing(), notes=tuple(notes))
        merged_sol = _merge(kind, [_decode(kind, p["solution"]) for p in parts])
        t2 = time.perf_counter()
        obj = form.objective(inst, merged_sol)
        viol = tuple(form.verify(inst, merged_sol))
        verify_s = time.perf_counter() - t2
        term = termination_of(Termination(Reason.OPTIMAL, Limit.UNDETERMINED if limit_hit else None), obj, bound,
                              params.rel_gap)
        return SolveResult(term, provenance({"parts": len(parts)}), Bounds(sense, obj, bound, params.rel_gap),
                           timing(verify_s), objective=obj, allocation=form.allocation_of(merged_sol),
                           solution=merged_sol, violations=viol, notes=tuple(notes))


__all__ = ["JOB_MAPS", "POP", "POP_KINDS", "partition", "partition_groups", "sub_instance"]
