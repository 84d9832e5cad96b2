"""The built-in instance kinds (``joint``, ``tiresias-placement``, ``tier-placement``, ``offline``; the
time-slotted ``horizon-wait``, ``offline-ti`` and ``offline-resizable`` of :mod:`formulations.slotted_kinds`)
as :class:`~formulations.kinds.Kind` objects, and :data:`KINDS`, their registry."""

from __future__ import annotations

from dataclasses import replace

from schedlab.formulations.joint import JointFormulation, relaxation_bound
from schedlab.formulations.joint_instance import GAP_NOTE as JOINT_GAP_NOTE
from schedlab.formulations.joint_instance import JointInstance, JointObjective
from schedlab.formulations.joint_options import generate_joint
from schedlab.formulations.joint_plan import PLAN_DECISIONS, solve_plan
from schedlab.formulations.joint_rigid import RIGID_DECISIONS, solve_rigid
from schedlab.formulations.joint_rules import joint_objective, joint_rules, option_throughput
from schedlab.formulations.joint_twostage import JointTwoStage
from schedlab.formulations.kind_options import JointOptions, OfflineOptions, TierOptions, TiresiasOptions
from schedlab.formulations.kinds import Capability, Kind, KindRegistry, Method, Role, Sense, SuitePlan
from schedlab.formulations.neutral import NEUTRAL_NAME, NEUTRAL_SUMMARY, Objective, est_avg_jct
from schedlab.formulations.offline import (
    OfflineFormulation,
    OfflineInstance,
    PreemptiveBoundMethod,
    generate_offline,
    offline_objective,
)
from schedlab.formulations.pop import POP
from schedlab.formulations.result import SolveParams, SolveResult
from schedlab.formulations.slotted_kinds import HORIZON, OFFLINE_RESIZABLE, OFFLINE_TI, SLOTTED_KINDS
from schedlab.formulations.tier import GAP_NOTE as TIER_GAP_NOTE
from schedlab.formulations.tier import (
    TierFormulation,
    TierInstance,
    TierMode,
    generate_tier,
    tier_neutral,
    tier_objective,
    tier_relaxation_bound,
)
from schedlab.formulations.tiresias import TiresiasInstance, complete, tiresias_neutral, tiresias_objective
from schedlab.formulations.tiresias_gen import generate_tiresias
from schedlab.formulations.tiresias_ilp import TiresiasFormulation
from schedlab.scheduling.registry import Decision

D = Decision
WARM = frozenset({Capability.WARM_START})

#: the harness's exact twin of ``joint``: the fastest exact method (measured on the gap suite's perf-model
#: instances, rubick-64, busy 0.3, seed 0: 16 jobs 0.08 s vs joint 0.84-1.27 s; 64 jobs 0.5 s vs joint 5.2 s on
#: HiGHS and cut at 20 s unproven on CP-SAT; docs/formulations.md)
JOINT_DEFAULT_EXACT = "joint-2stage"


def _pop_method(name: str, kind: str, k: int = 4) -> Method:
    def run(inst, backend: str, params: SolveParams) -> SolveResult:
        return POP(k, parallel=params.effective_threads > 1).solve(inst, backend, params)

    return Method(name, kind, run, Role.RESTRICTION, frozenset({Capability.PARTITIONED}),
                  f"POP (k={k}): parts solved apart and merged (jobs only on their part's machines): a restriction")


def _twostage(inst: JointInstance, backend: str, params: SolveParams) -> SolveResult:
    return JointTwoStage().solve(inst, backend, params)


def _joint_lp(inst: JointInstance, backend: str | None) -> float | None:
    return relaxation_bound(inst, backend or "highs")


def _tier_lp(inst: TierInstance, backend: str | None) -> float | None:
    return tier_relaxation_bound(inst)


def _joint_neutral(inst: JointInstance, allocation) -> float:
    """Neutral objective of a joint allocation: speed = throughput / the request's throughput; remaining
    run time at the request = iterations / the request's throughput (formulations.neutral)."""
    ref = inst.ref_throughput
    return est_avg_jct(inst.base, allocation, lambda ja: option_throughput(inst, ja) / ref[ja.job_id],
                       lambda j: ref[j.id])


def _tier_neutral_instance(inst: TierInstance) -> TierInstance:
    """The tier instance whose objective is est-avg-jct exactly (mode ``est-avg-jct``: the tier ILP
    minimises it; :func:`formulations.tier.tier_neutral`)."""
    return replace(inst, mode=TierMode.EST_AVG_JCT)


def _tiresias_neutral_instance(inst: TiresiasInstance) -> TiresiasInstance:
    """The Tiresias instance whose objective is est-avg-jct exactly (``neutral``: the bilinear ILP with optional
    jobs minimises it; :func:`formulations.tiresias.tiresias_neutral`)."""
    return replace(inst, neutral=True)


def _same_value(ninst: object, value: float) -> float:
    return value


def _neutral(fn, exact_instance=None, value_of=None, scores_solution: bool = False) -> Objective:
    return Objective(NEUTRAL_NAME, fn, "min", NEUTRAL_SUMMARY, exact_instance=exact_instance, value_of=value_of,
                     scores_solution=scores_solution)


def _joint_neutral_instance(inst: JointInstance) -> JointInstance:
    """The joint instance whose objective is est-avg-jct exactly (``JointObjective.NEUTRAL``, gains; no
    reconfiguration penalty: the neutral objective charges none)."""
    return replace(inst, objective=JointObjective.NEUTRAL, reconfig_penalty=0.0)


def _joint_neutral_value(ninst: JointInstance, gains: float) -> float:
    return ninst.neutral_value(gains)


def _max(inst: object) -> Sense:
    return "max"


def _min(inst: object) -> Sense:
    return "min"


def _tier_sense(inst: TierInstance) -> Sense:
    return "max" if inst.mode is TierMode.MAX_THROUGHPUT else "min"


JOINT = Kind(
    "joint", JointInstance, generate_joint, JointOptions, joint_objective,
    "normalised throughput (sum, weighted or max-min per the instance) minus the reconfiguration penalty",
    _max, frozenset({D.ADMISSION, D.PLACEMENT, D.GPUS, D.PLAN, D.PREEMPTION}),
    methods=(
        Method.of(JointFormulation, "joint", role=Role.EXACT, capabilities=WARM,
                  summary="plan + allocation model (pooled when aggregation is exact, else per machine)"),
        Method.of(lambda: JointFormulation(aggregate=False), "joint", role=Role.EXACT, name="joint-machines",
                  capabilities=WARM, summary="plan + allocation model, one variable block per machine"),
        Method("joint-2stage", "joint", _twostage, Role.EXACT, WARM,
               "class model, then placement; falls back to the per-machine model when placement fails"),
        _pop_method("pop-joint", "joint"),
        Method("joint-rigid", "joint", solve_rigid, Role.EXACT, WARM,
               "fixed-size twin: joint-2stage with GPU counts and plans at the request (admission, placement "
               "and preemption free)", decisions=RIGID_DECISIONS),
        Method("joint-plan", "joint", solve_plan, Role.EXACT, WARM,
               "plan-only twin: joint-2stage with GPU counts at the request and plans free (Rubick-E's set)",
               decisions=PLAN_DECISIONS),
    ),
    containment=JointFormulation, relaxation=_joint_lp, gap_note=JOINT_GAP_NOTE, rules=joint_rules,
    default_cluster="rubick-64", default_jobs=30, default_exact=JOINT_DEFAULT_EXACT, neutral=_neutral(_joint_neutral, _joint_neutral_instance, _joint_neutral_value),
    # perf-model option tables: the models Rubick knows (on the synthetic zoo it would keep every job rigid),
    # on a fragmented cluster (a third of the machines partly busy)
    plan=SuitePlan("rubick-64", (8, 16), (8, 16, 32, 64, 128, 256), (8, 16, 32, 64, 128, 256),
                   generator=(("source", "perfmodel"), ("busy", 0.3))),
)

TIRESIAS = Kind(
    "tiresias-placement", TiresiasInstance, generate_tiresias, TiresiasOptions, tiresias_objective,
    "maximum per-node network traffic in MB (Tiresias Appendix D)", _min, frozenset({D.PLACEMENT}),
    methods=(
        Method.of(TiresiasFormulation, "tiresias-placement", role=Role.EXACT, name="tiresias-ilp", capabilities=WARM,
                  summary="Appendix D ILP: workers and parameter servers placed jointly"),
        _pop_method("pop-tiresias-ilp", "tiresias-placement"),
    ),
    complete=complete,
    # unpruned: the configuration model otherwise drops placements a greedy one beats (never optimal)
    containment=lambda: TiresiasFormulation(prune=False),
    gap_note=("tiresias: a heuristic's worker-only allocation is completed with parameter servers by the "
              "consolidation rule (formulations.tiresias.complete: PS on the job's worker machines in "
              "proportion to their workers); the ILP places workers and PS jointly"),
    default_cluster="philly", default_jobs=1,
    # a solver's solution carries its PS hosts: its neutral value is scored with them (a plain allocation's
    # PS are placed by the completion rule)
    neutral=_neutral(tiresias_neutral, _tiresias_neutral_instance, _same_value, scores_solution=True),
    plan=SuitePlan("tiresias-60", (1, 2), (1, 2, 4, 8, 16, 32), (1, 2, 4, 8, 16, 32), scale_fixed_jobs=2),
)

TIER = Kind(
    "tier-placement", TierInstance, generate_tier, TierOptions, tier_objective,
    "effective GPUs sum g/(1+o(tier)) (max-throughput) or GPU-weighted tier overhead (min-overhead)",
    _tier_sense, frozenset({D.ADMISSION, D.PLACEMENT}),
    methods=(
        Method.of(TierFormulation, "tier-placement", role=Role.EXACT, capabilities=WARM,
                  summary="Dally tier placement: jobs x tiers with per-tier overheads"),
        _pop_method("pop-tier-ilp", "tier-placement"),
    ),
    containment=TierFormulation, relaxation=_tier_lp,
    gap_note=TIER_GAP_NOTE,
    default_cluster="dally-2", default_jobs=30, neutral=_neutral(tier_neutral, _tier_neutral_instance, _same_value),
    plan=SuitePlan("dally-2", (4, 8), (4, 8, 16, 32, 64, 128), (4, 8, 16, 32, 64, 128)),
)


def _offline_pre(inst: OfflineInstance, backend: str, params: SolveParams) -> SolveResult:
    return PreemptiveBoundMethod().solve(inst, backend, params)


OFFLINE = Kind(
    "offline", OfflineInstance, generate_offline, OfflineOptions, offline_objective,
    "average JCT or makespan of a clairvoyant schedule (speed independent of placement)", _min,
    frozenset({D.ADMISSION, D.PLACEMENT, D.WAITING}),
    methods=(
        Method.of(OfflineFormulation, "offline", role=Role.EXACT, name="offline-nonpreemptive",
                  summary="non-preemptive schedule of rigid jobs (per machine; mode=total: a relaxation)"),
        Method("offline-preemptive", "offline", _offline_pre, Role.RELAXATION, frozenset({Capability.NO_BACKEND}),
               "lower bound valid for preemptive (and non-preemptive) schedules of rigid jobs"),
    ),
    gap_note=("offline: non-preemptive policies are compared with offline-nonpreemptive, preemptive ones "
              "with offline-preemptive (BOUND_METHOD[PolicySpec.preemptive]); both assume rigid GPU counts"),
    default_cluster="rubick-64", default_jobs=8, default_exact="offline-nonpreemptive", snapshot=False,
)

#: the built-in kinds (plugins' kinds and methods join in ``schedlab.benchmarks.registry.all_kinds()``)
KINDS = KindRegistry((JOINT, TIRESIAS, TIER, OFFLINE, *SLOTTED_KINDS), origin="formulations.builtin_kinds")

__all__ = ["HORIZON", "JOINT", "JOINT_DEFAULT_EXACT", "KINDS", "OFFLINE", "OFFLINE_RESIZABLE", "OFFLINE_TI", "TIER",
           "TIRESIAS"]
