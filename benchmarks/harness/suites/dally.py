"""The Dally paper's experiments as a suite (``SUITES["dally"]``).

**Main grid** (Dally §5): ``dally-R`` clusters for R = 2, 4, 8, 16 racks (8 machines x 8 GPUs per
rack), the ``dally-batch`` (500 jobs at t = 0) and ``dally-poisson`` (400 jobs) workloads over the six
Table 1 models, each under

* ``dally`` and ``dally-manual`` (this package);
* the paper's baselines **Tiresias** (``2d-las``, 2D-LAS with skew-based consolidation) and
  **Gandiva-like** (``gandiva-like``; the artifact's ``gandiva`` runs under ``tiresias`` semantics only), from the Tiresias family (``heuristics/tiresias``,
  ``heuristics/baselines``). The case list is built from ``all_policies()`` at build time: a registry
  without them (a plugin setup that drops them) runs the rest, and their reproduction rows say
  ``not registered``; nothing here fakes them;
* ``yarn-cs`` (FIFO with consolidation, registered now) as a reference point the paper does not have.

**Sweeps** (8 racks, batch): Dally's history window (1 h .. 1 week) and Dally-manual's timers
(machine = rack increment = 1 h .. 24 h; the paper's default is 12 h + 12 h), each with preemption on
and off. **Ablation** (every grid
point): Dally and Dally-manual with preemption off (``[no-preemption]``): pure delay scheduling, where
the timers alone decide consolidation; and Dally with each of our additions on (``ADDITIONS``: move-up
of running jobs ``[+upgrade]``, preemption margin 0.1 ``[+margin=0.1]``, a 1 h lease ``[+lease=1h]``,
all three ``[+ours]``). The unmarked ``dally`` / ``dally-manual`` rows are the paper's algorithm.

``reproduce`` puts our figures beside the paper's: Table 2 (8 racks, batch) and Table 3 (8 racks,
Poisson) JCT statistics, and per rack count the headline improvements (makespan, average JCT, >P95
queueing delay, communication overhead vs Tiresias and Gandiva; Dally vs Dally-manual). Queueing
delay is given two ways: the simulator's ``p95_queue`` (first start - arrival) and ``p95_waiting`` (all
time queued, preemptions included), since a preemptive scheduler such as 2D-LAS starts a new job at
once and makes it wait later.
:func:`curves` gives utilisation and jobs remaining over time (Figs. 9, 10) from a replay's state
series; ``python -m schedlab.benchmarks.harness.suites.dally`` runs the suite and prints it all.

Every difference from the paper is explained in ``docs/REPRODUCTION.md`` (chiefly: the paper used a
SenseTime trace we do not have; our workloads are Helios-like synthetic ones, much lighter).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.casebase import ReproRow, Suite
from schedlab.benchmarks.harness.replay import ReplayCase, run_replay
from schedlab.benchmarks.harness.suites.paper_figures import TABLE2, TABLE3
from schedlab.benchmarks.harness.suites.seeds import SEED_TAG, over_seeds, seed_values
from schedlab.benchmarks.merged import all_policies
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.topology.errors import SpecError
from schedlab.topology.presets import load_cluster

PAPER = "Sharma et al., GPU Cluster Scheduling for Network-Sensitive Deep Learning (Dally)"
RACKS = (2, 4, 8, 16)
ARRIVALS = {"batch": "dally-batch", "poisson": "dally-poisson"}
OURS = ("dally", "dally-manual")
BASELINES = {"Tiresias": "2d-las", "Gandiva": "gandiva-like"}   # paper name -> registered policy (issue 13)
REFERENCE = ("yarn-cs",)
HOUR = 3600.0
WINDOWS_H = (1.0, 6.0, 24.0, 72.0, 168.0)
MANUAL_TIMERS_H = (1.0, 6.0, 12.0, 24.0)
NO_PREEMPT = "[no-preemption]"
#: the duration scale at which Dally's average JCT at 8 racks, batch (seed 0) is the paper's Table 2
#: 2,828,955 s (``python -m schedlab.benchmarks.harness.suites.calibrate dally``: 57.739 -> 2,860,995 s)
PAPER_CONTENTION_SCALE = 57.739
# our additions to Dally (each off by default: the paper's algorithm), one ablation row each and all
# together (= our defaults before issue 22)
ADDITIONS: dict[str, dict[str, Any]] = {
    "[+upgrade]": {"upgrade": True},
    "[+margin=0.1]": {"preempt_margin": 0.1},
    "[+lease=1h]": {"lease": HOUR},
    "[+ours]": {"upgrade": True, "preempt_margin": 0.1, "lease": HOUR},
}

# Table 2 / Table 3 (8 racks), seconds: {statistic: {system: value}}, from the one module of paper figures
SYSTEMS = {"Dally": "dally", "Dally-manual": "dally-manual", **BASELINES}
# headline improvements of Dally, as the paper states them (ranges over 2..16 racks): quantity, metric,
# baseline, arrival, the paper's words
HEADLINES: tuple[tuple[str, ...], ...] = tuple(
    tuple(row) for row in list(csv.reader(Path(__file__).with_name("dally_headlines.csv").read_text().splitlines()))[1:])


def label(policy: str, racks: int, arrival: str, extra: str = "") -> str:
    return f"{policy}/dally-{racks}/{arrival}{extra}"


def registered(names: Sequence[str]) -> list[str]:
    """The names among ``names`` that are registered policies now."""
    known = all_policies()
    return [n for n in names if n in known]


def build(*, racks: Sequence[int] = RACKS, arrivals: Sequence[str] = tuple(ARRIVALS), seed: int = 0,
          load: float = 1.0, sweep: bool = True, reference: bool = True, ablation: bool = True,
          seeds: int | Sequence[int] = 1, duration_scale: float = 1.0) -> Suite:
    """The ``dally`` suite. ``racks``/``arrivals`` select part of the grid; ``load`` compresses arrival
    times (> 1: busier); ``sweep`` adds the sensitivity sweeps; ``reference`` the ``yarn-cs`` rows;
    ``ablation`` the preemption-off runs of Dally and Dally-manual; ``seeds`` the seeds every case runs
    under (a count from ``seed`` or the seeds; workload and policy seed together); ``duration_scale``
    multiplies every job's duration (the paper's contention: :data:`PAPER_CONTENTION_SCALE`, at which
    Dally's average JCT at 8 racks, batch, is the paper's Table 2 figure)."""
    src = "<suite dally>"
    racks = tuple(racks)
    if not racks or any(not isinstance(r, int) or isinstance(r, bool) or r not in RACKS for r in racks):
        raise SpecError(f"racks must be among {RACKS}, got {racks!r}", source=src, field="racks")
    bad = [a for a in arrivals if a not in ARRIVALS]
    if bad or not arrivals:
        raise SpecError(f"arrivals must be among {tuple(ARRIVALS)}, got {tuple(arrivals)!r}", source=src,
                        field="arrivals")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SpecError(f"seed must be an integer >= 0, got {seed!r}", source=src, field="seed")
    if not (isinstance(load, (int, float)) and load > 0 and math.isfinite(load)):
        raise SpecError(f"load must be a number > 0, got {load!r}", source=src, field="load")
    if not (isinstance(duration_scale, (int, float)) and duration_scale > 0 and math.isfinite(duration_scale)):
        raise SpecError(f"duration_scale must be a number > 0, got {duration_scale!r}", source=src,
                        field="duration_scale")
    policies = list(OURS) + registered(list(BASELINES.values())) + (list(REFERENCE) if reference else [])
    cases = over_seeds(lambda s: _seeded_cases(racks, arrivals, policies, s, load, sweep, ablation, duration_scale),
                       seed_values(seeds, seed, suite="dally"))
    return Suite("dally", "Dally §5: dally-R (R = 2, 4, 8, 16) x batch/Poisson; Dally, Dally-manual, Tiresias, "
                 "Gandiva-like, YARN-CS reference; history-window and manual-timer sweeps",
                 tuple(cases), reproduce=reproduce, paper=PAPER)


def _seeded_cases(racks: Sequence[int], arrivals: Sequence[str], policies: Sequence[str], seed: int, load: float,
                  sweep: bool, ablation: bool, duration_scale: float = 1.0) -> list[ReplayCase]:
    cases: list[ReplayCase] = []
    params = {} if duration_scale == 1.0 else {"duration_scale": float(duration_scale)}
    for r in racks:
        for a in arrivals:
            ws = WorkloadSource(workload=ARRIVALS[a], cluster=f"dally-{r}", seed=seed, load=float(load), params=params)
            cases += [ReplayCase(ws, p, seed=seed, label=label(p, r, a)) for p in policies]
            if ablation:
                cases += [ReplayCase(ws, p, {"preemption": False}, seed=seed, label=label(p, r, a, NO_PREEMPT))
                          for p in OURS]
                cases += [ReplayCase(ws, "dally", params, seed=seed, label=label("dally", r, a, tag))
                          for tag, params in ADDITIONS.items()]
    if sweep:
        ws = WorkloadSource(workload="dally-batch", cluster="dally-8", seed=seed, load=float(load), params=params)
        for pre in (True, False):
            tag = "" if pre else NO_PREEMPT
            cases += [ReplayCase(ws, "dally", {"history_window": h * HOUR, "preemption": pre}, seed=seed,
                                 label=label("dally", 8, "batch", f"[window={h:g}h]{tag}")) for h in WINDOWS_H]
            cases += [ReplayCase(ws, "dally-manual", {"machine_timer": h * HOUR, "rack_timer": h * HOUR,
                                                      "preemption": pre}, seed=seed,
                                 label=label("dally-manual", 8, "batch", f"[timers={h:g}h+{h:g}h]{tag}"))
                      for h in MANUAL_TIMERS_H]
    return cases


# ---------------------------------------------------------------------- reproduction rows
def _improvement(ours: float | None, base: float | None) -> float | None:
    """``1 - ours / base`` in % (positive = ours lower = better)."""
    if ours is None or base is None or not base or any(map(math.isnan, (ours, base))):
        return None
    return 100.0 * (1.0 - ours / base)


def _get(results: Mapping[str, Mapping[str, Any]], lab: str, key: str) -> float | None:
    m = results.get(lab)
    if m is None:
        return None
    v = m.get(key)
    return None if v is None else float(v)


def _missing(system: str) -> str:
    pol = SYSTEMS[system]
    return f"{pol!r} not registered (no run)" if system in BASELINES else ""


def reproduce(results: Mapping[str, Mapping[str, Any]]) -> list[ReproRow]:
    """Our figures beside the paper's (see the module docstring); rows whose runs are missing say why."""
    rows: list[ReproRow] = []
    workload = ("our Helios-like synthetic workload, not SenseTime's trace: JCTs are hours, not the "
                "paper's weeks (docs/REPRODUCTION.md)")
    for table, arrival, name in ((TABLE2, "batch", "Table 2"), (TABLE3, "poisson", "Table 3")):
        for stat, per in table.items():
            for system, paper in per.items():
                ours = _get(results, label(SYSTEMS[system], 8, arrival), stat)
                rows.append(ReproRow(f"{name} {stat} {system} (8 racks, {arrival})", float(paper), ours, "s",
                                     _missing(system) if ours is None else workload))
    racks = sorted({int(k.split("/")[1].split("-")[1]) for k in results if k.count("/") == 2 and SEED_TAG not in k})
    for what, key, base, arrival, paper in HEADLINES:
        for r in racks:
            ours = _improvement(_get(results, label("dally", r, arrival), key),
                                _get(results, label(SYSTEMS[base], r, arrival), key))
            note = _missing(base) if ours is None else "1 - Dally / baseline"
            rows.append(ReproRow(f"{what}: Dally vs {base}, {r} racks, {arrival}", paper, ours, "%", note))
    paper_tuner = {("batch", 8): 100 * (1 - 2828955 / 3128566), ("poisson", 8): 100 * (1 - 2831880 / 4960727)}
    for extra, how in (("", "with preemption"), (NO_PREEMPT, "preemption off (ablation)")):
        for arrival in ("batch", "poisson"):
            for r in racks:
                ours = _improvement(_get(results, label("dally", r, arrival, extra), "avg_jct"),
                                    _get(results, label("dally-manual", r, arrival, extra), "avg_jct"))
                if ours is None and extra:
                    continue
                rows.append(ReproRow(f"average JCT: Dally vs Dally-manual, {r} racks, {arrival}{extra}",
                                     paper_tuner.get((arrival, r), "Dally better (Fig. 11)"), ours, "%",
                                     f"auto-tuned vs fixed 12 h + 12 h timers, {how}"))
    for tag, params in ADDITIONS.items():
        for arrival in ("batch", "poisson"):
            for r in racks:
                ours = _improvement(_get(results, label("dally", r, arrival, tag), "avg_jct"),
                                    _get(results, label("dally", r, arrival), "avg_jct"))
                if ours is not None:
                    rows.append(ReproRow(f"average JCT: Dally{tag} vs Dally, {r} racks, {arrival}", None, ours,
                                         "%", f"ablation of our addition(s) {params} (not in the paper)"))
    for r in racks:
        for key, what in (("avg_jct", "average JCT"), ("comm_overhead", "communication overhead"),
                          ("makespan", "makespan")):
            ours = _improvement(_get(results, label("dally", r, "batch"), key),
                                _get(results, label("yarn-cs", r, "batch"), key))
            if ours is not None:
                rows.append(ReproRow(f"{what}: Dally vs YARN-CS, {r} racks, batch", None, ours, "%",
                                     "reference only (not in the paper)"))
    for lab, m in sorted(results.items()):
        if ("window=" in lab or "timers=" in lab) and SEED_TAG not in lab:
            rows.append(ReproRow(f"sweep {lab}: average JCT", None, _get(results, lab, "avg_jct"), "s",
                                 f"makespan {m.get('makespan', float('nan')):.4g} s, comm overhead "
                                 f"{m.get('comm_overhead', float('nan')):.3f}"))
    return rows


# ---------------------------------------------------------------------- curves (Figs. 9, 10)
def curves(series: Sequence[Sequence[float]], total_gpus: int, points: int = 11) -> dict[str, list[float]]:
    """Utilisation (used GPUs / total) and jobs remaining (queued + holding GPUs) at ``points`` evenly
    spaced instants from the first to the last sample of a replay's state series (``Recorder.series``
    rows: time, used GPUs, queued, running, ...; a step function: each sample holds until the next)."""
    if not series:
        return {"time": [], "utilization": [], "jobs_remaining": []}
    t0, t1 = series[0][0], series[-1][0]
    out: dict[str, list[float]] = {"time": [], "utilization": [], "jobs_remaining": []}
    i = 0
    for k in range(points):
        t = t0 + (t1 - t0) * k / max(points - 1, 1)
        while i + 1 < len(series) and series[i + 1][0] <= t:
            i += 1
        row = series[i]
        out["time"].append(float(t))
        out["utilization"].append(row[1] / total_gpus)
        out["jobs_remaining"].append(float(row[2] + row[3]))
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def main(argv: list[str] | None = None) -> int:
    """Run the suite (one replay after another) and print the reproduction rows and 8-rack curves as
    Markdown; ``--out DIR`` also writes ``results.json`` and ``curves.json``."""
    ap = argparse.ArgumentParser(description="Dally reproduction suite")
    ap.add_argument("--racks", type=int, nargs="*", default=list(RACKS))
    ap.add_argument("--arrivals", nargs="*", default=list(ARRIVALS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--load", type=float, default=1.0)
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    suite = build(racks=a.racks, arrivals=a.arrivals, seed=a.seed, load=a.load, sweep=not a.no_sweep)
    results: dict[str, dict[str, Any]] = {}
    curve: dict[str, dict[str, list[float]]] = {}
    for case in suite.cases:
        o = run_replay(case)
        results[case.label] = o.metrics
        if "/dally-8/" in case.label and "[" not in case.label:
            curve[case.label] = curves(o.result.recorder.series, _gpus(case))
        print(f"ran {case.label}: avg JCT {o.metrics['avg_jct']:.4g} s, wall {o.metrics['wall_s']:.1f} s",
              file=sys.stderr)
    rows = suite.reproduce(results)
    print("| quantity | paper | ours | unit | note |\n| --- | ---: | ---: | --- | --- |")
    for r in rows:
        print(f"| {r.quantity} | {_fmt(r.paper)} | {_fmt(r.ours)} | {r.unit} | {r.note} |")
    keys = ("makespan", "avg_jct", "median_jct", "p95_jct", "p99_jct", "avg_queue", "p95_queue", "p99_queue",
            "p95_waiting", "p99_waiting", "comm_overhead", "utilization", "preemptions", "reconfigurations")
    print("\n| case | " + " | ".join(keys) + " |\n| --- |" + " ---: |" * len(keys))
    for lab, m in results.items():
        print(f"| {lab} | " + " | ".join(_fmt(m.get(k)) for k in keys) + " |")
    for lab, c in curve.items():
        print(f"\n{lab}: time (h) / utilisation / jobs remaining")
        print(" | ".join(f"{t / HOUR:.0f}h: {u:.2f}, {n:.0f}" for t, u, n in
                         zip(c["time"], c["utilization"], c["jobs_remaining"], strict=True)))
    if a.out:
        d = Path(a.out)
        d.mkdir(parents=True, exist_ok=True)
        (d / "results.json").write_text(json.dumps(results, indent=1, default=str))
        (d / "curves.json").write_text(json.dumps(curve, indent=1))
    return 0


def _gpus(case: ReplayCase) -> int:
    return load_cluster(case.source.cluster_ref()).total_gpus


__all__ = ["ADDITIONS", "BASELINES", "PAPER", "RACKS", "TABLE2", "TABLE3", "build", "curves", "label", "reproduce"]

if __name__ == "__main__":
    sys.exit(main())
