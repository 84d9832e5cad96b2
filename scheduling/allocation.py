"""Allocations: for each placed job, its execution plan and ``{machine: Resources}``.

A job absent from an :class:`Allocation` is queued. Both types are immutable values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.resources import Resources
from schedlab.topology.checks import frozen_reduce, of_type, text
from schedlab.topology.errors import AllocationError


@dataclass(frozen=True, slots=True)
class JobAllocation:
    """One job's plan and its share of each machine.

    Types are checked at construction (a ``str`` job id, an :class:`ExecutionPlan`, ``{str: Resources}``);
    whether the placement makes sense on a cluster (capacity, gang, plan) is the verifier's question.
    """

    job_id: str
    plan: ExecutionPlan
    placement: Mapping[str, Resources]

    def __post_init__(self) -> None:
        if not (type(self.job_id) is str and self.job_id and type(self.plan) is ExecutionPlan):
            text(self.job_id, "job_id", source="<JobAllocation>")
            of_type(self.plan, ExecutionPlan, "plan", source=f"<allocation of job {self.job_id!r}>")
        placement = self.placement
        if type(placement) is not dict:
            of_type(placement, Mapping, "placement", source=f"<allocation of job {self.job_id!r}>")
        placement = dict(placement)
        for m, r in placement.items():
            if type(r) is not Resources or type(m) is not str:
                src = f"<allocation of job {self.job_id!r}>"
                of_type(r, Resources, f"placement[{m!r}]", source=src)
                text(m, "placement (machine name)", source=src)
        object.__setattr__(self, "placement", MappingProxyType(placement))

    def __reduce__(self):  # mappingproxies do not pickle
        return frozen_reduce(self)

    @property
    def resources(self) -> Resources:
        return Resources.total(self.placement.values())

    @property
    def gpus(self) -> int:
        return sum(r.gpus for r in self.placement.values())

    @property
    def gpu_counts(self) -> dict[str, int]:
        """``{machine: gpus}`` for machines with at least one GPU of this job."""
        return {m: r.gpus for m, r in self.placement.items() if r.gpus > 0}

    @property
    def machines(self) -> tuple[str, ...]:
        return tuple(self.placement)


_new = object.__new__
_SET_ID, _SET_PLAN, _SET_PLACEMENT = (getattr(JobAllocation, f).__set__ for f in ("job_id", "plan", "placement"))


def own_allocation(job_id: str, plan: ExecutionPlan, placement: dict[str, Resources]) -> JobAllocation:
    """``JobAllocation(job_id, plan, placement)`` of a policy's own values, without the constructor's type
    checks: ``job_id`` a non-empty str, ``plan`` an :class:`ExecutionPlan`, ``placement`` a new dict of
    machine name -> :class:`Resources` that nobody else holds (kept as the allocation's, not copied).
    What the placement means on a cluster is still the verifier's question."""
    ja = _new(JobAllocation)
    _SET_ID(ja, job_id)
    _SET_PLAN(ja, plan)
    _SET_PLACEMENT(ja, MappingProxyType(placement))
    return ja


@dataclass(frozen=True, slots=True)
class Allocation:
    """``job_id -> JobAllocation`` for every placed job; jobs not listed are queued."""

    assignments: Mapping[str, JobAllocation] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if type(self.assignments) is not dict:
            of_type(self.assignments, Mapping, "assignments", source="<Allocation>")
        for k, v in self.assignments.items():
            if type(v) is not JobAllocation:
                of_type(v, JobAllocation, f"assignments[{k!r}]", source="<Allocation>")
            if k != v.job_id:
                raise AllocationError(f"allocation key {k!r} holds the allocation of job {v.job_id!r}")
        object.__setattr__(self, "assignments", MappingProxyType(dict(self.assignments)))

    def __reduce__(self):  # mappingproxies do not pickle
        return frozen_reduce(self)

    @classmethod
    def of(cls, items: Iterable[JobAllocation]) -> Allocation:
        out: dict[str, JobAllocation] = {}
        for ja in items:
            if ja.job_id in out:
                raise AllocationError(f"job {ja.job_id!r} allocated twice")
            out[ja.job_id] = ja
        return cls(out)

    def __getitem__(self, job_id: str) -> JobAllocation:
        return self.assignments[job_id]

    def __contains__(self, job_id: object) -> bool:
        return job_id in self.assignments

    def __iter__(self) -> Iterator[JobAllocation]:
        return iter(self.assignments.values())

    def __len__(self) -> int:
        return len(self.assignments)

    def get(self, job_id: str) -> JobAllocation | None:
        return self.assignments.get(job_id)

    def with_job(self, ja: JobAllocation) -> Allocation:
        d = dict(self.assignments)
        d[ja.job_id] = ja
        return Allocation(d)

    def without(self, job_id: str) -> Allocation:
        d = dict(self.assignments)
        d.pop(job_id, None)
        return Allocation(d)

    def queued(self, job_ids: Iterable[str]) -> list[str]:
        """The ids among ``job_ids`` that this allocation leaves queued."""
        return [j for j in job_ids if j not in self.assignments]


def single_machine(job_id: str, plan: ExecutionPlan, machine: str, resources: Resources) -> JobAllocation:
    """Convenience: a job entirely on one machine."""
    return JobAllocation(job_id, plan, {machine: resources})



__all__ = ["Allocation", "JobAllocation", "own_allocation", "single_machine"]
