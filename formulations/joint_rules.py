"""The joint problem's ONE objective function and its rules beyond
:func:`scheduling.validate_allocation` (split from :mod:`formulations.joint_instance`): the penalty count
:func:`changed`, :func:`joint_objective`, the SLO rule :func:`slo_violations`, the holding rule
:func:`holding_violations`, and :func:`joint_rules` (both rules: what every joint model, the verifier and
the scorer judge solver and heuristic allocations by)."""

from __future__ import annotations

from schedlab.formulations.joint_instance import JointInstance, JointObjective, footprint
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.resources import Resources
from schedlab.topology.errors import SolverError


def changed(inst: JointInstance, allocation: Allocation) -> int:
    """Running jobs of ``base.current`` whose plan or placement the allocation changes (or preempts)."""
    n = 0
    for cur in inst.base.current:
        ja = allocation.get(cur.job_id)
        if ja is None or ja.plan != cur.plan or dict(ja.placement) != dict(cur.placement):
            n += 1
    return n


def joint_objective(inst: JointInstance, allocation: Allocation) -> float:
    """THE objective of the joint problem, for solver and heuristic allocations alike (a plain
    :class:`~scheduling.Allocation`, as a heuristic's ``decide`` returns).

    ``SUM``/``WEIGHTED``: ``sum_j w_j * tput_j / ref_j - penalty * #changed running jobs``;
    ``MAXMIN``: ``min_j w_j * tput_j / ref_j`` (a queued job counts 0; no penalty term), where
    ``tput_j`` is the allocation's price (module docstring); ``NEUTRAL``: ``sum_j gain_j - penalty *
    #changed`` (:meth:`JointInstance.gain`; a queued job gains 0), an affine map of
    ``formulations.neutral.est_avg_jct`` (see :attr:`JointInstance.neutral_terms`).
    """
    vals = [0.0 if allocation.get(job.id) is None else inst.value(allocation[job.id]) for job in inst.base.jobs]
    if inst.objective is JointObjective.MAXMIN:
        return min(vals) if vals else 0.0
    return sum(vals) - inst.reconfig_penalty * changed(inst, allocation)


def holding_violations(inst: JointInstance, allocation: Allocation) -> list[str]:
    """The holding rule (:class:`JointInstance` ``hold_preempted``): on every machine, what the allocation
    gives plus what the running jobs it preempts still hold must fit :attr:`JointInstance.hold_capacity`,
    and so must every tenant's quota with the preempted guaranteed jobs still charged. Empty when the rule
    is off. A heuristic that starts a job on a preempted job's GPUs in the same decision breaks it (the
    simulator would reject that decision)."""
    if not inst.hold_preempted or not len(inst.base.current):
        return []
    base = inst.base
    held = [ja for ja in base.current if ja.job_id not in allocation.assignments
            and base.job_by_id.get(ja.job_id) is not None]
    if not held:
        return []
    use: dict[str, list[float]] = {}
    for ja in [*allocation, *held]:
        for m, r in ja.placement.items():
            u = use.setdefault(m, [0.0, 0.0, 0.0])
            u[0] += r.gpus
            u[1] += r.cpus
            u[2] += r.mem_gb
    out = []
    names = ", ".join(repr(j) for j in sorted(ja.job_id for ja in held))
    for m, u in use.items():
        cap = inst.hold_capacity.get(m)
        if cap is None:
            continue
        for k, (amt, c, what) in enumerate(((u[0], cap.gpus, "GPUs"), (u[1], cap.cpus, "CPUs"),
                                            (u[2], cap.mem_gb, "GB of host memory"))):
            if amt > c + (1e-6 if k == 2 else 0):
                out.append(f"[hold] machine {m!r}: {amt:g} {what} in use with the preempted jobs ({names}) still "
                           f"holding theirs until their checkpoint, over the {c:g} free")
    for tenant, q in base.quotas.items():
        if not any(base.job_by_id[ja.job_id].guaranteed and base.job_by_id[ja.job_id].tenant == tenant
                   for ja in held):
            continue
        jobs = [base.job_by_id[ja.job_id] for ja in [*allocation, *held] if ja.job_id in base.job_by_id]
        usage = Resources.total(j.quota_usage for j in jobs if j.guaranteed and j.tenant == tenant)
        for amt, cap, what in ((usage.gpus, q.gpus, "GPUs"), (usage.cpus, q.cpus, "CPUs"),
                               (usage.mem_gb, q.mem_gb, "GB")):
            if cap and amt > cap + 1e-6:
                out.append(f"[hold] tenant {tenant!r}: quota {cap:g} {what} exceeded ({amt:g}) with the preempted "
                           "guaranteed jobs still charged until their checkpoint")
    return out


def joint_rules(inst: JointInstance, allocation: Allocation) -> list[str]:
    """The joint kind's rules beyond :func:`scheduling.validate_allocation`: :func:`slo_violations` and
    :func:`holding_violations`."""
    return slo_violations(inst, allocation) + holding_violations(inst, allocation)


def slo_violations(inst: JointInstance, allocation: Allocation) -> list[str]:
    """The joint problem's rule beyond :func:`scheduling.validate_allocation`: a placed guaranteed job
    runs at least at its SLO (its requested throughput: weighted normalised value >= its weight). An
    allocation breaking it is no point of the problem (the models admit no such option), so it gets no
    gap; one that cannot be priced is left to the objective, which raises."""
    out = []
    for ja in allocation:
        job = inst.base.job_by_id.get(ja.job_id)
        if job is None or not job.guaranteed:
            continue
        try:
            v = inst.norm(ja)
        except SolverError:
            continue
        if inst.weight(job.id) > 0 and v < 1 - 1e-9:
            out.append(f"[slo] guaranteed job {job.id!r} runs below its requested throughput "
                       f"({v:.4g} of it)")
    return out


def option_throughput(inst: JointInstance, ja: JobAllocation) -> float:
    """Throughput of an allocated job: its price by the instance's pricer at its real footprint."""
    return inst.pricer.price(inst.base.job(ja.job_id), ja, footprint(inst, ja))


__all__ = ["changed", "holding_violations", "joint_objective", "joint_rules", "option_throughput",
           "slo_violations"]
