"""Performance benchmark of the exact formulations (issue 11 targets) on every backend.

    python benchmarks/bench_formulations.py [--quick] [--out FILE] [--only CASE ...]

Cases (seeded instances, seed 1; every backend that is available; CP-SAT and CBC get every core,
``SolveParams(threads=None)``; the count is in ``meta.cores``):

* ``limits``: where direct solving stops. Per series and backend, sizes grow until the time to a
  proven optimum exceeds 60 s (wall clock of the whole solve) or the solve ends otherwise; the
  series are the joint pooled model (synthetic options, idle ``dally(r)`` clusters, 2 GPUs per job),
  the joint per-machine model and the exact two-stage solve (perf-model options on ``dally(r)``),
  tier placement (``dally(r)``, 30 % busy) and the Tiresias ILP (one job of W workers on
  ``philly``; several 8-worker jobs on ``tiresias-60``);
* ``scale``: 20,000 jobs on 32,768 GPUs (``dally(512)``): the idle cluster with synthetic options (the
  pooled model, exact) and a half-busy cluster with perf-model options (the two-stage solve), on
  HiGHS and CP-SAT within 60 s each, the gap to the class LP bound and the peak resident memory of
  the process (run this case alone for a clean figure), and POP k=16 for comparison;
* ``pop-vs-direct``: per-machine instances (perf-model options, half the machines partly busy, so
  the pooled model is not exact): the direct two-stage solve against POP (k = 8 and k = jobs / 32,
  parallel) with 60 s each;
* ``reference``: the issue's reference point, 2,000 jobs on 4,096 GPUs: direct HiGHS against POP k=8;
* ``budget``: the issue's reproduction, a 2 s limit on the 200-job per-machine joint model: the wall
  clock of the whole solve and its phases.

Every row carries the 1-minute load average when it was taken (the machine is shared); the lead
re-runs the same command on a quiet machine. The JSON keeps every raw figure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schedlab.formulations import (
    POP,
    JointFormulation,
    JointTwoStage,
    SolveParams,
    TierFormulation,
    TiresiasFormulation,
    generate_joint,
    generate_tier,
    generate_tiresias,
    relaxation_bound,
    solve,
)
from schedlab.formulations.backends import BACKENDS, get_backend
from schedlab.formulations.result import Status, relative_gap
from schedlab.topology import preset
from schedlab.topology.presets import dally

BACKEND_NAMES = [b for b in BACKENDS if get_backend(b).availability().ok]
LIMIT = 60.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def row(case: str, res, extra: dict | None = None) -> dict:
    d = res.as_dict()
    out = {"case": case, "backend": d["backend"], "status": d["status"], "objective": d["objective"],
           "bound": d["bound"], "gap": d["gap"], "wall_s": d["wall_s"], "build_s": d["build_s"],
           "translate_s": d["translate_s"], "solve_s": d["solve_s"], "extract_s": d["extract_s"],
           "verify_s": d["verify_s"], "verified": d["verified"], "threads": d["threads"], "model": d["model"],
           "notes": list(d.get("notes") or ()),
           "load1": round(os.getloadavg()[0], 2)}
    out.update(extra or {})
    print(json.dumps({k: v for k, v in out.items() if k not in ("model", "notes")}), flush=True)
    return out


def _racks(n: int, gpus_per_job: int = 2) -> int:
    return max(1, math.ceil(n * gpus_per_job / 64))


#: series -> (sizes, instance(size), solver(inst, backend, params))
SERIES: dict[str, tuple[list[int], Callable[[int], Any], Callable[..., Any]]] = {
    "joint-pooled": ([500, 2000, 8000, 20000], lambda n: generate_joint(dally(_racks(n)), n, seed=1, max_gpus=32),
                     lambda i, b, p: solve(JointFormulation(), i, b, p)),
    "joint-machines": ([25, 50, 100, 200, 400],
                       lambda n: generate_joint(dally(_racks(n)), n, seed=1, source="perfmodel", max_gpus=16),
                       lambda i, b, p: solve(JointFormulation(aggregate=False), i, b, p)),
    "joint-2stage": ([25, 50, 100, 200, 400, 800, 3200, 20000],
                     lambda n: generate_joint(dally(_racks(n)), n, seed=1, source="perfmodel", max_gpus=16, busy=0.5),
                     lambda i, b, p: JointTwoStage().solve(i, b, p)),
    "tier": ([10, 20, 40, 80, 160], lambda n: generate_tier(dally(max(2, n // 10)), n, seed=1),
             lambda i, b, p: solve(TierFormulation(), i, b, p)),
    "tiresias-1job": ([8, 16, 32, 64, 128, 256],
                      lambda w: generate_tiresias(preset("philly"), 1, seed=1, gpus=w, busy=0.3),
                      lambda i, b, p: solve(TiresiasFormulation(), i, b, p)),
    "tiresias-multi": ([2, 4, 8, 16], lambda n: generate_tiresias(preset("tiresias-60"), n, seed=1, gpus=8, busy=0.2),
                       lambda i, b, p: solve(TiresiasFormulation(), i, b, p)),
}


def limits(rows: list, quick: bool, only_series: list[str] | None = None, sizes_override: list[int] | None = None,
           backends: list[str] | None = None) -> None:
    """Sizes ascending per series and backend until the first size not proven optimal within LIMIT.
    ``sizes_override`` replaces every chosen series' sizes (a bisection step: give the bracket's midpoint)."""
    for name, (sizes, make, run) in SERIES.items():
        if only_series and name not in only_series:
            continue
        alive = list(backends or BACKEND_NAMES)
        sizes = sorted(sizes_override) if sizes_override else sizes
        for n in sizes[:3] if quick and not sizes_override else sizes:
            if not alive:
                break
            inst = make(n)
            for be in list(alive):
                try:
                    r = run(inst, be, SolveParams(time_limit_s=LIMIT, seed=1))
                except Exception as e:  # noqa: BLE001 - a backend that cannot take the model stops here
                    rows.append({"case": f"limits-{name}", "backend": be, "size": n, "error": str(e)})
                    alive.remove(be)
                    continue
                rows.append(row(f"limits-{name}", r, {"size": n, "jobs": len(inst.base.jobs)}))
                if r.status is not Status.OPTIMAL or (r.timing.wall_s or 0) > LIMIT:
                    alive.remove(be)


def scale(rows: list, quick: bool, backends: list[str] | None = None) -> None:
    cl = dally(512)
    for name, kw in (("idle-synthetic", {}), ("busy-perfmodel", {"source": "perfmodel", "max_gpus": 16, "busy": 0.5})):
        t0 = time.perf_counter()
        inst = generate_joint(cl, 20000, seed=1, **{"max_gpus": 32, **kw})
        gen_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        lp = relaxation_bound(inst)
        lp_s = time.perf_counter() - t0
        for be in backends or ("highs", "cpsat"):
            r = JointTwoStage().solve(inst, be, SolveParams(time_limit_s=LIMIT, seed=1))
            rows.append(row(f"scale-20000-{name}", r, {"gpus": cl.total_gpus, "lp_bound": lp, "lp_s": round(lp_s, 3),
                                                      "gap_to_lp": relative_gap(r.objective, lp),
                                                      "generate_s": round(gen_s, 3), "peak_rss_mb": round(peak_mb(), 1),
                                                      "notes": r.notes}))
        if not quick:
            r = POP(16, parallel=True).solve(inst, "highs", SolveParams(time_limit_s=LIMIT, seed=1))
            rows.append(row(f"scale-20000-{name}-pop16", r, {"gpus": cl.total_gpus, "lp_bound": lp,
                                                             "gap_to_lp": relative_gap(r.objective, lp),
                                                             "peak_rss_mb": round(peak_mb(), 1)}))


def pop_vs_direct(rows: list, quick: bool, backends: list[str] | None = None) -> None:
    for n in ((400,) if quick else (400, 1600, 6400)):
        cl = dally(_racks(n))
        inst = generate_joint(cl, n, seed=1, source="perfmodel", max_gpus=16, busy=0.5)
        lp = relaxation_bound(inst)
        for be in backends or ("highs", "cpsat"):
            p = SolveParams(time_limit_s=LIMIT, seed=1)
            extra = {"jobs": n, "gpus": cl.total_gpus, "lp_bound": lp}
            r = JointTwoStage().solve(inst, be, p)
            rows.append(row("pop-vs-direct-direct", r, extra | {"gap_to_lp": relative_gap(r.objective, lp)}))
            for k in sorted({8, max(2, n // 32)}):
                r = POP(k, parallel=True).solve(inst, be, p)
                rows.append(row("pop-vs-direct-pop", r, extra | {"k": k, "gap_to_lp": relative_gap(r.objective, lp)}))


def reference(rows: list, quick: bool) -> None:
    """The issue's reference point: 2,000 jobs on 4,096 GPUs (``dally(64)``), direct ``joint`` on HiGHS
    (the pooled model, exact on the idle synthetic instance) against POP k=8 (parallel) with 60 s each;
    then the same on a half-busy perf-model instance, where the direct solve is the two-stage one."""
    cl = dally(64)
    variants = [("idle-synthetic", {}, lambda i, b, p: solve(JointFormulation(), i, b, p))]
    if not quick:
        variants.append(("busy-perfmodel", {"source": "perfmodel", "max_gpus": 16, "busy": 0.5},
                         lambda i, b, p: JointTwoStage().solve(i, b, p)))
    for name, kw, direct in variants:
        inst = generate_joint(cl, 2000, seed=1, **kw)
        lp = relaxation_bound(inst)
        p = SolveParams(time_limit_s=LIMIT, seed=1)
        extra = {"jobs": 2000, "gpus": cl.total_gpus, "lp_bound": lp}
        r = direct(inst, "highs", p)
        rows.append(row(f"reference-2000-{name}-direct", r, extra | {"gap_to_lp": relative_gap(r.objective, lp)}))
        r = POP(8, parallel=True).solve(inst, "highs", p)
        rows.append(row(f"reference-2000-{name}-pop8", r, extra | {"k": 8, "gap_to_lp": relative_gap(r.objective, lp)}))


def budget(rows: list, quick: bool) -> None:
    inst = generate_joint(preset("dally-8"), 200, seed=1, running_frac=0.3, reconfig_penalty=0.2, max_gpus=32)
    for be in ("highs", "cpsat"):
        r = solve(JointFormulation(aggregate=False), inst, be, SolveParams(time_limit_s=2.0, seed=1))
        rows.append(row("budget-2s-200", r, {"time_limit_s": 2.0}))


CASES = {"limits": limits, "scale": scale, "pop-vs-direct": pop_vs_direct, "reference": reference, "budget": budget}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes")
    ap.add_argument("--out", default="bench_formulations.json", help="where to write the JSON rows")
    ap.add_argument("--only", nargs="*", choices=list(CASES), help="run only these cases")
    ap.add_argument("--series", nargs="*", choices=list(SERIES), help="limits: only these series")
    ap.add_argument("--sizes", nargs="*", type=int, help="limits: these sizes instead of the series' own (bisection)")
    ap.add_argument("--backends", nargs="*", choices=BACKEND_NAMES, help="limits, scale, pop-vs-direct: only these backends")
    a = ap.parse_args()
    meta = {"cores": os.cpu_count(), "cpsat_workers": SolveParams().effective_threads,
            "python": platform.python_version(), "backends": BACKEND_NAMES, "loadavg_before": os.getloadavg(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    rows: list[dict] = []
    for name in a.only or CASES:
        if name == "limits":
            limits(rows, a.quick, a.series, a.sizes, a.backends)
        elif name in ("scale", "pop-vs-direct"):
            CASES[name](rows, a.quick, a.backends)
        else:
            CASES[name](rows, a.quick)
    meta["loadavg_after"] = os.getloadavg()
    meta["peak_rss_mb"] = round(peak_mb(), 1)
    Path(a.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1, default=str))
    print(json.dumps(meta))


__all__ = ["BACKEND_NAMES", "CASES", "LIMIT", "SERIES", "budget", "limits", "main", "peak_mb", "pop_vs_direct",
           "reference", "row", "scale"]


if __name__ == "__main__":
    main()
