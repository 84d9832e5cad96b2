"""The gap case: one snapshot decision on a generated instance of a formulation kind, by a policy in
snapshot form, a formulation method on a backend, or the kind's relaxation bound.

Every allocation goes through :func:`schedlab.scheduling.verify.validate_allocation`; heuristic and exact
allocations are scored by the same function, the kind's objective (:class:`~schedlab.formulations.kinds.Kind`,
:func:`score`). The gap of a run is computed later against the best proven bound of its instance over the
methods whose role is ``exact`` or ``relaxation`` (:mod:`schedlab.benchmarks.harness.analysis`); a record
carries its role, its own bound (the solver's dual bound) and whether its termination proved optimality.
The online-vs-offline-bound case is :mod:`~schedlab.benchmarks.harness.bound`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from schedlab.benchmarks.harness.casebase import (
    CaseInfo,
    SolverLimited,
    case_key,
    check_size,
    frozen,
    plain,
    sized_label,
    state_tag,
    with_params,
)
from schedlab.benchmarks.harness.horizon_score import simulate_policy
from schedlab.benchmarks.harness.instance_cache import cached
from schedlab.benchmarks.harness.record import Outcome, Status
from schedlab.benchmarks.harness.states import check_state, state_instance
from schedlab.benchmarks.harness.validate import bad, check_backend, check_cluster, check_policy
from schedlab.benchmarks.registry import all_kinds, all_policies
from schedlab.formulations import SolveParams, relative_gap
from schedlab.formulations import Status as SolveStatus
from schedlab.formulations.kinds import Capability, Role
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.registry import PolicyFamily, PolicySpec
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.errors import SpecError, Unsupported
from schedlab.topology.presets import load_cluster

if TYPE_CHECKING:
    from schedlab.formulations.kinds import Kind, Method

#: the method name of a kind's relaxation bound (``Kind.relaxation``: no solution, a proven bound)
LP_BOUND = "lp-bound"


@dataclass(frozen=True)
class GapCase(SolverLimited):
    """One snapshot decision on a generated instance of ``kind`` (``Kind.generate``, ``generator``: its typed
    options): ``method`` is a registered policy (``backend=None``, configured by ``policy_params``) or a
    method of the kind solved on ``backend`` within ``time_limit_s`` of wall-clock time (configured by
    ``solver_params``: ``rel_gap``, ``node_limit``, ``warm_start``, ...). With ``state``, the instance is a
    decision state sampled from a replay (:mod:`~schedlab.benchmarks.harness.states`: ``{"workload",
    "policy", "index"[, "load", "k", "replay_seed"]}``, replayed on ``cluster``, sampled with ``seed``)."""

    TYPE: ClassVar[str] = "gap"

    kind: str
    cluster: str
    jobs: int
    method: str
    backend: str | None = None
    seed: int = 0
    policy_params: Mapping[str, Any] = field(default_factory=dict)
    solver_params: Mapping[str, Any] = field(default_factory=dict)
    generator: Mapping[str, Any] = field(default_factory=dict)
    time_limit_s: float = 60.0
    label: str = ""
    state: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("policy_params", "solver_params", "generator", "state"):
            object.__setattr__(self, name, frozen(getattr(self, name)))
        check_size(self.jobs, self.time_limit_s, "<gap case>")
        wrong = "policy_params" if self.backend is not None else "solver_params"
        if getattr(self, wrong):
            raise SpecError(f"a {'formulation on a backend' if self.backend else 'policy'} takes no {wrong}",
                            source=f"<gap case {self.method}>", field=wrong)
        if not self.label:
            who = with_params(self.method if self.backend is None else f"{self.method}@{self.backend}", self.params)
            object.__setattr__(self, "label", self.instance_id() + f"/{who}")

    @property
    def params(self) -> Mapping[str, Any]:
        """The parameters that apply: a policy's, or the solver's for a formulation on a backend."""
        return self.solver_params if self.backend is not None else self.policy_params

    def spec(self) -> dict[str, Any]:
        """Plain data: the fields, the two parameter sets as the one ``params`` that applies."""
        d = plain(self)
        d.pop("policy_params")
        d.pop("solver_params")
        return d | {"params": plain(self.params)}

    @classmethod
    def from_spec(cls, d: Mapping[str, Any]) -> GapCase:
        d = dict(d)
        params = d.pop("params", None) or {}
        which = "solver_params" if d.get("backend") is not None else "policy_params"
        return cls(**d, **{which: params})

    def key(self) -> str:
        return case_key("gap", self.spec())

    def instance_id(self) -> str:
        if self.state:
            return sized_label(self.kind, self.cluster, None, self.seed, self.generator, state=state_tag(self.state))
        return sized_label(self.kind, self.cluster, self.jobs, self.seed, self.generator)

    def info(self) -> CaseInfo:
        return CaseInfo(self.method, self.backend, self.params, self.kind, self.cluster, self.jobs, self.seed,
                        self.time_limit_s)

    def ladder(self) -> tuple | None:
        """The series an exact method grows along (sizes, until it stops proving optimality), else None."""
        if self.backend is None or not is_exact(self.method):
            return None
        return (self.kind, self.cluster, json.dumps(dict(self.generator), sort_keys=True, default=str), self.method,
                self.backend, json.dumps(dict(self.params), sort_keys=True, default=str), self.time_limit_s)

    def check(self) -> None:
        check_gap(self)

    def run(self, *, threads: int = 1, out_dir: str | None = None) -> Outcome:
        return run_gap(self, threads=threads)


def check_gap(case: GapCase) -> None:
    kinds = all_kinds()
    kind = kinds.kind(case.kind, source="<case>")
    check_cluster(case.cluster)
    kind.parse_options(case.generator, source="<case>")
    if case.state:
        st = check_state(case.kind, case.state, source="<case>")
        check_policy(str(st["policy"]), {}, field="state.policy")
    check_backend(case.backend)
    if case.method == LP_BOUND:
        if kind.relaxation is None:
            have = ", ".join(k for k, v in kinds.items() if v.relaxation is not None)
            raise bad("method", f"{LP_BOUND} has no relaxation for {case.kind!r} (it has: {have})")
        return
    if case.backend is None:
        if not kind.snapshot and case.kind not in SIMULATED:
            raise bad("method", f"a policy answers {case.kind} instances online: declare a bound case instead")
        if case.method in kinds.methods:
            raise bad("backend", f"formulation {case.method!r} needs a backend")
        check_policy(case.method, case.params, "method")
        return
    if case.method not in kinds.methods:
        raise bad("method", f"unknown method {case.method!r}; formulations: {', '.join(kinds.methods)}, or "
                  f"{LP_BOUND}; a policy takes no backend")
    method = kinds.methods[case.method]
    if method.kind != case.kind:
        raise bad("method", f"method {case.method!r} solves {method.kind!r} instances, not {case.kind!r}")
    opts = method.parse_options(case.params, source="<case>")
    if opts.warm_start is not None:
        check_policy(opts.warm_start, {}, "params.warm_start")


def method_of(name: str) -> Method | None:
    return all_kinds().methods.get(name)


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
    k = all_kinds().kind(kind, source="<gap case>")
    return k.generate(load_cluster(cluster), jobs, seed=seed, **dict(generator))


def score(kind: str, inst: Any, allocation: Allocation) -> float:
    """THE objective of ``kind`` on a plain allocation (a policy's snapshot decision; the Tiresias
    objective completes it with parameter servers by its stated rule)."""
    return all_kinds()[kind].score(inst, allocation)


def instance_size(inst: Any) -> dict[str, Any]:
    return {"jobs": len(inst.base.jobs), "gpus": inst.base.cluster.total_gpus}


def run_gap(case: GapCase, *, threads: int = 1) -> Outcome:
    """One gap case -> its :class:`~schedlab.benchmarks.harness.record.Outcome`."""
    t0 = time.perf_counter()
    kinds = all_kinds()
    kind = kinds.kind(case.kind, source=f"<case {case.label}>")
    inst, origin, hit = case_instance(case)
    role = method_role(case.method, case.backend)
    common = {"role": role, "sense": kind.sense(inst), **instance_size(inst)}
    extra = {"generate_s": time.perf_counter() - t0, "instance_cached": hit, **origin,
             "objective_name": kind.objective_name, "neutral_name": None if kind.neutral is None else kind.neutral.name}
    if case.method == LP_BOUND:
        fields, more = _relaxation(kind, inst, case)
        extra["decision_set"] = kind.name
    elif role == "policy":
        fields, more = _policy(kind, inst, case) if kind.snapshot else _simulated_policy(kind, inst, case)
    else:
        method = kinds.method(case.method, source=f"<case {case.label}>")
        extra["decision_set"] = kind.decision_set_of(method)
        fields, more = _method(kind, method, inst, case, threads)
    return Outcome(**common, **fields, extra=extra | more)


def case_instance(case: GapCase) -> tuple[Any, dict[str, Any], bool]:
    """The instance a gap case answers — generated (``Kind.generate``) or, with ``case.state``, a decision
    state sampled from a replay (:mod:`~schedlab.benchmarks.harness.states`) — with its provenance
    (``instance_source``, a state's ``origin``) and whether it came from the instance cache
    (:mod:`~schedlab.benchmarks.harness.instance_cache`: every method of a sweep answers the same one)."""
    what = {"kind": case.kind, "cluster": case.cluster, "jobs": case.jobs, "seed": case.seed,
            "generator": dict(case.generator), "state": dict(case.state)}
    if case.state:  # a decision state a replay met, not a generated instance
        what.pop("jobs")
        return cached(what, lambda: state_instance(case.kind, case.cluster, case.state, case.seed, case.generator,
                                                   source=f"<case {case.label}>"))
    return cached(what, lambda: (make_instance(case.kind, case.cluster, case.jobs, case.seed, case.generator),
                                 {"instance_source": "generated"}))


def _neutral(kind: Kind, inst: Any, allocation: Allocation | None, solution: Any = None) -> float | None:
    """The neutral objective of an allocation; of a solver's ``solution`` where the kind's neutral objective
    scores solutions (``Objective.scores_solution``: Tiresias, whose solution carries its PS hosts)."""
    if allocation is None or kind.neutral is None:
        return None
    if solution is not None and kind.neutral.scores_solution:
        return kind.neutral.fn(inst, solution)
    return kind.neutral.fn(inst, allocation)


Parts = tuple[dict[str, Any], dict[str, Any]]  # (Outcome fields, extra)


def _relaxation(kind: Kind, inst: Any, case: GapCase) -> Parts:
    if kind.relaxation is None:
        raise SpecError(f"{LP_BOUND} has no relaxation for {case.kind!r}", source=f"<case {case.label}>",
                        field="method")
    t1 = time.perf_counter()
    b = kind.relaxation(inst, case.backend)
    return {"status": Status.BOUND if b is not None else Status.ERROR, "bound": b,
            "solve_s": time.perf_counter() - t1, "build_s": 0.0, "threads": 1,
            "message": "" if b is not None else "relaxation not solved"}, {}


def _policy(kind: Kind, inst: Any, case: GapCase) -> Parts:
    spec = all_policies().spec(case.method, source=f"<case {case.label}>")
    t1 = time.perf_counter()
    policy = spec.build(case.params, seed=case.seed, source=f"<case {case.label}>")
    t2 = time.perf_counter()
    alloc = policy.decide(inst.base, seed=case.seed)
    first = time.perf_counter() - t2
    # a decision that takes seconds (exact-joint) is not timed again: a fresh process's warm-up is noise there
    decide_s, repeats = (first, 0) if first >= SLOW_DECIDE_S else time_decide(spec, case, inst)
    wrong = [str(v) for v in validate_allocation(inst.base, alloc)] or kind.violations(inst, alloc)
    # a configurable exact policy (exact-joint decisions=rigid) says what this configuration decides
    twin = kind.twin_for(getattr(policy, "decisions", None) or spec.decisions)
    return ({"build_s": t2 - t1, "solve_s": decide_s, "threads": 1, "violations": wrong, "verified": not wrong,
             "status": Status.OK if not wrong else Status.INVALID,
             "objective": kind.score(inst, alloc) if not wrong else None},
            {"first_call_s": first, "decide_repeats": repeats, "placed": len(alloc), "decision_set": kind.decision_set_of(twin), "twin": None if twin is None else twin.name,
             **_check(spec, policy, inst), "neutral_objective": _neutral(kind, inst, alloc) if not wrong else None})


def _check(spec: Any, policy: Any, inst: Any = None) -> dict[str, Any]:
    """Whether a policy row is a check: an exact policy (exact-joint) that solved the twin itself under the
    family objective, to proven optimality, so its gap must be 0. Not a check (a result, with the reason
    in ``notes``): the neutral objective; a solve stopped at a limit; a decision re-solved with the
    preempted jobs holding their resources (exact-joint ``preemption=re-solve``: "preempt now, start
    later", which no one-decision model credits); on an instance with running jobs, a solve under another
    holding rule (``hold_preempted``: a replay state has the simulator's) or another reconfiguration
    penalty than ``inst``'s (the policy's last solved instance, ``last_instance``, says which)."""
    if spec.family is not PolicyFamily.EXACT or getattr(policy, "objective_name", "family") != "family":
        return {"check": False}
    if getattr(policy, "counters", {}).get("re-solved:preemption", 0):
        return {"check": False, "notes": ["not a check: re-solved with preempted jobs holding their resources "
                                          "until their checkpoint (preemption=re-solve), not the twin's model"]}
    last = getattr(policy, "last_result", None)
    if last is not None and last.status is not SolveStatus.OPTIMAL:
        return {"check": False, "notes": [f"not a check: its solve ended {last.status.value}, not optimal"]}
    solved = getattr(policy, "last_instance", None)
    base = getattr(inst, "base", None)
    if solved is not None and base is not None and len(base.current):
        for name, what in (("hold_preempted", "holding rule"), ("reconfig_penalty", "reconfiguration penalty")):
            mine, theirs = getattr(solved, name, None), getattr(inst, name, None)
            if mine != theirs:
                return {"check": False, "notes": [f"not a check: solved with {what} {mine}, the instance's is "
                                                  f"{theirs}"]}
    return {"check": True}


def _horizon_score(inst: Any, policy: Any, name: str) -> tuple[Any, list[str], list[str]]:
    sc = simulate_policy(inst, policy, name=name)
    wrong = [n.removeprefix("violation: ") for n in sc.notes if n.startswith("violation: ")]
    return sc.objective, wrong, [n for n in sc.notes if not n.startswith("violation: ")]


#: kinds a policy answers by being replayed over the instance (not in snapshot form), with the scorer:
#: ``(instance, policy, name) -> (objective, violations, notes)`` on the kind's own objective
SIMULATED: Mapping[str, Any] = {"horizon-wait": _horizon_score}


def _simulated_policy(kind: Kind, inst: Any, case: GapCase) -> Parts:
    """A policy on a kind it answers over time (``horizon-wait``: replayed slot by slot by
    :func:`~schedlab.benchmarks.harness.horizon_score.simulate_policy`, one policy object for the whole
    horizon, scored by the kind's objective). ``solve_s`` is the whole replay."""
    scorer = SIMULATED.get(case.kind)
    if scorer is None:
        raise SpecError(f"a policy answers {case.kind} instances online: declare a bound case instead",
                        source=f"<case {case.label}>", field="method")
    spec = all_policies().spec(case.method, source=f"<case {case.label}>")
    t1 = time.perf_counter()
    policy = spec.build(case.params, seed=case.seed, source=f"<case {case.label}>")
    t2 = time.perf_counter()
    objective, wrong, notes = scorer(inst, policy, case.method)
    twin = kind.exact_method()
    return ({"build_s": t2 - t1, "solve_s": time.perf_counter() - t2, "threads": 1, "violations": wrong,
             "verified": not wrong, "status": Status.OK if not wrong else Status.INVALID,
             "objective": objective if not wrong else None},
            {"notes": notes, "decision_set": kind.name, "twin": None if twin is None else twin.name, "check": False})


#: warm ``decide()`` calls timed per policy run (at most; fewer once :data:`DECIDE_BUDGET_S` is spent)
DECIDE_REPEATS = 5
#: seconds of warm ``decide()`` calls after which no further repeat is timed
DECIDE_BUDGET_S = 0.2
#: a first ``decide()`` call at least this long is the runtime itself (``decide_repeats`` 0): the process's
#: warm-up (lazy imports, ~0.3 s) is small beside it and a repeat would double the run
SLOW_DECIDE_S = 2.0


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


def _method(kind: Kind, method: Method, inst: Any, case: GapCase, threads: int) -> Parts:
    if method.kind != case.kind:
        raise SpecError(f"method {case.method!r} solves {method.kind!r} instances, not {case.kind!r}",
                        source=f"<case {case.label}>", field="method")
    opts = method.parse_options(case.params, source=f"<case {case.label}>")
    params = SolveParams(time_limit_s=case.time_limit_s, threads=threads, seed=case.seed, **opts.solve_fields())
    start, start_note = warm_start(method, inst, case, opts.warm_start)
    if start is not None:
        params = params.with_(warm_start=start)
    solved = inst
    if opts.objective == "neutral":
        if kind.neutral is None or kind.neutral.exact_instance is None:
            raise SpecError(f"kind {case.kind!r} has no exact form of its neutral objective: params.objective "
                            "neutral is for kinds that give one (joint, tiresias-placement, tier-placement)", source=f"<case {case.label}>",
                            field="params.objective")
        solved = kind.neutral.exact_instance(inst)
    try:
        res = method.solve(solved, case.backend, params)
    except Unsupported as e:
        return {"status": Status.UNSUPPORTED, "message": str(e), "warm_start": opts.warm_start}, {}
    if solved is not inst:
        return _neutral_solve(kind, inst, solved, res, opts, start_note, params)
    objective = None
    wrong = list(res.violations or ())
    if res.solution is not None:
        objective = kind.objective(inst, res.solution)
        if res.allocation is not None:
            wrong += [str(v) for v in validate_allocation(inst.base, res.allocation) if str(v) not in wrong]
    good = objective is not None and not wrong
    return ({"status": Status(res.status.value), "objective": objective if not wrong else None,
             "bound": res.bounds.dual, "own_gap": relative_gap(objective, res.bounds.dual),
             "proven": res.status is SolveStatus.OPTIMAL, "build_s": res.timing.build_s, "solve_s": res.timing.solve_s,
             "threads": res.provenance.threads if res.provenance.threads is not None else params.effective_threads,
             "backend_version": res.provenance.backend_version, "violations": wrong,
             "verified": None if res.solution is None else not wrong, "message": res.termination.detail,
             "warm_start": opts.warm_start, "warm_start_used": False if start_note else res.provenance.warm_start_used},
            {"primal": res.bounds.primal, "notes": [*start_note, *res.notes], "model": dict(res.provenance.model_stats),
             "placed": None if res.allocation is None else len(res.allocation),
             "neutral_objective": _neutral(kind, inst, res.allocation, res.solution) if good else None})


def _neutral_solve(kind: Kind, inst: Any, solved: Any, res: Any, opts: Any, start_note: list[str], params: Any) -> Parts:
    """A twin solved under the kind's neutral objective (``params.objective: neutral``): the neutral optimum of
    its decision set. Its neutral value and proven bound go to ``extra`` (``neutral_objective``,
    ``neutral_bound``, ``neutral_proven``; ``optimises`` names the objective); the record's ``objective`` is
    the family objective of the same allocation (a feasible point of the family model), its ``bound`` None:
    a neutral bound never bounds the family objective."""
    assert kind.neutral is not None and kind.neutral.value_of is not None
    wrong = list(res.violations or ())
    if res.allocation is not None:
        wrong += [str(v) for v in validate_allocation(inst.base, res.allocation) if str(v) not in wrong]
        wrong += [w for w in kind.violations(inst, res.allocation) if w not in wrong]
    good = res.allocation is not None and not wrong
    dual = res.bounds.dual
    nbound = None if dual is None or not math.isfinite(dual) else kind.neutral.value_of(solved, dual)
    return ({"status": Status(res.status.value), "objective": kind.score(inst, res.allocation) if good else None,
             "bound": None, "own_gap": None, "proven": res.status is SolveStatus.OPTIMAL,
             "build_s": res.timing.build_s, "solve_s": res.timing.solve_s,
             "threads": res.provenance.threads if res.provenance.threads is not None else params.effective_threads,
             "backend_version": res.provenance.backend_version, "violations": wrong,
             "verified": None if res.allocation is None else not wrong, "message": res.termination.detail,
             "warm_start": opts.warm_start, "warm_start_used": False if start_note else res.provenance.warm_start_used},
            {"notes": [*start_note, *res.notes], "model": dict(res.provenance.model_stats), "optimises": kind.neutral.name,
             "placed": None if res.allocation is None else len(res.allocation), "neutral_bound": nbound,
             "neutral_proven": res.status is SolveStatus.OPTIMAL and good,
             "neutral_objective": _neutral(kind, inst, res.allocation, res.solution) if good else None})


def warm_start(method: Method, inst: Any, case: GapCase, policy: str | None) -> tuple[Allocation | None, list[str]]:
    """The warm start a case asks for (``solver_params.warm_start: POLICY``): the policy's snapshot decision
    ``decide(inst.base, seed=case.seed)`` when the method declares the warm-start capability; else no
    start and a note saying why (the record's ``warm_start_used`` is then False)."""
    if policy is None:
        return None, []
    spec = all_policies().spec(policy, source=f"<case {case.label}> params.warm_start")
    if Capability.WARM_START not in method.capabilities:
        return None, [f"warm start from {policy} not given: method {method.name!r} declares no warm-start capability"]
    return spec.build({}, seed=case.seed, source=f"<case {case.label}>").decide(inst.base, seed=case.seed), []


__all__ = ["DECIDE_BUDGET_S", "DECIDE_REPEATS", "LP_BOUND", "SIMULATED", "SLOW_DECIDE_S", "GapCase", "case_instance",
           "check_gap", "instance_size", "is_exact", "make_instance", "method_of", "method_role", "run_gap", "score",
           "time_decide", "warm_start"]
