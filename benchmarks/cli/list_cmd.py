"""``schedlab list``: everything registered (cluster presets, and each later layer's registries)."""

from __future__ import annotations

import json

import typer

from schedlab.benchmarks.registry import registries


def list_command(format: str = typer.Option("text", "--format", help="text or json")) -> None:
    """List the registered clusters, models, workloads, policies, formulations and backends."""
    regs = {name: sorted(items) for name, items in registries().items()}
    if format == "json":
        typer.echo(json.dumps(regs, indent=2))
        return
    for name, items in regs.items():
        typer.echo(f"{name} ({len(items)}):")
        for item in items:
            typer.echo(f"  {item}")
