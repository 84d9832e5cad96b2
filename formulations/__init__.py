"""Exact formulations of the scheduling decisions and the solver layer they run on.

* :mod:`formulations.model` — the solver-neutral model (written once per formulation);
* :mod:`formulations.backends` — CP-SAT, MathOpt HiGHS/SCIP, PuLP CBC, scipy ``milp``;
* :mod:`formulations.result` — :class:`SolveParams`, :class:`SolveResult`, :func:`relative_gap`;
* formulations: :mod:`~formulations.joint` (plan + allocation), :mod:`~formulations.tiresias`
  (Appendix D ILP), :mod:`~formulations.tier` (Dally tier placement), :mod:`~formulations.offline`
  (non-preemptive clairvoyant schedules) and :mod:`~formulations.offline_bounds` (a bound valid for
  preemptive schedules), :mod:`~formulations.pop` (partitioned solve);
* :mod:`formulations.containment` — is a heuristic's allocation a feasible point of the exact model?

``METHODS`` maps a method name to ``(instance kind, solver)``, ``GENERATORS`` an instance kind to
its seeded generator, ``OBJECTIVES`` an instance kind to the ONE objective function, which takes the
formulation's own solution or a plain :class:`~scheduling.Allocation` (what a heuristic's ``decide``
returns; Tiresias allocations are completed with parameter servers first), ``GAP_NOTES`` what a
report prints beside a gap; all are dict registries (``schedlab list`` shows methods and backends).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedlab.formulations.backends import BACKENDS, get_backend
from schedlab.formulations.base import Built, Formulation, solve
from schedlab.formulations.io import INSTANCE_KINDS, load_instance, save_instance
from schedlab.formulations.joint import JointFormulation, pooled_ok, relaxation_bound
from schedlab.formulations.joint_instance import GAP_NOTE as JOINT_GAP_NOTE
from schedlab.formulations.joint_instance import (
    JobOption,
    JointInstance,
    JointObjective,
    joint_objective,
)
from schedlab.formulations.joint_options import generate_joint
from schedlab.formulations.joint_twostage import JointTwoStage
from schedlab.formulations.model import LinExpr, Model, lsum
from schedlab.formulations.offline import (
    BOUND_METHOD,
    OfflineFormulation,
    OfflineInstance,
    OfflineSchedule,
    PreemptiveBoundMethod,
    generate_offline,
    offline_objective,
)
from schedlab.formulations.policies import EXACT_POLICIES, SIA_POLICIES
from schedlab.formulations.pop import POP
from schedlab.formulations.result import SolutionStatus, SolveParams, SolveResult, Termination, relative_gap
from schedlab.formulations.tier import TierFormulation, TierInstance, TierMode, generate_tier, tier_objective
from schedlab.formulations.tiresias import (
    PSJob,
    TiresiasFormulation,
    TiresiasInstance,
    TiresiasSolution,
    tiresias_objective,
)
from schedlab.formulations.tiresias_gen import complete as complete_tiresias
from schedlab.formulations.tiresias_gen import generate_tiresias
from schedlab.scheduling.registry import PolicyRegistry

aggregation_ok = pooled_ok  # the name before uneven placements (kept for callers)

Solver = Callable[[Any, str, SolveParams], SolveResult]


def _direct(factory: Callable[[], Formulation]) -> Solver:
    return lambda inst, backend, params: solve(factory(), inst, backend, params)


def _pop(k: int) -> Solver:
    return lambda inst, backend, params: POP(k, parallel=params.effective_threads > 1).solve(inst, backend, params)


#: method name -> (instance kind, solver(inst, backend, params))
METHODS: dict[str, tuple[str, Solver]] = {
    "joint": (JointInstance.KIND, _direct(JointFormulation)),
    "joint-machines": (JointInstance.KIND, _direct(lambda: JointFormulation(aggregate=False))),
    "joint-2stage": (JointInstance.KIND, lambda inst, backend, params: JointTwoStage().solve(inst, backend, params)),
    "tiresias-ilp": (TiresiasInstance.KIND, _direct(TiresiasFormulation)),
    "tier-placement": (TierInstance.KIND, _direct(TierFormulation)),
    "offline-nonpreemptive": (OfflineInstance.KIND, _direct(OfflineFormulation)),
    "offline-preemptive": (OfflineInstance.KIND, lambda inst, backend, params: PreemptiveBoundMethod().solve(inst, backend, params)),
    "pop-joint": (JointInstance.KIND, _pop(4)),
    "pop-tier-placement": (TierInstance.KIND, _pop(4)),
    "pop-tiresias-ilp": (TiresiasInstance.KIND, _pop(4)),
}

#: instance kind -> generator(cluster, n_jobs, *, seed)
GENERATORS: dict[str, Callable[..., Any]] = {
    JointInstance.KIND: generate_joint,
    TiresiasInstance.KIND: generate_tiresias,
    TierInstance.KIND: generate_tier,
    OfflineInstance.KIND: generate_offline,
}

#: instance kind -> the ONE objective function (solution -> float) the harness applies to any method
OBJECTIVES: dict[str, Callable[[Any, Any], float]] = {
    JointInstance.KIND: joint_objective,
    TiresiasInstance.KIND: tiresias_objective,
    TierInstance.KIND: tier_objective,
    OfflineInstance.KIND: offline_objective,
}

#: instance kind -> what a report must print beside a gap of that kind (modelling choices that the
#: heuristic and the exact side share, stated once)
GAP_NOTES: dict[str, str] = {
    JointInstance.KIND: JOINT_GAP_NOTE,
    TiresiasInstance.KIND: ("tiresias: a heuristic's worker-only allocation is completed with parameter servers by the "
                            "consolidation rule (formulations.tiresias_gen.complete: PS on the job's worker machines in "
                            "proportion to their workers); the ILP places workers and PS jointly"),
    TierInstance.KIND: "tier: both sides are scored at the real tier of each placement (Dally's Table 1 overheads)",
    OfflineInstance.KIND: ("offline: non-preemptive policies are compared with offline-nonpreemptive, preemptive ones "
                           "with offline-preemptive (BOUND_METHOD[PolicySpec.preemptive])"),
}

#: policies that solve a model in the loop (exact-in-the-loop, Sia-like); merged with
#: ``heuristics.POLICIES`` by ``schedlab.benchmarks.registry.all_policies`` (no upward import)
POLICIES: PolicyRegistry = PolicyRegistry.merged(SIA_POLICIES, EXACT_POLICIES)

__all__ = [
    "BACKENDS", "BOUND_METHOD", "GAP_NOTES", "POLICIES", "PreemptiveBoundMethod", "GENERATORS", "INSTANCE_KINDS", "METHODS", "OBJECTIVES", "POP", "Built", "Formulation", "JobOption",
    "JointFormulation", "JointInstance", "JointObjective", "JointTwoStage", "LinExpr", "Model", "OfflineFormulation",
    "OfflineInstance", "OfflineSchedule", "PSJob", "SolutionStatus", "SolveParams", "SolveResult", "Termination",
    "TierFormulation", "TierInstance", "TierMode", "TiresiasFormulation", "TiresiasInstance", "TiresiasSolution",
    "aggregation_ok", "complete_tiresias", "pooled_ok", "generate_joint", "generate_offline", "generate_tier", "generate_tiresias", "get_backend",
    "joint_objective", "load_instance", "lsum", "offline_objective", "relative_gap", "relaxation_bound",
    "save_instance", "solve", "tier_objective", "tiresias_objective",
]
