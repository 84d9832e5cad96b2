"""Trace-loading benchmark on the Philly table (82,247 jobs): the loader alone, the loader with format
detection, the whole load (loader + conversion to simulated jobs + assumption report), and
``schedlab workload stats``. Each figure is the median wall and CPU time of ``--repeat`` runs, with
``os.getloadavg()`` printed beside it (the machine may be shared).

    python -m schedlab.benchmarks.bench_workloads [--trace PATH] [--repeat 5] [--json]

Skips cleanly (exit 0, a message) when the trace file is absent: the project does not ship it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable

from schedlab.benchmarks.bench_simulator import trace_or_skip


def _median_s(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall and CPU (this process) seconds of ``repeat`` calls (CPU time is steadier on a shared
    machine)."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--engines", action="store_true", help="only compare the CSV engines (stdlib csv vs pandas C)")
    a = ap.parse_args(argv)
    path = trace_or_skip(a.trace)
    if path is None:
        return 0
    if a.engines:
        return _engines(path, a.repeat, a.json)
    from schedlab.benchmarks.workloads import load_trace
    from schedlab.benchmarks.workloads.source import WorkloadSource

    cases: dict[str, Callable[[], object]] = {
        "load (format given)": lambda: load_trace(path, "philly"),
    }
    try:
        from schedlab.benchmarks.workloads.detect import detect_format
    except ImportError:
        detect_format = None
    if detect_format is not None:
        cases["load (format detected)"] = lambda: load_trace(path, detect_format(path))
    cases["source build (loader + conversion + report)"] = \
        lambda: WorkloadSource(trace=str(path), trace_format="philly").build()
    try:
        from schedlab.benchmarks.workloads.stats import trace_stats
    except ImportError:
        trace_stats = None
    if trace_stats is not None:
        cases["workload stats (+ PNG)"] = lambda: _stats_with_plot(path, trace_stats)
    out = {}
    for name, fn in cases.items():
        fn()  # warm caches and imports
        s, c = _median_s(fn, a.repeat)
        out[name] = {"median_wall_s": s, "median_cpu_s": c, "loadavg_1m": os.getloadavg()[0]}
        if not a.json:
            print(f"{name:45s} wall {s:7.3f} s  cpu {c:7.3f} s  (load average {os.getloadavg()[0]:.2f})")
    s_off, c_off = _without_report(path, a.repeat)
    on = out["source build (loader + conversion + report)"]
    out["source build, assumption report switched off"] = {"median_wall_s": s_off, "median_cpu_s": c_off,
                                                           "loadavg_1m": os.getloadavg()[0]}
    given, detected = out["load (format given)"], out.get("load (format detected)", out["load (format given)"])
    summary = {"detection_cpu_s": detected["median_cpu_s"] - given["median_cpu_s"],
               "report_cpu_s": on["median_cpu_s"] - c_off,
               "load_cpu_s": on["median_cpu_s"]}
    summary["added_share"] = (summary["detection_cpu_s"] + summary["report_cpu_s"]) / c_off
    out["detection + assumption report"] = summary
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{'source build, assumption report switched off':45s} wall {s_off:7.3f} s  cpu {c_off:7.3f} s  "
              f"(load average {os.getloadavg()[0]:.2f})")
        print(f"detection adds {summary['detection_cpu_s']:+.3f} s, the assumption report "
              f"{summary['report_cpu_s']:+.3f} s CPU: {summary['added_share']:+.1%} of loading the table")
    return 0


def _engines(path, repeat: int, as_json: bool) -> int:
    """The Philly table's four used columns as validated typed arrays (submit seconds, duration, GPUs,
    virtual cluster) with each row's line, two ways: the stdlib ``csv`` module row by row, and pandas' C
    engine into string columns converted whole (what :mod:`schedlab.topology.tables` +
    :class:`~schedlab.benchmarks.workloads.csvio.Rows` do). Same answers; the faster one is the reader."""
    import csv
    import io
    import math
    from datetime import UTC, datetime

    import numpy as np

    from schedlab.benchmarks.workloads.csvio import Rows
    from schedlab.topology.files import read_text
    from schedlab.topology.tables import read_table

    text = read_text(path, what="trace")

    def stdlib():
        rd = csv.reader(io.StringIO(text))
        cols = [c.strip() for c in next(rd)]
        i_ts, i_d, i_g, i_c = (cols.index(c) for c in ("timestamp", "duration", "num_gpus", "cluster"))
        out = []
        for row in rd:
            if not row:
                continue
            ln = rd.line_num
            s = row[i_ts].strip()
            try:
                sub = float(s)
            except ValueError:
                dt = datetime.fromisoformat(s)
                sub = (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()
            d, g = float(row[i_d]), float(row[i_g])
            if not (math.isfinite(d) and d > 0 and math.isfinite(g) and g >= 1 and g == int(g) and row[i_c].strip()):
                raise ValueError(ln)
            out.append((ln, sub, d, int(g), row[i_c].strip()))
        return out

    def pandas_c():
        rows = Rows(read_table(path, text=text))
        sub, d = rows.time("timestamp"), rows.float("duration", positive=True)
        g, c = rows.int("num_gpus", min_value=1), rows.str("cluster")
        rows.finish()
        return rows.lines, sub, d, g, c

    a, b = stdlib(), pandas_c()
    assert [r[0] for r in a] == b[0].tolist() and np.allclose([r[1] for r in a], b[1])
    res = {}
    for name, fn in (("stdlib csv, row by row", stdlib), ("pandas C engine, whole columns", pandas_c)):
        w, c = _median_s(fn, repeat)
        res[name] = {"median_wall_s": w, "median_cpu_s": c, "loadavg_1m": os.getloadavg()[0]}
        if not as_json:
            print(f"{name:45s} wall {w:7.3f} s  cpu {c:7.3f} s  (load average {os.getloadavg()[0]:.2f})")
    if as_json:
        print(json.dumps(res, indent=2))
    return 0


def _without_report(path, repeat: int) -> tuple[float, float]:
    """The source build with :class:`AssumptionLog` recording nothing (its ``add``/``add_rows`` made
    no-ops): the difference to the normal build is what the report costs."""
    from schedlab.benchmarks.workloads.assumptions import AssumptionLog
    from schedlab.benchmarks.workloads.source import WorkloadSource

    saved = AssumptionLog.add, AssumptionLog.add_rows
    AssumptionLog.add = lambda self, *a, **k: None
    AssumptionLog.add_rows = lambda self, *a, **k: None
    try:
        return _median_s(lambda: WorkloadSource(trace=str(path), trace_format="philly").build(), repeat)
    finally:
        AssumptionLog.add, AssumptionLog.add_rows = saved


def _stats_with_plot(path, trace_stats) -> object:
    import tempfile

    from schedlab.benchmarks.workloads import load_trace

    with tempfile.TemporaryDirectory() as d:
        st = trace_stats(load_trace(path, "philly"))
        st.plot(os.path.join(d, "demand.png"), sizing=st.size(0.7))
    return st


__all__ = ["main"]


if __name__ == "__main__":
    raise SystemExit(main())
