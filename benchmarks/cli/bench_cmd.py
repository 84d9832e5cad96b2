"""``schedlab bench [SUITE|FILE]``: run a benchmark suite (default ``quick``) into a results directory,
resumably, then write its report."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from enum import StrEnum
from pathlib import Path

import typer

from schedlab.benchmarks.cli.options import output_dir
from schedlab.benchmarks.cli.topology_cmd import OutputFormat
from schedlab.topology.errors import SpecError


class Executor(StrEnum):
    local = "local"
    dask = "dask"


def resolve_suite(ref: str, options: list[str] | None = None):
    """A registered suite name (built with ``options``, ``k=v`` strings) or a suite file (YAML/TOML)."""
    from schedlab.benchmarks.cli.suite_options import parse_suite_options  # lazy: start-up
    from schedlab.benchmarks.harness.suitefile import is_suite_file, load_suite_file  # lazy: start-up
    from schedlab.benchmarks.harness.suites import all_suites  # lazy: start-up (the harness)

    suites = all_suites()
    if ref in suites:
        return suites[ref](**parse_suite_options(suites[ref], ref, options or []))
    if options:
        raise SpecError("--option applies to a registered suite, not a suite file (write the options into the file)",
                        source="--option", field="option")
    if is_suite_file(ref):
        if not Path(ref).is_file():
            raise SpecError(f"suite file not found: {ref}", source=ref, field="SUITE")
        return load_suite_file(ref)
    raise SpecError(f"unknown suite {ref!r}: not a registered suite ({', '.join(suites)}) nor a .yaml/.toml file",
                    source="<bench>", field="SUITE")


def _progress_bar(console):
    from rich.progress import (  # lazy: start-up
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(TextColumn("[bold]{task.fields[suite]}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    TextColumn("[dim]{task.fields[last]}"), console=console, transient=False)


def _summary_table(console, runs, df) -> None:
    from rich.markup import escape  # lazy: start-up
    from rich.table import Table  # lazy: start-up

    from schedlab.benchmarks.harness.report.tables import fmt, summary  # lazy: start-up

    for r in runs:
        sub = df[df["key"].isin(set(r.keys))] if len(df) else df
        t = Table(title=f"{r.suite}: {r.total} runs ({r.ran} now, {r.stored_before} stored before, {r.failed} failed, "
                        f"{len(r.skipped)} skipped) in {r.wall_s:.1f} s", title_justify="left")
        s = summary(sub)
        # each kind's objective is named once, in the lines below the table (its names are long)
        s = s.drop(columns=["objective"], errors="ignore")
        for c in s.columns:
            left = c in ("type", "method", "status")  # names fold, never cut to "rubick…"
            t.add_column(escape(c), justify="left" if left else "right", overflow="fold" if left else "ellipsis")
        for row in s.itertuples(index=False):
            t.add_row(*[escape(fmt(v)) for v in row])
        console.print(t)
        for line in gap_notes(sub):
            console.print(escape(line))
        for note in r.notes:
            console.print(f"note: {note}")
        if r.skipped:
            console.print(f"skipped {len(r.skipped)} runs: exact methods stopped proving optimality "
                          f"(e.g. {r.skipped[0]})")
        for row in r.repro:
            console.print(f"  {row.quantity}: paper {row.paper} {row.unit}, ours {fmt(row.ours)} {row.unit}"
                          + (f" ({row.note})" if row.note else ""))


def gap_notes(df) -> list[str]:
    """One line per kind with gap rows in ``df``: what its gaps are measured in (the kind's objective, its
    decision sets, its neutral objective) and its gap note, printed from the :class:`Kind`."""
    from schedlab.benchmarks.harness.report.tables import kind_header  # lazy: start-up (pandas)

    if df.empty or "case_type" not in df:
        return []
    out = []
    for kind in sorted(df.loc[df["case_type"] == "gap", "kind"].dropna().unique()):
        h = kind_header(str(kind))
        line = f"{kind}: objective {h['objective']}; decision sets {h.get('sets') or h['decisions']}"
        if h.get("neutral"):
            line += f"; neutral objective {h['neutral']}"
        out.append(line + (f". Note: {h['note']}" if h["note"] else ""))
    return out


def _failed(runs, df) -> list[str]:
    """Runs of this invocation's suites that ended in an error, were killed, failed the verifier or beat a
    proven bound (``bound-violated``: a wrong model or bound)."""
    from schedlab.benchmarks.harness.record import FAILED, Status  # lazy: start-up (the harness)

    if df.empty:
        return []
    keys = {k for r in runs for k in r.keys}
    cur = df[df["key"].isin(keys)]
    bad = cur[cur["status"].isin((*FAILED, Status.BOUND_VIOLATED)) | (cur["verified"] == False)]  # noqa: E712 - pandas column
    return [f"{x.label}: {x.status} {x.message or ''}".strip() for x in bad.itertuples()]


def bench_command(
    suite: str = typer.Argument("quick", metavar="[SUITE|FILE]",
                                help="A registered suite (schedlab list suites) or a suite file (.yaml/.toml)."),
    out: Path | None = typer.Option(None, "--out", "-o", callback=output_dir(),
                                    help="Results directory (default: schedlab-results/SUITE); rerunning resumes."),
    workers: int | None = typer.Option(None, "--workers", "-j",
                                       help="Concurrent runs (default: cores / threads; never more)."),
    threads: int = typer.Option(1, "--threads", help="Solver threads per run (threads x workers <= cores)."),
    executor: Executor = typer.Option(Executor.local, "--executor", help="local (worker processes here) or dask."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Dask scheduler address, tcp://HOST:PORT "
                                         "(--executor dask without it: a LocalCluster of --workers processes here)."),
    time_limit: float | None = typer.Option(None, "--time-limit",
                                            help="Solver limit per run in seconds (overrides the suite's)."),
    seed: int = typer.Option(0, "--seed", help="Added to every case's seeds (instances, workloads, policies)."),
    plugin: list[str] = typer.Option([], "--plugin", help="Import this plugin module first (repeatable)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Rerun stored runs that failed or were killed."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write the report at the end."),
    force_report: bool = typer.Option(False, "--force-report",
                                      help="Rewrite the report even when the stored results did not change."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text (tables) or json (the records)."),
    option: list[str] = typer.Option([], "--option", help="KEY=VALUE option of a registered suite's builder "
                                     "(repeatable; e.g. seeds=5, parts=testbed,reference, load=5)."),
) -> None:
    """Run a benchmark suite: every run in its own process with a hard timeout, one record each in a
    resumable SQLite store, then a report (HTML + Markdown + plots; kept as it is when the stored
    results did not change since it was written, unless --force-report). With no suite it runs quick.
    Exits 1 when a run failed (error, killed, rejected by the verifier), 130 when interrupted."""
    from schedlab.benchmarks.harness.plugins import add_env_plugins, load_plugins  # lazy: start-up
    from schedlab.benchmarks.harness.runner import BenchOptions  # lazy: start-up (the harness)

    t0 = time.perf_counter()
    add_env_plugins(plugin)
    load_plugins()
    spec = resolve_suite(suite, option)
    directory = out if out is not None else Path("schedlab-results") / spec.name
    if directory.exists() and not directory.is_dir():
        raise SpecError(f"--out {directory} exists and is not a directory", source="--out", field="out")
    options = BenchOptions(out=directory, workers=workers, threads=threads, executor=executor.value,
                           scheduler=scheduler, time_limit_s=time_limit, seed=seed, plugins=tuple(plugin),
                           retry_failed=retry_failed)
    runs = _run_with_progress(spec, options)
    _finish(spec, runs, directory, report, force_report, format, t0)


def _run_with_progress(spec, options):
    """``run_bench`` with a progress bar on stderr (started once everything is checked); Ctrl-C exits 130."""
    from rich.console import Console  # lazy: start-up

    from schedlab.benchmarks.harness.runner import run_bench  # lazy: start-up (the harness)

    err = Console(stderr=True)
    bar = _progress_bar(err)
    tasks: dict[str, int] = {}

    def progress(name: str, done: int, total: int, last: str) -> None:
        if not tasks:
            bar.start()  # only once everything is checked and running: errors stay one clean line
        if name not in tasks:
            tasks[name] = bar.add_task("", total=total, completed=done, suite=name, last="")
        bar.update(tasks[name], completed=done, last=last[-60:])

    def notes(lines: list[str]) -> None:
        for line in lines:
            err.print(f"note: {line}")

    try:
        try:
            return run_bench(spec, options, progress=progress, on_notes=notes)
        finally:
            if tasks:
                bar.stop()
    except KeyboardInterrupt:
        err.print(f"interrupted: every finished run is stored in {options.out}; run the same command again to resume")
        sys.exit(130)


def _finish(spec, runs, directory: Path, report: bool, force_report: bool, format: OutputFormat,
            t0: float) -> None:
    """The report, then the summary (tables, or the records as JSON); exit 1 when a run failed."""
    from schedlab.benchmarks.harness.analysis import frame  # lazy: start-up (pandas)
    from schedlab.benchmarks.harness.store import Store  # lazy: start-up (the harness)

    with Store(directory, create=False) as store:
        df = frame(store.records())
    rep, rendered = None, False
    if report:
        from schedlab.benchmarks.harness.report import render_if_changed  # lazy: start-up (the report)

        rep, rendered = render_if_changed(directory, force=force_report)
    failed = _failed(runs, df)
    if format is OutputFormat.json:
        _print_json(spec, runs, df, directory, rep, rendered, t0)
    else:
        _print_text(runs, df, directory, rep, rendered, t0, failed)
    if failed:
        raise typer.Exit(1)


def _print_json(spec, runs, df, directory: Path, rep, rendered: bool, t0: float) -> None:
    keys = {k for r in runs for k in r.keys}
    cur = df[df["key"].isin(keys)] if len(df) else df
    cols = [c for c in cur.columns if c not in ("spec",)]
    payload = {"suite": spec.name, "out": str(directory), "report": None if rep is None else str(rep.html),
               "report_rendered": rendered,
               "wall_s": time.perf_counter() - t0, "cpu_count": os.cpu_count(),
               "runs": [{"suite": r.suite, "total": r.total, "ran": r.ran, "stored_before": r.stored_before,
                         "failed": r.failed, "skipped": r.skipped, "notes": r.notes,
                         "repro": [dataclasses.asdict(x) for x in r.repro]} for r in runs],
               "records": json.loads(cur[cols].to_json(orient="records"))}
    typer.echo(json.dumps(payload, indent=2, default=str))


def _print_text(runs, df, directory: Path, rep, rendered: bool, t0: float, failed: list[str]) -> None:
    from schedlab.benchmarks.cli.report_cmd import console  # lazy: start-up (rich)

    out_console = console()
    _summary_table(out_console, runs, df)
    out_console.print(f"results: {directory / 'results.sqlite'}"
                      + (f"; report: {rep.html} (+ report.md, {len(rep.plots)} plots, "
                         f"{', '.join(Path(e).name for e in rep.exports)}"
                         + ("" if rendered else "; unchanged results: kept, --force-report rewrites it") + ")"
                         if rep is not None else "")
                      + f"; {time.perf_counter() - t0:.1f} s")
    if failed:
        out_console.print(f"{len(failed)} runs failed (error, killed, rejected by the verifier or beating a proven "
                          f"bound), e.g. {failed[0]}")
