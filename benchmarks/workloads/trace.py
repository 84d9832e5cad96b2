"""Trace jobs (what a trace row says) and workloads (simulator-ready jobs + their setting)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
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


__all__ = ["Trace", "TraceJob", "Workload"]
