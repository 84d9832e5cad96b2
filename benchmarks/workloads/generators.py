"""Seeded workload generators. Every function takes ``seed`` (``numpy.random.default_rng``); the same
seed gives the same trace.

* arrivals: :func:`poisson_arrivals` (exponential inter-arrival times, mean ``mean_s``) or
  :func:`batch_arrivals` (all at ``t = 0``);
* GPU demand: an exact mix ``{gpus: count}`` shuffled (Tiresias testbed), or a categorical
  distribution ``{gpus: probability}``;
* durations: log-uniform in ``[lo, hi]`` or log-normal (median, sigma), clipped;
* load scaling: :func:`scale_load` (time compression by a factor, or down-sampling a share of jobs);
* resampling: :func:`bootstrap` (a trace's arrivals kept, each arrival's job drawn with replacement from
  the trace's jobs: a new draw of the workload from the same population, same load and arrival process);
* :func:`synthetic_trace` puts these together into a :class:`Trace`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from schedlab.benchmarks.workloads.trace import Trace, TraceJob
from schedlab.topology.errors import SpecError

# Tiresias testbed (Sec. 6.1): 480 jobs, Poisson arrivals with mean inter-arrival 30 s, 2 min - 2 h.
TIRESIAS_MIX: Mapping[int, int] = {1: 240, 2: 40, 4: 80, 8: 90, 16: 25, 32: 5}
# GPU demand of the 82,247-job Philly table (shares of jobs, rounded; sia_philly_jobs.csv).
PHILLY_GPU_SHARES: Mapping[int, float] = {1: 0.9317, 2: 0.0221, 4: 0.0227, 8: 0.0200, 16: 0.0024,
                                          32: 0.0008, 64: 0.0002}
# GPU demand of Rubick's 406-job traces (counts of workload-base.csv, by model family; ours to generalise).
RUBICK_SMALL_GPUS: Mapping[int, float] = {1: 0.17, 2: 0.29, 4: 0.30, 8: 0.24}     # vit, roberta, bert, t5
RUBICK_GPT2_GPUS: Mapping[int, float] = {2: 0.3, 4: 0.3, 5: 0.15, 8: 0.25}
RUBICK_LLAMA7_GPUS: Mapping[int, float] = {8: 0.5, 16: 0.25, 32: 0.25}
RUBICK_LLAMA30_GPUS: Mapping[int, float] = {24: 0.25, 40: 0.45, 48: 0.3}


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def poisson_arrivals(n: int, mean_s: float, *, seed: int, start: float = 0.0) -> np.ndarray:
    """``n`` arrival times of a Poisson process: cumulative sums of Exp(mean ``mean_s``) gaps; the
    first job arrives at ``start``."""
    if mean_s <= 0:
        raise SpecError("mean inter-arrival time must be > 0", source="<generator>", field="mean_s")
    gaps = _rng(seed).exponential(mean_s, size=n)
    gaps[0] = 0.0
    return start + np.cumsum(gaps)


def batch_arrivals(n: int, *, at: float = 0.0) -> np.ndarray:
    return np.full(n, float(at))


def exact_mix(mix: Mapping[int, int], *, seed: int) -> np.ndarray:
    """Each GPU count ``g`` exactly ``mix[g]`` times, in a seeded random order."""
    arr = np.repeat(np.array(list(mix.keys()), dtype=int), list(mix.values()))
    _rng(seed).shuffle(arr)
    return arr


def categorical(n: int, shares: Mapping[int, float], *, seed: int) -> np.ndarray:
    keys = np.array(list(shares.keys()), dtype=int)
    p = np.array(list(shares.values()), dtype=float)
    return _rng(seed).choice(keys, size=n, p=p / p.sum())


def log_uniform(n: int, lo: float, hi: float, *, seed: int) -> np.ndarray:
    if not 0 < lo <= hi:
        raise SpecError("need 0 < lo <= hi", source="<generator>", field="durations")
    return np.exp(_rng(seed).uniform(np.log(lo), np.log(hi), size=n))


def log_normal(n: int, median: float, sigma: float, *, seed: int, lo: float = 1.0,
               hi: float = float("inf")) -> np.ndarray:
    return np.clip(_rng(seed).lognormal(np.log(median), sigma, size=n), lo, hi)


def synthetic_trace(name: str, submits: Sequence[float], gpus: Sequence[int], durations: Sequence[float], *,
                    models: Sequence[str | None] | None = None, tenants: Sequence[str] | None = None,
                    guaranteed: Sequence[bool] | None = None, plans: Sequence[str | None] | None = None,
                    cpus: Sequence[int] | None = None) -> Trace:
    n = len(submits)
    if not (len(gpus) == len(durations) == n):
        raise SpecError("submits, gpus and durations differ in length", source=f"<generator {name}>")
    jobs = [TraceJob(f"{name}-{i}", float(submits[i]), int(gpus[i]), float(durations[i]),
                     model=models[i] if models is not None else None,
                     tenant=tenants[i] if tenants is not None else "default",
                     guaranteed=bool(guaranteed[i]) if guaranteed is not None else False,
                     plan=plans[i] if plans is not None else None,
                     cpus=int(cpus[i]) if cpus is not None else None, line=i + 1)
            for i in range(n)]
    jobs.sort(key=lambda j: j.submit)
    return Trace(name, f"<generator {name}>", tuple(jobs))


def scale_load(trace: Trace, factor: float, *, method: str = "compress", seed: int = 0) -> Trace:
    """Raise (``factor > 1``) or lower the load: ``compress`` divides submit times by ``factor``;
    ``sample`` keeps each job with probability ``factor`` (``<= 1``, seeded)."""
    if not factor > 0:
        raise SpecError("load factor must be > 0", source="<scale_load>", field="factor")
    if method == "compress":
        jobs = tuple(replace(j, submit=j.submit / factor) for j in trace.jobs)
    elif method == "sample":
        if factor > 1:
            raise SpecError("down-sampling needs factor <= 1", source="<scale_load>", field="factor")
        keep = _rng(seed).random(len(trace.jobs)) < factor
        jobs = tuple(j for j, k in zip(trace.jobs, keep, strict=True) if k)
    else:
        raise SpecError(f"unknown load-scaling method {method!r}; use compress or sample",
                        source="<scale_load>", field="method")
    return replace(trace, jobs=jobs)


def busiest_window(trace: Trace, hours: float, *, by: str = "jobs") -> Trace:
    """The jobs submitted in the ``hours``-long window with the most submissions (``by="jobs"``, how
    Rubick took the busiest 12 h of Philly before down-sampling to 406 jobs) or the most requested
    GPU-hours (``by="gpu_hours"``); submit times re-based to the window start."""
    jobs = trace.jobs
    if not jobs:
        return trace
    if by not in ("jobs", "gpu_hours"):
        raise SpecError(f"busiest_window: by must be jobs or gpu_hours, not {by!r}", source="<generator>",
                        field="by")
    w = hours * 3600.0
    sub = np.array([j.submit for j in jobs])
    weights = [1.0 if by == "jobs" else j.gpus * (j.duration or 0.0) for j in jobs]
    work = np.cumsum([0.0, *weights])
    ends = np.searchsorted(sub, sub + w, side="left")
    best = int(np.argmax(work[ends] - work[np.arange(len(jobs))]))
    sel = jobs[best:int(ends[best])]
    t0 = sel[0].submit
    return replace(trace, jobs=tuple(replace(j, submit=j.submit - t0) for j in sel))


def downsample(trace: Trace, n: int, *, seed: int) -> Trace:
    """``n`` jobs drawn without replacement (seeded), in submit order."""
    if n >= len(trace.jobs):
        return trace
    idx = np.sort(_rng(seed).choice(len(trace.jobs), size=n, replace=False))
    return replace(trace, jobs=tuple(trace.jobs[i] for i in idx))


def bootstrap(trace: Trace, *, seed: int) -> Trace:
    """The trace's arrival times (and job ids) kept; each arrival's job attributes — the whole row but
    its arrival and id (GPU count, duration, model, tenant, ... and the source line it came from) —
    drawn with replacement from the trace's jobs (``numpy.random.default_rng(seed)``). The same seed
    gives the same workload; the load and the arrival process are the trace's."""
    jobs = trace.jobs
    if not jobs:
        return trace
    idx = _rng(seed).integers(len(jobs), size=len(jobs))
    out = tuple(replace(jobs[int(k)], id=j.id, submit=j.submit) for j, k in zip(jobs, idx, strict=True))
    return replace(trace, jobs=out)


__all__ = ["PHILLY_GPU_SHARES", "RUBICK_GPT2_GPUS", "RUBICK_LLAMA30_GPUS", "RUBICK_LLAMA7_GPUS",
           "RUBICK_SMALL_GPUS", "TIRESIAS_MIX", "batch_arrivals", "bootstrap", "busiest_window", "categorical",
           "downsample", "exact_mix", "log_normal", "log_uniform", "poisson_arrivals", "scale_load",
           "synthetic_trace"]
