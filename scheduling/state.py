"""Mutable bookkeeping of free resources per machine (the one mutable type of the vocabulary, kept
mutable because the simulator updates it on every event).

Invariants, kept by :meth:`ClusterState.allocate` / :meth:`ClusterState.release`:
``0 <= free(m) <= capacity(m)`` for every machine and resource, and ``capacity - free`` equals the
sum of the live placements on the machine. An allocation that would break them raises
:class:`CapacityError` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from schedlab.scheduling.resources import _EPS, Resources, _raw
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import AllocationError, CapacityError, TopologyError


def machine_capacity(cluster: Cluster, machine: str) -> Resources:
    """A machine's full capacity as :class:`Resources`."""
    m = cluster.machine(machine)
    return Resources(m.gpus, m.cpus, float(m.host_memory_gb))


class ClusterState:
    """Free resources of every machine of ``cluster`` and the placement of every live job."""

    __slots__ = ("cluster", "_capacity", "_free", "_placements", "_free_gpus")

    def __init__(self, cluster: Cluster, reserved: Mapping[str, Resources] | None = None) -> None:
        self.cluster = cluster
        self._capacity: dict[str, Resources] = {m: machine_capacity(cluster, m) for m in cluster.machines}
        self._free: dict[str, Resources] = dict(self._capacity)
        for m, r in (reserved or {}).items():
            if m not in self._capacity:
                raise TopologyError(f"reserved resources on unknown machine {m!r}")
            left = self._free[m] - r
            if not left.is_nonnegative():
                raise CapacityError(f"reserved {r} exceeds the capacity of machine {m!r}")
            self._free[m] = left
        self._placements: dict[str, Mapping[str, Resources]] = {}
        self._free_gpus = sum(r.gpus for r in self._free.values())

    # --------------------------------------------------------------- queries
    def capacity(self, machine: str) -> Resources:
        try:
            return self._capacity[machine]
        except KeyError:
            raise TopologyError(f"cluster {self.cluster.name!r} has no machine {machine!r}") from None

    def free(self, machine: str) -> Resources:
        try:
            return self._free[machine]
        except KeyError:
            raise TopologyError(f"cluster {self.cluster.name!r} has no machine {machine!r}") from None

    @property
    def free_map(self) -> Mapping[str, Resources]:
        return MappingProxyType(self._free)

    @property
    def free_gpus(self) -> int:
        return self._free_gpus

    def placement(self, job_id: str) -> Mapping[str, Resources]:
        try:
            return self._placements[job_id]
        except KeyError:
            raise AllocationError(f"job {job_id!r} holds no resources") from None

    @property
    def jobs(self) -> tuple[str, ...]:
        return tuple(self._placements)

    # ------------------------------------------------------------- mutation
    def can_allocate(self, placement: Mapping[str, Resources]) -> bool:
        for m, r in placement.items():
            f = self._free.get(m)
            if f is None or not r.is_nonnegative() or not r <= f:
                return False
        return True

    def allocate(self, job_id: str, placement: Mapping[str, Resources]) -> None:
        """Give ``job_id`` the resources of ``placement``; all or nothing."""
        free = self._free
        if placement and job_id not in self._placements:
            # one pass: every share non-negative and within what is free (else the checks below name
            # what is wrong); the new free amounts are the same differences ``free - r``
            left = []
            g = 0
            for m, r in placement.items():
                f = free.get(m)
                if f is None:
                    break
                rg, rc, rm = r.gpus, r.cpus, r.mem_gb
                if rg < 0 or rc < 0 or rm < -_EPS or rg > f.gpus or rc > f.cpus or rm > f.mem_gb + _EPS:
                    break
                left.append((m, _raw(f.gpus - rg, f.cpus - rc, f.mem_gb - rm)))
                g += rg
            else:
                for m, r in left:
                    free[m] = r
                self._free_gpus -= g
                self._placements[job_id] = MappingProxyType(dict(placement))
                return
        if job_id in self._placements:
            raise AllocationError(f"job {job_id!r} already holds resources; release it first")
        if not placement:
            raise AllocationError(f"job {job_id!r}: empty placement")
        for m, r in placement.items():
            if m not in self._free:
                raise TopologyError(f"job {job_id!r}: cluster {self.cluster.name!r} has no machine {m!r}")
            if not r.is_nonnegative():
                raise AllocationError(f"job {job_id!r}: negative resources {r} on machine {m!r}")
            over = r.exceeded(self._free[m])
            if over:
                f = self._free[m]
                raise CapacityError(
                    f"job {job_id!r} needs {r} on machine {m!r}, which has {f} free "
                    f"(over in {', '.join(over)})")
        for m, r in placement.items():
            self._free[m] = self._free[m] - r
        self._free_gpus -= sum(r.gpus for r in placement.values())
        self._placements[job_id] = MappingProxyType(dict(placement))

    def release(self, job_id: str) -> Mapping[str, Resources]:
        """Return ``job_id``'s resources; returns the placement it held."""
        placement = self._placements.pop(job_id, None)
        if placement is None:
            raise AllocationError(f"job {job_id!r} holds no resources to release")
        free = self._free
        g = 0
        for m, r in placement.items():
            f = free[m]
            free[m] = _raw(f.gpus + r.gpus, f.cpus + r.cpus, f.mem_gb + r.mem_gb)  # (= f + r)
            g += r.gpus
        self._free_gpus += g
        return placement

    def copy(self) -> ClusterState:
        c = ClusterState.__new__(ClusterState)
        c.cluster = self.cluster
        c._capacity = self._capacity
        c._free = dict(self._free)
        c._placements = dict(self._placements)
        c._free_gpus = self._free_gpus
        return c

    def check_invariants(self) -> None:
        """Recompute usage from the placements and compare (used by tests and debug runs)."""
        used = {m: Resources() for m in self._capacity}
        for p in self._placements.values():
            for m, r in p.items():
                used[m] = used[m] + r
        for m, cap in self._capacity.items():
            f = self._free[m]
            if not (f.is_nonnegative() and f <= cap):
                raise CapacityError(f"machine {m!r}: free {f} outside [0, {cap}]")
            u = cap - f
            if (u.gpus, u.cpus) != (used[m].gpus, used[m].cpus) or abs(u.mem_gb - used[m].mem_gb) > 1e-6:
                # reserved capacity shows up as used without a placement
                if not (used[m] <= u):
                    raise CapacityError(f"machine {m!r}: bookkeeping differs from placements")
        if self._free_gpus != sum(r.gpus for r in self._free.values()):
            raise CapacityError("free GPU counter differs from the per-machine sum")


__all__ = ["ClusterState", "machine_capacity"]
