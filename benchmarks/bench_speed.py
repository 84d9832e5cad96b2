"""Speed at scale (issue 25): every row of the issue's table measured in one run, each beside the load
average, written as JSON to a file and as a table to stdout.

    python -m schedlab.benchmarks.bench_speed [--out bench_speed.json] [--only ROW,GROUP,...] [--quick]
                                              [--trace PATH] [--runs 10]

Rows (``--only`` takes row names or group names; ``--list`` prints them):

* ``philly`` group: the whole Philly table (82,247 jobs) at its own arrivals under FIFO, 2D-LAS and
  Dally (``philly-fifo``, ``philly-2d-las``, ``philly-dally``), and at 5x arrivals (``--load 5``) under
  2D-LAS, SRTF, SRSF, 2D-Gittins, Gandiva (the artifact's), gandiva-like, Rubick and Dally
  (``load5-POLICY``): each one ``schedlab simulate ... --semantics realistic --format json`` process
  (the artifact's ``gandiva`` runs under ``--semantics tiresias`` only, on machines of one size: the
  Philly cluster's 2,400 GPUs as 300 x 8);
* ``exact-joint``: ``schedlab simulate --workload rubick-base --seed 0 -p rubick -p exact-joint``; the
  ratio of the two policies' event-loop wall times (target < 10);
* ``rubick-schedule``: one ``RubickPolicy.schedule`` call with 2,000 active jobs on 1,024 GPUs (128 x 8
  A800), the state being Rubick's own decision on them; median of ``--repeat`` calls;
* ``list-start``: ``schedlab list`` (and ``schedlab --help`` beside it), median of ``--runs`` fresh
  processes; the first is not counted (it warms the file system cache);
* ``bench-rerun``: ``schedlab bench SUITE`` into a fresh folder (the first run), then again with nothing
  left to run (the rerun);
* ``gittins-p99``: every 2D-Gittins decision timed in a replay of the ``philly`` workload compressed
  until 5,000+ jobs are queued (the workload's quotas and bins, as ``bench_tiresias``); P99 (wall and
  CPU) over the decisions that saw 5,000+ queued.

CPU seconds: a command's child-process CPU (``resource.getrusage(RUSAGE_CHILDREN)``, user + system), an
in-process figure's ``time.process_time``; wall seconds beside them. On the shared machine the CPU time
is the steadier figure. ``--quick`` shrinks every row (Philly down-sampled to 2,000 jobs, the ``smoke``
workload for exact-joint, 200 jobs on ``rubick-64``, a one-case suite, 3 runs of ``list``, a short
Gittins replay with 300+ queued) so that a subset runs in about a minute; quick figures are not the
issue's targets (the JSON says ``"quick": true``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_TRACES = ("../shared/traces/philly/sia_philly_jobs.csv", "/work/shared/traces/philly/sia_philly_jobs.csv")
#: Philly rows: (row name, policy, arrival compression)
PHILLY = (("philly-fifo", "fifo", 1.0), ("philly-2d-las", "2d-las", 1.0), ("philly-dally", "dally", 1.0),
          ("load5-2d-las", "2d-las", 5.0), ("load5-srtf", "srtf", 5.0), ("load5-srsf", "srsf", 5.0),
          ("load5-2d-gittins", "2d-gittins", 5.0), ("load5-gandiva", "gandiva", 5.0),
          ("load5-gandiva-like", "gandiva-like", 5.0), ("load5-rubick", "rubick", 5.0), ("load5-dally", "dally", 5.0))
#: the issue's targets (CPU seconds unless said otherwise)
TARGETS = {"philly-fifo": "< 4 CPU s", "philly-2d-las": "< 6 CPU s", "philly-dally": "< 6 CPU s",
           "load5-2d-las": "< 15 CPU s", **{n: "< 30 CPU s" for n, _, load in PHILLY if load == 5.0 and n != "load5-2d-las"},
           "exact-joint": "exact-joint < 10x Rubick's time", "rubick-schedule": "< 0.25 s median",
           "list-start": "< 0.2 s median", "bench-rerun": "< 3 s", "gittins-p99": "< 10 ms"}
QUICK_SAMPLE = 2000
QUICK_SUITE = """name: speed-tiny
defaults: {seeds: [0], time_limit_s: 20, backends: [highs]}
gap:
  - {kind: joint, cluster: rubick-64, sizes: [2], policies: [fifo]}
"""


def load_avg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def schedlab_cmd() -> list[str]:
    script = Path(sys.executable).with_name("schedlab")
    return [str(script)] if script.exists() else [sys.executable, "-m", "schedlab"]


def timed_command(argv: list[str], *, timeout: float | None = None, env: dict | None = None) -> dict[str, Any]:
    """Run ``argv``: ``{"wall_s", "cpu_s", "code", "stdout", "stderr"}`` (CPU: the child's user + system)."""
    c0, t0 = _child_cpu(), time.perf_counter()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:  # killed and reaped by ``run``: its CPU is in RUSAGE_CHILDREN
        return {"wall_s": time.perf_counter() - t0, "cpu_s": _child_cpu() - c0, "code": None, "stdout": "",
                "stderr": f"stopped at the row limit ({timeout:g} s wall)", "timed_out": True}
    return {"wall_s": time.perf_counter() - t0, "cpu_s": _child_cpu() - c0, "code": r.returncode,
            "stdout": r.stdout, "stderr": r.stderr}


def _json_of(text: str) -> dict[str, Any]:
    i, j = text.find("{"), text.rfind("}")
    return json.loads(text[i:j + 1]) if i >= 0 and j > i else {}


def _failed(res: dict[str, Any]) -> str:
    if res.get("timed_out"):
        return f"not finished: {res['stderr']} after {res['cpu_s']:.1f} CPU s"
    return f"exit {res['code']}: " + (res["stderr"].strip().splitlines() or ["(no message)"])[-1][:300]


@dataclass(frozen=True)
class Ctx:
    quick: bool
    trace: Path | None
    runs: int
    repeat: int
    workdir: Path
    row_limit: float | None = None


# ---------------------------------------------------------------------------------------------- rows
#: policies that run under one semantics only (the Tiresias artifact's gandiva: ``tiresias``)
SEMANTICS = {"gandiva": "tiresias"}
#: the artifact's gandiva needs machines of one size: the Philly cluster's 2,400 GPUs as 300 x 8 (its
#: 8-GPU machines' type and links), written as a spec file
UNIFORM_PHILLY = {
    "name": "philly-uniform", "defaults": {"cpus": 48, "host_memory_gb": 256, "pcie_gbps": 16},
    "links": {"machine": {"bandwidth_gbps": 16, "latency_us": 2}, "rack": {"bandwidth_gbit": 100, "latency_us": 2},
              "network": {"bandwidth_gbit": 100, "latency_us": 5}},
    "racks": [{"name": f"r8-{i}", "defaults": {"gpus": 8, "gpu_model": "P40-24GB", "gpu_memory_gb": 24},
               "machine_count": 25} for i in range(12)]}
UNIFORM = {"gandiva"}


def philly_row(policy: str, load: float) -> Callable[[Ctx], dict[str, Any]]:
    semantics = SEMANTICS.get(policy, "realistic")

    def run(ctx: Ctx) -> dict[str, Any]:
        if ctx.trace is None:
            return {"skipped": "Philly trace not found (--trace)"}
        cluster = "philly"
        if policy in UNIFORM:
            spec = ctx.workdir / "philly-uniform.json"
            spec.write_text(json.dumps(UNIFORM_PHILLY))
            cluster = str(spec)
        argv = [*schedlab_cmd(), "simulate", "--trace", str(ctx.trace), "--trace-format", "philly", "--cluster",
                cluster, "--policy", policy, "--semantics", semantics, "--format", "json", "-q"]
        if load != 1.0:
            argv += ["--load", f"{load:g}"]
        if ctx.quick:
            argv += ["--sample", str(QUICK_SAMPLE)]
        res = timed_command(argv, timeout=ctx.row_limit)
        if res["code"] != 0:
            return {"error": _failed(res), "cpu_s": res["cpu_s"], "wall_s": res["wall_s"]}
        m = _json_of(res["stdout"]).get("policies", {}).get(policy, {})
        return {"cpu_s": res["cpu_s"], "wall_s": res["wall_s"], "event_loop_wall_s": m.get("wall_s"), "semantics": semantics,
                "cluster": "philly" if policy not in UNIFORM else "philly-uniform (300 x 8 GPUs)",
                "jobs": m.get("jobs"), "events": m.get("events"), "preemptions": m.get("preemptions"),
                "avg_jct": m.get("avg_jct"), "command": " ".join(["schedlab", *argv[len(schedlab_cmd()):]])}
    return run


def exact_joint_row(ctx: Ctx) -> dict[str, Any]:
    workload = "smoke" if ctx.quick else "rubick-base"
    argv = [*schedlab_cmd(), "simulate", "--workload", workload, "--seed", "0", "-p", "rubick", "-p", "exact-joint",
            "--format", "json", "-q"]
    res = timed_command(argv, timeout=ctx.row_limit)
    if res["code"] != 0:
        return {"error": _failed(res), "cpu_s": res["cpu_s"], "wall_s": res["wall_s"]}
    pol = _json_of(res["stdout"]).get("policies", {})
    ej, rb = pol.get("exact-joint", {}).get("wall_s"), pol.get("rubick", {}).get("wall_s")
    return {"cpu_s": res["cpu_s"], "wall_s": res["wall_s"], "workload": workload, "exact_joint_wall_s": ej,
            "rubick_wall_s": rb, "ratio": (ej / rb) if ej and rb else None,
            "exact_joint_avg_jct": pol.get("exact-joint", {}).get("avg_jct"),
            "rubick_avg_jct": pol.get("rubick", {}).get("avg_jct")}


def rubick_schedule_row(ctx: Ctx) -> dict[str, Any]:
    """Median of ``repeat`` ``schedule`` calls on a fresh view of the same busy state (Rubick's own decision
    on ``n`` Rubick-mix jobs; curves cached by a first call)."""
    from schedlab.benchmarks.workloads.convert import trace_to_jobs
    from schedlab.benchmarks.workloads.named import rubick_trace
    from schedlab.heuristics.rubick import RubickPolicy
    from schedlab.scheduling import Instance
    from schedlab.scheduling.snapshot import snapshot_view
    from schedlab.topology import preset
    from schedlab.topology.cluster import Cluster
    from schedlab.topology.loaders import spec_from_dict

    if ctx.quick:
        cluster, n = preset("rubick-64"), 200
    else:
        machines = 128
        cluster = Cluster(spec_from_dict({
            "name": f"a800-{machines * 8}", "defaults": {"gpus": 8, "gpu_model": "A800-80GB", "gpu_memory_gb": 80,
                                                         "cpus": 96, "host_memory_gb": 1600, "pcie_gbps": 32},
            "links": {"machine": {"bandwidth_gbps": 400, "latency_us": 1},
                      "rack": {"bandwidth_gbps": 100, "latency_us": 2},
                      "network": {"bandwidth_gbps": 100, "latency_us": 5}},
            "racks": machines // 8, "machines_per_rack": 8}, source="<bench_speed>"))
        n = 2000
    trace, quotas = rubick_trace("base", cluster, seed=0, n=n)
    jobs = trace_to_jobs(trace, cluster, seed=0, reconfigurable=True)
    pol = RubickPolicy()
    c0, t0 = time.process_time(), time.perf_counter()
    running = pol.decide(Instance(cluster, jobs, quotas=quotas))  # builds and caches the curves
    first_wall, first_cpu = time.perf_counter() - t0, time.process_time() - c0
    busy = Instance(cluster, jobs, current=running, quotas=quotas, time=600.0)
    pol.schedule(snapshot_view(busy))
    walls, cpus = [], []
    for _ in range(ctx.repeat):
        view = snapshot_view(busy)
        c, t = time.process_time(), time.perf_counter()
        pol.schedule(view)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return {"cpu_s": statistics.median(cpus), "wall_s": statistics.median(walls), "jobs": n,
            "gpus": cluster.total_gpus, "running": len(running), "calls": ctx.repeat, "min_wall_s": min(walls),
            "first_call_with_curves_wall_s": first_wall, "first_call_with_curves_cpu_s": first_cpu}


def list_start_row(ctx: Ctx) -> dict[str, Any]:
    base = schedlab_cmd()
    out: dict[str, Any] = {}
    for name, argv in (("list", [*base, "list"]), ("help", [*base, "--help"])):
        first = timed_command(argv)  # not counted: it warms the file system cache
        if first["code"] != 0:
            return {"error": f"{name}: {_failed(first)}"}
        runs = [timed_command(argv) for _ in range(ctx.runs)]
        out[name] = {"median_wall_s": statistics.median(r["wall_s"] for r in runs),
                     "median_cpu_s": statistics.median(r["cpu_s"] for r in runs), "runs": len(runs),
                     "first_wall_s": first["wall_s"]}
    return {"cpu_s": out["list"]["median_cpu_s"], "wall_s": out["list"]["median_wall_s"],
            "help_wall_s": out["help"]["median_wall_s"], "help_cpu_s": out["help"]["median_cpu_s"],
            "runs": ctx.runs, "first_list_wall_s": out["list"]["first_wall_s"]}


def bench_rerun_row(ctx: Ctx) -> dict[str, Any]:
    if ctx.quick:
        suite = ctx.workdir / "speed-tiny.yaml"
        suite.write_text(QUICK_SUITE)
        ref = str(suite)
    else:
        ref = "quick"
    out = ctx.workdir / "bench-rerun"
    argv = [*schedlab_cmd(), "bench", ref, "--out", str(out)]
    first = timed_command(argv)
    if first["code"] != 0:
        return {"error": f"first run: {_failed(first)}", "first_wall_s": first["wall_s"]}
    rerun = timed_command(argv)
    if rerun["code"] != 0:
        return {"error": f"rerun: {_failed(rerun)}"}
    return {"cpu_s": rerun["cpu_s"], "wall_s": rerun["wall_s"], "suite": ref if not ctx.quick else "speed-tiny",
            "first_wall_s": first["wall_s"], "first_cpu_s": first["cpu_s"]}


class _TimedPolicy:
    """Wraps a policy; records (queue length, wall s, CPU s) of each ``schedule`` call."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.oracle = getattr(inner, "oracle", False)
        self.calls: list[tuple[int, float, float]] = []

    def schedule(self, view):
        t, c = time.perf_counter(), time.process_time()
        d = self.inner.schedule(view)
        self.calls.append((view.queue_length, time.perf_counter() - t, time.process_time() - c))
        return d

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def _p99(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(0.99 * (len(s) - 1)))))]


def gittins_decisions(jobs_n: int, load: float, queued: int) -> dict[str, Any]:
    """Every 2D-Gittins ``schedule`` call timed (wall and CPU) in a whole replay of ``jobs_n`` jobs of the
    ``philly`` workload with arrivals compressed ``load``-fold (as ``bench_tiresias`` replays it: the
    workload's quotas and bins); P99 over the decisions that saw ``queued`` or more queued jobs. The whole
    replay: its later decisions (10,000+ queued, a hundred starts and preemptions each) cost several
    times the first ones, so a P99 over a prefix would understate it."""
    from schedlab.benchmarks.simulator import Simulator
    from schedlab.benchmarks.workloads import get_workload
    from schedlab.heuristics import POLICIES
    from schedlab.topology.presets import preset

    cluster = preset("philly")
    w = get_workload("philly").build(cluster, seed=0, load=load, n=jobs_n)
    pol = _TimedPolicy(POLICIES.build("2d-gittins"))
    c0, t0 = time.process_time(), time.perf_counter()
    Simulator(cluster, w.jobs, pol, semantics="realistic", **w.simulator_args()).run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    sel = [(dt, dc) for q, dt, dc in pol.calls if q >= queued]
    if not sel:
        return {"error": f"no decision saw {queued} queued jobs (max {max(q for q, _, _ in pol.calls)})"}
    walls, cpus = [x[0] for x in sel], [x[1] for x in sel]
    return {"cpu_s": _p99(cpus), "wall_s": _p99(walls), "p99_wall_ms": _p99(walls) * 1e3, "p99_cpu_ms": _p99(cpus) * 1e3,
            "median_wall_ms": statistics.median(walls) * 1e3, "mean_cpu_ms": statistics.fmean(cpus) * 1e3,
            "decisions": len(pol.calls), f"decisions_with_{queued}_queued": len(sel),
            "max_queued": max(q for q, _, _ in pol.calls), "jobs": jobs_n, "load": load, "replay_wall_s": wall,
            "replay_cpu_s": cpu}


def gittins_p99_row(ctx: Ctx) -> dict[str, Any]:
    return gittins_decisions(*((3000, 2000.0, 300) if ctx.quick else (15000, 2000.0, 5000)))


@dataclass(frozen=True)
class Row:
    name: str
    group: str
    work: str
    fn: Callable[[Ctx], dict[str, Any]]


def _philly_work(policy: str, load: float) -> str:
    sem = f" (--semantics {SEMANTICS[policy]})" if policy in SEMANTICS else ""
    sem += ", 300 x 8-GPU machines" if policy in UNIFORM else ""
    return f"Philly table, {'own arrivals' if load == 1.0 else f'--load {load:g}'}, {policy}{sem}"


ROWS: tuple[Row, ...] = (
    *(Row(n, "philly", _philly_work(p, load), philly_row(p, load)) for n, p, load in PHILLY),
    Row("exact-joint", "exact-joint", "exact-joint replay of rubick-base (seed 0) vs Rubick", exact_joint_row),
    Row("rubick-schedule", "rubick-schedule", "Rubick Schedule, 2,000 jobs / 1,024 GPUs", rubick_schedule_row),
    Row("list-start", "cli", "schedlab list start (median)", list_start_row),
    Row("bench-rerun", "cli", "schedlab bench rerun, nothing left to run", bench_rerun_row),
    Row("gittins-p99", "gittins-p99", "2D-Gittins decision P99, 5,000+ queued", gittins_p99_row),
)


def select(only: str | None) -> list[Row]:
    if not only:
        return list(ROWS)
    want = [w.strip() for w in only.split(",") if w.strip()]
    known = {r.name for r in ROWS} | {r.group for r in ROWS}
    bad = [w for w in want if w not in known]
    if bad:
        raise SystemExit(f"error: unknown row {bad[0]!r}; known: {', '.join(sorted(known))}")
    return [r for r in ROWS if r.name in want or r.group in want]


def find_trace(arg: str | None) -> Path | None:
    for p in ([arg] if arg else DEFAULT_TRACES):
        if p and Path(p).is_file():
            return Path(p)
    return None


def measure(rows: list[Row], ctx: Ctx, *, echo: Callable[[str], None] = lambda s: None,
            done: Callable[[list[dict[str, Any]]], None] = lambda rows: None) -> list[dict[str, Any]]:
    """Each row in turn; ``done`` sees the rows measured so far after each (the script rewrites its JSON
    file then, so a long run stopped half-way keeps what it measured)."""
    out: list[dict[str, Any]] = []
    for row in rows:
        before = load_avg()
        echo(f"{row.name}: {row.work} ...")
        try:
            res = row.fn(ctx)
        except Exception as e:  # noqa: BLE001 - one failed row must not lose the others
            res = {"error": f"{type(e).__name__}: {e}"}
        out.append({"name": row.name, "group": row.group, "work": row.work + (" (quick)" if ctx.quick else ""),
                    "target": TARGETS.get(row.name, ""), "load_before": before, "load_after": load_avg(),
                    "cpu_s": res.pop("cpu_s", None), "wall_s": res.pop("wall_s", None), **res})
        done(out)
    return out


def _fmt(x: Any, unit: str = "") -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3g}{unit}" if abs(x) < 10 else f"{x:,.1f}{unit}"
    return str(x)


def table(rows: list[dict[str, Any]]) -> str:
    head = ("row", "CPU s", "wall s", "load (1/5/15 min) before", "target", "note")
    lines = [head]
    for r in rows:
        note = r.get("error") or r.get("skipped") or ""
        if r["name"] == "exact-joint" and r.get("ratio") is not None:
            note = f"exact-joint {_fmt(r['exact_joint_wall_s'])} s vs rubick {_fmt(r['rubick_wall_s'])} s: {r['ratio']:.1f}x"
        elif r["name"] == "list-start" and "help_wall_s" in r:
            note = f"--help {_fmt(r['help_wall_s'])} s wall, {_fmt(r['help_cpu_s'])} CPU s"
        elif r["name"] == "bench-rerun" and "first_wall_s" in r and not note:
            note = f"first run {_fmt(r['first_wall_s'])} s wall"
        elif r["name"] == "gittins-p99" and "p99_wall_ms" in r:
            note = (f"P99 {_fmt(r['p99_wall_ms'])} ms wall, {_fmt(r.get('p99_cpu_ms'))} ms CPU over "
                    f"{r[next(k for k in r if k.startswith('decisions_with'))]} decisions")
        elif r.get("preemptions") is not None:
            note = f"{r['jobs']} jobs, {r['events']} events, {r['preemptions']} preemptions"
        load = " ".join(str(x) for x in r["load_before"] or [])
        lines.append((r["name"], _fmt(r["cpu_s"]), _fmt(r["wall_s"]), load, r["target"], note))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head) - 1)]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(line[:-1], widths, strict=True)) + "  " + str(line[-1])
                     for line in lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench_speed.json", help="JSON output file")
    ap.add_argument("--only", help="comma-separated row or group names (--list shows them)")
    ap.add_argument("--quick", action="store_true", help="small windows (a subset runs in about a minute)")
    ap.add_argument("--trace", help="the Philly table (default: ../shared/traces/philly/sia_philly_jobs.csv)")
    ap.add_argument("--runs", type=int, default=None, help="fresh processes per start-up figure (default 10, quick 3)")
    ap.add_argument("--repeat", type=int, default=5, help="Rubick schedule calls (median)")
    ap.add_argument("--row-limit", type=float, default=None, metavar="S",
                    help="stop a replay row's command after S wall seconds (the row says so, with its CPU s)")
    ap.add_argument("--list", action="store_true", help="print the rows and groups, then exit")
    a = ap.parse_args(argv)
    if a.list:
        for r in ROWS:
            print(f"{r.name:20} [{r.group}]  {r.work}  (target {TARGETS.get(r.name, '-')})")
        return 0
    rows = select(a.only)
    runs = a.runs if a.runs is not None else (3 if a.quick else 10)
    t0 = time.perf_counter()

    def write(results: list[dict[str, Any]], complete: bool = False) -> None:
        doc = {"quick": a.quick, "complete": complete, "cpu_count": os.cpu_count(), "python": sys.version.split()[0],
               "trace": None if ctx.trace is None else str(ctx.trace), "total_wall_s": time.perf_counter() - t0,
               "rows": results}
        Path(a.out).write_text(json.dumps(doc, indent=2, default=str) + "\n")

    with tempfile.TemporaryDirectory(prefix="bench_speed-") as tmp:
        ctx = Ctx(quick=a.quick, trace=find_trace(a.trace), runs=max(1, runs), repeat=max(1, a.repeat),
                  workdir=Path(tmp), row_limit=a.row_limit)
        results = measure(rows, ctx, echo=lambda s: print(s, file=sys.stderr, flush=True), done=write)
    write(results, complete=True)
    print(table(results))
    print(f"JSON: {a.out}")
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
