"""Decision cost of 2D-LAS / 2D-Gittins with thousands of queued jobs on the ``philly`` preset.

A Philly-like workload (``philly`` named workload, ``--jobs`` jobs, arrivals compressed ``--load``-fold)
is replayed under ``realistic`` semantics so that the queue grows past ``--queued`` jobs; every call
of the policy's ``schedule`` is timed (``time.perf_counter``) with the queue length it saw. Reported:
decision time (mean / median / p99 wall, mean CPU) over the decisions taken with at least ``--queued`` jobs queued,
and per queue-length band the mean, the jobs started or preempted per decision and the time per
(change + 1) (flat = a decision costs what changes, not the queue's length).

    python -m schedlab.benchmarks.bench_tiresias [--policy 2d-las] [--jobs 15000] [--load 2000]
                                                 [--queued 5000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np


class Timed:
    """Wraps a policy; records (queue length, running jobs, wall seconds, jobs started + preempted, CPU
    seconds of this process) per decision: on a shared machine the CPU time is the figure to compare."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.oracle = inner.oracle
        self.calls: list[tuple[int, int, float, int, float]] = []

    def schedule(self, view):
        t, c = time.perf_counter(), time.process_time()
        d = self.inner.schedule(view)
        self.calls.append((view.queue_length, view.running_count, time.perf_counter() - t,
                           len(d.start) + len(d.preempt), time.process_time() - c))
        return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default="2d-las")
    ap.add_argument("--jobs", type=int, default=15000)
    ap.add_argument("--load", type=float, default=2000.0)
    ap.add_argument("--queued", type=int, default=5000)
    ap.add_argument("--semantics", default="realistic")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)

    from schedlab.benchmarks.simulator import Simulator
    from schedlab.benchmarks.workloads import get_workload
    from schedlab.heuristics import POLICIES
    from schedlab.topology.presets import preset

    cluster = preset("philly")
    w = get_workload("philly").build(cluster, seed=a.seed, load=a.load, n=a.jobs)
    pol = Timed(POLICIES.build(a.policy))
    t0 = time.perf_counter()
    res = Simulator(cluster, w.jobs, pol, semantics=a.semantics).run()
    wall = time.perf_counter() - t0
    calls = np.array(pol.calls, dtype=float)
    q, run, dt, ch, cpu = calls[:, 0], calls[:, 1], calls[:, 2] * 1e3, calls[:, 3], calls[:, 4] * 1e3
    sel = q >= a.queued
    bands = {}
    for lo, hi in ((0, 100), (100, 1000), (1000, 5000), (5000, 10000), (10000, 10**9)):
        m = (q >= lo) & (q < hi)
        if m.any():
            bands[f"{lo}-{hi if hi < 10**9 else 'inf'}"] = {
                "decisions": int(m.sum()), "mean_ms": float(dt[m].mean()),
                "changes_per_decision": float(ch[m].mean()),
                "ms_per_change_plus_one": float(dt[m].sum() / (ch[m].sum() + m.sum()))}
    out = {
        "policy": a.policy, "jobs": a.jobs, "load": a.load, "semantics": a.semantics, "cluster_gpus": cluster.total_gpus,
        "decisions": int(len(dt)), "max_queued": int(q.max()), "max_running": int(run.max()),
        f"decisions_with_{a.queued}_queued": int(sel.sum()),
        "mean_ms": float(dt[sel].mean()) if sel.any() else None,
        "median_ms": float(np.median(dt[sel])) if sel.any() else None,
        "p99_ms": float(np.percentile(dt[sel], 99)) if sel.any() else None,
        "mean_cpu_ms": float(cpu[sel].mean()) if sel.any() else None,
        "changes_per_decision": float(ch[sel].mean()) if sel.any() else None,
        "bands": bands, "sim_wall_s": wall, "avg_jct": res.metrics["avg_jct"], "preemptions": res.metrics["preemptions"],
        "loadavg": os.getloadavg(),
    }
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:>28}: {v}")
    if not sel.any():  # the figure was not measured: say so instead of reporting nothing as a pass
        print(f"error: no decision saw {a.queued} queued jobs (max {int(q.max())}); raise --load or --jobs",
              file=sys.stderr)
        return 1
    return 0


__all__ = ["Timed", "main"]


if __name__ == "__main__":
    raise SystemExit(main())
