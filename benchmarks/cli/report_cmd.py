"""``schedlab report DIR``: the report of a results directory written by ``schedlab bench``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

from schedlab.benchmarks.cli.options import output_dir
from schedlab.benchmarks.cli.topology_cmd import OutputFormat
from schedlab.topology.errors import SpecError


def console():
    """A rich console; in logs and pipes, wide enough not to squeeze tables into 80 columns."""
    from rich.console import Console  # lazy: start-up

    c = Console()
    return c if c.is_terminal else Console(width=160)


def directory_arg(d: Path, what: str) -> Path:
    if not d.is_dir():
        raise SpecError(f"{what} {d} is not a directory (a results directory written by schedlab bench)",
                        source=str(d), field=what)
    return d


def report_command(
    directory: Path = typer.Argument(..., metavar="DIR", help="A results directory (schedlab bench --out)."),
    out: Path | None = typer.Option(None, "--out", callback=output_dir(),
                                    help="Write the report here instead of into DIR (DIR is only read)."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text or json (the written paths)."),
    reproduction: bool = typer.Option(False, "--reproduction",
                                      help="Print the papers' reproduction tables (Markdown: paper figure, ours "
                                           "over seeds with a 95 % interval, verdict, cases) of the tiresias, "
                                           "dally and rubick records in DIR; with --out also write "
                                           "reproduction.md there."),
    micro: bool = typer.Option(True, "--micro/--no-micro",
                               help="With --reproduction: also compute Rubick's Fig. 8 (from --placements and "
                                    "our perf model)."),
    placements: Path = typer.Option(Path("../shared/traces/rubick/placements"), "--placements",
                                    help="The Rubick artifact's measured placement tables (for --micro)."),
    depth: int = typer.Option(2, "--depth", min=1, max=5,
                              help="With --reproduction: Markdown heading level of each paper (tables one deeper)."),
    paper: list[str] = typer.Option([], "--paper", help="With --reproduction: only these papers' tables "
                                    "(tiresias, dally, rubick; repeatable; default all)."),
    add: list[Path] = typer.Option([], "--add", help="With --reproduction: another results directory whose "
                                   "records join DIR's (runs made beside it; repeatable)."),
    runs: bool = typer.Option(False, "--runs", help="With --reproduction: first print where the records come "
                              "from (date, commit, the records' code versions, load) and one row per stored "
                              "schedlab bench session of DIR and every --add (times, counts, replays stopped "
                              "at the limit)."),
) -> None:
    """Write DIR/report.html (plots embedded), DIR/report.md, DIR/plots/*.png and DIR/results.csv
    (+ .parquet); with --out, into that folder instead (the results store is only ever read). With
    --reproduction: print the papers' reproduction tables instead."""
    from schedlab.benchmarks.harness.report import render_report  # lazy: start-up

    directory_arg(directory, "DIR")
    if reproduction:
        _reproduction(directory, add, paper, out=out, format=format, placements=placements if micro else None,
                      depth=depth, runs=runs)
        return
    dest = out if out is not None else directory
    if out is None and not os.access(directory, os.W_OK | os.X_OK):
        raise SpecError(f"cannot write the report into {directory} (not writable); give --out FOLDER to write it "
                        "elsewhere", source=str(directory), field="DIR")
    rep = render_report(directory, out=out)
    if format is OutputFormat.json:
        typer.echo(json.dumps({"html": str(rep.html), "markdown": str(rep.markdown),
                               "plots": [str(p) for p in rep.plots], "exports": rep.exports}, indent=2))
        return
    typer.echo(f"report: {rep.html} (plots embedded)\nmarkdown: {rep.markdown}\nplots: {len(rep.plots)} in "
               f"{dest / 'plots'}")
    for e in rep.exports:
        typer.echo(f"export: {e}")


def _reproduction(directory: Path, add: list[Path], paper: list[str], *, out: Path | None, format: OutputFormat,
                  placements: Path | None, depth: int, runs: bool) -> None:
    """``report --reproduction``: the papers' tables of DIR's (and every --add's) records, optionally
    preceded by where they come from (``--runs``); printed, and with --out written to reproduction.md."""
    from schedlab.benchmarks.harness.report.reproduction import SUITE_TITLES, render, runs_from_store

    for d in add:
        directory_arg(d, "--add")
    bad = [p for p in paper if p not in SUITE_TITLES]
    if bad:
        raise SpecError(f"unknown paper {bad[0]!r}; known: {', '.join(SUITE_TITLES)}", source="--paper",
                        field="paper")
    text = render(runs_from_store(directory, *add), tuple(paper) or tuple(SUITE_TITLES), placements=placements,
                  depth=depth)
    if runs:
        from datetime import UTC, datetime

        from schedlab.benchmarks.harness.record import git_commit  # lazy: start-up
        from schedlab.benchmarks.harness.report.provenance import machine_load, render_provenance

        text = render_provenance([directory, *add], commit=git_commit(), now=datetime.now(UTC),
                                 load=machine_load(), cores=os.cpu_count()) + "\n" + text
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "reproduction.md").write_text(text)
    if format is OutputFormat.json:
        typer.echo(json.dumps({"markdown": text, "written": None if out is None else str(out / "reproduction.md")}))
    else:
        typer.echo(text, nl=False)
