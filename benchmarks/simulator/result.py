"""What a replay gives (:class:`SimResult`, :class:`StopReason`) and the jobs as the simulator reads them
(:func:`prepare_jobs`: the semantics' request rules applied before the replay)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from enum import Enum

from schedlab.benchmarks.simulator.artifact import ArtifactNotes, artifact_jobs
from schedlab.benchmarks.simulator.costs import Semantics
from schedlab.benchmarks.simulator.metrics import RunMetrics
from schedlab.benchmarks.simulator.records import JobRecord, Recorder
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources

Progress = Callable[[float, int, int], None]  # (sim time, finished, total)


class StopReason(Enum):
    """Why :meth:`Simulator.run` returned."""

    DRAINED = "drained"          # no event left: every job that can finish did
    UNTIL = "until"              # the next event is after ``until``
    INTERRUPTED = "interrupted"  # Ctrl-C (KeyboardInterrupt): the records of what finished


@dataclass(frozen=True)
class SimResult:
    """What a run gave: the records, the typed metrics, the jobs not finished and why it stopped."""

    policy: str
    recorder: Recorder
    metrics: RunMetrics
    unfinished: tuple[str, ...]
    stop: StopReason
    events: int
    passes: int
    wall_s: float
    sim_time: float
    rate_sources: dict[str, int] = field(default_factory=dict)

    @property
    def interrupted(self) -> bool:
        """Stopped by Ctrl-C (``stop`` says why it stopped otherwise)."""
        return self.stop is StopReason.INTERRUPTED

    @property
    def jobs(self) -> list[JobRecord]:
        return self.recorder.jobs

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s if self.wall_s > 0 else float("inf")


def prepare_jobs(jobs: Iterable[Job], sem: Semantics, total_gpus: int | None = None,
                 notes: ArtifactNotes | None = None) -> tuple[Job, ...]:
    """Under ``gpu_only`` semantics requests keep their GPUs only (Tiresias: allocation by GPU count);
    under ``keep_oversized`` / ``whole_seconds`` the jobs are read as the Tiresias artifact reads them
    (:func:`~schedlab.benchmarks.simulator.artifact.artifact_jobs`)."""
    out = tuple(jobs)
    if (sem.keep_oversized or sem.whole_seconds) and total_gpus is not None:
        out = artifact_jobs(out, total_gpus, notes=notes)
    if sem.gpu_only:
        out = tuple(j if (j.requested.cpus == 0 and j.requested.mem_gb == 0) else
                    replace(j, requested=Resources(j.requested.gpus), min_resources=None) for j in out)
    return out


__all__ = ["Progress", "SimResult", "StopReason", "prepare_jobs"]
