"""The optional hooks a policy may offer the simulator, as protocols (checked with ``isinstance``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster

__all__ = ["CountsFallbacks", "PreparesJobs"]


@runtime_checkable
class PreparesJobs(Protocol):
    """A policy that fills in or checks the jobs once, at load time (Rubick's minRes), under the perf
    model's ``calibration`` (the one the view will carry)."""

    def prepare_jobs(self, jobs: tuple[Job, ...], cluster: Cluster,
                     quotas: Mapping[str, Resources], *, calibration: str = ...) -> Iterable[Job]: ...


@runtime_checkable
class CountsFallbacks(Protocol):
    """A policy that counts the fallbacks it applied (``policy_counters`` in the run's metrics)."""

    @property
    def counters(self) -> Mapping[str, int]: ...
