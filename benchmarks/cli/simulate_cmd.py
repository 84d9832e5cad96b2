"""``schedlab simulate --workload NAME | --trace FILE [--trace-format F] ... --policy NAME [...]``."""

from __future__ import annotations

import json
import math
import sys
from enum import StrEnum
from pathlib import Path

import typer

from schedlab.benchmarks.cli.options import SEED_MAX, number, output_dir
from schedlab.topology.errors import SpecError

LOAD_MAX = 1e6
"""Largest time compression of arrivals (--load)."""


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    return x


def simulate_command(
    workload: str | None = typer.Option(None, "--workload", "-w", help="Named workload (schedlab list)."),
    trace: Path | None = typer.Option(None, "--trace", help="Trace file to replay."),
    trace_format: str = typer.Option("philly", "--trace-format",
                                     help="philly, tiresias, rubick, pollux/sia, helios, pai, generic."),
    vc: str | None = typer.Option(None, "--vc", help="Virtual cluster (Philly, Helios)."),
    start: str | None = typer.Option(None, "--start", help="Philly: first submit date (ISO, UTC)."),
    end: str | None = typer.Option(None, "--end", help="Philly: submit dates before this (ISO, UTC)."),
    columns: str | None = typer.Option(None, "--columns", help="generic: FIELD=COLUMN,... (submit, duration, gpus, ...)."),
    lenient: bool = typer.Option(False, "--lenient", help="Skip bad trace rows (counted) instead of failing."),
    models: str = typer.Option("trace", "--models", help="Model per job: trace, tiresias, dally, rubick (pool)."),
    cluster: str | None = typer.Option(None, "--cluster", help="Preset or spec file (default: the workload's)."),
    policy: list[str] = typer.Option(["fifo"], "--policy", "-p", help="Policy name (repeatable; schedlab list "
                                                                      "policies)."),
    param: list[str] = typer.Option([], "--param", "-P", metavar="POLICY.PARAM=VALUE",
                                    help="Set a policy parameter (repeatable), e.g. -P 2d-las.queues=3."),
    semantics: str = typer.Option("realistic", "--semantics", help="realistic or tiresias (reference semantics)."),
    costs: str | None = typer.Option(None, "--costs", help="Preemption costs: rubick, tiresias, free "
                                                            "(default: the semantics')."),
    seed: int = typer.Option(0, "--seed", min=0, max=SEED_MAX, help="Seed of generators and model draws."),
    load: float = typer.Option(1.0, "--load", callback=number(gt=0, le=LOAD_MAX),
                               help="Time-compression factor of arrivals (> 1: more load)."),
    large_share: float | None = typer.Option(None, "--large-share", callback=number(ge=0, le=1),
                                             help="Rubick workloads: share of jobs with >= 1B-parameter models."),
    default_duration: float | None = typer.Option(None, "--default-duration",
                                                  help="pollux/sia traces: job duration in s (the format has none)."),
    window: float | None = typer.Option(None, "--window", help="Traces: keep the busiest window of this many "
                                                               "hours (Rubick: 12)."),
    sample: int | None = typer.Option(None, "--sample", help="Traces: down-sample to this many jobs (seeded; "
                                                             "Rubick: 406)."),
    out: Path | None = typer.Option(None, "--out", callback=output_dir(),
                                    help="Write OUT/POLICY/{jobs,series}.csv and metrics.json (OUT: a folder, "
                                    "made if missing)."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="Output format."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr."),
) -> None:
    """Replay a workload on a cluster under one or more policies and report JCT, queueing, makespan..."""
    from schedlab.benchmarks.registry import all_policies
    from schedlab.benchmarks.simulator import Recorder, Simulator
    from schedlab.benchmarks.simulator import semantics as get_semantics
    from schedlab.benchmarks.simulator.costs import cost_model
    from schedlab.scheduling.registry import parse_assignments

    sem = get_semantics(semantics)
    cm = cost_model(costs) if costs is not None else None
    registry = all_policies()
    settings = parse_assignments(param, source="<simulate --param>")
    for name in settings:
        if name not in policy:
            raise SpecError(f"--param names policy {name!r}, which is not among --policy {', '.join(policy)}",
                            source="<simulate>", field="param")
    for p in policy:  # validate every policy and its parameters before any run starts
        registry.build(p, settings.get(p), seed=seed, source="<simulate>")
    from schedlab.benchmarks.workloads.source import WorkloadSource

    source = WorkloadSource(workload=workload, trace=None if trace is None else str(trace),
                            trace_format=trace_format, cluster=cluster, vc=vc, start=start, end=end, columns=columns,
                            lenient=lenient, models=models, seed=seed, load=load, default_duration=default_duration,
                            window=window, sample=sample,
                            params={"large_share": large_share} if large_share is not None else {})
    w, c = source.build()

    def progress(t: float, done: int, total: int) -> None:
        if not quiet:
            print(f"  t={t / 3600:,.1f} h  finished {done:,}/{total:,}", file=sys.stderr, flush=True)

    results: dict[str, dict] = {}
    interrupted = False
    for name in policy:
        pol = registry.build(name, settings.get(name), seed=seed, source="<simulate>")
        rec = Recorder(out / name if out is not None else None)
        sim = Simulator(c, w.jobs, pol, semantics=sem, costs=cm, quotas=w.quotas, recorder=rec, progress=progress,
                        small_gpus=w.small_gpus, short_s=w.short_s)
        res = sim.run()
        m = dict(res.metrics)
        m.update(workload=w.name, cluster=c.name, semantics=sem.name, seed=seed, events=res.events,
                 params=registry.spec(name).validate(settings.get(name)),
                 costs=costs or sem.name,
                 passes=res.passes, wall_s=res.wall_s, events_per_s=res.events_per_s,
                 interrupted=res.interrupted, skipped_rows=w.skipped, rate_sources=res.rate_sources)
        results[name] = _clean(m)
        if out is not None:
            (out / name / "metrics.json").write_text(json.dumps(results[name], indent=2, sort_keys=True))
        if res.interrupted:
            interrupted = True
            break
    if format is OutputFormat.json:
        typer.echo(json.dumps({"policies": results}, indent=2, sort_keys=True))
    else:
        typer.echo(f"workload {w.name}: {len(w.jobs)} jobs on {c.name} ({c.total_gpus} GPUs), semantics {sem.name}"
                   + (f", {w.skipped} bad rows skipped" if w.skipped else ""))
        for name, m in results.items():
            def h(x):
                return "n/a" if x is None else f"{x / 3600:.2f} h"
            typer.echo(f"  {name:14s} avg JCT {h(m['avg_jct'])}  median {h(m['median_jct'])}  P95 {h(m['p95_jct'])}  "
                       f"P99 {h(m['p99_jct'])}  makespan {h(m['makespan'])}  avg queue {h(m['avg_queue'])}  "
                       f"util {m['utilization']:.1%}  preemptions {m['preemptions']}  jobs {m['jobs']}"
                       + (f"  UNFINISHED {m['unfinished']}" if m["unfinished"] else ""))
            typer.echo(f"  {'':14s} {m['events']:,} events in {m['wall_s']:.2f} s ({m['events_per_s']:,.0f}/s)")
    if interrupted:
        typer.echo("interrupted: records hold the jobs that finished", err=True)
        sys.exit(130)
