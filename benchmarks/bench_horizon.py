"""Where the time-indexed twins stop (issue 21 items 4 and 5; figures, not timed tests).

1. ``horizon``: the horizon twin (:mod:`formulations.horizon`) on seeded instances
   (:func:`~formulations.horizon.generate_horizon`: 2 racks, 8 GPUs per machine, half the machines
   busy, 30 % of the jobs arriving within the horizon) for each ``jobs x machines`` size; status, wall
   time, objective and bound under a ``--limit`` (default 60 s) per solve.
2. ``offline``: on seeded small traces (:func:`~formulations.offline.generate_offline`, durations and
   arrivals rounded to the slot: up and down respectively) the exact average JCT of (a) rigid
   non-preemptive, (b) rigid preemptive time-indexed (total-GPU and per-machine), (c) resizable
   time-indexed (speeds ``perf_speeds`` of resnet50 / vgg11 / mobilenetv3 at 1, 2, 4, 8, 16 GPUs, work
   = the rigid run at the request), (d) the fluid bound and (e) the column-generation bound of (b), total
   GPUs (:mod:`formulations.offline_colgen`, with the greedy schedule it starts from); each with status
   and wall time.

    python -m schedlab.benchmarks.bench_horizon horizon [--sizes 5x4,10x8,...] [--slots 8] [--limit 60]
        [--backend cpsat|highs|...]
    python -m schedlab.benchmarks.bench_horizon offline [--jobs 10,20,30] [--slot 600] [--limit 60]
        [--backend cpsat|highs] [--methods nonpreemptive,preemptive-ti-total,...] [--plain] [--work-limit D]

Each offline row has ``cpu_s`` (CPU seconds of the solve in this process) beside the wall time, and
``model`` (``strong``: :mod:`~schedlab.formulations.offline_slots`; ``plain`` with ``--plain``).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import replace

from schedlab.formulations.base import solve
from schedlab.formulations.horizon import HorizonFormulation, generate_horizon
from schedlab.formulations.offline import OfflineFormulation, OfflineInstance, generate_offline
from schedlab.formulations.offline_colgen import colgen_bound
from schedlab.formulations.offline_fluid import fluid_bound
from schedlab.formulations.offline_resizable import (
    ResizableInstance,
    ResizableJob,
    ResizableTIFormulation,
    perf_speeds,
)
from schedlab.formulations.offline_slots import SlotJob, completion_of, greedy_schedule, horizons
from schedlab.formulations.offline_ti import PreemptiveTIFormulation, PreemptiveTIInstance
from schedlab.formulations.result import SolveParams
from schedlab.scheduling.instance import Instance
from schedlab.topology.cluster import Cluster
from schedlab.topology.loaders import spec_from_dict


def cluster(machines: int, gpus: int = 8, racks: int = 2) -> Cluster:
    racks = min(racks, machines)
    return Cluster(spec_from_dict({
        "name": f"bench-{machines}x{gpus}", "defaults": {"gpus": gpus, "gpu_model": "A100-80GB", "gpu_memory_gb": 80,
                                                         "cpus": 64, "host_memory_gb": 512},
        "links": {"machine": {"bandwidth_gbps": 600}, "rack": {"bandwidth_gbps": 100},
                  "network": {"bandwidth_gbps": 25}},
        "racks": racks, "machines_per_rack": machines // racks}))


def row(name: str, res, extra: dict | None = None) -> dict:
    return {"method": name, "status": res.status.value, "wall_s": round(res.timing.wall_s or 0.0, 2),
            "objective": None if res.objective is None else round(res.objective, 2),
            "bound": None if res.bounds.dual is None else round(res.bounds.dual, 2),
            "vars": (res.provenance.model_stats or {}).get("vars"), **(extra or {})}


def bench_horizon(sizes: list[tuple[int, int]], slots: int, limit: float, seed: int, backend: str = "cpsat",
                  ) -> list[dict]:
    out = []
    for n, m in sizes:
        inst = generate_horizon(cluster(m), n, seed=seed, slot=300.0, slots=slots)
        res = solve(HorizonFormulation(), inst, backend, SolveParams(threads=1, time_limit_s=limit, seed=0))
        out.append(row("horizon-wait", res, {"jobs": n, "machines": m, "slots": slots, "backend": backend}))
        print(json.dumps(out[-1]), flush=True)
    return out


def rounded_trace(n: int, slot: float, seed: int, machines: int) -> Instance:
    base = generate_offline(cluster(machines), n, seed=seed).base
    jobs = tuple(replace(j, arrival=math.floor(j.arrival / slot) * slot,
                         duration=math.ceil(j.duration / slot) * slot) for j in base.jobs)
    return Instance(base.cluster, jobs)


def timed(form, inst, backend: str, params: SolveParams):
    """``solve`` and the CPU seconds this process spent in it (the solvers run in-process, one thread: on a
    shared machine the CPU seconds say what the wall time cannot)."""
    t = time.process_time()
    res = solve(form, inst, backend, params)
    return res, round(time.process_time() - t, 2)


def bench_offline(sizes: list[int], slot: float, limit: float, seed: int, machines: int, backend: str = "cpsat",
                  methods: tuple[str, ...] = ("nonpreemptive", "preemptive-ti-total", "preemptive-ti-machine",
                                              "resizable-ti", "colgen-bound"), strong: bool = True,
                  work_limit: float | None = None) -> list[dict]:
    """``strong``: the time-indexed models of :mod:`~schedlab.formulations.offline_slots` (default); else the
    plain ones (``--plain``), for comparison. ``work_limit``: CP-SAT's deterministic budget per solve
    (``--work-limit``; the same work at any load, so a limited result is reproducible), beside ``limit``."""
    from schedlab.perfmodel.facade import PerfModel
    out = []
    P = SolveParams(threads=1, time_limit_s=limit, seed=0, work_limit=work_limit)
    models = ("resnet50", "vgg11", "mobilenetv3")
    for n in sizes:
        base = rounded_trace(n, slot, seed, machines)
        G = base.cluster.total_gpus
        extra = {"jobs": n, "gpus": G, "slot": slot, "backend": backend, "model": "strong" if strong else "plain",
                 **({"work_limit": work_limit} if work_limit is not None else {})}
        for name, form, inst in (
                ("nonpreemptive", OfflineFormulation(), OfflineInstance(base)),
                ("preemptive-ti-total", PreemptiveTIFormulation(strong=strong), PreemptiveTIInstance(base, slot)),
                ("preemptive-ti-machine", PreemptiveTIFormulation(strong=strong),
                 PreemptiveTIInstance(base, slot, mode="machine"))):
            if name in methods:  # the non-preemptive model needs intervals: CP-SAT only
                be = "cpsat" if name == "nonpreemptive" else backend
                res, cpu = timed(form, inst, be, P)
                out.append(row(name, res, {**extra, "backend": be, "cpu_s": cpu}))
                print(json.dumps(out[-1]), flush=True)
        if "colgen-bound" in methods:
            out.append(colgen_row(base, slot, extra))
            print(json.dumps(out[-1]), flush=True)
        pm = PerfModel(base.cluster)
        rjobs = []
        for i, j in enumerate(base.jobs):
            full = perf_speeds(pm, models[i % len(models)], G, 64)
            sp = {k: v for k, v in full.items() if k in (1, 2, 4, 8, 16) or k == j.requested.gpus}
            rjobs.append(ResizableJob(j.id, j.arrival, sp[j.requested.gpus] * j.duration, sp))
        rz = ResizableInstance(G, tuple(rjobs), slot)
        if "resizable-ti" in methods:
            res, cpu = timed(ResizableTIFormulation(strong=strong), rz, backend, P)
            out.append(row("resizable-ti", res, {**extra, "cpu_s": cpu}))
            print(json.dumps(out[-1]), flush=True)
        fb = fluid_bound(rz)
        out.append({"method": "fluid-bound", "status": "bound", "objective": None, "bound": round(fb.value, 2),
                    **extra})
        print(json.dumps(out[-1]), flush=True)
    return out


def colgen_row(base: Instance, slot: float, extra: dict) -> dict:
    """The column-generation bound of the rigid preemptive model (total GPUs, average JCT,
    :mod:`~schedlab.formulations.offline_colgen`) from the greedy schedule, and whether that schedule meets it."""
    inst = PreemptiveTIInstance(base, slot)
    G, T = inst.total_gpus(), inst.horizon()
    sj = [SlotJob(j.id, inst.release(j.id), float(inst.length(j.id)), {j.requested.gpus: 1.0}) for j in base.jobs]
    t = time.process_time()
    greedy = greedy_schedule(sj, G, T, "avg-jct")
    if greedy is None:
        return {"method": "colgen-bound", "status": "no greedy schedule", **extra}
    ub = completion_of(greedy)
    b = colgen_bound(sj, G, horizons(sj, G, T, "avg-jct", True, ub), {j: sorted(s) for j, s in greedy.items()})
    arr = sum(j.arrival for j in base.jobs)
    n = max(1, len(base.jobs))
    return {"method": "colgen-bound", "status": "bound" if b.converged else "bound (not converged)",
            "objective": round((sum(ub.values()) * slot - arr) / n, 2),
            "bound": round((math.ceil(b.bound - 1e-6) * slot - arr) / n, 2),
            "greedy_proven": b.proves(sum(ub.values())), "iterations": b.iterations, "columns": b.columns,
            **extra, "backend": "scipy-highs (LP)", "cpu_s": round(time.process_time() - t, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_horizon")
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("horizon")
    h.add_argument("--sizes", default="5x4,10x4,10x8,20x8,20x16,30x16")
    h.add_argument("--slots", type=int, default=8)
    h.add_argument("--limit", type=float, default=60.0)
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--backend", default="cpsat")
    o = sub.add_parser("offline")
    o.add_argument("--jobs", default="10,20,30")
    o.add_argument("--slot", type=float, default=600.0)
    o.add_argument("--machines", type=int, default=2)
    o.add_argument("--limit", type=float, default=60.0)
    o.add_argument("--seed", type=int, default=0)
    o.add_argument("--backend", default="cpsat", help="for the time-indexed models (non-preemptive: CP-SAT)")
    o.add_argument("--methods", default="nonpreemptive,preemptive-ti-total,preemptive-ti-machine,resizable-ti,"
                   "colgen-bound")
    o.add_argument("--work-limit", type=float, default=None, help="CP-SAT's deterministic budget per solve "
                   "(deterministic seconds: reproducible at any load; other backends ignore it)")
    o.add_argument("--plain", action="store_true", help="the plain time-indexed models (no horizons, indicators, "
                   "symmetry rows or MIP start), for comparison")
    a = ap.parse_args(argv)
    if a.cmd == "horizon":
        sizes = [tuple(int(x) for x in s.split("x")) for s in a.sizes.split(",")]
        bench_horizon(sizes, a.slots, a.limit, a.seed, a.backend)  # type: ignore[arg-type]
    else:
        bench_offline([int(x) for x in a.jobs.split(",")], a.slot, a.limit, a.seed, a.machines, a.backend,
                      tuple(a.methods.split(",")), strong=not a.plain, work_limit=a.work_limit)
    return 0


__all__ = ["bench_horizon", "bench_offline", "cluster", "colgen_row", "main", "rounded_trace", "row"]


if __name__ == "__main__":
    raise SystemExit(main())
