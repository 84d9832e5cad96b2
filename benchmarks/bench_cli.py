"""CLI start-up time and large-cluster loading: the reliability targets of issue 9.

    python -m schedlab.benchmarks.bench_cli [--runs 7] [--gpus 1000000] [--skip-spec] [--json]

* **start-up**: wall time of ``schedlab --help`` and ``schedlab list`` (fresh processes, median of
  ``--runs``; target < 0.5 s each), beside ``python -c pass`` (the interpreter's own start);
* **large spec**: a spec of ``--gpus`` GPUs written to a temporary folder in two shapes (8-GPU machines,
  and 1-GPU machines: the most machines the limit allows), loaded in process by ``load_cluster``
  (target < 10 s for 10^6 GPUs) and by ``schedlab topology FILE --format json`` in a fresh process
  (wall time, peak memory of that process); and a spec with 10^9 GPUs per machine, which must be
  refused at once with one error line.

Every figure is printed with the 1-minute load average, since the machine may be shared.
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
from pathlib import Path

SPEC = """name: big-{gpus}
defaults: {{gpus: {per}, gpu_model: A100-80GB, gpu_memory_gb: 80, cpus: 96, host_memory_gb: 1024}}
links:
  machine: {{bandwidth_gbps: 300, latency_us: 1}}
  rack: {{bandwidth_gbit: 400, latency_us: 2}}
  network: {{bandwidth_gbit: 800, latency_us: 5}}
racks: {racks}
machines_per_rack: {per_rack}
"""


def _schedlab() -> list[str]:
    script = Path(sys.executable).with_name("schedlab")
    return [str(script)] if script.exists() else [sys.executable, "-m", "schedlab"]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _wall(argv: list[str]) -> tuple[float, int, str]:
    t = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True)
    return time.perf_counter() - t, r.returncode, r.stderr


def _timed(argv: list[str]) -> tuple[float, float, int, str]:
    """``(wall s, CPU s of the child, exit code, stderr)``; on a loaded machine the CPU time is the
    better estimate of the wall time on a quiet one (start-up is single-threaded)."""
    c = _cpu()
    dt, code, err = _wall(argv)
    return dt, _cpu() - c, code, err


def startup(runs: int) -> dict[str, dict]:
    out = {}
    cases = {"python -c pass": [sys.executable, "-c", "pass"],
             "schedlab --help": _schedlab() + ["--help"],
             "schedlab list": _schedlab() + ["list"]}
    for name, argv in cases.items():
        _wall(argv)  # warm the file cache
        times, cpus = [], []
        for _ in range(runs):
            dt, cpu, code, err = _timed(argv)
            if code != 0:
                raise SystemExit(f"{name} failed: {err[-500:]}")
            times.append(dt)
            cpus.append(cpu)
        out[name] = {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
                     "median_cpu_s": round(statistics.median(cpus), 3), "runs": runs,
                     "loadavg_1m": os.getloadavg()[0]}
    return out


def _child_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def big_spec(gpus: int, per_machine: int, folder: Path) -> dict:
    from schedlab.topology.presets import load_cluster

    machines = gpus // per_machine
    racks = max(1, machines // 1000)
    p = folder / f"big-{gpus}-{per_machine}.yaml"
    p.write_text(SPEC.format(gpus=gpus, per=per_machine, racks=racks, per_rack=machines // racks))
    t, t_cpu = time.perf_counter(), time.process_time()
    c = load_cluster(p)
    c.summary()
    in_process, in_process_cpu = time.perf_counter() - t, time.process_time() - t_cpu
    dt, cpu, code, err = _timed(_schedlab() + ["topology", str(p), "--format", "json"])
    if code != 0:
        raise SystemExit(f"schedlab topology {p} failed: {err[-500:]}")
    return {"gpus": c.total_gpus, "machines": len(c.machines), "racks": len(c.racks),
            "load_cluster_s": round(in_process, 2), "load_cluster_cpu_s": round(in_process_cpu, 2),
            "cli_wall_s": round(dt, 2), "cli_cpu_s": round(cpu, 2),
            "progress_lines": sum("building" in line for line in err.splitlines()),
            "loadavg_1m": os.getloadavg()[0]}


def refused_at_once(folder: Path) -> dict:
    p = folder / "billion.yaml"
    p.write_text(SPEC.format(gpus="huge", per=10**9, racks=2, per_rack=4))
    dt, code, err = _wall(_schedlab() + ["topology", str(p)])
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    return {"exit": code, "wall_s": round(dt, 3), "error": lines[0] if len(lines) == 1 else err[-300:],
            "loadavg_1m": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--gpus", type=int, default=1_000_000)
    ap.add_argument("--skip-spec", action="store_true", help="only the start-up times")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    report: dict = {"startup": startup(a.runs), "cpu_count": os.cpu_count()}
    if not a.skip_spec:
        with tempfile.TemporaryDirectory() as d:
            folder = Path(d)
            report["large_spec"] = {f"{per}-gpu machines": big_spec(a.gpus, per, folder) for per in (8, 1)}
            report["large_spec_cli_peak_rss_mb"] = round(_child_peak_mb(), 1)
            report["billion_gpus_per_machine"] = refused_at_once(folder)
    if a.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, r in report["startup"].items():
        print(f"{name:18s} median {r['median_s']:.3f} s wall, {r['median_cpu_s']:.3f} s CPU (min wall "
              f"{r['min_s']:.3f}, {r['runs']} runs, load {r['loadavg_1m']:.2f})")
    for shape, r in report.get("large_spec", {}).items():
        print(f"{r['gpus']:,} GPUs on {shape} ({r['machines']:,} machines): load_cluster {r['load_cluster_s']:.2f} s "
              f"({r['load_cluster_cpu_s']:.2f} s CPU), schedlab topology {r['cli_wall_s']:.2f} s "
              f"({r['cli_cpu_s']:.2f} s CPU), {r['progress_lines']} progress lines (load {r['loadavg_1m']:.2f})")
    if "billion_gpus_per_machine" in report:
        r = report["billion_gpus_per_machine"]
        print(f"10^9 GPUs per machine: exit {r['exit']} in {r['wall_s']:.3f} s: {r['error']}")
        print(f"peak RSS of the schedlab topology processes: {report['large_spec_cli_peak_rss_mb']:.0f} MB")
    return 0


__all__ = ["SPEC", "big_spec", "main", "refused_at_once", "startup"]


if __name__ == "__main__":
    raise SystemExit(main())
