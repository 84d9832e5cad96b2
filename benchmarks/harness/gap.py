"""Running snapshot cases: a :class:`GapCase` (one decision on a generated instance, by a policy in
snapshot form, a formulation on a backend, or a relaxation bound) and a :class:`BoundCase` (a policy
online against the offline bound valid for it).

Every allocation goes through :func:`schedlab.scheduling.verify.validate_allocation`; heuristic and exact
allocations are scored by the same function, ``formulations.OBJECTIVES[kind]`` (:func:`score`). The gap
of a run is computed later against the best proven bound of its instance over every method of the
sweep (:mod:`schedlab.benchmarks.harness.analysis`); a record carries its own bound (exact methods:
the solver's dual bound) and whether its termination proved optimality.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

from schedlab.benchmarks.harness.cases import BoundCase, GapCase
from schedlab.formulations import (
    BOUND_METHOD,
    GENERATORS,
    METHODS,
    OBJECTIVES,
    SolveParams,
    Termination,
    relative_gap,
)
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.errors import SolverError, SpecError
from schedlab.topology.presets import load_cluster

#: online bound per ``PolicySpec.preemptive``: the METHODS name of the offline bound valid for such
#: policies (``formulations.BOUND_METHOD``: ``offline-nonpreemptive`` / ``offline-preemptive``). A name
#: that is not in ``METHODS`` falls back to the trivial bound ``JCT_j >= d_j`` and the record says so.
OFFLINE_BOUND_METHOD: Mapping[bool, str | None] = BOUND_METHOD

#: the method name of a relaxation bound (no solution, a proven bound) for the kinds in :data:`RELAXATIONS`
LP_BOUND = "lp-bound"


def _joint_lp(inst: Any, backend: str | None) -> tuple[float | None, str]:
    from schedlab.formulations.joint import relaxation_bound

    return relaxation_bound(inst, backend or "highs"), "max"


def _tier_lp(inst: Any, backend: str | None) -> tuple[float | None, str]:
    from schedlab.formulations.tier import TierMode, tier_relaxation_bound

    return tier_relaxation_bound(inst), "min" if inst.mode is TierMode.MIN_OVERHEAD else "max"


#: instance kind -> relaxation bound ``(instance, backend) -> (bound or None, sense)`` (the ``lp-bound``
#: method: a proven bound, no solution)
RELAXATIONS: dict[str, Callable[[Any, str | None], tuple[float | None, str]]] = {"joint": _joint_lp,
                                                                                  "tier-placement": _tier_lp}

SOLVE_PARAMS = frozenset(f.name for f in fields(SolveParams)) - {"time_limit_s", "threads", "seed", "warm_start",
                                                                 "verbose"}


def offline_bound_method(preemptive: bool) -> str | None:
    """The offline-bound method valid for a (non-)preemptive policy, if registered."""
    name = OFFLINE_BOUND_METHOD.get(preemptive)
    return name if name in METHODS else None


def is_exact(method: str) -> bool:
    """A formulation solved to a proof (grows in size until it stops proving optimality); POP
    partitions are not (their merged solution is never proven unless it meets the bound)."""
    return method in METHODS and not method.startswith("pop-")


def method_role(method: str, backend: str | None) -> str:
    """``policy`` (snapshot form), ``bound`` (relaxation), ``exact`` or ``pop``."""
    if method == LP_BOUND:
        return "bound"
    if backend is None:
        return "policy"
    return "exact" if is_exact(method) else "pop"


def make_instance(kind: str, cluster: str, jobs: int, seed: int, generator: Mapping[str, Any]) -> Any:
    if kind not in GENERATORS:
        raise SpecError(f"unknown instance kind {kind!r}; known: {', '.join(GENERATORS)}", source="<gap case>",
                        field="kind")
    return GENERATORS[kind](load_cluster(cluster), jobs, seed=seed, **dict(generator))


def score(kind: str, inst: Any, allocation: Allocation) -> float:
    """THE objective of ``kind`` (``OBJECTIVES``) on a plain allocation (a policy's snapshot decision;
    the Tiresias objective completes it with parameter servers by its stated rule)."""
    return OBJECTIVES[kind](inst, allocation)


def _size(inst: Any) -> dict[str, Any]:
    return {"jobs": len(inst.base.jobs), "gpus": inst.base.cluster.total_gpus}


def run_gap(case: GapCase, *, threads: int = 1) -> dict[str, Any]:
    """One gap case -> the result fields of its record (see :mod:`schedlab.benchmarks.harness.record`)."""
    t0 = time.perf_counter()
    inst = make_instance(case.kind, case.cluster, case.jobs, case.seed, case.generator)
    gen_s = time.perf_counter() - t0
    role = method_role(case.method, case.backend)
    out: dict[str, Any] = {"role": role, "generate_s": gen_s, **_size(inst)}
    if role == "bound":
        if case.kind not in RELAXATIONS:
            raise SpecError(f"{LP_BOUND} has no relaxation for {case.kind!r} (it has: {', '.join(RELAXATIONS)})",
                            source=f"<case {case.label}>", field="method")
        t1 = time.perf_counter()
        b, sense = RELAXATIONS[case.kind](inst, case.backend)
        out.update(status="bound" if b is not None else "error", bound=b, sense=sense, solve_s=time.perf_counter() - t1,
                   build_s=0.0, threads=1, message="" if b is not None else "relaxation not solved")
        return out
    if role == "policy":
        from schedlab.benchmarks.registry import all_policies

        spec = all_policies().spec(case.method, source=f"<case {case.label}>")
        t1 = time.perf_counter()
        policy = spec.build(case.params, seed=case.seed, source=f"<case {case.label}>")
        t2 = time.perf_counter()
        alloc = policy.decide(inst.base, seed=case.seed)
        t3 = time.perf_counter()
        bad = [str(v) for v in validate_allocation(inst.base, alloc)]
        out.update(build_s=t2 - t1, solve_s=t3 - t2, threads=1, violations=bad, verified=not bad,
                   placed=len(alloc), status="ok" if not bad else "invalid",
                   objective=score(case.kind, inst, alloc) if not bad else None)
        return out
    if case.method not in METHODS:
        raise SpecError(f"unknown method {case.method!r}; known: {', '.join(METHODS)}", source=f"<case {case.label}>",
                        field="method")
    kind, solver = METHODS[case.method]
    if kind != case.kind:
        raise SpecError(f"method {case.method!r} solves {kind!r} instances, not {case.kind!r}",
                        source=f"<case {case.label}>", field="method")
    extra = {k: v for k, v in case.params.items() if k in SOLVE_PARAMS}
    params = SolveParams(time_limit_s=case.time_limit_s, threads=threads, seed=case.seed, **extra)
    try:
        res = solver(inst, case.backend, params)
    except SolverError as e:
        if "lacks" in str(e) or "unavailable" in str(e):
            out.update(status="unsupported", message=str(e))
            return out
        raise
    objective = None
    bad = list(res.violations or ())
    if res.solution is not None:
        objective = OBJECTIVES[kind](inst, res.solution)
        if res.allocation is not None:
            bad += [str(v) for v in validate_allocation(inst.base, res.allocation) if str(v) not in bad]
    out.update(status=res.termination.value, objective=objective if not bad else None, bound=res.dual_bound,
               primal=res.primal_bound, sense=res.sense, own_gap=relative_gap(objective, res.dual_bound),
               proven=res.termination is Termination.OPTIMAL, build_s=res.build_s, solve_s=res.solve_s,
               threads=res.threads if res.threads is not None else params.effective_threads,
               backend_version=res.backend_version, violations=bad,
               verified=None if res.solution is None else not bad, message=res.message,
               notes=list(res.notes), model=dict(res.model_stats),
               placed=None if res.allocation is None else len(res.allocation))
    return out


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
    inst = make_instance("offline", case.cluster, case.jobs, case.seed, case.generator)
    spec = all_policies().spec(case.policy, source=f"<case {case.label}>")
    policy = spec.build(case.params, seed=case.seed, source=f"<case {case.label}>")
    t1 = time.perf_counter()
    sim = Simulator(inst.base.cluster, inst.base.jobs, policy, semantics="tiresias").run()
    t2 = time.perf_counter()
    online = online_value(inst.objective, list(sim.jobs))
    method = offline_bound_method(spec.preemptive)
    out: dict[str, Any] = {"role": "online", "generate_s": t1 - t0, "solve_s": t2 - t1, "objective": online,
                           "sense": "min", "preemptive": spec.preemptive, "bound_objective": inst.objective,
                           "unfinished": len(sim.unfinished), "metrics": dict(sim.metrics), **_size(inst)}
    if method is None:
        b = trivial_bound(inst)
        out.update(bound=b, bound_method="trivial", bound_status="valid (JCT >= duration); not the optimum",
                   proven=False, status="ok", build_s=0.0, threads=1)
    else:
        res = METHODS[method][1](inst, case.backend, SolveParams(time_limit_s=case.time_limit_s, threads=threads,
                                                                seed=case.seed))
        out.update(bound=res.dual_bound, bound_method=f"{method}@{res.backend}", bound_status=res.termination.value,
                   proven=res.termination is Termination.OPTIMAL, status="ok" if res.dual_bound is not None
                   else "no-bound", build_s=res.build_s, bound_solve_s=res.solve_s, threads=res.threads,
                   backend_version=res.backend_version)
    out["own_gap"] = relative_gap(online, out["bound"])
    out["verified"] = not sim.unfinished
    return out


__all__ = ["LP_BOUND", "OFFLINE_BOUND_METHOD", "RELAXATIONS", "is_exact", "make_instance", "method_role",
           "offline_bound_method", "online_value", "run_bound", "run_gap", "score", "trivial_bound"]
