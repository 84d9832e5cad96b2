"""``schedlab topology PRESET_OR_FILE [--format json] [--graphml PATH]``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from schedlab.benchmarks.cli.options import OutputFormat, output_file
from schedlab.topology.presets import load_cluster

PROGRESS_FROM = 1 << 16
"""Machines (or GPUs) from which building a cluster reports progress on stderr."""


def stderr_progress(stage: str, done: int, total: int) -> None:
    """Progress of building a large cluster, on stderr (``Progress`` of ``schedlab.topology.loaders``)."""
    if total >= PROGRESS_FROM:
        print(f"  building {stage}: {done:,}/{total:,}", file=sys.stderr, flush=True)


def topology_command(
    cluster: str = typer.Argument(..., help="Preset name, 'pai-2020:PATH', or a YAML/JSON/Tiresias-CSV spec file."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="Output format."),
    graphml: Path | None = typer.Option(None, "--graphml", callback=output_file(),
                                        help="Also write the graph as GraphML here (the folder must exist)."),
) -> None:
    """Show a cluster: racks, machines, GPUs, CPUs, memory and per-tier bandwidth (GB/s)."""
    c = load_cluster(cluster, progress=stderr_progress)
    summary = c.summary()
    if graphml is not None:
        c.build_graph(progress=stderr_progress)
        c.to_graphml(graphml)
    if format is OutputFormat.json:
        typer.echo(json.dumps(summary, indent=2, sort_keys=True))
        return
    typer.echo(f"cluster {summary['name']}: {summary['racks']} racks, {summary['machines']} machines, "
               f"{summary['gpus']} GPUs, {summary['cpus']} CPUs, {summary['host_memory_gb']:g} GB host memory")
    for model, n in summary["gpus_by_model"].items():
        typer.echo(f"  GPUs {model}: {n}")
    for per, n in summary["gpus_per_machine"].items():
        typer.echo(f"  machines with {per} GPUs: {n}")
    for tier, bw in summary["bandwidth_gb_per_s"].items():
        typer.echo(f"  {tier:8s} bandwidth: " + ("n/a" if bw is None else
                   (f"{bw['min']:g} GB/s" if bw["min"] == bw["max"] else f"{bw['min']:g}-{bw['max']:g} GB/s")))
    if graphml is not None:
        typer.echo(f"GraphML written to {graphml}")
