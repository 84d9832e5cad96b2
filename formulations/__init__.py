"""Exact formulations of the scheduling decisions and the solver layer they run on.

* :mod:`formulations.model` — the solver-neutral model (written once per formulation);
* :mod:`formulations.backends` — CP-SAT, MathOpt HiGHS/SCIP, PuLP CBC, scipy ``milp``;
* :mod:`formulations.result` — :class:`SolveParams`, :class:`SolveResult`, :func:`relative_gap`;
* formulations: :mod:`~formulations.joint` (plan + allocation), :mod:`~formulations.tiresias`
  (Appendix D ILP), :mod:`~formulations.tier` (Dally tier placement), :mod:`~formulations.offline`
  (non-preemptive clairvoyant schedules) and :mod:`~formulations.offline_bounds` (a bound valid for
  preemptive schedules), :mod:`~formulations.pop` (partitioned solve);
* :mod:`formulations.containment` — is a heuristic's allocation a feasible point of the exact model?

* :mod:`formulations.kinds` — :class:`Kind` (one object per instance kind: instance type, typed
  generator options, THE objective and its sense, the decision set, methods with their :class:`Role`,
  relaxation bound, gap note, default cluster and sizes) and :data:`KINDS`, the built-in registry.

Thin read-only views of :data:`KINDS`, kept because they make the common calls one line:
``METHODS`` (method name -> :class:`Method`), ``GENERATORS`` (kind -> its validating
:meth:`Kind.generate`), ``OBJECTIVES`` (kind -> THE objective, on the formulation's own solution or a
plain :class:`~scheduling.Allocation`; Tiresias allocations are completed with parameter servers
first) and ``GAP_NOTES`` (kind -> what a report prints beside a gap). They hold the built-in kinds
only; plugins' kinds and methods are in ``schedlab.benchmarks.registry.all_kinds()``.
"""

from __future__ import annotations

from types import MappingProxyType

from schedlab.formulations.backends import BACKENDS, get_backend
from schedlab.formulations.base import Built, Formulation, solve
from schedlab.formulations.builtin_kinds import KINDS
from schedlab.formulations.joint import JointFormulation, pooled_ok, relaxation_bound
from schedlab.formulations.joint_instance import JobOption, JointInstance, JointObjective
from schedlab.formulations.joint_options import generate_joint
from schedlab.formulations.joint_rules import joint_objective
from schedlab.formulations.joint_twostage import JointTwoStage
from schedlab.formulations.kinds import Capability, Kind, KindRegistry, Method, Role, SuitePlan
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
from schedlab.formulations.result import (
    Limit,
    Reason,
    SolutionStatus,
    SolveParams,
    SolveResult,
    Status,
    Termination,
    relative_gap,
)
from schedlab.formulations.tier import TierFormulation, TierInstance, TierMode, generate_tier, tier_objective
from schedlab.formulations.tiresias import (
    PSJob,
    TiresiasInstance,
    TiresiasSolution,
    tiresias_objective,
)
from schedlab.formulations.tiresias import complete as complete_tiresias
from schedlab.formulations.tiresias_gen import generate_tiresias
from schedlab.formulations.tiresias_ilp import TiresiasFormulation
from schedlab.scheduling.registry import PolicyRegistry

#: method name -> :class:`Method` (built-in kinds; read-only)
METHODS = KINDS.methods
#: instance kind -> seeded generator ``(cluster, n_jobs, *, seed, **options)`` (options validated)
GENERATORS = MappingProxyType({k.name: k.generate for k in KINDS.values()})
#: instance kind -> THE objective function (solution or plain allocation -> float)
OBJECTIVES = MappingProxyType({k.name: k.objective for k in KINDS.values()})
#: instance kind -> what a report must print beside a gap of that kind
GAP_NOTES = MappingProxyType({k.name: k.gap_note for k in KINDS.values()})
load_instance = KINDS.load_instance
save_instance = KINDS.save_instance

#: policies that solve a model in the loop (exact-in-the-loop, Sia-like); merged with
#: ``heuristics.POLICIES`` by ``schedlab.benchmarks.registry.all_policies`` (no upward import)
POLICIES: PolicyRegistry = PolicyRegistry.merged(SIA_POLICIES, EXACT_POLICIES)

__all__ = [
    "BACKENDS", "BOUND_METHOD", "GAP_NOTES", "KINDS", "POLICIES", "PreemptiveBoundMethod", "GENERATORS", "METHODS",
    "OBJECTIVES", "POP", "Built", "Capability", "Formulation", "JobOption", "Kind", "KindRegistry", "Method", "Role",
    "SuitePlan",
    "JointFormulation", "JointInstance", "JointObjective", "JointTwoStage", "LinExpr", "Model", "OfflineFormulation",
    "OfflineInstance", "OfflineSchedule", "PSJob", "SolutionStatus", "SolveParams", "SolveResult", "Status", "Termination", "Limit", "Reason",
    "TierFormulation", "TierInstance", "TierMode", "TiresiasFormulation", "TiresiasInstance", "TiresiasSolution",
    "complete_tiresias", "pooled_ok", "generate_joint", "generate_offline", "generate_tier", "generate_tiresias", "get_backend",
    "joint_objective", "load_instance", "lsum", "offline_objective", "relative_gap", "relaxation_bound",
    "save_instance", "solve", "tier_objective", "tiresias_objective",
]
