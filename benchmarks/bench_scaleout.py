"""Scale-out of ``schedlab bench`` on Dask (issue 25): the measured speed-up of a LocalCluster with N
worker processes, the per-run overhead that limits it, and the curve expected on more cores.

    python -m schedlab.benchmarks.bench_scaleout [--workers 1,2] [--seeds 6] [--out scaleout.json]
    python -m schedlab.benchmarks.bench_scaleout --trace ../shared/traces/philly/sia_philly_jobs.csv \
        --trace-format philly --cluster philly --source sample=20000 --seeds 4

A suite of ``K`` trace replays (``--workload``, default ``smoke``, x ``--policies``, default FIFO / 2D-LAS,
x ``--seeds`` seeds; or a trace file, ``--trace PATH --trace-format F --cluster C``; ``--source K=V``
sets any other workload-source option, e.g. ``sample`` or ``load``) is run into a fresh folder with ``schedlab bench FILE --executor dask --workers N
--no-report`` for each N (and once with ``--executor local --workers 1`` for reference), then rerun with
nothing left to run, which measures the fixed cost ``S`` (start-up, connecting / starting the cluster,
closing it). With ``r`` the mean run time the workers report (``wall_s`` of the records: the work of a
run), the per-run overhead is ``o = (T(1) - S) / K - r`` (dispatch, the result's trip back, one store
transaction). The expected wall time on N cores lies between

* ``T(N) = S + K*o + K*r/N`` (the overhead serial, in the one client: the lower bound of the speed-up), and
* ``T(N) = S + K*(r + o)/N`` (the overhead spread over the workers: the upper bound),

printed for N = 1..16 beside the measured points. The load average is written beside every figure: on a
shared 2-core machine N = 2 competes with everybody else.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from schedlab.benchmarks.bench_speed import _json_of, load_avg, schedlab_cmd, timed_command

SUITE = """name: scaleout
defaults: {{seeds: {seeds}}}
replay:
  - {{{what}, policies: {policies}, source: {source}}}
"""


def _source_options(items: list[str]) -> dict[str, Any]:
    """``K=V`` pairs, each value read as YAML (``sample=20000`` gives an int)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"error: --source {item!r}: expected KEY=VALUE")
        out[key.strip()] = yaml.safe_load(value)
    return out


def suite_text(a: argparse.Namespace) -> str:
    """The suite file of the sweep: one replay entry (a named workload or a trace file) x policies x seeds."""
    if a.trace:
        what = {"trace": str(Path(a.trace).resolve()), "trace_format": a.trace_format, "cluster": a.cluster}
        what = {k: v for k, v in what.items() if v is not None}
    else:
        what = {"workload": a.workload}
    policies = [p.strip() for p in a.policies.split(",") if p.strip()]
    return SUITE.format(seeds=list(range(a.seeds)), what=json.dumps(what)[1:-1], policies=json.dumps(policies),
                        source=json.dumps(_source_options(a.source)))


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--workers", default="1,2", help="comma-separated N (Dask worker processes)")
    ap.add_argument("--seeds", type=int, default=6, help="seeds per policy (K = policies x seeds runs)")
    ap.add_argument("--workload", default="smoke", help="a named workload (schedlab list workloads)")
    ap.add_argument("--policies", default="fifo,2d-las", help="comma-separated policies")
    ap.add_argument("--source", action="append", default=[], metavar="K=V",
                    help="another workload-source option (repeatable), e.g. sample=20000")
    ap.add_argument("--trace", help="a trace file instead of --workload (with --trace-format, --cluster)")
    ap.add_argument("--trace-format")
    ap.add_argument("--cluster")
    ap.add_argument("--out", default="scaleout.json")
    return ap


def run_once(suite: Path, out: Path, executor: str, workers: int) -> dict[str, Any]:
    argv = [*schedlab_cmd(), "bench", str(suite), "--out", str(out), "--executor", executor, "--workers",
            str(workers), "--no-report", "--format", "json"]
    load = load_avg()
    first = timed_command(argv)
    if first["code"] != 0:
        raise SystemExit(f"error: {' '.join(argv)}: {first['stderr'][-800:]}")
    recs = _json_of(first["stdout"]).get("records", [])
    rerun = timed_command(argv)
    return {"executor": executor, "workers": workers, "runs": len(recs), "wall_s": first["wall_s"],
            "cpu_s": first["cpu_s"], "fixed_s": rerun["wall_s"], "load_before": load, "load_after": load_avg(),
            "mean_run_s": statistics.fmean(float(r["wall_s"]) for r in recs) if recs else None}


def curve(t1: float, fixed: float, k: int, r: float, o: float, n_max: int = 16) -> list[dict[str, float]]:
    out = []
    for n in range(1, n_max + 1):
        serial = fixed + k * o + k * r / n
        spread = fixed + k * (r + o) / n
        out.append({"workers": n, "speedup_low": t1 / serial, "speedup_high": t1 / spread})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    a = ap.parse_args(argv)
    ns = [int(x) for x in a.workers.split(",") if x.strip()]
    with tempfile.TemporaryDirectory(prefix="bench_scaleout-") as tmp:
        suite = Path(tmp) / "scaleout.yaml"
        suite.write_text(suite_text(a))
        points = [run_once(suite, Path(tmp) / "local-1", "local", 1)]
        for n in ns:
            points.append(run_once(suite, Path(tmp) / f"dask-{n}", "dask", n))
    dask = {p["workers"]: p for p in points if p["executor"] == "dask"}
    base = dask.get(1)
    model: dict[str, Any] = {}
    if base is not None and base["runs"] and base["mean_run_s"] is not None:
        k, r, s, t1 = base["runs"], base["mean_run_s"], base["fixed_s"], base["wall_s"]
        o = (t1 - s) / k - r
        model = {"runs": k, "mean_run_s": r, "fixed_s": s, "per_run_overhead_s": o,
                 "measured_speedup": {n: t1 / p["wall_s"] for n, p in dask.items()},
                 "expected": curve(t1, s, k, r, max(o, 0.0))}
    doc = {"cpu_count": os.cpu_count(), "workload": a.trace or a.workload, "policies": a.policies, "source": a.source, "python": sys.version.split()[0], "points": points, "model": model,
           "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    Path(a.out).write_text(json.dumps(doc, indent=2) + "\n")
    for p in points:
        print(f"{p['executor']:5} N={p['workers']}: {p['runs']} runs in {p['wall_s']:.1f} s wall "
              f"({p['cpu_s']:.1f} CPU s of its processes), fixed {p['fixed_s']:.1f} s, mean run "
              f"{p['mean_run_s'] or 0:.2f} s; load {p['load_before']}")
    if model:
        print(f"per-run overhead o = {model['per_run_overhead_s']:.2f} s (mean run r = {model['mean_run_s']:.2f} s, "
              f"fixed S = {model['fixed_s']:.1f} s, K = {model['runs']})")
        print("measured speed-up: " + ", ".join(f"N={n}: {v:.2f}x" for n, v in model["measured_speedup"].items()))
        print("expected speed-up (overhead serial .. spread): " + ", ".join(
            f"N={c['workers']}: {c['speedup_low']:.2f}-{c['speedup_high']:.2f}x" for c in model["expected"]
            if c["workers"] in (1, 2, 4, 8, 16)))
    print(f"JSON: {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
