"""What ``--semantics tiresias`` does to the cluster and the jobs: the Tiresias artifact's view of them.

The artifact's simulator (SymbioticLab/Tiresias, ``simulator/``, scheme ``count``) counts GPUs and
nothing else, reads whole seconds and never resizes a job. Three adjustments reproduce that on our
simulator without a second event loop:

* :func:`pooled_cluster` — the cluster becomes *one pool of GPUs*: a single machine holding all of
  them (the smallest GPU memory of the original machines, the sum of their CPUs and host memory), so
  a job fits exactly when enough GPUs are free anywhere, whatever policy places it.
* :func:`artifact_jobs` — a job that a trace conversion cut down to the cluster's size
  (``attrs["requested_gpus"]`` above the cluster's GPUs) gets its original request back: it never
  runs (FIFO blocks behind it for good; preemptive schedules skip it), as in the artifact; and every
  arrival and duration is floored to whole seconds (the artifact's ``int(...)`` on reading), with a
  1-second minimum duration.
* the engine snaps completion times to whole seconds when floating-point error is all that separates
  them from one (``snap``), so same-second events batch together as in the artifact.

:class:`ArtifactNotes` counts what was changed; the simulator reports the counts in its metrics.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.loaders import spec_from_dict

SNAP_S = 1e-6  # completion times within this of a whole second are that second


@dataclass
class ArtifactNotes:
    """What :func:`artifact_jobs` changed: ``oversized`` jobs given back their uncut request (they never
    run), ``rounded`` jobs whose arrival or duration was floored to whole seconds."""

    oversized: int = 0
    rounded: int = 0


def pooled_cluster(cluster: Cluster) -> Cluster:
    """One machine with every GPU of ``cluster`` (see the module docstring)."""
    ms = [cluster.machine(m) for m in cluster.machines if cluster.machine(m).gpus > 0]
    first = ms[0]
    return Cluster(spec_from_dict({
        "name": f"{cluster.name}-pool",
        "defaults": {"gpus": sum(m.gpus for m in ms), "gpu_model": first.gpu_model,
                     "gpu_memory_gb": min(m.gpu_memory_gb for m in ms), "cpus": sum(m.cpus for m in ms),
                     "host_memory_gb": sum(m.host_memory_gb for m in ms), "pcie_gbps": min(m.pcie_gbps for m in ms)},
        "links": {"machine": {"bandwidth_gbps": first.intra.bandwidth_gbps, "latency_us": 1.0},
                  "rack": {"bandwidth_gbps": first.intra.bandwidth_gbps, "latency_us": 1.0}},
        "racks": 1, "machines_per_rack": 1,
    }, source=f"<pooled {cluster.name}>"))


def _whole(job: Job) -> tuple[Job, bool]:
    """``job`` with a whole-second arrival and duration (run time at the request)."""
    arrival = float(math.floor(job.arrival + SNAP_S))
    it = job.attrs.get("iter_time")
    d = job.duration if job.duration is not None else (job.iterations * it if it is not None else None)
    if d is None:
        changed = arrival != job.arrival
        return (replace(job, arrival=arrival) if changed else job), changed
    whole = float(max(1, math.floor(d + SNAP_S)))
    if whole == d and arrival == job.arrival and it is not None:
        return job, False
    attrs = dict(job.attrs)
    attrs["iter_time"] = whole / job.iterations
    return replace(job, arrival=arrival, duration=whole, attrs=attrs), whole != d or arrival != job.arrival


def artifact_jobs(jobs: Iterable[Job], total_gpus: int, *, notes: ArtifactNotes | None = None) -> tuple[Job, ...]:
    """The jobs as the artifact reads them (see the module docstring)."""
    notes = notes if notes is not None else ArtifactNotes()
    out = []
    for j in jobs:
        orig = j.attrs.get("requested_gpus")
        if isinstance(orig, int) and orig > total_gpus >= j.requested.gpus:
            scale = j.requested.gpus / orig  # the conversion kept GPU-hours: duration' = duration * g / g'
            j = replace(j, requested=Resources(orig), plan=None, min_resources=None,
                        duration=j.duration * scale if j.duration is not None else None)
            notes.oversized += 1
        j, rounded = _whole(j)
        notes.rounded += rounded
        out.append(j)
    return tuple(out)


def snap(t: float) -> float:
    """``t`` rounded to the whole second when within :data:`SNAP_S` of it."""
    if not math.isfinite(t):
        return t
    r = round(t)
    return float(r) if abs(t - r) < SNAP_S else t


__all__ = ["SNAP_S", "ArtifactNotes", "artifact_jobs", "pooled_cluster", "snap"]
