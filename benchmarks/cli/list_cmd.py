"""``schedlab list [REGISTRY]``: everything registered (clusters, workloads, policies with their
parameters, models, formulations, backends)."""

from __future__ import annotations

import json
from enum import StrEnum

import typer

from schedlab.topology.errors import SpecError

# The registries (pydantic parameter models, the formulation and workload registries) are imported
# inside the command so `schedlab --help` stays fast, and only on a miss of the listing cache
# (benchmarks/cli/list_cache.py); tests/cli checks this list against REGISTRY_SOURCES.
REGISTRY_NAMES = ("clusters", "workloads", "policies", "models", "kinds", "formulations", "backends", "suites")


class ListFormat(StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"


def _policy_lines(spec) -> list[str]:
    resizes = sorted(d.value for d in spec.decisions or () if d.value in ("gpus", "plan"))
    tags = [spec.family.value] + (["oracle"] if spec.oracle else []) + (["preemptive"] if spec.preemptive else []) \
        + ([f"resizes: {', '.join(resizes)}"] if resizes else [])
    lines = [f"  {spec.name}  [{', '.join(tags)}]  {spec.summary}"]
    if spec.preset:
        lines.append("      preset: " + ", ".join(f"{k}={v!r}" for k, v in spec.preset.items()))
    for p in spec.param_info():
        rng = f" ({p.constraints})" if p.constraints else ""
        origin = f" [{p.origin}]" if p.origin else ""
        lines.append(f"      {p.name}{origin}: {p.type} = {p.default!r}{rng}  {p.description}")
    return lines


def _kind_lines(kind) -> list[str]:
    d = kind.describe()
    return [f"  {kind.name}  [objective: {d['objective']}]",
            f"      decisions: {', '.join(d['decisions'])}; exact twin: {d['exact']}; default: {d['default_cluster']}, "
            f"{d['default_jobs']} jobs",
            f"      options: {', '.join(d['options']) or 'none'}",
            f"      gap note: {d['gap_note']}"]


def _method_line(m) -> str:
    caps = "".join(f", {c}" for c in sorted(m.capabilities))
    return f"  {m.name}  [{m.kind}, {m.role}{caps}]  {m.summary}"


def _unavailable_backends() -> dict[str, str]:
    """Backends whose module is not installed, with the reason (a cheap check: nothing is imported)."""
    from schedlab.formulations.backends import BACKENDS, quick_availability  # lazy: start-up

    return {b: av.reason for b in BACKENDS if not (av := quick_availability(b)).ok}


def list_command(
    registry: str | None = typer.Argument(None, metavar="REGISTRY",
                                          help=f"Only this registry: {', '.join(REGISTRY_NAMES)}."),
    format: ListFormat = typer.Option(ListFormat.text, "--format", help="text, json or yaml."),
) -> None:
    """List the registered clusters, workloads, policies (with parameters), models, formulations and backends."""
    from schedlab.benchmarks.cli import list_cache  # lazy: start-up

    key = list_cache.key(("list", registry or "", format.value))
    text = list_cache.load(key)
    if text is None:
        text = render_listing(registry, format)
        list_cache.store(key, text)
    typer.echo(text, nl=False)


def render_listing(registry: str | None, format: ListFormat) -> str:
    """What ``schedlab list [REGISTRY] --format FORMAT`` prints (computed from the live registries, the
    plugins loaded first)."""
    from schedlab.benchmarks.harness.plugins import load_plugins  # lazy: start-up

    load_plugins()
    from schedlab.benchmarks.registry import (  # lazy: start-up
        REGISTRY_SOURCES,
        all_kinds,
        all_policies,
        registries,
    )

    out: list[str] = []
    if registry is not None and registry not in REGISTRY_SOURCES:
        raise SpecError(f"unknown registry {registry!r}; known: {', '.join(REGISTRY_SOURCES)}",
                        source="<list>", field="registry")
    names = [registry] if registry is not None else list(REGISTRY_SOURCES)
    regs = {n: sorted(items) for n, items in registries(names).items()}
    policies = all_policies() if "policies" in regs else {}
    kinds = all_kinds() if "kinds" in regs or "formulations" in regs else None
    missing = _unavailable_backends() if "backends" in regs else {}
    if format is not ListFormat.text:
        data: dict = dict(regs)
        if "policies" in data:
            data["policies"] = {n: policies[n].describe() for n in regs["policies"]}
        if "backends" in data:
            data["backends_unavailable"] = missing
        if "kinds" in data:
            data["kinds"] = {n: kinds[n].describe() for n in regs["kinds"]}
        if "formulations" in data:
            data["formulations"] = {n: kinds.methods[n].describe() for n in regs["formulations"]}
        if format is ListFormat.json:
            return json.dumps(data, indent=2) + "\n"
        import yaml  # lazy: start-up

        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).rstrip() + "\n"
    for name, items in regs.items():
        out.append(f"{name} ({len(items)}):")
        for item in items:
            if name == "policies":
                out.extend(_policy_lines(policies[item]))
            elif name == "kinds":
                out.extend(_kind_lines(kinds[item]))
            elif name == "formulations":
                out.append(_method_line(kinds.methods[item]))
            elif name == "backends" and item in missing:
                out.append(f"  {item}  [unavailable: {missing[item]}]")
            else:
                out.append(f"  {item}")
    return "".join(line + "\n" for line in out)
