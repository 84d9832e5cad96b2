"""A scheduling snapshot: topology + jobs + what runs now + tenant quotas."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.state import machine_capacity
from schedlab.topology.checks import frozen_reduce, integer, number, of_type, text
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import AllocationError, SpecError

_INF = float("inf")


@dataclass(frozen=True, slots=True)
class JobProgress:
    """What a job has done before the snapshot (for policies that read it: LAS, Gittins, Dally's
    starvation). ``progress`` in iterations, ``attained`` in GPU-seconds of running, ``executed`` and
    ``waited`` in seconds, ``last_change`` the time of its last start/preemption/reconfiguration."""

    progress: float = 0.0
    attained: float = 0.0
    executed: float = 0.0
    waited: float = 0.0
    preemptions: int = 0
    last_change: float | None = None
    reconfigurations: int = 0

    def __post_init__(self) -> None:
        src = "<JobProgress>"
        for name in ("progress", "attained", "executed", "waited"):
            object.__setattr__(self, name, number(getattr(self, name), name, source=src, ge=0))
        object.__setattr__(self, "preemptions", integer(self.preemptions, "preemptions", source=src, ge=0))
        object.__setattr__(self, "reconfigurations", integer(self.reconfigurations, "reconfigurations", source=src,
                                                             ge=0))
        if self.last_change is not None:
            object.__setattr__(self, "last_change", number(self.last_change, "last_change", source=src, ge=0))

    def as_dict(self) -> dict[str, float | int | None]:
        return {"progress": self.progress, "attained": self.attained, "executed": self.executed,
                "waited": self.waited, "preemptions": self.preemptions, "last_change": self.last_change,
                "reconfigurations": self.reconfigurations}


@dataclass(frozen=True)
class Instance:
    """One decision problem.

    ``jobs`` are the jobs the decision covers (queued and running). ``current`` is the allocation in
    force before the decision (running jobs; empty for a cold start), used for reconfiguration costs.
    ``quotas`` maps tenant -> quota on the sum of its guaranteed jobs' quota usage. ``reserved`` is
    capacity per machine held by work outside the decision (not available to it). ``progress`` is what
    each job has done so far (absent: nothing; a cold start).
    """

    cluster: Cluster
    jobs: tuple[Job, ...]
    current: Allocation = field(default_factory=Allocation)
    quotas: Mapping[str, Resources] = field(default_factory=dict)
    reserved: Mapping[str, Resources] = field(default_factory=dict)
    time: float = 0.0
    progress: Mapping[str, JobProgress] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # fast paths (type identity) first: the simulator builds one small instance per decision
        src = "<instance>"
        if type(self.cluster) is not Cluster:
            of_type(self.cluster, Cluster, "cluster", source=src)
        if type(self.current) is not Allocation:
            of_type(self.current, Allocation, "current", source=src)
        t = self.time
        if not (type(t) is float and 0.0 <= t < _INF):
            object.__setattr__(self, "time", number(t, "time", source=src, ge=0))
        for name in ("quotas", "reserved", "progress"):
            if type(getattr(self, name)) is not dict:
                of_type(getattr(self, name), Mapping, name, source=src)
        jobs = self.jobs
        if type(jobs) is not tuple:
            if isinstance(jobs, (str, bytes, Mapping)) or not isinstance(jobs, Iterable):
                raise SpecError(f"jobs must be a sequence of Job, got {type(jobs).__name__}", source=src,
                                field="jobs")
            jobs = tuple(jobs)
            object.__setattr__(self, "jobs", jobs)
        for i, j in enumerate(jobs):
            if type(j) is not Job:
                of_type(j, Job, f"jobs[{i}]", source=src)
        for name in ("quotas", "reserved"):
            for k, r in getattr(self, name).items():
                if type(k) is not str or type(r) is not Resources:
                    text(k, f"{name} key", source=src)
                    of_type(r, Resources, f"{name}[{k!r}]", source=src)
        for k, p in self.progress.items():
            if type(p) is not JobProgress:
                of_type(p, JobProgress, f"progress[{k!r}]", source=src)
        object.__setattr__(self, "progress", MappingProxyType(dict(self.progress)))
        object.__setattr__(self, "quotas", MappingProxyType(dict(self.quotas)))
        object.__setattr__(self, "reserved", MappingProxyType(dict(self.reserved)))
        seen: set[str] = set()
        for j in self.jobs:
            if j.id in seen:
                raise SpecError(f"duplicate job id {j.id!r}", source="<instance>", field="jobs")
            seen.add(j.id)
        for ja in self.current:
            if ja.job_id not in seen:
                raise AllocationError(f"current allocation names job {ja.job_id!r}, not in the instance")
        for m in self.reserved:
            self.cluster.machine(m)
        for j in self.progress:
            if j not in seen:
                raise AllocationError(f"progress names job {j!r}, not in the instance")

    def __reduce__(self):  # mappingproxies do not pickle
        return frozen_reduce(self)

    @cached_property
    def job_by_id(self) -> Mapping[str, Job]:
        return MappingProxyType({j.id: j for j in self.jobs})

    def job(self, job_id: str) -> Job:
        try:
            return self.job_by_id[job_id]
        except KeyError:
            raise AllocationError(f"instance has no job {job_id!r}") from None

    def capacity(self, machine: str) -> Resources:
        """What the decision may use on ``machine``: its capacity minus ``reserved``."""
        cap = machine_capacity(self.cluster, machine)
        return cap - self.reserved.get(machine, Resources())


__all__ = ["Instance", "JobProgress"]
