"""Philly performance benchmark: the whole Philly job table (82,247 jobs) on the ``philly`` preset
under FIFO. Reports load / convert / simulate wall times, events per second, peak memory (max RSS)
and events per second per window of the run (flat = a pass does not slow down as jobs finish).

    python -m schedlab.benchmarks.bench_simulator [--trace PATH] [--policy fifo] [--semantics realistic]
                                         [--load 1.0] [--vc ID] [--profile] [--json]

Skips cleanly (exit 0, a message) when the trace file is absent: the project does not ship it.

For scripts: :func:`time_replay` times one speed row (policy x load on the Philly table: CPU and wall
seconds of the replay, events); :func:`philly_workload` / :func:`philly_replay` / :func:`philly_window`
build the replays that ``schedlab simulate --trace ... --trace-format philly`` runs.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

DEFAULT_TRACES = ("../shared/traces/philly/sia_philly_jobs.csv", "/work/shared/traces/philly/sia_philly_jobs.csv")
WINDOW_EVENTS = 20_000


def find_trace(arg: str | None) -> Path | None:
    for p in ([arg] if arg else DEFAULT_TRACES):
        if p and Path(p).is_file():
            return Path(p)
    return None


def trace_or_skip(arg: str | None) -> Path | None:
    """:func:`find_trace`, saying so when the trace is absent (benchmarks then skip cleanly)."""
    path = find_trace(arg)
    if path is None:
        print("Philly trace not found (looked for --trace, then ../shared/traces/philly/sia_philly_jobs.csv); "
              "skipping.")
    return path


def policy_semantics(policy: str) -> str:
    """The semantics a policy replays under in the speed rows: the artifact policies (``gandiva``,
    ``dlas-gpu*``, ``shortest*``) need ``tiresias``; the rest run ``realistic``."""
    return "tiresias" if policy in TIRESIAS_ONLY else "realistic"


TIRESIAS_ONLY = frozenset({"gandiva"})


def philly_window(trace_path: str | Path, limit: int, dest: str | Path, *, offset: int = 0) -> Path:
    """Write ``limit`` rows of the Philly table from the ``offset``-th by submit time (stable: file
    order breaks ties) to ``dest``: the 2,000-job window of the byte-compare test."""
    import csv

    with open(trace_path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], [r for r in rows[1:] if r]
    body = sorted(body, key=lambda r: r[0])[offset:offset + limit]
    with open(dest, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(body)
    return Path(dest)


def philly_workload(*, load: float = 1.0, trace_path: str | Path | None = None, seed: int = 0,
                    cluster: str = "philly"):
    """``(workload, cluster)`` of ``schedlab simulate --trace PATH --trace-format philly --cluster CLUSTER
    --load L --seed S``."""
    from schedlab.benchmarks.workloads.source import WorkloadSource
    from schedlab.topology.errors import SpecError

    path = find_trace(str(trace_path) if trace_path is not None else None)
    if path is None:
        raise SpecError("Philly trace not found", source="<bench>", field="trace_path")
    return WorkloadSource(trace=str(path), trace_format="philly", cluster=cluster, seed=seed, load=load).build()


def philly_replay(policy: str, workload, cluster, *, seed: int = 0, semantics: str | None = None,
                  keep_segments: bool = False):
    """A :class:`~schedlab.benchmarks.simulator.Simulator` replaying ``workload`` (from
    :func:`philly_workload`) under ``policy`` (built with ``seed``), as ``schedlab simulate`` does."""
    from schedlab.benchmarks.registry import all_policies
    from schedlab.benchmarks.simulator import Recorder, Simulator

    pol = all_policies().build(policy, {}, seed=seed)
    return Simulator(cluster, workload.jobs, pol, semantics=semantics or policy_semantics(policy),
                     quotas=workload.quotas, recorder=Recorder(keep_segments=keep_segments),
                     small_gpus=workload.small_gpus, short_s=workload.short_s)


def time_replay(policy: str, *, load: float = 1.0, trace_path: str | Path | None = None, seed: int = 0,
                limit: int | None = None) -> dict:
    """One speed row: the replay of the Philly table under ``policy`` at ``load`` x arrivals.
    ``cpu_s``/``wall_s`` time the replay alone (``Simulator.run``: event loop and metrics), not the
    trace load; ``events`` / ``passes`` count the replay's work; ``loadavg_1m`` is the machine's load."""
    w, cl = philly_workload(load=load, trace_path=trace_path, seed=seed)
    if limit is not None:
        w = replace(w, jobs=w.jobs[:limit])
    sim = philly_replay(policy, w, cl, seed=seed)
    c0, w0 = time.process_time(), time.perf_counter()
    res = sim.run()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return {"policy": policy, "load": load, "seed": seed, "jobs": len(sim.jobs), "cpu_s": round(cpu, 3),
            "wall_s": round(wall, 3), "events": res.events, "passes": res.passes,
            "unfinished": len(res.unfinished), "preemptions": sum(r.preemptions for r in res.jobs),
            "loadavg_1m": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace")
    ap.add_argument("--policy", default="fifo")
    ap.add_argument("--semantics", default="realistic")
    ap.add_argument("--cluster", default="philly")
    ap.add_argument("--vc")
    ap.add_argument("--load", type=float, default=1.0, help="time compression of arrivals")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true", help="cProfile the simulation; print the top 25")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    path = trace_or_skip(a.trace)
    if path is None:
        return 0

    from schedlab.benchmarks.simulator import Simulator
    from schedlab.benchmarks.workloads import TIRESIAS_MODELS, load_trace, trace_to_jobs
    from schedlab.benchmarks.workloads.generators import scale_load
    from schedlab.heuristics import POLICIES
    from schedlab.topology.presets import load_cluster

    t0 = time.perf_counter()
    tr = load_trace(path, "philly", **({"vc": a.vc} if a.vc else {}))
    if a.load != 1.0:
        tr = scale_load(tr, a.load)
    t1 = time.perf_counter()
    cluster = load_cluster(a.cluster)
    jobs = trace_to_jobs(tr, cluster, seed=a.seed, model_pool=TIRESIAS_MODELS)
    t2 = time.perf_counter()
    windows: list[tuple[float, int]] = [(time.perf_counter(), 0)]

    def progress(t: float, done: int, total: int) -> None:
        windows.append((time.perf_counter(), sim.n_events))

    sim = Simulator(cluster, jobs, POLICIES.build(a.policy), semantics=a.semantics, progress=progress,
                    progress_every=WINDOW_EVENTS)
    prof = cProfile.Profile() if a.profile else None
    t3 = time.perf_counter()
    if prof is not None:
        prof.enable()
    res = sim.run()
    if prof is not None:
        prof.disable()
    t4 = time.perf_counter()  # the last window ended at the final progress call (end of the event loop)
    rates = [(e1 - e0) / (w1 - w0) for (w0, e0), (w1, e1) in zip(windows, windows[1:], strict=False) if w1 > w0]
    out = {
        "trace": str(path), "jobs": len(jobs), "cluster": cluster.name, "gpus": cluster.total_gpus,
        "policy": a.policy, "semantics": a.semantics, "load": a.load, "vc": a.vc,
        "load_s": round(t1 - t0, 3), "convert_s": round(t2 - t1, 3), "simulate_s": round(t4 - t3, 3),
        "total_s": round(t4 - t0, 3), "events": res.events, "passes": res.passes,
        "events_per_s": round(res.events_per_s), "event_loop_s": round(res.wall_s, 3),
        "events_per_s_by_window": [round(r) for r in rates],
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "cpu_count": os.cpu_count(), "loadavg_1m": round(os.getloadavg()[0], 2),
        "unfinished": len(res.unfinished),
        "metrics": {k: v for k, v in res.metrics.items() if k != "bins"},
    }
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:24s} {v}")
    if prof is not None:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
        print(s.getvalue(), file=sys.stderr if a.json else sys.stdout)
    return 0


__all__ = ["DEFAULT_TRACES", "WINDOW_EVENTS", "find_trace", "main", "trace_or_skip"]


if __name__ == "__main__":
    raise SystemExit(main())
