"""Running snapshot cases: a :class:`GapCase` (one decision on a generated instance, by a policy in
snapshot form, a formulation on a backend, or a relaxation bound) and a :class:`BoundCase` (a policy
online against the offline bound valid for it).

Every allocation goes through :func:`schedlab.scheduling.verify.validate_allocation`; heuristic and exact
allocations are scored by the same function, the kind's objective (:class:`~schedlab.formulations.kinds.Kind`,
:func:`score`). The gap of a run is computed later against the best proven bound of its instance over the
methods whose role is ``exact`` or ``relaxation`` (:mod:`schedlab.benchmarks.harness.analysis`); a record
carries its role, its own bound (the solver's dual bound) and whether its termination proved optimality.
A bound case refuses a policy whose decision set is wider than the offline bound's (:func:`bound_refusal`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from schedlab.benchmarks.harness.cases import BoundCase, GapCase
from schedlab.formulations import (
    BOUND_METHOD,
    SolveParams,
    Status,
    relative_gap,
)
from schedlab.formulations.kinds import Capability, Role
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.registry import Decision, PolicyFamily, PolicySpec
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.errors import SpecError, Unsupported
from schedlab.topology.presets import load_cluster

if TYPE_CHECKING:
    from schedlab.formulations.kinds import Kind, KindRegistry, Method

#: online bound per ``PolicySpec.preemptive``: the method name of the offline bound valid for such
#: policies (``formulations.BOUND_METHOD``: ``offline-nonpreemptive`` / ``offline-preemptive``). A name
#: that is not registered falls back to the trivial bound ``JCT_j >= d_j`` and the record says so.
OFFLINE_BOUND_METHOD: Mapping[bool, str | None] = BOUND_METHOD

#: the method name of a kind's relaxation bound (``Kind.relaxation``: no solution, a proven bound)
LP_BOUND = "lp-bound"


def _kinds() -> KindRegistry:
    from schedlab.benchmarks.registry import all_kinds

    return all_kinds()


def offline_bound_method(preemptive: bool) -> str | None:
    """The offline-bound method valid for a (non-)preemptive policy, if registered."""
    name = OFFLINE_BOUND_METHOD.get(preemptive)
    return name if name in _kinds().methods else None


def bound_decisions(preemptive: bool) -> frozenset[Decision]:
    """What the offline bound lets a schedule decide: the offline kind's decision set (admission,
    placement, waiting; GPU counts and plans fixed at the request), plus preemption for the
    preemptive bound."""
    base = _kinds()["offline"].decisions
    return base | {Decision.PREEMPTION} if preemptive else base


def bound_refusal(spec: PolicySpec) -> str | None:
    """Why no offline bound is valid for ``spec`` (its decision set is wider than the bound's), or ``None``."""
    wider = sorted(d.value for d in (spec.decisions or frozenset()) - bound_decisions(spec.preemptive))
    if not wider:
        return None
    return (f"policy {spec.name!r} decides {', '.join(wider)}, which the offline bound does not (it assumes rigid "
            "jobs: GPU counts and plans fixed at the request); no bound valid for this policy exists yet")


def method_of(name: str) -> Method | None:
    return _kinds().methods.get(name)


def is_exact(method: str) -> bool:
    """A method whose role is ``exact`` (grows in size until it stops proving optimality); POP
    partitions are restrictions, never exact."""
    m = method_of(method)
    return m is not None and m.role is Role.EXACT


def method_role(method: str, backend: str | None) -> str:
    """``policy`` (snapshot form), ``relaxation`` (``lp-bound``), else the method's declared role."""
    if method == LP_BOUND:
        return Role.RELAXATION.value
    if backend is None:
        return "policy"
    m = method_of(method)
    return m.role.value if m is not None else "unknown"


def make_instance(kind: str, cluster: str, jobs: int, seed: int, generator: Mapping[str, Any]) -> Any:
    """A seeded instance of ``kind``; the generator options are validated (a wrong value is a
    :class:`SpecError` naming ``generator.FIELD``)."""
    k = _kinds().kind(kind, source="<gap case>")
    return k.generate(load_cluster(cluster), jobs, seed=seed, **dict(generator))


def score(kind: str, inst: Any, allocation: Allocation) -> float:
    """THE objective of ``kind`` on a plain allocation (a policy's snapshot decision; the Tiresias
    objective completes it with parameter servers by its stated rule)."""
    return _kinds()[kind].score(inst, allocation)


def _size(inst: Any) -> dict[str, Any]:
    return {"jobs": len(inst.base.jobs), "gpus": inst.base.cluster.total_gpus}


def run_gap(case: GapCase, *, threads: int = 1) -> dict[str, Any]:
    """One gap case -> the result fields of its record (see :mod:`schedlab.benchmarks.harness.record`)."""
    t0 = time.perf_counter()
    kinds = _kinds()
    kind = kinds.kind(case.kind, source=f"<case {case.label}>")
    inst = make_instance(case.kind, case.cluster, case.jobs, case.seed, case.generator)
    gen_s = time.perf_counter() - t0
    role = method_role(case.method, case.backend)
    out: dict[str, Any] = {"role": role, "generate_s": gen_s, "sense": kind.sense(inst), **_size(inst),
                           "objective_name": kind.objective_name,
                           "neutral_name": None if kind.neutral is None else kind.neutral.name}
    if case.method == LP_BOUND:
        return out | {"decision_set": kind.name} | _relaxation(kind, inst, case)
    if role == "policy":
        return out | _policy(kind, inst, case)
    method = kinds.method(case.method, source=f"<case {case.label}>")
    return out | {"decision_set": kind.decision_set_of(method)} | _method(kind, method, inst, case, threads)


def _neutral(kind: Kind, inst: Any, allocation: Allocation | None) -> float | None:
    return None if allocation is None or kind.neutral is None else kind.neutral.fn(inst, allocation)


def _relaxation(kind: Kind, inst: Any, case: GapCase) -> dict[str, Any]:
    if kind.relaxation is None:
        raise SpecError(f"{LP_BOUND} has no relaxation for {case.kind!r}", source=f"<case {case.label}>",
                        field="method")
    t1 = time.perf_counter()
    b = kind.relaxation(inst, case.backend)
    return {"status": "bound" if b is not None else "error", "bound": b, "solve_s": time.perf_counter() - t1,
            "build_s": 0.0, "threads": 1, "message": "" if b is not None else "relaxation not solved"}


def _policy(kind: Kind, inst: Any, case: GapCase) -> dict[str, Any]:
    from schedlab.benchmarks.registry import all_policies

    spec = all_policies().spec(case.method, source=f"<case {case.label}>")
    t1 = time.perf_counter()
    policy = spec.build(case.params, seed=case.seed, source=f"<case {case.label}>")
    t2 = time.perf_counter()
    alloc = policy.decide(inst.base, seed=case.seed)
    first = time.perf_counter() - t2
    decide_s, repeats = time_decide(spec, case, inst)
    bad = [str(v) for v in validate_allocation(inst.base, alloc)] or kind.violations(inst, alloc)
    twin = kind.twin_for(spec.decisions)
    return {"build_s": t2 - t1, "solve_s": decide_s, "first_call_s": first, "decide_repeats": repeats,
            "threads": 1, "violations": bad, "verified": not bad,
            "placed": len(alloc), "status": "ok" if not bad else "invalid",
            "decision_set": kind.decision_set_of(twin), "twin": None if twin is None else twin.name,
            # an exact policy (exact-joint) solves the twin itself: a check (its gap must be 0), not a result
            "check": spec.family is PolicyFamily.EXACT,
            "objective": kind.score(inst, alloc) if not bad else None,
            "neutral_objective": _neutral(kind, inst, alloc) if not bad else None}


#: warm ``decide()`` calls timed per policy run (at most; fewer once :data:`DECIDE_BUDGET_S` is spent)
DECIDE_REPEATS = 5
#: seconds of warm ``decide()`` calls after which no further repeat is timed
DECIDE_BUDGET_S = 0.2


def time_decide(spec: PolicySpec, case: GapCase, inst: Any) -> tuple[float, int]:
    """A policy's runtime: the median wall time of ``decide()`` over warm calls inside the worker, each on a
    freshly built policy (no state carried between calls), after the first call that the record keeps apart
    as ``first_call_s`` (a fresh process's lazy imports and caches: process start, not the decision).
    Returns ``(median seconds, calls timed)``; at most :data:`DECIDE_REPEATS` calls, fewer once
    :data:`DECIDE_BUDGET_S` seconds are spent (at least one)."""
    times: list[float] = []
    while len(times) < DECIDE_REPEATS and (not times or sum(times) < DECIDE_BUDGET_S):
        policy = spec.build(case.params, seed=case.seed, source=f"<case {case.label}>")
        t0 = time.perf_counter()
        policy.decide(inst.base, seed=case.seed)
        times.append(time.perf_counter() - t0)
    times.sort()
    mid = len(times) // 2
    return (times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])), len(times)


def _method(kind: Kind, method: Method, inst: Any, case: GapCase, threads: int) -> dict[str, Any]:
    if method.kind != case.kind:
        raise SpecError(f"method {case.method!r} solves {method.kind!r} instances, not {case.kind!r}",
                        source=f"<case {case.label}>", field="method")
    opts = method.parse_options(case.params, source=f"<case {case.label}>")
    params = SolveParams(time_limit_s=case.time_limit_s, threads=threads, seed=case.seed, **opts.solve_fields())
    start, start_note = warm_start(method, inst, case, opts.warm_start)
    if start is not None:
        params = params.with_(warm_start=start)
    try:
        res = method.solve(inst, case.backend, params)
    except Unsupported as e:
        return {"status": "unsupported", "message": str(e), "warm_start": opts.warm_start}
    objective = None
    bad = list(res.violations or ())
    if res.solution is not None:
        objective = kind.objective(inst, res.solution)
        if res.allocation is not None:
            bad += [str(v) for v in validate_allocation(inst.base, res.allocation) if str(v) not in bad]
    return {"status": res.status.value, "objective": objective if not bad else None, "bound": res.bounds.dual,
            "primal": res.bounds.primal, "own_gap": relative_gap(objective, res.bounds.dual),
            "proven": res.status is Status.OPTIMAL, "build_s": res.timing.build_s, "solve_s": res.timing.solve_s,
            "threads": res.provenance.threads if res.provenance.threads is not None else params.effective_threads,
            "backend_version": res.provenance.backend_version, "violations": bad,
            "verified": None if res.solution is None else not bad, "message": res.termination.detail,
            "notes": [*start_note, *res.notes], "model": dict(res.provenance.model_stats),
            "placed": None if res.allocation is None else len(res.allocation), "warm_start": opts.warm_start,
            "warm_start_used": False if start_note else res.provenance.warm_start_used,
            "neutral_objective": _neutral(kind, inst, res.allocation) if objective is not None and not bad else None}


def warm_start(method: Method, inst: Any, case: GapCase, policy: str | None) -> tuple[Allocation | None, list[str]]:
    """The warm start a case asks for (``params.warm_start: POLICY``): the policy's snapshot decision
    ``decide(inst.base, seed=case.seed)`` when the method declares the warm-start capability; else no
    start and a note saying why (the record's ``warm_start_used`` is then False)."""
    if policy is None:
        return None, []
    from schedlab.benchmarks.registry import all_policies

    spec = all_policies().spec(policy, source=f"<case {case.label}> params.warm_start")
    if Capability.WARM_START not in method.capabilities:
        return None, [f"warm start from {policy} not given: method {method.name!r} declares no warm-start capability"]
    return spec.build({}, seed=case.seed, source=f"<case {case.label}>").decide(inst.base, seed=case.seed), []


def online_value(objective: str, jobs: list) -> float:
    """``offline_objective`` on online job records: mean ``end - arrival`` or ``max end``."""
    if not jobs:
        return 0.0
    if objective == "makespan":
        return max(r.end for r in jobs)
    return sum(r.end - r.arrival for r in jobs) / len(jobs)


def trivial_bound(inst: Any) -> float:
    """Valid for any schedule of rigid jobs, preemptive or not: ``JCT_j >= d_j`` (avg JCT) and
    ``end_j >= r_j + d_j`` (makespan)."""
    jobs = inst.base.jobs
    if not jobs:
        return 0.0
    if inst.objective == "makespan":
        return max(j.arrival + j.duration for j in jobs)
    return sum(j.duration for j in jobs) / len(jobs)


def run_bound(case: BoundCase, *, threads: int = 1) -> dict[str, Any]:
    """The policy online (Tiresias semantics: speed independent of placement, free preemption, as the
    bound assumes) and the offline bound valid for it."""
    from schedlab.benchmarks.registry import all_policies
    from schedlab.benchmarks.simulator import Simulator

    t0 = time.perf_counter()
    spec = all_policies().spec(case.policy, source=f"<case {case.label}>")
    why = bound_refusal(spec)
    if why is not None:
        raise SpecError(why, source=f"<case {case.label}>", field="policy")
    inst = make_instance("offline", case.cluster, case.jobs, case.seed, case.generator)
    policy = spec.build(case.params, seed=case.seed, source=f"<case {case.label}>")
    t1 = time.perf_counter()
    sim = Simulator(inst.base.cluster, inst.base.jobs, policy, semantics="tiresias").run()
    t2 = time.perf_counter()
    online = online_value(inst.objective, list(sim.jobs))
    method = offline_bound_method(spec.preemptive)
    out: dict[str, Any] = {"role": "online", "generate_s": t1 - t0, "solve_s": t2 - t1, "objective": online,
                           "sense": "min", "preemptive": spec.preemptive, "bound_objective": inst.objective,
                           "unfinished": len(sim.unfinished), "metrics": dict(sim.metrics), **_size(inst),
                           # what the gap is measured in: the offline objective, over the bound's decision set
                           "objective_name": "makespan [s]" if inst.objective == "makespan" else "average JCT [s]",
                           "decision_set": "offline (rigid jobs" + (", preemptive)" if spec.preemptive else ")")}
    if method is None:
        b = trivial_bound(inst)
        out.update(bound=b, bound_method="trivial", bound_status="valid (JCT >= duration); not the optimum",
                   proven=False, status="ok", build_s=0.0, threads=1)
    else:
        res = _kinds().methods[method].solve(inst, case.backend, SolveParams(time_limit_s=case.time_limit_s,
                                                                             threads=threads, seed=case.seed))
        out.update(bound=res.bounds.dual, bound_method=f"{method}@{res.provenance.backend}", bound_status=res.status.value,
                   proven=res.status is Status.OPTIMAL, status="ok" if res.bounds.dual is not None
                   else "no-bound", build_s=res.timing.build_s, bound_solve_s=res.timing.solve_s, threads=res.provenance.threads,
                   backend_version=res.provenance.backend_version)
    out["own_gap"] = relative_gap(online, out["bound"])
    out["verified"] = not sim.unfinished
    return out


__all__ = ["LP_BOUND", "OFFLINE_BOUND_METHOD", "bound_decisions", "bound_refusal", "is_exact", "make_instance",
           "method_of", "method_role", "offline_bound_method", "online_value", "run_bound", "run_gap", "score",
           "time_decide", "trivial_bound", "warm_start"]
