"""Performance benchmark of the exact formulations (issue 5 targets) on every backend.

    python benchmarks/bench_formulations.py [--quick] [--out FILE] [--only NAME ...]

Cases (seeded synthetic instances, 1 solver thread unless stated):

* ``joint-30``: joint plan + allocation, 30 jobs on ``rubick-64``: time to proven optimality (< 10 s);
* ``joint-200``: 200 jobs on ``dally-8`` (512 GPUs), 60 s: gap to the best bound (target <= 1 %);
* ``joint-machines-30``: the per-machine model (symmetry breaking instead of aggregation) with
  running jobs and a reconfiguration penalty, 30 jobs on ``rubick-64``;
* ``pop-2000``: 2,000 jobs on 4,096 GPUs (``dally(64)``) with POP (k=8, 2 processes), 60 s in
  all: gap to the whole problem's machine-class LP bound (target <= 2 %); also the direct solve;
* ``joint-perfmodel``: 30 jobs on ``rubick-64`` and 200 on ``dally-8`` with the perf model's option
  tables: the direct per-machine model (its shares do not aggregate exactly) and the exact two-stage
  solve (``JointTwoStage``); ``joint-2stage`` runs only the latter;
* ``pop-2000-perfmodel``: the same with the perf model's option tables;
* ``tiresias-32``: a 32-GPU job on ``philly`` (empty and half-busy cluster): optimal in < 5 s;
* ``sizes``: per backend and size, for joint / tier / Tiresias, which backend is fastest.

The machine is shared: the load average before and after is recorded. Wall-clock numbers vary
with load; the JSON keeps every raw figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

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
from schedlab.formulations.result import relative_gap
from schedlab.topology import preset
from schedlab.topology.presets import dally

BACKEND_NAMES = [b for b in BACKENDS if get_backend(b).availability().ok]


def row(case: str, res, extra: dict | None = None) -> dict:
    d = res.as_dict()
    out = {"case": case, "backend": d["backend"], "status": d["status"], "objective": d["objective"],
           "bound": d["bound"], "gap": d["gap"], "build_s": d["build_s"], "solve_s": d["solve_s"],
           "verified": d["verified"], "threads": d["threads"], "model": d["model"]}
    out.update(extra or {})
    print(json.dumps({k: v for k, v in out.items() if k != "model"}), flush=True)
    return out


def best_gap(res, other_bound: float | None) -> float | None:
    bounds = [b for b in (res.dual_bound, other_bound) if b is not None]
    if res.objective is None or not bounds:
        return None
    return relative_gap(res.objective, min(bounds) if res.sense == "max" else max(bounds))


def joint_30(rows, quick):
    inst = generate_joint(preset("rubick-64"), 30, seed=1)
    for be in BACKEND_NAMES:
        r = solve(JointFormulation(), inst, be, SolveParams(time_limit_s=60, seed=1))
        rows.append(row("joint-30", r, {"wall_s": r.build_s + r.solve_s}))


def joint_machines_30(rows, quick):
    inst = generate_joint(preset("rubick-64"), 30, seed=1, running_frac=0.4, reconfig_penalty=0.2)
    for be in BACKEND_NAMES:
        r = solve(JointFormulation(), inst, be, SolveParams(time_limit_s=30 if quick else 60, seed=1))
        rows.append(row("joint-machines-30", r, {"wall_s": r.build_s + r.solve_s}))


def joint_200(rows, quick):
    inst = generate_joint(preset("dally-8"), 200, seed=1)
    t0 = time.perf_counter()
    lp = relaxation_bound(inst)
    lp_s = time.perf_counter() - t0
    for be in BACKEND_NAMES:
        r = solve(JointFormulation(), inst, be, SolveParams(time_limit_s=20 if quick else 60, seed=1))
        rows.append(row("joint-200", r, {"lp_bound": lp, "lp_s": round(lp_s, 3), "gap_best_bound": best_gap(r, lp),
                                         "wall_s": r.build_s + r.solve_s}))


def pop_2000(rows, quick):
    cl = dally(64)
    inst = generate_joint(cl, 2000, seed=1)
    limit = 30 if quick else 60
    for be in ("highs", "cpsat") if not quick else ("highs",):
        t0 = time.perf_counter()
        r = POP(8, parallel=True, workers=2).solve(inst, be, SolveParams(time_limit_s=limit, seed=1, threads=2))
        rows.append(row("pop-2000", r, {"wall_s": round(time.perf_counter() - t0, 3), "gpus": cl.total_gpus}))
    t0 = time.perf_counter()
    r = solve(JointFormulation(), inst, "highs", SolveParams(time_limit_s=limit, seed=1))
    rows.append(row("joint-2000-direct", r, {"wall_s": round(time.perf_counter() - t0, 3), "gpus": cl.total_gpus}))


def joint_perfmodel(rows, quick, two_stage_only=False):
    """Options from :class:`perfmodel.PerfModel` (GPU shares 1..8 incl. 3, 5, 6: not a divisibility
    chain, so the exact per-machine model with symmetry breaking is used)."""
    for n, cl in ((30, preset("rubick-64")), (200, preset("dally-8"))):
        inst = generate_joint(cl, n, seed=1, source="perfmodel")
        lp = relaxation_bound(inst)
        for be in BACKEND_NAMES:
            p = SolveParams(time_limit_s=20 if quick else 60, seed=1)
            if not two_stage_only:
                r = solve(JointFormulation(), inst, be, p)
                rows.append(row(f"joint-perfmodel-{n}", r, {"lp_bound": lp, "gap_best_bound": best_gap(r, lp),
                                                            "wall_s": r.build_s + r.solve_s}))
            r = JointTwoStage().solve(inst, be, p)
            rows.append(row(f"joint-2stage-perfmodel-{n}", r, {"lp_bound": lp, "gap_best_bound": best_gap(r, lp),
                                                               "wall_s": r.build_s + r.solve_s, "notes": r.notes}))


def tiresias_32(rows, quick):
    for busy in (0.0, 0.5):
        for seed in (0, 1):
            inst = generate_tiresias(preset("philly"), 1, seed=seed, gpus=32, busy=busy)
            for be in BACKEND_NAMES:
                r = solve(TiresiasFormulation(), inst, be, SolveParams(time_limit_s=30, seed=1))
                rows.append(row("tiresias-32", r, {"busy": busy, "seed": seed, "wall_s": r.build_s + r.solve_s}))
            if seed == 0:  # the general (bilinear, multi-job capable) model on the same instance
                for be in ("cpsat", "highs"):
                    r = solve(TiresiasFormulation("bilinear"), inst, be, SolveParams(time_limit_s=30, seed=1))
                    rows.append(row("tiresias-32-bilinear", r, {"busy": busy, "seed": seed,
                                                                "wall_s": r.build_s + r.solve_s}))


def sizes(rows, quick):
    cases = [("joint", n, lambda n: generate_joint(preset("dally-4"), n, seed=2), JointFormulation)
             for n in ((10, 50) if quick else (10, 50, 100))]
    cases += [("tier", n, lambda n: generate_tier(preset("dally-4"), n, seed=2), TierFormulation)
              for n in ((20,) if quick else (20, 40, 80))]
    cases += [("tiresias-multi", n, lambda n: generate_tiresias(preset("philly"), n, seed=2, gpus=16, busy=0.3),
               TiresiasFormulation) for n in ((2,) if quick else (2, 4, 8))]
    for name, n, gen, form in cases:
        inst = gen(n)
        for be in BACKEND_NAMES:
            r = solve(form(), inst, be, SolveParams(time_limit_s=30, seed=1))
            rows.append(row(f"sizes-{name}", r, {"jobs": n, "wall_s": r.build_s + r.solve_s}))


def joint_2stage(rows, quick):
    joint_perfmodel(rows, quick, two_stage_only=True)


def pop_2000_perfmodel(rows, quick):
    """POP on 2,000 jobs / 4,096 GPUs with the perf model's option tables (parts use the two-stage solve)."""
    cl = dally(64)
    inst = generate_joint(cl, 2000, seed=1, source="perfmodel")
    limit = 30 if quick else 60
    for be in ("highs", "scip"):
        t0 = time.perf_counter()
        r = POP(8, parallel=True, workers=2).solve(inst, be, SolveParams(time_limit_s=limit, seed=1, threads=2))
        rows.append(row("pop-2000-perfmodel", r, {"wall_s": round(time.perf_counter() - t0, 3), "gpus": cl.total_gpus}))


CASES = {"joint-30": joint_30, "joint-machines-30": joint_machines_30, "joint-200": joint_200,
         "joint-perfmodel": joint_perfmodel, "joint-2stage": joint_2stage, "tiresias-32": tiresias_32,
         "pop-2000": pop_2000, "pop-2000-perfmodel": pop_2000_perfmodel, "sizes": sizes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter limits and fewer sizes")
    ap.add_argument("--out", default="bench_formulations.json", help="where to write the JSON rows")
    ap.add_argument("--only", nargs="*", choices=list(CASES), help="run only these cases")
    a = ap.parse_args()
    meta = {"cores": os.cpu_count(), "python": platform.python_version(), "backends": BACKEND_NAMES,
            "loadavg_before": os.getloadavg(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    rows: list[dict] = []
    for name in a.only or CASES:
        CASES[name](rows, a.quick)
    meta["loadavg_after"] = os.getloadavg()
    Path(a.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1, default=str))
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
