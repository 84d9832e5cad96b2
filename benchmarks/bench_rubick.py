"""Rubick's performance benchmarks (figures, not timed tests).

``python -m schedlab.benchmarks.bench_rubick [--repeat N] [--json] [--skip-large]`` measures:

1. one ``Schedule`` call (``RubickPolicy.schedule``) with 200 active jobs on ``rubick-64`` (target 50 ms);
2. one call with 2,000 active jobs on a 1,024-GPU cluster of the same servers (128 x 8 A800; target 1 s);
3. the Base workload (the artifact's trace when ``--traces`` has it, else the generator) replayed
   under Rubick, end to end including the perf model's first curve evaluations (target 30 s).

For 1 and 2 the jobs are the Rubick mix (``rubick_trace``), the state is Rubick's own decision on them
(a full cluster, the rest queued), curves are cached by a first call, and the figure is the median of
``--repeat`` calls, each on a fresh view of the same state. The load average is printed beside every
figure (the machine is shared; the figures move with it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from schedlab.benchmarks.simulator import simulate
from schedlab.benchmarks.workloads.convert import trace_to_jobs
from schedlab.benchmarks.workloads.named import rubick_trace
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.heuristics.rubick import RubickPolicy
from schedlab.scheduling import Instance
from schedlab.scheduling.snapshot import snapshot_view
from schedlab.topology import preset
from schedlab.topology.cluster import Cluster
from schedlab.topology.loaders import spec_from_dict


def a800_cluster(machines: int) -> Cluster:
    """``machines`` Rubick testbed servers (8 A800-80GB, 96 CPUs, 1,600 GB), 8 per rack."""
    return Cluster(spec_from_dict({
        "name": f"a800-{machines * 8}", "defaults": {"gpus": 8, "gpu_model": "A800-80GB", "gpu_memory_gb": 80,
                                                     "cpus": 96, "host_memory_gb": 1600, "pcie_gbps": 32},
        "links": {"machine": {"bandwidth_gbps": 400, "latency_us": 1}, "rack": {"bandwidth_gbps": 100, "latency_us": 2},
                  "network": {"bandwidth_gbps": 100, "latency_us": 5}},
        "racks": max(1, machines // 8), "machines_per_rack": min(8, machines)}, source="<bench>"))


def schedule_call(cluster: Cluster, n: int, repeat: int) -> dict:
    """Median seconds of one ``schedule`` with ``n`` active jobs (module docstring)."""
    trace, quotas = rubick_trace("base", cluster, seed=0, n=n)
    jobs = trace_to_jobs(trace, cluster, seed=0, reconfigurable=True)
    pol = RubickPolicy()
    t0 = time.perf_counter()
    running = pol.decide(Instance(cluster, jobs, quotas=quotas))  # also builds and caches the curves
    warm = time.perf_counter() - t0
    busy = Instance(cluster, jobs, current=running, quotas=quotas, time=600.0)
    pol.schedule(snapshot_view(busy))
    times = []
    for _ in range(repeat):
        view = snapshot_view(busy)
        t = time.perf_counter()
        pol.schedule(view)
        times.append(time.perf_counter() - t)
    return {"jobs": n, "gpus": cluster.total_gpus, "running": len(running), "median_s": statistics.median(times),
            "min_s": min(times), "first_call_with_curves_s": warm, "load_avg": os.getloadavg()}


def base_replay(traces: str | None) -> dict:
    path = Path(traces) / "rubick" / "workloads" / "workload-base.csv" if traces else None
    src = (WorkloadSource(trace=str(path), trace_format="rubick") if path is not None and path.is_file()
           else WorkloadSource(workload="rubick-base"))
    w, cluster = src.build()
    t = time.perf_counter()
    res = simulate(cluster, w.jobs, RubickPolicy(), quotas=w.quotas)
    return {"workload": src.label, "jobs": len(w.jobs), "wall_s": time.perf_counter() - t,
            "event_loop_s": res.wall_s, "passes": res.passes, "load_avg": os.getloadavg()}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--skip-large", action="store_true", help="skip the 2,000-job / 1,024-GPU call")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out = {"schedule_200_rubick64": schedule_call(preset("rubick-64"), 200, args.repeat)}
    if not args.skip_large:
        out["schedule_2000_1024gpus"] = schedule_call(a800_cluster(128), 2000, args.repeat)
    out["base_replay"] = base_replay(args.traces)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(k, {a: (round(b, 4) if isinstance(b, float) else b) for a, b in v.items()})
    return out


__all__ = ["a800_cluster", "base_replay", "main", "schedule_call"]


if __name__ == "__main__":
    main()
