r"""``joint-plan``: the plan-only twin of the joint kind (decision set: admission, placement, preemption and
the **plan**; GPU counts at the request) — what Rubick-E decides (re-planning without resizing).

The twin is the joint model (:mod:`formulations.joint_twostage`) on the *plan restriction* of an instance,
:func:`plan_instance`: every job keeps its requested GPU count :math:`g_j` and may take any plan at it,

.. math:: O^{\text{plan}}_j = \{\, o \in O_j : g_o = g_j \,\} \cup O^{\text{rigid}}_j

(:math:`O_j` the job's option table in the instance, :math:`O^{\text{rigid}}_j` its request-plan options
of :func:`~formulations.joint_rigid.rigid_instance`, so the request is always admissible). Placement, CPUs,
admission and keeping / moving / preempting a running job stay free, and with perf-model pricing the plan is
re-optimised on the placement a solution really gets (``fixed_plans`` off). Its optimum bounds every policy
that decides a subset of these (rigid ones too: ``joint-rigid`` ⊆ ``joint-plan`` ⊆ ``joint``).

The solution is an allocation of the original instance, scored by the kind's objective there.
"""

from __future__ import annotations

from dataclasses import replace

from schedlab.formulations.joint_instance import JointInstance
from schedlab.formulations.joint_rigid import RIGID_DECISIONS, rigid_instance
from schedlab.formulations.result import SolveParams, SolveResult
from schedlab.scheduling.registry import Decision

#: what the plan-only twin decides
PLAN_DECISIONS = RIGID_DECISIONS | {Decision.PLAN}


def plan_instance(inst: JointInstance) -> JointInstance:
    """The plan restriction of ``inst`` (module docstring): GPU counts at the request, any plan."""
    rigid, _ = rigid_instance(inst)
    jobs, options = [], {}
    for j in inst.base.jobs:
        g = j.requested.gpus
        same = [o for o in inst.options.get(j.id, ()) if o.gpus == g]
        options[j.id] = tuple(same) + tuple(o for o in rigid.options.get(j.id, ()) if o not in same)
        jobs.append(replace(j, reconfigurable=False))  # admissible(): the requested GPU count only
    return replace(inst, base=replace(inst.base, jobs=tuple(jobs)), options=options, fixed_plans=False)


def solve_plan(inst: JointInstance, backend: str, params: SolveParams) -> SolveResult:
    """``joint-2stage`` on :func:`plan_instance`; the allocation is one of ``inst`` as well."""
    from schedlab.formulations.joint_twostage import JointTwoStage

    res = JointTwoStage().solve(plan_instance(inst), backend, params)
    return replace(res, notes=(*res.notes, "joint-plan: GPU counts fixed at the request, plans free"))


__all__ = ["PLAN_DECISIONS", "plan_instance", "solve_plan"]
