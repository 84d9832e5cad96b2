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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np

from schedlab.benchmarks.simulator.records import JobRecord

__all__ = ["SLOWED", "RunMetrics", "summarize"]

SLOWED = 2.0  # a job counts as slowed by placement above this factor
_COLUMNS = attrgetter("jct", "queue_delay", "waiting", "end", "arrival", "gpu_seconds", "run_seconds", "comm_seconds",
                      "preemptions", "reconfigurations", "placement_slowdown", "gpus", "ideal_duration", "job_class")


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
    # the records' columns, read once (every sum and mean below runs over them in record order)
    if n:
        (jct_c, queue_c, wait_c, end_c, arr_c, held_c, run_c, comm_c, pre_c, rec_c, slow_c, gpus_c, ideal_c,
         cls_c) = zip(*map(_COLUMNS, jobs), strict=True)
    else:
        jct_c = queue_c = wait_c = end_c = arr_c = held_c = run_c = comm_c = pre_c = rec_c = slow_c = gpus_c = \
            ideal_c = cls_c = ()
    jct = np.fromiter(jct_c, float, n)
    queue = np.fromiter(queue_c, float, n)
    out: dict[str, float | int | dict] = {"jobs": n}
    out.update(_stats(jct, "jct"))
    q = _stats(queue, "queue")
    out.update(q)
    out.update(_stats(np.fromiter(wait_c, float, n), "waiting"))
    if n:
        makespan = max(end_c) - min(arr_c)
        held = sum(held_c)
        run = sum(run_c)
        comm = sum(comm_c)
    else:
        makespan = held = run = comm = 0.0
    out["makespan"] = float(makespan)
    out["utilization"] = float(held / (total_gpus * makespan)) if makespan > 0 else 0.0
    out["comm_overhead"] = float(comm / run) if run > 0 else 0.0
    out["gpu_seconds"] = float(held)
    out["preemptions"] = int(sum(pre_c))
    out["reconfigurations"] = int(sum(rec_c))
    # jobs whose placement made them more than 2x slower than on the most consolidated placement
    out["slowed_2x_by_placement"] = int(sum(1 for x in slow_c if x > SLOWED))
    out["max_placement_slowdown"] = float(max(slow_c, default=1.0))
    bins: dict[str, dict[str, float | int]] = {}
    # masks over the columns (a bin's JCTs in record order: the mean numpy takes of the same floats)
    small = np.fromiter(gpus_c, float, n) <= small_gpus
    short = np.fromiter(ideal_c, float, n) < short_s
    for size in ("small", "large"):
        for length in ("short", "long"):
            sel = jct[(small if size == "small" else ~small) & (short if length == "short" else ~short)]
            bins[f"{size}-{length}"] = {"jobs": int(sel.size), "avg_jct": float(np.mean(sel)) if sel.size else float("nan")}
    out["bins"] = bins
    classes: dict[str, dict[str, float | int]] = {}  # Rubick's guaranteed / best-effort split
    kinds = sorted(set(cls_c))
    for cls in kinds:
        if len(kinds) == 1:  # (one class: every job, in record order)
            cj, ends, arrs = jct, end_c, arr_c
        else:
            idx = [i for i, c in enumerate(cls_c) if c == cls]
            cj = np.fromiter((jct_c[i] for i in idx), float, len(idx))
            ends, arrs = [end_c[i] for i in idx], [arr_c[i] for i in idx]
        classes[cls] = {"jobs": int(cj.size), "avg_jct": float(cj.mean()), "p99_jct": float(np.percentile(cj, 99)),
                        "makespan": float(max(ends) - min(arrs))}
    out["classes"] = classes
    return out


@dataclass(frozen=True)
class RunMetrics(Mapping[str, Any]):
    """The metrics of one run, typed: the records' summary (:func:`summarize`: JCT, queueing, waiting,
    makespan, utilisation, Tiresias bins, job classes), what did not finish, the guarantee check, and
    the optional parts (GPU sharing, capped communication overheads, a policy's counters, the Tiresias
    artifact's job notes), ``None`` when a run has none. It reads as the flat dictionary
    ``schedlab simulate --format json`` prints (``m["avg_jct"]``, ``dict(m)``, :meth:`as_dict`)."""

    summary: Mapping[str, Any]
    unfinished: int
    guarantee: Mapping[str, float | int]
    shared_starts: int | None = None        # Share guests started on a host's GPUs
    shared_suspensions: int | None = None   # ... and suspended
    comm_overhead_capped: Mapping[str, int] | None = None  # Table 1 overheads bounded by max_overhead
    policy_counters: Mapping[str, int] | None = None       # fallbacks a policy applied, counted
    oversized_jobs: int | None = None       # Tiresias artifact: kept uncut, they never run
    rounded_jobs: int | None = None         # Tiresias artifact: times floored to whole seconds
    _flat: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        flat = dict(self.summary)
        flat["unfinished"] = self.unfinished
        if self.shared_starts is not None:
            flat["shared_starts"] = self.shared_starts
            flat["shared_suspensions"] = self.shared_suspensions
        if self.comm_overhead_capped is not None:
            flat["comm_overhead_capped"] = dict(self.comm_overhead_capped)
        flat.update(self.guarantee)
        if self.policy_counters is not None:
            flat["policy_counters"] = dict(self.policy_counters)
        if self.oversized_jobs is not None:
            flat["oversized_jobs"] = self.oversized_jobs
            flat["rounded_jobs"] = self.rounded_jobs
        object.__setattr__(self, "_flat", flat)

    def __getitem__(self, key: str) -> Any:
        return self._flat[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._flat)

    def __len__(self) -> int:
        return len(self._flat)

    def __getattr__(self, name: str) -> Any:
        """A summary metric by attribute (``m.avg_jct``, ``m.makespan``)."""
        flat = self.__dict__.get("_flat")
        if flat is not None and name in flat:
            return flat[name]
        raise AttributeError(name)

    def as_dict(self) -> dict[str, Any]:
        """A new flat dictionary (keys as in ``schedlab simulate --format json``)."""
        return dict(self._flat)
