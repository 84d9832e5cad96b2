"""``schedlab list [REGISTRY]``: everything registered (clusters, workloads, policies with their
parameters, models, formulations, backends)."""

from __future__ import annotations

from enum import StrEnum

import typer

from schedlab.benchmarks.cli.list_meta import REGISTRY_NAMES
from schedlab.topology.errors import SpecError

# The listing is printed from plain data (``cli/list_meta.json``, checked against the live registries by
# tests/cli/test_list_meta.py) in a fresh process without plugins (``main`` answers before the command
# tree is built); here, where plugins may be loaded, it is computed from the live registries, imported
# inside the command so `schedlab --help` stays fast. tests/cli checks REGISTRY_NAMES against
# REGISTRY_SOURCES.


class ListFormat(StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"


def list_command(
    registry: str | None = typer.Argument(None, metavar="REGISTRY",
                                          help=f"Only this registry: {', '.join(REGISTRY_NAMES)}."),
    format: ListFormat = typer.Option(ListFormat.text, "--format", help="text, json or yaml."),
) -> None:
    """List the registered clusters, workloads, policies (with parameters), models, formulations and backends."""
    typer.echo(render_listing(registry, format), nl=False)


def render_listing(registry: str | None, format: ListFormat) -> str:
    """What ``schedlab list [REGISTRY] --format FORMAT`` prints, computed from the live registries (the
    plugins loaded first)."""
    from schedlab.benchmarks.cli import list_meta  # lazy: start-up
    from schedlab.benchmarks.harness.plugins import load_plugins  # lazy: start-up

    load_plugins()
    from schedlab.benchmarks.registry import REGISTRY_SOURCES  # lazy: start-up

    if registry is not None and registry not in REGISTRY_SOURCES:
        raise SpecError(f"unknown registry {registry!r}; known: {', '.join(REGISTRY_SOURCES)}",
                        source="<list>", field="registry")
    names = [registry] if registry is not None else list(REGISTRY_SOURCES)
    data = list_meta.collect(names)
    if "backends" in data["registries"]:  # live: the solver layer's own check (plugins may add backends)
        from schedlab.formulations.backends import quick_availability  # lazy: start-up

        checks = {b: quick_availability(b) for b in data["registries"]["backends"]}
        data["backends_unavailable"] = {b: av.reason for b, av in checks.items() if not av.ok}
    return list_meta.render(data, registry, format.value)
