"""Exact-in-the-loop vs its heuristic on the same replay (issue 25's exact-joint row).

``python -m schedlab.benchmarks.bench_exact_loop [--jobs N] [--policy rubick --policy exact-joint]
[-P exact-joint.PARAM=VALUE ...] [--profile exact-joint] [--json]`` replays the ``rubick-base``
workload (generator, ``--seed``, default 0; the workload and cluster of the ``rubick`` suite's
``base-gen`` cases) under each policy, one after the other in this process, and prints per policy the
wall and CPU seconds of the replay (``simulate`` end to end, the perf model's first curve evaluations
included), average JCT, makespan, and the policy's counters (``metrics["policy_counters"]``: rounds,
solves, rounds answered from the steady state, solves ended at a limit with an incumbent, ...), with
the load average beside each figure. ``--jobs N`` keeps the first N jobs by arrival (a prefix of the
same replay; 0 = all 406) and says so in the output. ``--profile POLICY`` runs that policy's replay
under cProfile (timer: the process's CPU time, so that waiting for a core on a loaded machine does not
count) and prints the top entries by internal and by cumulative time. ``--check-method M`` solves every
round's instance again with the exact method ``M`` (e.g. ``joint``, the full per-machine model; no time
limit) and reports per round whether both proved an optimum of the same objective value (``check``:
rounds, equal, the rounds that differ); the replay's timings then include the check. ``--solve-log
PATH`` writes one JSON line per exact-joint solve (simulated time, jobs, CPU and wall seconds, status,
objective, bound, the two-stage solve's per-stage notes: which rounds and which stages take the time).

The ratios ``exact-joint / rubick`` of CPU and of wall seconds are the figure issue 25 targets (< 10);
on a shared, loaded machine the CPU ratio is the one that measures the code (wall time there is mostly
waiting for a core, and the longer replay waits longer).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import time
from typing import Any

from schedlab.benchmarks.registry import all_policies
from schedlab.benchmarks.simulator import simulate
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.scheduling.registry import parse_assignments


def round_checker(method: str, backend: str = "highs"):
    """An ``on_solve`` hook for :class:`~schedlab.formulations.policies.exact_joint.ExactJointPolicy`: each
    solved round's instance solved again with ``method`` (same parameters, no time limit, no start), and
    the hook's ``summary()``: rounds, how many both proved optimal with the same objective value, and the
    others ``(time, status, objective, status, objective)``."""
    from schedlab.formulations.policies.exact_joint import solver_of
    from schedlab.formulations.result import Status

    seen: list[tuple] = []

    def hook(jinst, params, res) -> None:
        other = solver_of(method)(jinst, backend, params.with_(time_limit_s=None, warm_start=None))
        a, b = res.objective, other.objective
        same = (res.status is Status.OPTIMAL and other.status is Status.OPTIMAL and a is not None
                and b is not None and abs(a - b) <= 1e-6 * max(1.0, abs(a)))
        seen.append((same, round(jinst.base.time, 1), res.status.value, a, other.status.value, b))

    def summary() -> dict[str, Any]:
        return {"method": method, "rounds": len(seen), "equal": sum(1 for s in seen if s[0]),
                "differ": [list(s[1:]) for s in seen if not s[0]]}

    hook.summary = summary
    return hook


def solve_logger(path: str, inner=None):
    """An ``on_solve`` hook that appends one JSON line per solve to ``path`` (simulated time, jobs in
    the decision, the process's CPU seconds since the previous solve ended (the solve and the replay
    between), the solve's wall seconds, status, objective, bound and the solver's per-stage notes),
    then calls ``inner`` (e.g. :func:`round_checker`'s hook) if given."""
    out = open(path, "w")  # noqa: SIM115 (closed by the hook's ``close``)
    last = [time.process_time()]

    def hook(jinst, params, res) -> None:
        c = time.process_time()
        out.write(json.dumps({"t": round(jinst.base.time, 1), "jobs": len(jinst.base.jobs),
                              "cpu_s": round(c - last[0], 3), "wall_s": round(res.timing.wall_s, 3),
                              "status": res.status.value, "objective": res.objective, "bound": res.bounds.dual,
                              "notes": list(res.notes)}) + "\n")
        out.flush()
        if inner is not None:
            inner(jinst, params, res)
        last[0] = time.process_time()

    hook.close = out.close
    return hook


def replay(policy: str, params: dict[str, Any], *, jobs: int = 0, seed: int = 0,
           profile: bool = False, top: int = 25, check_method: str | None = None,
           solve_log: str | None = None) -> dict[str, Any]:
    """One replay of ``rubick-base`` (first ``jobs`` jobs by arrival; 0 = all) under ``policy``;
    ``solve_log``: a JSON-lines file of every solve (:func:`solve_logger`)."""
    w, cluster = WorkloadSource(workload="rubick-base", seed=seed).build()
    js = sorted(w.jobs, key=lambda j: (j.arrival, j.id))
    if jobs:
        js = js[:jobs]
    pol = all_policies().build(policy, params, seed=seed, source="<bench_exact_loop>")
    check = (round_checker(check_method, getattr(pol, "backend", "highs")) if check_method and hasattr(pol, "on_solve")
             else None)
    if check is not None:
        pol.on_solve = check
    log = solve_logger(solve_log, check) if solve_log and hasattr(pol, "on_solve") else None
    if log is not None:
        pol.on_solve = log
    # CPU-time profile (all threads of the process): on a shared, loaded machine wall time mostly
    # measures waiting for a core
    prof = cProfile.Profile(time.process_time) if profile else None
    load0 = os.getloadavg()
    c0, t0 = time.process_time(), time.perf_counter()
    if prof is not None:
        prof.enable()
    res = simulate(cluster, js, pol, quotas=w.quotas)
    if prof is not None:
        prof.disable()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if log is not None:
        log.close()
    recs = list(res.jobs)
    out: dict[str, Any] = {
        "policy": policy, "params": params, "workload": "rubick-base", "seed": seed, "jobs": len(js),
        "prefix": bool(jobs), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
        "avg_jct_h": round(sum(r.end - r.arrival for r in recs) / len(recs) / 3600, 4) if recs else None,
        "makespan_h": round(max(r.end for r in recs) / 3600, 4) if recs else None,
        "unfinished": len(res.unfinished), "counters": dict(res.metrics.get("policy_counters", {})),
        # solves that did not prove optimality: (simulated time, termination)
        "not_optimal": [[round(t, 1), why] for t, why in getattr(pol, "limit_log", [])],
        "load_avg_before": [round(x, 2) for x in load0], "load_avg_after": [round(x, 2) for x in os.getloadavg()]}
    if check is not None:
        out["check"] = check.summary()
    if prof is not None:
        for key in ("tottime", "cumulative"):
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats(key).print_stats(top)
            out[f"profile_{key}"] = s.getvalue()
    return out


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=0, help="first N jobs by arrival (0 = all 406)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--policy", action="append", help="repeatable (default: rubick, exact-joint)")
    ap.add_argument("-P", "--param", action="append", default=[], help="POLICY.PARAM=VALUE (repeatable)")
    ap.add_argument("--profile", action="append", default=[], help="run this policy under cProfile")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--check-method", default=None,
                    help="solve every exact-joint round again with this method and compare the optima")
    ap.add_argument("--solve-log", default=None,
                    help="write one JSON line per exact-joint solve (time, jobs, CPU, wall, status, stage notes) here")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    params = parse_assignments(a.param, source="<bench_exact_loop -P>")
    rows = [replay(p, params.get(p, {}), jobs=a.jobs, seed=a.seed, profile=p in a.profile, top=a.top,
                   check_method=a.check_method, solve_log=a.solve_log)
            for p in a.policy or ["rubick", "exact-joint"]]
    by = {r["policy"]: r for r in rows}
    if "rubick" in by and "exact-joint" in by and by["rubick"]["wall_s"] > 0 and by["rubick"]["cpu_s"] > 0:
        for what in ("cpu", "wall"):
            ratio = by["exact-joint"][f"{what}_s"] / by["rubick"][f"{what}_s"]
            rows.append({"ratio": f"exact-joint {what} / rubick {what}", "value": round(ratio, 2), "target": "< 10"})
    if a.json:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            prof = {k: r.pop(k) for k in list(r) if k.startswith("profile_")}
            print(json.dumps(r))
            for k, v in prof.items():
                print(f"--- {k}\n{v}")
    return rows


if __name__ == "__main__":
    main()
