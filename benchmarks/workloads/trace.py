"""Trace jobs (what a trace row says) and workloads (simulator-ready jobs + their setting)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from schedlab.benchmarks.workloads.assumptions import AssumptionReport, Note
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class TraceJob:
    """One trace row, normalised: ``submit`` and ``duration`` in seconds (submit relative to the
    trace's first selected job), ``gpus`` requested. Optional fields are ``None`` when the format lacks
    them. ``line`` is the row's 1-based line in its file."""

    id: str
    submit: float
    gpus: int
    duration: float | None = None
    model: str | None = None
    tenant: str = "default"
    cpus: int | None = None
    mem_gb: float | None = None
    iterations: float | None = None
    plan: str | None = None
    guaranteed: bool = False
    batch_size: int | None = None
    line: int = 0
    attrs: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        if type(self.attrs) is not MappingProxyType:
            object.__setattr__(self, "attrs", MappingProxyType(dict(self.attrs)))


_TJ_SET = tuple(getattr(TraceJob, f.name).__set__ for f in fields(TraceJob))
_new = object.__new__


def plain_trace_job(id: str, submit: float, gpus: int, duration: float | None, tenant: str, line: int) -> TraceJob:
    """``TraceJob(id, submit, gpus, duration, tenant=tenant, line=line)`` (every other field its default)
    without the frozen ``__init__``'s ``object.__setattr__`` per field (a loader builds one per row)."""
    tj = _new(TraceJob)
    s = _TJ_SET
    s[0](tj, id)
    s[1](tj, submit)
    s[2](tj, gpus)
    s[3](tj, duration)
    s[4](tj, None)
    s[5](tj, tenant)
    s[6](tj, None)
    s[7](tj, None)
    s[8](tj, None)
    s[9](tj, None)
    s[10](tj, False)
    s[11](tj, None)
    s[12](tj, line)
    s[13](tj, _EMPTY)
    return tj


@dataclass(frozen=True, slots=True)
class Trace:
    """Loaded trace rows, sorted by submit time (stable). ``skipped`` rows were bad and dropped in
    lenient mode (``errors`` keeps the first messages); ``filtered`` rows were dropped by selection.
    ``notes`` say what the load assumed or selected (:mod:`~schedlab.benchmarks.workloads.assumptions`);
    ``origin`` is the trace time (s, in the file's own time base) that became ``t = 0``."""

    name: str
    source: str
    jobs: tuple[TraceJob, ...]
    skipped: int = 0
    filtered: int = 0
    errors: tuple[str, ...] = ()
    notes: tuple[Note, ...] = ()
    origin: float = 0.0

    def __len__(self) -> int:
        return len(self.jobs)


@dataclass(frozen=True, slots=True)
class Workload:
    """Simulator-ready jobs with the setting they were made for: default cluster, tenant quotas and
    the Tiresias bin thresholds (small = at most ``small_gpus`` GPUs, short = below ``short_s``).
    ``assumptions``: what the load assumed or selected; ``setting``: what it set up (the format, an
    auto-sized cluster)."""

    name: str
    jobs: tuple[Job, ...]
    cluster: str | None = None
    quotas: Mapping[str, Resources] = field(default_factory=dict)
    small_gpus: int | None = None
    short_s: float = 4 * 3600.0
    description: str = ""
    skipped: int = 0
    assumptions: AssumptionReport = field(default_factory=AssumptionReport)
    setting: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "quotas", MappingProxyType(dict(self.quotas)))
        object.__setattr__(self, "setting", MappingProxyType(dict(self.setting)))

    def simulator_args(self) -> dict[str, Any]:
        """The simulator's arguments this workload sets (tenant quotas, the Tiresias bin thresholds): the
        one place every replay of a workload takes them from, so none forgets the quotas."""
        return {"quotas": self.quotas, "small_gpus": self.small_gpus, "short_s": self.short_s}

__all__ = ["Trace", "TraceJob", "Workload", "plain_trace_job"]
