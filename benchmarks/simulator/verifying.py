"""Check a policy's decision with the one verifier, incrementally.

The decision's new allocations form an :class:`~scheduling.instance.Instance` that holds only the
jobs being (re)placed; everything else that holds resources on the machines they touch enters as
``reserved`` capacity. :func:`scheduling.verify.validate_allocation` then runs all of its checks on
that instance, so capacity, gang, plan, memory and tier rules are exactly the verifier's. For
tenant quotas, every placed guaranteed job of an affected tenant joins the checked allocation, so the
quota check sees the tenant's whole usage. The cost is proportional to the decision, not to the
number of running or finished jobs.

:class:`DecisionVerifier` runs the same checks incrementally: per decision it reads the machines'
attributes from a table built once and the plans' memory verdicts from a cache, and builds no
instance. A decision it finds clean is clean for :func:`validate_allocation` too (every check is the
verifier's, the capacity check on the same numbers, mem_gb with a margin: near a bound it defers); any
doubt (a possible violation, a quota tenant's guaranteed job) sends the decision through
:func:`verify_decision`, which raises with the verifier's messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from schedlab.perfmodel.memory import plan_memory_violation
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.policy import JobRuntime
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.state import ClusterState
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import PolicyError
from schedlab.topology.tiers import Tier

__all__ = ["DecisionVerifier", "verify_decision"]

_INF = float("inf")
_GUARANTEED = JobClass.GUARANTEED  # (``job.guaranteed`` without the property call)
_MARGIN = 1e-6  # mem_gb within this of a machine's capacity: the full verifier decides


def verify_decision(state: ClusterState, changes: Mapping[str, JobAllocation], runtimes: Mapping[str, JobRuntime],
                    *, released: Iterable[str], quotas: Mapping[str, Resources],
                    holding: Mapping[str, JobRuntime], policy: str, now: float) -> None:
    """Raise :class:`PolicyError` naming ``policy`` and every violation of applying ``changes``
    (``released``: jobs whose current resources are given back by the same decision)."""
    checked: dict[str, JobAllocation] = dict(changes)
    releasing = set(released)
    if quotas:
        tenants = {runtimes[j].job.tenant for j in changes
                   if runtimes[j].job.guaranteed and runtimes[j].job.tenant in quotas}
        if tenants:
            for jid, rt in holding.items():
                if jid not in checked and jid not in releasing and rt.job.guaranteed \
                        and rt.job.tenant in tenants and rt.alloc is not None:
                    checked[jid] = rt.alloc
                    releasing.add(jid)
    releasing.update(j for j in checked if j in holding)
    machines = {m for ja in checked.values() for m in ja.placement}
    free = state.free_map
    reserved: dict[str, Resources] = {}
    for m in machines:
        if m not in free:
            continue  # the verifier's structure check reports the unknown machine
        used = state.capacity(m) - free[m]
        for jid in releasing:
            rt = holding.get(jid)
            if rt is not None and rt.alloc is not None:
                r = rt.alloc.placement.get(m)
                if r is not None:
                    used = used - r
        if not used.is_zero():
            reserved[m] = used
    jobs: list[Job] = [runtimes[j].job for j in checked]
    instance = Instance(state.cluster, tuple(jobs), quotas=quotas, reserved=reserved, time=now)
    violations = validate_allocation(instance, Allocation(checked))
    if violations:
        lines = "\n  ".join(str(v) for v in violations)
        raise PolicyError(f"policy {policy!r} at t={now:g} s made an invalid decision "
                          f"({len(violations)} violation(s)):\n  {lines}")


class DecisionVerifier:
    """:func:`verify_decision` for one simulator, with per-cluster tables and cached memory verdicts."""

    def __init__(self, cluster: Cluster) -> None:
        # the machine nodes' data of ``cluster.graph``, read from the spec (the graph, and networkx, are
        # only built when a decision needs the full verifier)
        self._m: dict[str, tuple[int, int, float, object, float]] = {
            m.name: (m.gpus, m.cpus, float(m.host_memory_gb), m.rack, float(m.gpu_memory_gb))
            for m in cluster.spec.machines}
        self._memory: dict[tuple, str | None] = {}
        self._by_id: dict[tuple, tuple[object, str | None]] = {}
        self.fast = 0  # decisions cleared by the incremental checks
        self.full = 0  # decisions sent through verify_decision

    def verify(self, state: ClusterState, changes: Mapping[str, JobAllocation], runtimes: Mapping[str, JobRuntime],
               *, released: Iterable[str], quotas: Mapping[str, Resources], holding: Mapping[str, JobRuntime],
               policy: str, now: float) -> None:
        """As :func:`verify_decision` (same arguments, same errors)."""
        if self._clean(state, changes, runtimes, released, quotas, holding):
            self.fast += 1
            return
        self.full += 1
        verify_decision(state, changes, runtimes, released=released, quotas=quotas, holding=holding,
                        policy=policy, now=now)

    def _clean(self, state: ClusterState, changes: Mapping[str, JobAllocation],
               runtimes: Mapping[str, JobRuntime], released: Iterable[str], quotas: Mapping[str, Resources],
               holding: Mapping[str, JobRuntime]) -> bool:
        machines = self._m
        use: dict[str, list] = {}
        for jid, ja in changes.items():
            job = runtimes[jid].job
            if quotas and job.job_class is _GUARANTEED and job.tenant in quotas:
                return False  # the tenant's whole usage is checked: the full path
            if not self._job_clean(job, ja, use):
                return False
        if not use:
            return False
        releasing = set(released)
        for j in changes:
            if j in holding:
                releasing.add(j)
        free = state.free_map
        for m, u in use.items():
            cap = machines[m]
            f = free[m]
            g, c, mem = u[0] + cap[0] - f.gpus, u[1] + cap[1] - f.cpus, u[2] + cap[2] - f.mem_gb
            for jid in releasing:
                rt = holding.get(jid)
                if rt is not None and rt.alloc is not None:
                    r = rt.alloc.placement.get(m)
                    if r is not None:
                        g -= r.gpus
                        c -= r.cpus
                        mem -= r.mem_gb
            if g > cap[0] or c > cap[1] or mem > cap[2] - _MARGIN:
                return False
        return True

    def _job_clean(self, job: Job, ja: JobAllocation, use: dict[str, list]) -> bool:
        """Structure, gang, plan, memory, tier and guarantee checks of one allocation; adds its usage."""
        machines = self._m
        placement = ja.placement
        if not placement:
            return False
        g = cpus = 0
        gpu_mem = _INF
        racks = set() if job.max_tier is not None else None  # (only a tier limit reads them)
        spans = 0
        p = ja.plan
        tp = p.tp
        for m, r in placement.items():
            a = machines.get(m)
            if a is None or r.gpus < 0 or r.cpus < 0 or r.mem_gb < 0:
                return False
            if tp > 1 and r.gpus % tp:
                return False
            if r.gpus > 0:
                spans += 1
                if racks is not None:
                    racks.add(a[3])
                if a[4] < gpu_mem:
                    gpu_mem = a[4]
            g += r.gpus
            cpus += r.cpus
            u = use.get(m)
            if u is None:
                use[m] = [r.gpus, r.cpus, r.mem_gb]
            else:
                u[0] += r.gpus
                u[1] += r.cpus
                u[2] += r.mem_gb
        if g < 1 or (not job.reconfigurable and g != job.requested.gpus) or p.dp * tp * p.pp != g:
            return False
        if job.num_layers is not None and job.num_layers % p.pp:
            return False
        if job.max_tier is not None:
            tier = Tier.MACHINE if spans <= 1 else (Tier.RACK if len(racks) == 1 else Tier.NETWORK)
            if tier > job.max_tier:
                return False
        if job.job_class is _GUARANTEED and job.min_resources is not None:
            mr = job.min_resources
            if g < mr.gpus or cpus < mr.cpus:
                return False
        # keyed by the plan object (policies reuse theirs; hashing a plan's fields is a Python call per
        # decision); the entry keeps the plan, so an id is only trusted while that object is the one
        key = (job.model, job.global_batch, id(p), gpu_mem)
        hit = self._by_id.get(key)
        if hit is not None and hit[0] is p:
            return hit[1] is None
        vkey = (job.model, job.global_batch, p, gpu_mem)
        msg = self._memory.get(vkey, False)
        if msg is False:
            msg = self._memory[vkey] = plan_memory_violation(job.model, job.global_batch, p, gpu_mem)
        if len(self._by_id) < 65536:
            self._by_id[key] = (p, msg)
        return msg is None
