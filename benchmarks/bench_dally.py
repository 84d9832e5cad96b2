"""Dally performance benchmarks (figures for issue 14; not timed tests).

1. ``decision``: the cost of one Dally decision pass with 5,000 queued jobs on the ``philly`` preset
   (2,400 GPUs). A seeded batch of ``--queued`` + enough jobs to fill the cluster arrives at t = 0
   (Philly-like GPU demand: 1 GPU 70 %, 2: 10 %, 4: 10 %, 8: 8 %, 16: 2 %; log-uniform durations
   10 min .. 2 days; Dally's six Table-1 models); the simulator then runs, and every pass taken while at
   least ``--queued`` jobs wait is timed (``time.perf_counter`` around ``schedule``). The first pass
   (the cold start that places ~2,000 jobs at once) is reported apart. Target: mean < 10 ms.
2. ``philly``: the whole Philly table (82,247 jobs) under Dally, as ``schedlab simulate --trace
   ../shared/traces/philly/sia_philly_jobs.csv --trace-format philly -p dally`` does it: load,
   convert, simulate; wall time, the time spent inside the policy's ``schedule`` (the rest of the event
   loop is the simulator's own: verification, bookkeeping) and peak RSS. Target: < 2 min, < 2 GB.
   ``--policy fifo`` gives the same split for FIFO. Skips when the trace is absent.

    python -m schedlab.benchmarks.bench_dally decision [--queued 5000] [--policy dally] [--json]
    python -m schedlab.benchmarks.bench_dally philly [--trace PATH] [--policy dally] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np

DEFAULT_TRACES = ("../shared/traces/philly/sia_philly_jobs.csv", "/work/shared/traces/philly/sia_philly_jobs.csv")
GPU_MIX = {1: 0.70, 2: 0.10, 4: 0.10, 8: 0.08, 16: 0.02}


class Timed:
    """Wraps a policy; times each ``schedule`` call made while at least ``threshold`` jobs are queued."""

    def __init__(self, inner, threshold: int) -> None:
        self.inner = inner
        self.name = inner.name
        self.oracle = inner.oracle
        self.threshold = threshold
        self.first: float | None = None
        self.samples: list[float] = []
        self.queues: list[int] = []

    def schedule(self, view):
        q = view.queue_length
        t = time.perf_counter()
        d = self.inner.schedule(view)
        dt = time.perf_counter() - t
        if self.first is None:
            self.first = dt
        elif q >= self.threshold:
            self.samples.append(dt)
            self.queues.append(q)
        return d

    def decide(self, instance, *, seed=None):
        return self.inner.decide(instance, seed=seed)


def batch_jobs(n: int, seed: int = 0):
    from schedlab.benchmarks.workloads.convert import DALLY_MODELS
    from schedlab.scheduling import Job, Resources

    rng = np.random.default_rng(seed)
    gs = rng.choice(list(GPU_MIX), size=n, p=list(GPU_MIX.values()))
    secs = np.exp(rng.uniform(np.log(600.0), np.log(2 * 86400.0), size=n))
    models = rng.choice(DALLY_MODELS, size=n)
    return [Job(f"j{i}", Resources(int(g)), iterations=float(s), arrival=0.0, model=str(m),
                attrs={"compute_time": 1.0, "rates": "tier"}) for i, (g, s, m) in enumerate(zip(gs, secs, models, strict=True))]


def bench_decision(a) -> dict:
    from schedlab.benchmarks.simulator import Simulator
    from schedlab.heuristics import POLICIES
    from schedlab.topology.presets import preset

    cluster = preset("philly")
    fill = int(cluster.total_gpus / sum(g * p for g, p in GPU_MIX.items()))
    jobs = batch_jobs(a.queued + fill, seed=a.seed)
    pol = Timed(POLICIES.build(a.policy, seed=a.seed), a.queued)
    sim = Simulator(cluster, jobs, pol)
    sim.run(until=a.until)
    s = pol.samples
    return {"benchmark": "decision", "policy": a.policy, "cluster": cluster.name, "jobs": len(jobs),
            "passes_timed": len(s), "queued_min": min(pol.queues, default=0), "queued_max": max(pol.queues, default=0),
            "mean_ms": 1e3 * statistics.fmean(s) if s else None,
            "median_ms": 1e3 * statistics.median(s) if s else None,
            "p99_ms": 1e3 * float(np.percentile(s, 99)) if s else None, "max_ms": 1e3 * max(s) if s else None,
            "first_pass_ms": 1e3 * (pol.first or 0.0), "target_ms": 10.0, "loadavg": os.getloadavg()}


def bench_philly(a) -> dict:
    from pathlib import Path

    from schedlab.benchmarks.simulator import Simulator
    from schedlab.benchmarks.workloads.source import WorkloadSource
    from schedlab.heuristics import POLICIES

    path = next((p for p in ([a.trace] if a.trace else DEFAULT_TRACES) if p and Path(p).is_file()), None)
    if path is None:
        return {"benchmark": "philly", "skipped": "trace not found"}
    t0 = time.perf_counter()
    w, cluster = WorkloadSource(trace=path, trace_format="philly").build()
    t1 = time.perf_counter()
    pol = Timed(POLICIES.build(a.policy, seed=a.seed), 0)
    sim = Simulator(cluster, w.jobs, pol, small_gpus=w.small_gpus, short_s=w.short_s)
    res = sim.run()
    t2 = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {"benchmark": "philly", "policy": a.policy, "jobs": len(w.jobs), "unfinished": len(res.unfinished),
            "load_convert_s": t1 - t0, "simulate_s": t2 - t1, "total_s": t2 - t0,
            "policy_s": sum(pol.samples) + (pol.first or 0.0), "events": res.events,
            "passes": res.passes, "peak_rss_mb": rss, "target_s": 120.0, "target_mb": 2048.0,
            "preemptions": res.metrics["preemptions"], "reconfigurations": res.metrics["reconfigurations"],
            "loadavg": os.getloadavg()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("decision", "philly"))
    ap.add_argument("--policy", default="dally")
    ap.add_argument("--queued", type=int, default=5000)
    ap.add_argument("--until", type=float, default=float("inf"), help="stop the decision run at this sim time")
    ap.add_argument("--trace")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    out = bench_decision(a) if a.what == "decision" else bench_philly(a)
    if a.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        for k, v in out.items():
            print(f"{k:18s} {v:.3f}" if isinstance(v, float) else f"{k:18s} {v}")
    return 0


__all__ = ["DEFAULT_TRACES", "GPU_MIX", "Timed", "batch_jobs", "bench_decision", "bench_philly", "main"]


if __name__ == "__main__":
    sys.exit(main())
