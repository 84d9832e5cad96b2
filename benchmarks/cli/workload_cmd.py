"""``schedlab workload stats TRACE [--columns ...] [--load 0.7] [--plot demand.png]``: what a trace asks of a
cluster before any replay (jobs, span, GPU-size and duration histograms, GPU-hours, demand over time if
nothing queued, the cluster size for a stated load). Reads the trace the way ``simulate`` does
(:class:`~schedlab.benchmarks.workloads.source.WorkloadSource`: detection, filters, time unit)."""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

import typer

from schedlab.benchmarks.cli.simulate_cmd import OutputFormat, TimeUnit
from schedlab.topology.errors import SpecError

workload_app = typer.Typer(help="Look at a trace before replaying it.", no_args_is_help=True)


def _h(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "n/a"
    if seconds < 3600:
        return f"{seconds / 60:,.1f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:,.2f} h"
    return f"{seconds / 86400:,.1f} days"


def _bar(k: int, total: int, width: int = 30) -> str:
    return "#" * max(1 if k else 0, round(width * k / total)) if total else ""


@workload_app.command("stats")
def stats_command(
    trace: Path = typer.Argument(..., help="Trace file."),
    trace_format: str | None = typer.Option(None, "--trace-format", help="Format (default: detected)."),
    columns: str | None = typer.Option(None, "--columns", help="Any CSV: FIELD=COLUMN,... (see simulate)."),
    time_unit: TimeUnit = typer.Option(TimeUnit.s, "--time-unit", help="Unit of the trace's numeric times."),
    time_origin: str | None = typer.Option(None, "--time-origin", help="first (default), file, a number or an "
                                           "ISO date-time."),
    vc: str | None = typer.Option(None, "--vc", help="Virtual cluster (Philly, Helios)."),
    start: str | None = typer.Option(None, "--start", help="Philly: first submit date (ISO, UTC)."),
    end: str | None = typer.Option(None, "--end", help="Philly: submit dates before this (ISO, UTC)."),
    lenient: bool = typer.Option(False, "--lenient", help="Drop bad rows (reported) instead of failing."),
    default_duration: float | None = typer.Option(None, "--default-duration", help="pollux/sia: duration in s."),
    window: float | None = typer.Option(None, "--window", help="Keep the busiest window of this many hours."),
    sample: int | None = typer.Option(None, "--sample", help="Down-sample to this many jobs (seeded)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of --sample."),
    load: float = typer.Option(0.7, "--load", help="Target offered load in (0, 1] for the cluster size."),
    gpus_per_machine: int = typer.Option(8, "--gpus-per-machine", min=1, max=100_000, help="Cluster shape."),
    machines_per_rack: int = typer.Option(8, "--machines-per-rack", min=1, max=100_000, help="Cluster shape."),
    plot: Path | None = typer.Option(None, "--plot", help="Write a PNG of the demand over time here."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="Output format."),
) -> None:
    """Jobs, span, histograms, GPU-hours, demand if nothing queued and the cluster for --load."""
    from schedlab.benchmarks.workloads.source import WorkloadSource  # lazy: start-up
    from schedlab.benchmarks.workloads.stats import check_load, trace_stats  # lazy: start-up

    check_load(load)
    if plot is not None:
        _check_plot(plot)
    src = WorkloadSource(trace=str(trace), trace_format=trace_format, columns=columns, vc=vc, start=start, end=end,
                         lenient=lenient, default_duration=default_duration, window=window, sample=sample,
                         seed=seed, time_unit=time_unit.value, time_origin=time_origin)
    tr, fmt = src.load_trace()
    st = trace_stats(tr)
    shape = {"gpus_per_machine": gpus_per_machine, "machines_per_rack": machines_per_rack}
    sizing = st.size(load, **shape) if st.timed_jobs else None
    if plot is not None:
        st.plot(plot, sizing=sizing)
    if format is OutputFormat.json:
        d = st.to_dict(load, **shape)
        d.update(format=fmt, skipped_rows=tr.skipped, notes=[n.to_dict() for n in tr.notes],
                 plot=str(plot) if plot else None)
        typer.echo(json.dumps(d, indent=2, default=lambda x: None))
        return
    _print_stats(trace, fmt, tr, st, sizing)
    if sizing is not None:
        typer.echo(f"  (replay on it: schedlab simulate --trace {trace} --cluster auto:{load:g}"
                   + (f" --columns {shlex.quote(columns)}" if columns else "")
                   + (f" --time-unit {time_unit.value}" if time_unit is not TimeUnit.s else "")
                   + (f" --gpus-per-machine {gpus_per_machine}" if gpus_per_machine != 8 else "")
                   + (f" --machines-per-rack {machines_per_rack}" if machines_per_rack != 8 else "") + ")")
    for n in tr.notes:
        typer.echo(f"  {'assumed' if n.assumption else 'selected'}: {n.line()}")
    if plot is not None and sizing is not None:
        typer.echo(f"  plot: {plot}")


def _check_plot(plot: Path) -> None:
    if plot.suffix.lower() != ".png":
        raise SpecError("--plot writes a PNG: give a file name ending in .png", source=str(plot), field="plot")
    if plot.exists() and plot.is_dir():
        raise SpecError("--plot names a folder; give a file name ending in .png", source=str(plot), field="plot")
    if not plot.parent.is_dir():
        raise SpecError(f"--plot: folder {plot.parent} does not exist", source=str(plot), field="plot")


def _print_stats(trace: Path, fmt: str, tr, st, sizing) -> None:
    """The text summary up to the cluster size (the caller adds the replay hint, the notes, the plot)."""
    e = typer.echo
    e(f"trace {trace} ({fmt}): {st.jobs:,} jobs" + (f", {tr.skipped:,} bad rows dropped" if tr.skipped else "")
      + (f", {tr.filtered:,} rows left out by the selection" if tr.filtered else ""))
    e(f"  span {_h(st.span_s)} (arrivals over {_h(st.arrival_span_s)}), {st.gpu_hours:,.1f} GPU-hours")
    if st.timed_jobs < st.jobs:
        e(f"  {st.jobs - st.timed_jobs:,} jobs have no duration: left out of demand and sizing")
    e("  GPUs per job:")
    for g, k in st.gpu_sizes.items():
        e(f"    {g:>6}  {k:>9,}  {_bar(k, st.jobs)}")
    e(f"  durations (mean {_h(st.duration_mean_s)}, median {_h(st.duration_median_s)}):")
    for label, k in st.durations.items():
        e(f"    {label:>10}  {k:>9,}  {_bar(k, st.timed_jobs)}")
    if sizing is None:
        e("  no job has a duration: no demand over time and no cluster size (Pollux/Sia: --default-duration S)")
        return
    e(f"  GPU demand if nothing queued: peak {st.peak_demand:,}, mean {st.mean_demand:,.1f}, "
      f"P95 {st.p95_demand:,.0f} GPUs")
    e(f"  cluster for {sizing.headline()}: {sizing.describe()}")


__all__ = ["stats_command", "workload_app"]
