"""Rubick (Algorithm 1: slope-greedy multi-resource allocation with plan reconfiguration and
performance guarantees) and its break-down variants Rubick-E / -R / -N (MLSys'25, Sec. 5.2 and 7.3).

``RUBICK_POLICIES`` is this family's registry, merged into ``heuristics.POLICIES``.
"""

from __future__ import annotations

from schedlab.heuristics.rubick.curves import CurveBook, JobModel, Mode
from schedlab.heuristics.rubick.policy import RubickParams, RubickPolicy
from schedlab.scheduling.registry import BASE_DECISIONS, Decision, PolicyFamily, PolicyRegistry, PolicySpec

_RIGID = BASE_DECISIONS | {Decision.PREEMPTION}

RUBICK_POLICIES = PolicyRegistry()
RUBICK_POLICIES.register(PolicySpec(
    "rubick", RubickPolicy, "Rubick: slope-greedy GPU/CPU/memory allocation that reconfigures execution plans, "
    "with guaranteed (quota, SLO) and best-effort jobs", PolicyFamily.RUBICK, RubickParams, preemptive=True,
    twins=("joint",), reference="Rubick (MLSys'25) Sec. 5.2, Algorithm 1", decisions=_RIGID | {Decision.GPUS, Decision.PLAN}))
RUBICK_POLICIES.register(PolicySpec(
    "rubick-e", RubickPolicy, "Rubick-E: Rubick's policy reconfiguring execution plans only (fixed resources)",
    PolicyFamily.RUBICK, RubickParams, preset={"mode": "plans"}, preemptive=True, twins=("joint",),
    reference="Rubick (MLSys'25) Sec. 7.3, break-down study", decisions=_RIGID | {Decision.PLAN}))
RUBICK_POLICIES.register(PolicySpec(
    "rubick-r", RubickPolicy, "Rubick-R: Rubick's policy reallocating resources only (fixed plan; 3D jobs scale DP "
    "as Sia does)", PolicyFamily.RUBICK, RubickParams, preset={"mode": "resources"}, preemptive=True,
    twins=("joint",), reference="Rubick (MLSys'25) Sec. 7.3, break-down study", decisions=_RIGID | {Decision.GPUS}))
RUBICK_POLICIES.register(PolicySpec(
    "rubick-n", RubickPolicy, "Rubick-N: Rubick's policy without reconfiguring plans or resources",
    PolicyFamily.RUBICK, RubickParams, preset={"mode": "none"}, preemptive=True, twins=("joint",),
    reference="Rubick (MLSys'25) Sec. 7.3, break-down study"))

__all__ = ["RUBICK_POLICIES", "CurveBook", "JobModel", "Mode", "RubickParams", "RubickPolicy"]
