"""``schedlab compare DIR_A DIR_B``: two results directories of the same suite side by side."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from schedlab.benchmarks.cli.options import output_file
from schedlab.benchmarks.cli.report_cmd import console, directory_arg
from schedlab.benchmarks.cli.topology_cmd import OutputFormat


def compare_command(
    dir_a: Path = typer.Argument(..., metavar="DIR_A", help="Results directory A (the baseline)."),
    dir_b: Path = typer.Argument(..., metavar="DIR_B", help="Results directory B."),
    show_all: bool = typer.Option(False, "--all", help="Show every series, not only those beyond noise."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when any difference is beyond noise."),
    time: bool = typer.Option(False, "--time", help="Also compare build + solve times (measurements of the "
                              "machine's load as much as of the code; left out by default)."),
    out: Path | None = typer.Option(None, "--out", callback=output_file(), help="Also write the comparison as CSV here."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text or json."),
) -> None:
    """Two runs of a suite side by side: per series (a label over its seeds) and metric, the means,
    the difference, and whether it is beyond seed-to-seed noise (|delta| > 2 standard errors). Gaps in
    percent; times only with --time; a warning when A and B ran different seeds or code."""
    from rich.markup import escape  # lazy: start-up
    from rich.table import Table  # lazy: start-up

    from schedlab.benchmarks.harness.compare import compare, mismatches  # lazy: start-up
    from schedlab.benchmarks.harness.report.tables import fmt  # lazy: start-up

    df = compare(directory_arg(dir_a, "DIR_A"), directory_arg(dir_b, "DIR_B"), time=time)
    warnings = mismatches(dir_a, dir_b)
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)
    beyond = df[df["verdict"] != "within noise"] if len(df) else df
    if out is not None:
        df.to_csv(out, index=False)
    if format is OutputFormat.json:
        typer.echo(json.dumps({"warnings": warnings, "series": len(df), "beyond_noise": int((df["verdict"] == "BEYOND NOISE").sum())
                               if len(df) else 0, "rows": json.loads(df.to_json(orient="records"))}, indent=2))
    else:
        shown = df if show_all else beyond
        t = Table(title=f"{dir_a} (A) vs {dir_b} (B): {len(df)} series x metrics, "
                        f"{int((df['verdict'] == 'BEYOND NOISE').sum()) if len(df) else 0} beyond seed-to-seed noise",
                  title_justify="left")
        for c in ("suite", "series", "metric", "n_a", "n_b", "mean_a", "mean_b", "delta", "rel_pct", "noise", "verdict"):
            left = c in ("suite", "series", "metric", "verdict")  # names fold, never cut to "rubick…"
            t.add_column(escape(c), justify="left" if left else "right", overflow="fold" if left else "ellipsis",
                         min_width=len(c))
        for r in shown.itertuples(index=False):
            style = "bold red" if r.verdict == "BEYOND NOISE" else ("yellow" if r.verdict.startswith("only") else None)
            cells = (r.suite, r.series, r.metric, str(r.n_a), str(r.n_b), fmt(r.mean_a), fmt(r.mean_b), fmt(r.delta),
                     fmt(r.rel_pct), fmt(r.noise), r.verdict)
            t.add_row(*[escape(c) for c in cells], style=style)
        if len(shown):
            console().print(t)
        else:
            typer.echo(t.title)
        if not show_all and len(df) and beyond.empty:
            typer.echo("no difference beyond seed-to-seed noise (--all shows every series)")
    if strict and len(df) and (df["verdict"] == "BEYOND NOISE").any():
        raise typer.Exit(1)
