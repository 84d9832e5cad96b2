"""``schedlab simulate --workload NAME | --trace FILE [--trace-format F] ... --policy NAME [...]``.

Everything is checked before the first run: the policies and their parameters, every trace option, the
output folder and format. The summary (text or JSON) says what the load assumed (the assumption report;
``--strict`` makes each assumption an error). With ``--out DIR`` the run leaves ``DIR/run.json`` (every
parameter and the seed), ``DIR/assumptions.json`` and per policy ``DIR/POLICY/{jobs,series}.{csv,parquet}``
and ``metrics.json``.
"""

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


class RecordFormat(StrEnum):
    csv = "csv"
    parquet = "parquet"


class TimeUnit(StrEnum):
    s = "s"
    ms = "ms"
    min = "min"
    h = "h"


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    return x


def check_out_dir(out: Path) -> None:
    """``--out`` must be a folder that exists or can be made (not a file, not under a file)."""
    if out.exists() and not out.is_dir():
        raise SpecError("--out names a file; give a folder for the records", source=str(out), field="out")
    parent = out
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise SpecError(f"--out cannot be made: {parent} is a file", source=str(out), field="out")


def simulate_command(
    workload: str | None = typer.Option(None, "--workload", "-w", help="Named workload (schedlab list)."),
    trace: Path | None = typer.Option(None, "--trace", help="Trace file to replay."),
    trace_format: str | None = typer.Option(None, "--trace-format", help="philly, tiresias, rubick, pollux/sia, "
                                            "helios, pai, alibaba, generic (default: detected from the header)."),
    vc: str | None = typer.Option(None, "--vc", help="Virtual cluster (Philly, Helios)."),
    start: str | None = typer.Option(None, "--start", help="Philly: first submit date (ISO, UTC)."),
    end: str | None = typer.Option(None, "--end", help="Philly: submit dates before this (ISO, UTC)."),
    columns: str | None = typer.Option(None, "--columns", help="Any CSV: FIELD=COLUMN,... for submit, gpus, "
                                       "duration (or iterations+model), id, model, tenant, cpus, mem_gb, plan, "
                                       "guaranteed, batch, deadline."),
    time_unit: TimeUnit = typer.Option(TimeUnit.s, "--time-unit", help="Unit of the trace's numeric times."),
    time_origin: str | None = typer.Option(None, "--time-origin", help="t = 0 of the replay: first (default: the "
                                           "first job), file (the trace's own 0), a number or an ISO date-time."),
    lenient: bool = typer.Option(False, "--lenient", help="Drop bad trace rows (reported) instead of failing."),
    strict: bool = typer.Option(False, "--strict", help="Make every assumption the load would make an error."),
    models: str = typer.Option("trace", "--models", help="Model per job: trace, tiresias, dally, rubick (pool)."),
    cluster: str | None = typer.Option(None, "--cluster", help="Preset, spec file, or auto[:LOAD] (a cluster "
                                       "sized for the trace at LOAD, default 0.7)."),
    gpus_per_machine: int | None = typer.Option(None, "--gpus-per-machine", min=1, max=100_000,
                                                help="--cluster auto: GPUs per machine (default 8)."),
    machines_per_rack: int | None = typer.Option(None, "--machines-per-rack", min=1, max=100_000,
                                                 help="--cluster auto: machines per rack (default 8)."),
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
    out: Path | None = typer.Option(None, "--out", callback=output_dir(), help="Write OUT/run.json, OUT/assumptions.json and "
                                    "OUT/POLICY/{jobs,series}.csv + metrics.json."),
    out_format: RecordFormat = typer.Option(RecordFormat.csv, "--out-format", help="csv, or parquet (needs "
                                            "pyarrow: the 'parquet' extra)."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="Output format."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr."),
) -> None:
    """Replay a workload on a cluster under one or more policies and report JCT, queueing, makespan..."""
    from schedlab.benchmarks.registry import all_policies
    from schedlab.benchmarks.simulator import Recorder, Simulator
    from schedlab.benchmarks.simulator import semantics as get_semantics
    from schedlab.benchmarks.simulator.costs import cost_model
    from schedlab.benchmarks.simulator.records import require_parquet
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
    if len(set(policy)) != len(policy):
        raise SpecError("a policy is given twice; its records would overwrite each other", source="<simulate>",
                        field="policy")
    if out is not None:
        check_out_dir(out)
    if out_format is RecordFormat.parquet:
        if out is None:
            raise SpecError("--out-format parquet applies to the records written with --out", source="<simulate>",
                            field="out_format")
        require_parquet()
    from schedlab.benchmarks.workloads.source import WorkloadSource

    source = WorkloadSource(workload=workload, trace=None if trace is None else str(trace),
                            trace_format=trace_format, cluster=cluster, vc=vc, start=start, end=end, columns=columns,
                            lenient=lenient, strict=strict, models=models, seed=seed, load=load,
                            default_duration=default_duration, window=window, sample=sample,
                            time_unit=time_unit.value, time_origin=time_origin, gpus_per_machine=gpus_per_machine,
                            machines_per_rack=machines_per_rack,
                            params={"large_share": large_share} if large_share is not None else {})
    w, c = source.build()
    report = w.assumptions
    run_info = {"command": "schedlab simulate", "argv": sys.argv[1:], "seed": seed, "workload": w.name,
                "source": {k: v for k, v in vars(source).items() if k != "params"} | {"params": dict(source.params)},
                "setting": dict(w.setting), "cluster": c.name, "cluster_gpus": c.total_gpus, "semantics": sem.name,
                "costs": costs or sem.name, "jobs": len(w.jobs),
                "policies": {p: registry.spec(p).validate(settings.get(p)) for p in policy}}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "run.json").write_text(json.dumps(run_info, indent=2, sort_keys=True, default=str))
        (out / "assumptions.json").write_text(json.dumps(report.to_dict(), indent=2))

    def progress(t: float, done: int, total: int) -> None:
        if not quiet:
            print(f"  t={t / 3600:,.1f} h  finished {done:,}/{total:,}", file=sys.stderr, flush=True)

    results: dict[str, dict] = {}
    interrupted = False
    for name in policy:
        pol = registry.build(name, settings.get(name), seed=seed, source="<simulate>")
        rec = Recorder(out / name if out is not None else None, out_format=out_format.value)
        sim = Simulator(c, w.jobs, pol, semantics=sem, costs=cm, quotas=w.quotas, recorder=rec, progress=progress,
                        small_gpus=w.small_gpus, short_s=w.short_s)
        res = sim.run()
        m = dict(res.metrics)
        m.update(workload=w.name, cluster=c.name, semantics=sem.name, seed=seed, events=res.events,
                 params=registry.spec(name).validate(settings.get(name)),
                 costs=costs or sem.name,
                 passes=res.passes, wall_s=res.wall_s, events_per_s=res.events_per_s,
                 interrupted=res.interrupted, skipped_rows=w.skipped, rate_sources=res.rate_sources,
                 assumed_jobs={n.kind: n.count for n in report if n.assumption})
        results[name] = _clean(m)
        if out is not None:
            (out / name / "metrics.json").write_text(json.dumps(results[name], indent=2, sort_keys=True))
        if res.interrupted:
            interrupted = True
            break
    if format is OutputFormat.json:
        typer.echo(json.dumps({"workload": {"name": w.name, "jobs": len(w.jobs), "cluster": c.name,
                                            "cluster_gpus": c.total_gpus, "setting": dict(w.setting),
                                            **report.to_dict()},
                               "policies": results}, indent=2, sort_keys=True))
    else:
        _print_text(w, c, sem.name, results, report)
    if interrupted:
        typer.echo("interrupted: records hold the jobs that finished", err=True)
        sys.exit(130)


def _print_text(w, c, sem: str, results: dict[str, dict], report) -> None:
    fmt = w.setting.get("format")
    typer.echo(f"workload {w.name}: {len(w.jobs)} jobs on {c.name} ({c.total_gpus} GPUs), semantics {sem}"
               + (f", format {fmt}" if fmt else "") + (f", {w.skipped} bad rows skipped" if w.skipped else ""))
    if "cluster_auto" in w.setting:
        typer.echo(f"cluster auto: {w.setting['cluster_auto']}")
    for line in report.lines():
        typer.echo(line)
    for name, m in results.items():
        def h(x):
            return "n/a" if x is None else f"{x / 3600:.2f} h"
        typer.echo(f"  {name:14s} avg JCT {h(m['avg_jct'])}  median {h(m['median_jct'])}  P95 {h(m['p95_jct'])}  "
                   f"P99 {h(m['p99_jct'])}  makespan {h(m['makespan'])}  avg queue {h(m['avg_queue'])}  "
                   f"util {m['utilization']:.1%}  preemptions {m['preemptions']}  jobs {m['jobs']}"
                   + (f"  UNFINISHED {m['unfinished']}" if m["unfinished"] else ""))
        typer.echo(f"  {'':14s} {m['events']:,} events in {m['wall_s']:.2f} s ({m['events_per_s']:,.0f}/s)")
