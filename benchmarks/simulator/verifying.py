"""Check a policy's decision with the one verifier, incrementally.

The decision's new allocations form an :class:`~scheduling.instance.Instance` that holds only the
jobs being (re)placed; everything else that holds resources on the machines they touch enters as
``reserved`` capacity. :func:`scheduling.verify.validate_allocation` then runs all of its checks on
that instance, so capacity, gang, plan, memory and tier rules are exactly the verifier's. For
tenant quotas, every placed guaranteed job of an affected tenant joins the checked allocation, so the
quota check sees the tenant's whole usage. The cost is proportional to the decision, not to the
number of running or finished jobs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import JobRuntime
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.state import ClusterState
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.errors import PolicyError


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


__all__ = ["verify_decision"]
