"""Times of the exact joint methods (``joint``, ``joint-2stage``, ``joint-machines``) on the gap suite's
perf-model joint instances, per backend, with and without the heuristic's warm start.

    python -m schedlab.benchmarks.bench_joint_methods [--sizes 8,16,...] [--backends cpsat,highs,...]
        [--time-limit 20] [--slow-max 64] [--out FILE.json]

Instances: the gap suite's joint kind (:data:`benchmarks.harness.suites.builtin.KIND_PLANS`: its
cluster, perf-model options, a fragmented cluster) at each size, seed 0. Warm start: Rubick's
decision on the snapshot (``--heuristic``), given as ``SolveParams.warm_start``; each row says whether
the start was used (``SolveResult.provenance.warm_start_used``). Every solve gets ``--time-limit`` seconds and one
thread (as the harness runs them); ``--slow-max`` caps the sizes given to SCIP, CBC and scipy. A row:
size, method, backend, warm start, status, objective, bound, gap, wall seconds, the heuristic's
objective, and whether the pooled model was exact (else ``joint`` is the per-machine model). The
machine is shared: each row carries the 1-minute load average.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.gap import make_instance
from schedlab.benchmarks.harness.suites.builtin import KIND_PLANS
from schedlab.benchmarks.registry import all_policies
from schedlab.formulations import METHODS, OBJECTIVES, SolveParams
from schedlab.formulations.backends import get_backend
from schedlab.formulations.joint import pooled_ok

METHODS_TIMED = ("joint", "joint-2stage", "joint-machines")
SLOW = frozenset({"scip", "cbc", "scipy"})


def run(sizes: list[int], backends: list[str], time_limit: float, slow_max: int, heuristic: str,
        seed: int = 0) -> list[dict[str, Any]]:
    plan = KIND_PLANS["joint"]
    gen = dict(plan.generator)
    policy = all_policies()[heuristic]
    rows = []
    for n in sizes:
        inst = make_instance("joint", plan.cluster, n, seed, gen)
        t = time.perf_counter()
        start = policy.decide(inst.base, seed=seed)
        h_s = time.perf_counter() - t
        h_obj = OBJECTIVES["joint"](inst, start)
        pooled, why = pooled_ok(inst)
        for be in backends:
            if be in SLOW and n > slow_max or not get_backend(be).availability().ok:
                continue
            for method in METHODS_TIMED:
                for warm in (None, start):
                    params = SolveParams(time_limit_s=time_limit, threads=1, seed=seed, warm_start=warm)
                    t = time.perf_counter()
                    r = METHODS[method].solve(inst, be, params)
                    wall = time.perf_counter() - t
                    rows.append({"jobs": n, "method": method, "backend": be, "warm": warm is not None,
                                 "warm_used": r.provenance.warm_start_used, "status": r.status.value,
                                 "objective": r.objective, "bound": r.bounds.dual, "gap": r.gap, "wall_s": wall,
                                 "heuristic": heuristic, "heuristic_objective": h_obj, "heuristic_s": h_s,
                                 "pooled_exact": pooled, "pooled_reason": why, "load1": os.getloadavg()[0],
                                 "notes": [x for x in r.notes if x.startswith(("stage", "warm"))]})
                    print(_line(rows[-1]), flush=True)
    return rows


def _line(r: dict[str, Any]) -> str:
    gap = "-" if r["gap"] is None else f"{100 * r['gap']:.2f} %"
    warm = "-" if not r["warm"] else ("used" if r["warm_used"] else "not used")
    obj = "-" if r["objective"] is None else f"{r['objective']:.3f}"
    return (f"| {r['jobs']} | {r['method']} | {r['backend']} | {warm} | {r['status']} | {obj} | {gap} "
            f"| {r['wall_s']:.2f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8,16,32,64,128,256")
    ap.add_argument("--backends", default="cpsat,highs,scip,cbc,scipy")
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--slow-max", type=int, default=32, help="largest size given to scip, cbc and scipy")
    ap.add_argument("--heuristic", default="rubick")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    print("| jobs | method | backend | warm start | status | objective | gap | wall s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = run([int(x) for x in a.sizes.split(",")], a.backends.split(","), a.time_limit, a.slow_max, a.heuristic,
               a.seed)
    if a.out is not None:
        meta = {"command": "python -m schedlab.benchmarks.bench_joint_methods", "argv": argv, "cores": os.cpu_count(),
                "python": platform.python_version(), "time_limit_s": a.time_limit, "seed": a.seed}
        a.out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    return 0


__all__ = ["METHODS_TIMED", "SLOW", "main", "run"]


if __name__ == "__main__":
    raise SystemExit(main())
