r"""The joint plan + allocation problem (:class:`~schedlab.formulations.JointInstance`) a snapshot of
the cluster poses: what :mod:`~schedlab.formulations.policies.exact_joint` solves every round.

**Option tables** (:class:`OptionTables`, cached per model, batch and plan):

* ``perfmodel`` — a reconfigurable job whose model the perf model knows gets the perf model's table
  (:class:`~schedlab.formulations.joint_options.PerfOptions`: every GPU count up to ``max_gpus``,
  every placement class, CPU level and Pareto-best plan) plus its requested plan's own options (so
  the SLO of a guaranteed job, measured at that plan, is always reachable);
* ``fixed plan`` — a rigid job (or any job with ``source="request"``) keeps its requested plan and
  GPU count: the perf model's options of that plan only (every placement class and CPU level);
* ``request`` — a job the perf model does not know (or a rigid job whose requested plan it finds
  invalid everywhere, or any job on a heterogeneous cluster, where per-class tables are not defined) gets only its
  requested option: its requested GPUs, CPUs, memory and plan on a consolidated placement (one
  machine when one is large enough, else one rack, else the network), valued 1 (placement-blind).
  A reconfigurable job whose requested plan the perf model finds invalid keeps the perf model's
  table, normalised by its best option at the requested GPUs. Each such job is counted once
  (``fallback:<reason>``).
* ``held`` — a running job's table also holds the options of the plan it runs when the table lacks
  them (its size beyond ``max_gpus``, or a fixed-plan job running another plan: a replay state's
  allocation comes from another policy), so a state's running jobs can always be priced and kept.

**Reference throughput** (the normaliser, and a guaranteed job's SLO): the perf model's throughput
of the requested plan on the most consolidated placement of the requested GPUs with the requested
CPUs (at least one per GPU), as the simulator's guarantee check measures it; 1 for request-only jobs.

**Pricing**: ``perfmodel`` (the plan re-optimised on the placement a solution really gets) when every
job has a perf-model table; otherwise ``table`` (each job runs its option's plan, so a rigid job
never changes plan).

**Preemptions** free resources only once the checkpoint is saved (the simulator's semantics; a
reconfiguration frees them within the decision). ``joint_snapshot(..., hold=True)`` puts that rule in
the instance (``JointInstance.hold_preempted``: every model and the verifier keep a preempted job's
resources held for the whole decision); :func:`holding` is the instance in which given preempted jobs
keep theirs (the ``re-solve`` mode of exact-joint).

**Quotas**: jobs restoring or checkpointing are not in the decision (:func:`view_instance`) but
still charge their tenant's quota, so the decision sees the quota left after them; when a quota
component is used up, the tenant's queued guaranteed jobs sit this round out.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from schedlab.formulations.joint_instance import JobOption, JointInstance, JointObjective
from schedlab.formulations.joint_options import PerfOptions
from schedlab.formulations.policies.base import ViewSnapshot
from schedlab.perfmodel.environment import shape_placements
from schedlab.perfmodel.zoo import resolve_name
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SchedlabError, SpecError
from schedlab.topology.tiers import Tier

SOURCES = ("perfmodel", "request")

Table = tuple[tuple[JobOption, ...], float, bool]  # (options, reference throughput, perf-model table)


class OptionTables:
    """Option tables and reference throughputs of jobs on ``cluster`` (module docstring); fallbacks
    are counted in ``counters`` (the policy's)."""

    def __init__(self, cluster: Cluster, *, max_gpus: int = 0, source: str = "perfmodel",
                 counters: Counter | None = None) -> None:
        if source not in SOURCES:
            raise SpecError(f"unknown option source {source!r}; known: {', '.join(SOURCES)}", source="<exact-joint>",
                            field="source")
        self.cluster, self.source = cluster, source
        self.max_gpus = min(max_gpus or cluster.total_gpus, cluster.total_gpus)
        self.counters = counters if counters is not None else Counter()
        try:
            self.perf: PerfOptions | None = PerfOptions(cluster, self.max_gpus)
        except SpecError:
            self.perf = None  # heterogeneous cluster: request-only tables
        self._cache: dict[tuple, tuple] = {}
        self._counted: set[str] = set()
        #: the rounds' instances' shared memo (:attr:`JointInstance.memo`: fastest plans by footprint)
        self.memo: dict = {}

    def table(self, job: Job) -> Table:
        """``(options, reference throughput, whether the options are a perf-model table)``."""
        key = (job.model, job.global_batch, job.requested, job.requested_plan, job.reconfigurable)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._table(job)
        opts, ref, perf_table, why = hit
        if why and job.id not in self._counted:
            self._counted.add(job.id)
            self.counters[f"fallback:{why}"] += 1
        return opts, ref, perf_table

    def from_perf(self, job: Job) -> bool:
        """Whether ``job``'s table (already built) came from the perf model (no request-only fallback)."""
        key = (job.model, job.global_batch, job.requested, job.requested_plan, job.reconfigurable)
        hit = self._cache.get(key)
        return hit is not None and (hit[3] is None or not hit[3].endswith("request-only"))

    def _table(self, job: Job) -> tuple[tuple[JobOption, ...], float, bool, str | None]:
        perf, req = self.perf, job.requested
        if perf is None:
            return self.request_option(job), 1.0, False, "heterogeneous-cluster:request-only"
        if resolve_name(job.model) is None:
            return self.request_option(job), 1.0, False, "unknown-model:request-only"
        try:
            ref = perf.pm.throughput(job.model, job.requested_plan, shape_placements(self.cluster, req.gpus)[0],
                                     max(req.cpus, req.gpus), global_batch=job.global_batch)
            fixed = perf.options(job.model, job.global_batch, plan=job.requested_plan)
        except SchedlabError:
            ref, fixed = 0.0, []
        flexible = job.reconfigurable and self.source == "perfmodel"
        table = tuple(perf.options(job.model, job.global_batch)) if flexible else ()
        if fixed and ref > 0:
            return (table + tuple(fixed), ref, True, None) if flexible else (tuple(fixed), ref, False, None)
        if table:  # the requested plan cannot run: normalise by the best option at the requested GPUs
            at_req = [o.throughput for o in table if o.gpus == req.gpus] or [o.throughput for o in table]
            return table, max(at_req), True, "requested-plan-invalid:ref-from-table"
        return self.request_option(job), 1.0, False, "requested-plan-invalid:request-only"

    def with_held(self, job: Job, held: JobAllocation, opts: tuple[JobOption, ...]) -> tuple[JobOption, ...]:
        """``opts`` plus the options of the plan ``job`` holds (every placement class and CPU level of it)
        when the table lacks its size (a table capped by ``max_gpus``) or, for a job that may not change
        plan, its plan: a running job can always be priced as it is and kept so (a replay state's
        allocation comes from another policy's decision). Unchanged when the perf model cannot run it."""
        if self.perf is None or resolve_name(job.model) is None:
            return opts
        if any(o.gpus == held.gpus and (o.plan == held.plan or job.reconfigurable) for o in opts):
            return opts
        try:
            extra = tuple(self.perf.options(job.model, job.global_batch, plan=held.plan))
        except SchedlabError:
            return opts
        if extra:
            self.counters["held-allocation-options"] += 1
        return opts + extra

    def request_option(self, job: Job) -> tuple[JobOption, ...]:
        """The job's request on a consolidated placement, valued 1 (module docstring)."""
        req, cl, plan = job.requested, self.cluster, job.requested_plan
        if any(cl.machine(m).gpus >= req.gpus for m in cl.machines):
            return (JobOption(req.gpus, req.cpus, 1, 1.0, plan, req.mem_gb),)
        in_rack = any(len(cl.machines_in(r)) > 1 and sum(cl.machine(m).gpus for m in cl.machines_in(r)) >= req.gpus
                      for r in cl.racks)
        return (JobOption(req.gpus, req.cpus, 2, 1.0, plan, req.mem_gb, plan.tp,
                          Tier.RACK if in_rack else Tier.NETWORK),)


def joint_snapshot(snap: ViewSnapshot, tables: OptionTables, reconfig_penalty: float,
                   objective: JointObjective = JointObjective.SUM, *, hold: bool = False) -> JointInstance:
    """The joint instance of a snapshot (module docstring); objective (``SUM``): the sum of normalised
    throughputs minus ``reconfig_penalty`` per changed running job (``NEUTRAL``: the neutral
    objective's gains, :meth:`~schedlab.formulations.JointInstance.gain`). ``hold``: the holding rule
    (``JointInstance.hold_preempted``: a job the decision preempts keeps its resources in it)."""
    inst = snap.instance
    quotas, out = quota_left(inst, snap.frozen)
    jobs = tuple(j for j in inst.jobs if j.id not in out)
    if out:
        tables.counters["quota-held-by-restoring-jobs-waits"] += len(out)
    options, ref = {}, {}
    perf_priced = True
    for job in jobs:
        options[job.id], ref[job.id], perf_table = tables.table(job)
        perf_priced &= perf_table
        if job.id in inst.current:
            options[job.id] = tables.with_held(job, inst.current[job.id], options[job.id])
    base = Instance(inst.cluster, jobs, current=inst.current, quotas=quotas, reserved=inst.reserved,
                    time=inst.time, progress={j: p for j, p in inst.progress.items() if j not in out})
    return JointInstance(base, options, ref, reconfig_penalty=reconfig_penalty, objective=objective,
                         pricing="perfmodel" if perf_priced and jobs else "table", hold_preempted=hold,
                         perf_model=None if tables.perf is None else tables.perf.pm, memo=tables.memo)


def rigid_snapshot(jinst: JointInstance, tables: OptionTables) -> JointInstance:
    """The ``joint-rigid`` twin's restriction (:func:`~schedlab.formulations.joint_rigid.rigid_instance`)
    of a snapshot built on ``source="request"`` ``tables``: every job non-reconfigurable, plans fixed,
    each table its requested plan's options only (the tables already are: cached across rounds, where
    ``rigid_instance`` would rebuild them), priced by the perf model when every table came from it (as
    ``rigid_instance`` keeps the resizable snapshot's pricing). A test checks both give the same instance."""
    jobs = tuple(dataclasses.replace(j, reconfigurable=False) if j.reconfigurable else j for j in jinst.base.jobs)
    perf = bool(jobs) and all(tables.from_perf(j) for j in jinst.base.jobs)
    return dataclasses.replace(jinst, base=dataclasses.replace(jinst.base, jobs=jobs), fixed_plans=True,
                               pricing="perfmodel" if perf else jinst.pricing)


def holding(jinst: JointInstance, preempted: set[str]) -> JointInstance:
    """``jinst`` without the running jobs ``preempted``, whose resources stay held (``reserved``) and
    whose quota stays charged until their checkpoint is saved: what the rest may use in the decision
    that preempts them."""
    base = jinst.base
    reserved = dict(base.reserved)
    for jid in preempted:
        for m, r in base.current[jid].placement.items():
            reserved[m] = reserved.get(m, Resources()) + r
    quotas, out = quota_left(base, tuple(base.job(j) for j in preempted))
    gone = preempted | out
    rest = Instance(base.cluster, tuple(j for j in base.jobs if j.id not in gone),
                    current=Allocation.of(ja for ja in base.current if ja.job_id not in gone),
                    quotas=quotas, reserved=reserved, time=base.time,
                    progress={j: p for j, p in base.progress.items() if j not in gone})
    return dataclasses.replace(jinst, base=rest)


def quota_left(inst: Instance, frozen: tuple[Job, ...]) -> tuple[dict[str, Resources], set[str]]:
    """Each tenant's quota less what its frozen guaranteed jobs charge, and the queued guaranteed jobs
    that must wait because a quota component is used up (a zero component means no quota)."""
    quotas, out = dict(inst.quotas), set()
    for tenant, q in inst.quotas.items():
        held = Resources.total(j.quota_usage for j in frozen if j.guaranteed and j.tenant == tenant)
        if held == Resources():
            continue
        left = [(cap, cap - used) for cap, used in ((q.gpus, held.gpus), (q.cpus, held.cpus), (q.mem_gb, held.mem_gb))]
        if any(cap and rest <= 1e-9 for cap, rest in left):
            out |= {j.id for j in inst.jobs if j.guaranteed and j.tenant == tenant and j.id not in inst.current}
            continue
        quotas[tenant] = Resources(*(rest if cap else cap for cap, rest in left))
    return quotas, out


__all__ = ["SOURCES", "OptionTables", "holding", "joint_snapshot", "quota_left", "rigid_snapshot"]
