r"""``joint-rigid``: the fixed-size twin of the joint kind (decision set: admission, placement,
preemption; **GPU counts and plans at the request**).

The twin is the joint model (:mod:`formulations.joint_twostage`) on the *rigid restriction* of an
instance, :func:`rigid_instance`: every job keeps its requested GPU count :math:`g_j` and plan
:math:`p_j` (``Job.requested_plan``), i.e. its admissible options are

.. math:: O^{\text{rigid}}_j = \{\, o \in O_j(p_j) : g_o = g_j \,\}

where :math:`O_j(p_j)` is the option table of the request plan alone (perf model:
``PerfOptions.options(model, batch, plan=p_j)``; synthetic zoo: the zoo's table of plan :math:`p_j`;
hand-built tables: the options with :math:`g_j` GPUs and plan :math:`p_j`). Where a hand-built table
has no option with the request plan, the options with :math:`g_j` GPUs and any plan are kept and the
result's notes count the jobs (the twin is then slightly wider than the rigid set: still a valid bound
for rigid policies, never a tighter one). Placement (one machine or spread, CPUs, memory) and
admission stay free, as does keeping, moving or preempting a running job (at the reconfiguration
penalty). Its optimum is the best any fixed-size policy (FIFO, YARN-CS, Synergy, AntMan, Gandiva,
Tiresias, Dally placement) can do on the snapshot under the family objective; the gap to the
resizable ``joint`` optimum is the value of flexibility (resizing and re-planning).

The solution is an allocation of the original instance (same jobs, same pricing), scored by the
kind's objective there.
"""

from __future__ import annotations

from dataclasses import replace

from schedlab.formulations.joint_instance import JobOption, JointInstance
from schedlab.formulations.result import SolveParams, SolveResult
from schedlab.scheduling.job import Job
from schedlab.scheduling.registry import Decision

#: what the fixed-size twin decides
RIGID_DECISIONS = frozenset({Decision.ADMISSION, Decision.PLACEMENT, Decision.PREEMPTION})


def _rigid_options(inst: JointInstance, job: Job, perf: dict) -> tuple[tuple[JobOption, ...], bool]:
    """The rigid option table of ``job`` and whether it keeps the request plan (see the module docstring);
    ``perf`` caches the perf model's option builder."""
    g, plan = job.requested.gpus, job.requested_plan
    if inst.pricing == "perfmodel":
        from schedlab.formulations.joint_options import PerfOptions

        if "p" not in perf:
            perf["p"] = PerfOptions(inst.base.cluster, inst.base.cluster.total_gpus)
        return tuple(perf["p"].options(job.model, job.global_batch, plan)), True
    if inst.pricing == "synthetic":
        from schedlab.formulations.joint_options import _syn_levels, cluster_shape, pareto, synthetic_value
        from schedlab.topology.tiers import Tier

        per, tiers = cluster_shape(inst.base.cluster)
        mem = max((o.mem_gb / o.gpus for o in inst.options.get(job.id, ())), default=0.0) * g
        opts = []
        for lv in _syn_levels(job.model):
            c = lv * g
            if g <= per:
                opts.append(JobOption(g, c, 1, synthetic_value(job.model, plan, g, (g,), Tier.MACHINE, c), plan, mem))
            for tier in tiers:
                if tier is not Tier.MACHINE and g >= 2 * plan.tp:
                    v = synthetic_value(job.model, plan, g, (g - plan.tp, plan.tp), tier, c)
                    opts.append(JobOption(g, c, 2, v, plan, mem, plan.tp, tier))
        return tuple(pareto(opts)), True
    same = tuple(o for o in inst.options.get(job.id, ()) if o.gpus == g and o.plan == plan)
    if same:
        return same, True
    return tuple(o for o in inst.options.get(job.id, ()) if o.gpus == g), False


def rigid_instance(inst: JointInstance) -> tuple[JointInstance, int]:
    """The rigid restriction of ``inst`` (module docstring) and the number of jobs whose table had no
    option with the request plan (their plan left free)."""
    jobs, options, wider, perf = [], {}, 0, {}
    for j in inst.base.jobs:
        opts, kept = _rigid_options(inst, j, perf)
        wider += not kept
        options[j.id] = opts
        jobs.append(replace(j, reconfigurable=False))
    base = replace(inst.base, jobs=tuple(jobs))
    return replace(inst, base=base, options=options, fixed_plans=True), wider


def solve_rigid(inst: JointInstance, backend: str, params: SolveParams) -> SolveResult:
    """``joint-2stage`` on :func:`rigid_instance`; the allocation is one of ``inst`` as well."""
    from schedlab.formulations.joint_twostage import JointTwoStage

    rigid, wider = rigid_instance(inst)
    res = JointTwoStage().solve(rigid, backend, params)
    notes = [*res.notes, "joint-rigid: GPU counts and plans fixed at the request"]
    if wider:
        notes.append(f"joint-rigid: {wider} job(s) had no option with their request plan; their plan was left free")
    return replace(res, notes=tuple(notes))


__all__ = ["RIGID_DECISIONS", "rigid_instance", "solve_rigid"]
