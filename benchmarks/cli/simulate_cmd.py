"""``schedlab simulate --workload NAME | --trace FILE [--trace-format F] ... --policy NAME [...]``.

Everything is checked before the first run: the policies and their parameters, every trace option, the
output folder and format. The summary (text or JSON) says what the load assumed (the assumption report;
``--strict`` makes each assumption an error). With ``--out DIR`` the run leaves ``DIR/run.json`` (every
parameter and the seed), ``DIR/assumptions.json`` and per policy ``DIR/POLICY/{jobs,series}.{csv,parquet}``
and ``metrics.json``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from schedlab.benchmarks.cli.options import SEED_MAX, OutputFormat, number, output_dir
from schedlab.topology.errors import SpecError

if TYPE_CHECKING:
    from schedlab.benchmarks.workloads.source import WorkloadSource

LOAD_MAX = 1e6
"""Largest time compression of arrivals (--load)."""


class RecordFormat(StrEnum):
    csv = "csv"
    parquet = "parquet"


class TimeUnit(StrEnum):
    s = "s"
    ms = "ms"
    min = "min"
    h = "h"


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
    calibration: str = typer.Option("flat", "--calibration", help="Perf-model calibration of the simulator's rates "
                                    "and the policies alike: flat (default), fitted, measured, artifact."),
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
    run_simulate(SimulateOptions(**locals()))  # every option above, as one typed value


@dataclass(frozen=True)
class SimulateOptions:
    """The options of ``schedlab simulate`` (see :func:`simulate_command`)."""

    workload: str | None
    trace: Path | None
    trace_format: str | None
    vc: str | None
    start: str | None
    end: str | None
    columns: str | None
    time_unit: TimeUnit
    time_origin: str | None
    lenient: bool
    strict: bool
    models: str
    cluster: str | None
    gpus_per_machine: int | None
    machines_per_rack: int | None
    policy: list[str]
    param: list[str]
    semantics: str
    costs: str | None
    calibration: str
    seed: int
    load: float
    large_share: float | None
    default_duration: float | None
    window: float | None
    sample: int | None
    out: Path | None
    out_format: RecordFormat
    format: OutputFormat
    quiet: bool

    def source(self) -> WorkloadSource:
        from schedlab.benchmarks.workloads.source import WorkloadSource  # lazy: start-up

        return WorkloadSource(workload=self.workload, trace=None if self.trace is None else str(self.trace),
                              trace_format=self.trace_format, cluster=self.cluster, vc=self.vc, start=self.start,
                              end=self.end, columns=self.columns, lenient=self.lenient, strict=self.strict,
                              models=self.models, seed=self.seed, load=self.load,
                              default_duration=self.default_duration, window=self.window, sample=self.sample,
                              time_unit=self.time_unit.value, time_origin=self.time_origin,
                              gpus_per_machine=self.gpus_per_machine, machines_per_rack=self.machines_per_rack,
                              params={"large_share": self.large_share} if self.large_share is not None else {})


def check_options(o: SimulateOptions) -> dict[str, dict]:
    """Every policy and its parameters, the output folder and format, before any run; the parameters
    per policy."""
    from schedlab.benchmarks.harness.replay import check_calibration  # lazy: start-up
    from schedlab.benchmarks.merged import policies_for  # lazy: start-up
    from schedlab.benchmarks.simulator import semantics as get_semantics  # lazy: start-up
    from schedlab.benchmarks.simulator.costs import cost_model  # lazy: start-up
    from schedlab.benchmarks.simulator.records import require_parquet  # lazy: start-up
    from schedlab.scheduling.registry import parse_assignments  # lazy: start-up

    get_semantics(o.semantics)  # unknown names fail first, as they always did
    check_calibration(o.calibration)
    if o.costs is not None:
        cost_model(o.costs)
    registry = policies_for(o.policy)
    settings = parse_assignments(o.param, source="<simulate --param>")
    for name in settings:
        if name not in o.policy:
            raise SpecError(f"--param names policy {name!r}, which is not among --policy {', '.join(o.policy)}",
                            source="<simulate>", field="param")
    for p in o.policy:  # validate every policy and its parameters before any run starts
        registry.build(p, settings.get(p), seed=o.seed, source="<simulate>")
    if len(set(o.policy)) != len(o.policy):
        raise SpecError("a policy is given twice; its records would overwrite each other", source="<simulate>",
                        field="policy")
    if o.out is not None:
        check_out_dir(o.out)
    if o.out_format is RecordFormat.parquet:
        if o.out is None:
            raise SpecError("--out-format parquet applies to the records written with --out", source="<simulate>",
                            field="out_format")
        require_parquet()
    return settings


def _write_run_info(o: SimulateOptions, source: WorkloadSource, w, c, settings: dict[str, dict]) -> None:
    from schedlab.benchmarks.merged import policies_for  # lazy: start-up
    from schedlab.benchmarks.simulator import semantics as get_semantics  # lazy: start-up

    registry = policies_for(o.policy)
    sem = get_semantics(o.semantics)
    run_info = {"command": "schedlab simulate", "argv": sys.argv[1:], "seed": o.seed, "workload": w.name,
                "source": {k: v for k, v in vars(source).items() if k != "params"} | {"params": dict(source.params)},
                "setting": dict(w.setting), "cluster": c.name, "cluster_gpus": c.total_gpus, "semantics": sem.name,
                "costs": o.costs or sem.name, "jobs": len(w.jobs),
                "policies": {p: registry.spec(p).validate(settings.get(p)) for p in o.policy}}
    if o.calibration != "flat":  # the default's run.json stays as it was
        run_info["calibration"] = o.calibration
    o.out.mkdir(parents=True, exist_ok=True)
    (o.out / "run.json").write_text(json.dumps(run_info, indent=2, sort_keys=True, default=str))
    (o.out / "assumptions.json").write_text(json.dumps(w.assumptions.to_dict(), indent=2))


def _replay_all(o: SimulateOptions, w, c, settings: dict[str, dict]) -> tuple[dict[str, dict], bool]:
    """Each policy in turn through the harness's replay (:func:`replay_policy`); stops at an interrupt."""
    from schedlab.benchmarks.harness.replay import finite, replay_policy  # lazy: start-up
    from schedlab.benchmarks.simulator import Recorder  # lazy: start-up

    def progress(t: float, done: int, total: int) -> None:
        if not o.quiet:
            print(f"  t={t / 3600:,.1f} h  finished {done:,}/{total:,}", file=sys.stderr, flush=True)

    results: dict[str, dict] = {}
    for name in o.policy:
        rec = Recorder(o.out / name if o.out is not None else None, out_format=o.out_format.value)
        res, m = replay_policy(w, c, name, settings.get(name), seed=o.seed, semantics=o.semantics, costs=o.costs,
                               recorder=rec, progress=progress, source="<simulate>", calibration=o.calibration)
        m.update(costs=o.costs or m["semantics"], events_per_s=res.events_per_s,
                 assumed_jobs={n.kind: n.count for n in w.assumptions if n.assumption})
        results[name] = finite(m)
        if o.out is not None:
            (o.out / name / "metrics.json").write_text(json.dumps(results[name], indent=2, sort_keys=True))
        if res.interrupted:
            return results, True
    return results, False


def run_simulate(o: SimulateOptions) -> None:
    """Check everything, load the workload, replay each policy, print the summary (text or JSON)."""
    from schedlab.benchmarks.simulator import semantics as get_semantics  # lazy: start-up

    settings = check_options(o)
    source = o.source()
    w, c = source.build()
    if o.out is not None:
        _write_run_info(o, source, w, c, settings)
    results, interrupted = _replay_all(o, w, c, settings)
    if o.format is OutputFormat.json:
        typer.echo(json.dumps({"workload": {"name": w.name, "jobs": len(w.jobs), "cluster": c.name,
                                            "cluster_gpus": c.total_gpus, "setting": dict(w.setting),
                                            **w.assumptions.to_dict()},
                               "policies": results}, indent=2, sort_keys=True))
    else:
        _print_text(w, c, get_semantics(o.semantics).name, results, w.assumptions)
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
