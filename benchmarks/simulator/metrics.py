"""Metrics of a run, from the job records and the state series.

JCT = end - arrival; queueing delay = first start - arrival; waiting = all time queued, including
after preemptions (the two differ only for preemptive policies: a 2D-LAS job starts at once in Q1 and
waits later, when it is demoted and preempted); makespan = last end - first arrival;
utilisation = sum of GPU-seconds held / (cluster GPUs x makespan); communication overhead = exposed
communication seconds / productive running seconds (sums over jobs). Percentiles use linear
interpolation (numpy's default). Tiresias bins: *small* = at most ``small_gpus`` GPUs (4 on its
testbed, 8 on Philly), *short* = ideal duration (at the requested resources) below ``short_s``
(800 s on the testbed, 4 h on Philly). ``classes``: per job class (guaranteed / best-effort) the
jobs, average and P99 JCT and makespan (Rubick's Table 4 splits multi-tenant runs this way).
``slowed_2x_by_placement``: jobs whose placement slowdown (``JobRecord.placement_slowdown``: iteration
time over that of the same GPUs on the most consolidated placement, the largest over the job's
allocations) exceeded :data:`SLOWED` = 2; ``max_placement_slowdown`` the largest of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schedlab.benchmarks.simulator.records import JobRecord

SLOWED = 2.0  # a job counts as slowed by placement above this factor


def _stats(values: np.ndarray, prefix: str) -> dict[str, float]:
    if values.size == 0:
        return {f"avg_{prefix}": float("nan"), f"median_{prefix}": float("nan"),
                f"p95_{prefix}": float("nan"), f"p99_{prefix}": float("nan")}
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return {f"avg_{prefix}": float(values.mean()), f"median_{prefix}": float(p50),
            f"p95_{prefix}": float(p95), f"p99_{prefix}": float(p99)}


def summarize(jobs: Sequence[JobRecord], *, total_gpus: int, small_gpus: int = 8,
              short_s: float = 4 * 3600.0) -> dict[str, float | int | dict]:
    """The metrics dictionary of one run (keys as in ``schedlab simulate --format json``)."""
    n = len(jobs)
    jct = np.fromiter((r.jct for r in jobs), float, n)
    queue = np.fromiter((r.queue_delay for r in jobs), float, n)
    out: dict[str, float | int | dict] = {"jobs": n}
    out.update(_stats(jct, "jct"))
    q = _stats(queue, "queue")
    out.update(q)
    out.update(_stats(np.fromiter((r.waiting for r in jobs), float, n), "waiting"))
    if n:
        makespan = max(r.end for r in jobs) - min(r.arrival for r in jobs)
        held = sum(r.gpu_seconds for r in jobs)
        run = sum(r.run_seconds for r in jobs)
        comm = sum(r.comm_seconds for r in jobs)
    else:
        makespan = held = run = comm = 0.0
    out["makespan"] = float(makespan)
    out["utilization"] = float(held / (total_gpus * makespan)) if makespan > 0 else 0.0
    out["comm_overhead"] = float(comm / run) if run > 0 else 0.0
    out["gpu_seconds"] = float(held)
    out["preemptions"] = int(sum(r.preemptions for r in jobs))
    out["reconfigurations"] = int(sum(r.reconfigurations for r in jobs))
    # jobs whose placement made them more than 2x slower than on the most consolidated placement
    out["slowed_2x_by_placement"] = int(sum(1 for r in jobs if r.placement_slowdown > SLOWED))
    out["max_placement_slowdown"] = float(max((r.placement_slowdown for r in jobs), default=1.0))
    bins: dict[str, dict[str, float | int]] = {}
    for size in ("small", "large"):
        for length in ("short", "long"):
            sel = [r.jct for r in jobs if ((r.gpus <= small_gpus) == (size == "small"))
                   and ((r.ideal_duration < short_s) == (length == "short"))]
            bins[f"{size}-{length}"] = {"jobs": len(sel), "avg_jct": float(np.mean(sel)) if sel else float("nan")}
    out["bins"] = bins
    classes: dict[str, dict[str, float | int]] = {}  # Rubick's guaranteed / best-effort split
    for cls in sorted({r.job_class for r in jobs}):
        sel = [r for r in jobs if r.job_class == cls]
        cj = np.fromiter((r.jct for r in sel), float, len(sel))
        classes[cls] = {"jobs": len(sel), "avg_jct": float(cj.mean()), "p99_jct": float(np.percentile(cj, 99)),
                        "makespan": float(max(r.end for r in sel) - min(r.arrival for r in sel))}
    out["classes"] = classes
    return out


__all__ = ["SLOWED", "summarize"]
