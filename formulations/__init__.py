"""Exact formulations of the scheduling decisions and the solver layer they run on.

* :mod:`formulations.model` — the solver-neutral model (written once per formulation);
* :mod:`formulations.backends` — CP-SAT, MathOpt HiGHS/SCIP, PuLP CBC, scipy ``milp``;
* :mod:`formulations.result` — :class:`SolveParams`, :class:`SolveResult`, :func:`relative_gap`;
* formulations: :mod:`~formulations.joint` (plan + allocation), :mod:`~formulations.tiresias`
  (Appendix D ILP), :mod:`~formulations.tier` (Dally tier placement), :mod:`~formulations.offline`
  (clairvoyant schedule bound), :mod:`~formulations.pop` (partitioned solve).

``METHODS`` maps a method name to ``(instance kind, solver)``, ``GENERATORS`` an instance kind to
its seeded generator; both are dict registries (``schedlab list`` shows them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedlab.formulations.backends import BACKENDS, get_backend
from schedlab.formulations.base import Built, Formulation, solve
from schedlab.formulations.io import INSTANCE_KINDS, load_instance, save_instance
from schedlab.formulations.joint import JointFormulation, pooled_ok, relaxation_bound
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
    OfflineFormulation,
    OfflineInstance,
    OfflineSchedule,
    generate_offline,
    offline_objective,
)
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
    "offline-bound": (OfflineInstance.KIND, _direct(OfflineFormulation)),
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

#: policies that solve a model in the loop (exact-in-the-loop, Sia-like); merged with
#: ``heuristics.POLICIES`` by ``schedlab.benchmarks.registry.all_policies`` (no upward import)
POLICIES: PolicyRegistry = PolicyRegistry()

__all__ = [
    "BACKENDS", "POLICIES", "GENERATORS", "INSTANCE_KINDS", "METHODS", "OBJECTIVES", "POP", "Built", "Formulation", "JobOption",
    "JointFormulation", "JointInstance", "JointObjective", "JointTwoStage", "LinExpr", "Model", "OfflineFormulation",
    "OfflineInstance", "OfflineSchedule", "PSJob", "SolutionStatus", "SolveParams", "SolveResult", "Termination",
    "TierFormulation", "TierInstance", "TierMode", "TiresiasFormulation", "TiresiasInstance", "TiresiasSolution",
    "aggregation_ok", "complete_tiresias", "pooled_ok", "generate_joint", "generate_offline", "generate_tier", "generate_tiresias", "get_backend",
    "joint_objective", "load_instance", "lsum", "offline_objective", "relative_gap", "relaxation_bound",
    "save_instance", "solve", "tier_objective", "tiresias_objective",
]
