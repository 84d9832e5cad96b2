"""Jobs: what a user submitted (immutable). Dynamic state (progress, attained service) lives in the
simulator's view, not here."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from types import MappingProxyType
from typing import Any

from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.resources import Resources
from schedlab.topology.checks import flag, frozen_reduce, integer, number, of_type, text
from schedlab.topology.errors import SpecError
from schedlab.topology.tiers import Tier

_set = object.__setattr__
_INF = math.inf


class JobClass(Enum):
    """Rubick's job classes: guaranteed jobs consume tenant quota and have an SLO (at least the
    throughput of their request); best-effort jobs use what is left and are preemptible."""

    GUARANTEED = "guaranteed"
    BEST_EFFORT = "best-effort"


@dataclass(frozen=True, slots=True)
class Job:
    """A training job as submitted.

    ``requested`` and ``plan`` are what the user asked for (``plan=None`` means plain data parallel
    over the requested GPUs). ``iterations`` is the total work. ``reconfigurable`` jobs may be given a
    different GPU count and plan (Rubick); the others are rigid gangs of exactly ``requested.gpus``
    GPUs (Tiresias, Dally). ``max_tier`` restricts placement (e.g. ``Tier.MACHINE``: one machine only).
    ``min_resources`` is Rubick's minRes (the quota usage of a guaranteed job). ``duration`` is the
    run time at the requested resources when known (oracles, offline bounds). ``attrs`` carries
    policy-specific static data (e.g. Dally compute time per iteration, Tiresias skew).

    Every field is checked at construction (:class:`SpecError` naming the job and the field): numbers
    are finite and never booleans (``iterations``, ``duration`` > 0, ``arrival`` >= 0, ``priority``
    finite, ``global_batch``/``num_layers`` integers >= 1); numpy scalars are stored as Python numbers.
    """

    id: str
    requested: Resources
    iterations: float = 1.0
    arrival: float = 0.0
    model: str = "unknown"
    tenant: str = "default"
    plan: ExecutionPlan | None = None
    job_class: JobClass = JobClass.BEST_EFFORT
    reconfigurable: bool = False
    max_tier: Tier | None = None
    min_resources: Resources | None = None
    global_batch: int | None = None
    num_layers: int | None = None
    duration: float | None = None
    priority: float = 0.0
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        it, arr, dur, gb, nl = self.iterations, self.arrival, self.duration, self.global_batch, self.num_layers
        if not (type(self.id) is str and self.id and type(self.requested) is Resources
                and type(it) is float and 0.0 < it < _INF and type(arr) is float and 0.0 <= arr < _INF
                and type(self.model) is str and self.model and type(self.tenant) is str and self.tenant
                and (self.plan is None or type(self.plan) is ExecutionPlan) and type(self.job_class) is JobClass
                and (self.reconfigurable is True or self.reconfigurable is False)
                and (self.max_tier is None or type(self.max_tier) is Tier)
                and (self.min_resources is None or type(self.min_resources) is Resources)
                and (gb is None or (type(gb) is int and gb >= 1)) and (nl is None or (type(nl) is int and nl >= 1))
                and (dur is None or (type(dur) is float and 0.0 < dur < _INF))
                and type(self.priority) is float and -_INF < self.priority < _INF):
            self._check_fields()  # the slow path: normalise (ints, numpy scalars) or name the bad field
        src = "<job>"
        if self.requested.gpus < 1:
            raise SpecError(f"job {self.id!r} requests {self.requested.gpus} GPUs; need >= 1",
                            source=src, field="requested.gpus")
        if not self.requested.is_nonnegative():
            raise SpecError(f"job {self.id!r} requests negative resources", source=src, field="requested")
        if self.plan is not None and self.plan.gpus != self.requested.gpus:
            raise SpecError(f"job {self.id!r}: plan {self.plan.name} uses {self.plan.gpus} GPUs but the job "
                            f"requests {self.requested.gpus}", source=src, field="plan")
        if self.min_resources is not None and not self.min_resources <= self.requested:
            raise SpecError(f"job {self.id!r}: min_resources exceed the request", source=src,
                            field="min_resources")
        attrs = self.attrs
        if type(attrs) is not dict:
            of_type(attrs, Mapping, "attrs", source=f"<job {self.id!r}>")
        _set(self, "attrs", MappingProxyType(dict(attrs)))

    def __reduce__(self):  # attrs is a mappingproxy, which does not pickle
        return frozen_reduce(self)

    def _check_fields(self) -> None:
        text(self.id, "id", source="<job>")
        src = f"<job {self.id!r}>"
        of_type(self.requested, Resources, "requested", source=src)
        _set(self, "iterations", number(self.iterations, "iterations", source=src, gt=0))
        _set(self, "arrival", number(self.arrival, "arrival", source=src, ge=0))
        text(self.model, "model", source=src)
        text(self.tenant, "tenant", source=src)
        of_type(self.plan, ExecutionPlan, "plan", source=src, optional=True)
        of_type(self.job_class, JobClass, "job_class", source=src)
        flag(self.reconfigurable, "reconfigurable", source=src)
        of_type(self.max_tier, Tier, "max_tier", source=src, optional=True)
        of_type(self.min_resources, Resources, "min_resources", source=src, optional=True)
        for name in ("global_batch", "num_layers"):
            v = getattr(self, name)
            if v is not None:
                _set(self, name, integer(v, name, source=src, ge=1))
        if self.duration is not None:
            _set(self, "duration", number(self.duration, "duration", source=src, gt=0))
        _set(self, "priority", number(self.priority, "priority", source=src))

    def sibling(self, id: str, iterations: float, arrival: float, tenant: str, duration: float | None,
                attrs: dict) -> Job:
        """A job of this job's shape (request, plan, model, class, flags, minRes, batch, layers, priority as
        here) with its own ``id``, ``iterations``, ``arrival``, ``tenant``, ``duration`` and ``attrs`` (a
        dict, taken as the job's, not copied): ``Job(...)`` of those fields, for converters that build many
        jobs of one shape (a trace's rows). The shape's checks passed when this job was built; the per-job
        fields get the constructor's checks here, and when one fails the constructor itself runs (its
        normalisation, or its error)."""
        if not (type(id) is str and id and type(iterations) is float and 0.0 < iterations < _INF
                and type(arrival) is float and 0.0 <= arrival < _INF and type(tenant) is str and tenant
                and (duration is None or (type(duration) is float and 0.0 < duration < _INF))
                and type(attrs) is dict):
            return Job(id, self.requested, iterations, arrival, self.model, tenant, self.plan, self.job_class,
                       self.reconfigurable, self.max_tier, self.min_resources, self.global_batch, self.num_layers,
                       duration, self.priority, attrs)
        j = _new(Job)
        _S_ID(j, id)
        _S_REQUESTED(j, self.requested)
        _S_ITERATIONS(j, iterations)
        _S_ARRIVAL(j, arrival)
        _S_MODEL(j, self.model)
        _S_TENANT(j, tenant)
        _S_PLAN(j, self.plan)
        _S_CLASS(j, self.job_class)
        _S_RECONF(j, self.reconfigurable)
        _S_TIER(j, self.max_tier)
        _S_MIN(j, self.min_resources)
        _S_BATCH(j, self.global_batch)
        _S_LAYERS(j, self.num_layers)
        _S_DURATION(j, duration)
        _S_PRIORITY(j, self.priority)
        _S_ATTRS(j, MappingProxyType(attrs))
        return j

    @property
    def requested_plan(self) -> ExecutionPlan:
        """The requested plan, defaulting to plain data parallel over the requested GPUs."""
        return self.plan if self.plan is not None else ExecutionPlan(dp=self.requested.gpus)

    @property
    def guaranteed(self) -> bool:
        return self.job_class is JobClass.GUARANTEED

    @property
    def quota_usage(self) -> Resources:
        """What a guaranteed job charges against its tenant's quota: minRes, else the request."""
        return self.min_resources if self.min_resources is not None else self.requested


# the slots' setters, in field order: :meth:`Job.sibling` fills a job without the frozen ``__init__``'s
# ``object.__setattr__`` per field
(_S_ID, _S_REQUESTED, _S_ITERATIONS, _S_ARRIVAL, _S_MODEL, _S_TENANT, _S_PLAN, _S_CLASS, _S_RECONF, _S_TIER, _S_MIN,
 _S_BATCH, _S_LAYERS, _S_DURATION, _S_PRIORITY, _S_ATTRS) = (getattr(Job, f.name).__set__ for f in fields(Job))
_new = object.__new__

__all__ = ["Job", "JobClass"]
