"""What ``schedlab list`` shows, as plain data: the registries' names, every policy's parameters, the
instance kinds and their methods, and the backends' modules, kept in ``list_meta.json`` beside this
module so that ``schedlab list`` prints without importing any policy, formulation, workload, suite or
solver module (issue 25: those imports were 0.7 s of a 0.8 s listing).

The file is generated from the live registries and checked in::

    python -m schedlab.benchmarks.cli.list_meta --write    # after adding or changing a policy, kind, ...
    python -m schedlab.benchmarks.cli.list_meta --check    # exit 1 when the file is out of date

``tests/cli/test_list_meta.py`` fails when the file differs from what the registries declare (a parameter
added without regenerating the file fails CI), and checks that the listing printed from the file is the
one computed from the live registries, byte for byte, in every format.

The file is used only where it is the whole truth: a process that loaded no registry yet (``main`` of a
fresh ``schedlab list``), no plugin named (``--plugin``, ``SCHEDLAB_PLUGINS``) and no installed
distribution declaring ``schedlab.*`` entry points. Anything else (plugins, an unknown registry or
option, a process whose registries may have been changed in place) computes the listing from the live
registries (:func:`collect`) with the same renderer (:func:`render`). Backend availability is checked
when listing, never stored: a module search that imports nothing (:func:`module_present`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from sys import path as _search_path  # read only, never changed
from typing import Any

META_FILE = Path(__file__).with_name("list_meta.json")
WRITE_COMMAND = "python -m schedlab.benchmarks.cli.list_meta --write"
#: the registries, in listing order (``schedlab.benchmarks.registry.REGISTRY_SOURCES``; a test checks)
REGISTRY_NAMES = ("clusters", "workloads", "policies", "models", "kinds", "formulations", "backends", "suites")
FORMATS = ("text", "json", "yaml")
#: a registry module imported already: its registries may have been changed in this process
_REGISTRY_MODULES = ("schedlab.benchmarks.registry", "schedlab.benchmarks.harness.plugins", "schedlab.heuristics",
                     "schedlab.formulations", "schedlab.benchmarks.workloads", "schedlab.benchmarks.harness.suites",
                     "schedlab.scheduling.registry")


# ------------------------------------------------------------------------------------ the live registries
def _policy_reprs(spec) -> dict[str, Any]:
    """What the text listing prints with ``repr`` (a tuple stays a tuple there; JSON would make it a list)."""
    return {"preset": {k: repr(v) for k, v in spec.preset.items()},
            "defaults": {p.name: repr(p.default) for p in spec.param_info()}}


def collect(names: tuple[str, ...] | list[str] = REGISTRY_NAMES) -> dict[str, Any]:
    """The plain data of registries ``names``, from the live registries (plugins included if loaded)."""
    from schedlab.benchmarks.registry import all_kinds, all_policies, registries  # lazy: start-up

    regs = {n: sorted(items) for n, items in registries(list(names)).items()}
    data: dict[str, Any] = {"registries": regs}
    if "policies" in regs:
        policies = all_policies()
        data["policies"] = {n: policies[n].describe() for n in regs["policies"]}
        data["policy_reprs"] = {n: _policy_reprs(policies[n]) for n in regs["policies"]}
    if "kinds" in regs or "formulations" in regs:
        kinds = all_kinds()
        if "kinds" in regs:
            data["kinds"] = {n: kinds[n].describe() for n in regs["kinds"]}
        if "formulations" in regs:
            data["formulations"] = {n: kinds.methods[n].describe() for n in regs["formulations"]}
    if "backends" in regs:
        from schedlab.formulations.backends import BACKEND_MODULES  # lazy: start-up (solver layer)

        data["backend_modules"] = {b: BACKEND_MODULES.get(b) for b in regs["backends"]}
    return data


def generated() -> dict[str, Any]:
    """What ``list_meta.json`` must hold: every registry, built-ins only (a fresh process's view)."""
    return {"_generated_by": WRITE_COMMAND, **collect(REGISTRY_NAMES)}


# ------------------------------------------------------------------------------------------ rendering
def module_present(dotted: str) -> bool:
    """Whether module ``dotted`` can be found, importing nothing (not even its parent packages, which
    ``importlib.util.find_spec`` would import: ``scipy.optimize`` -> scipy and numpy)."""
    from importlib.machinery import PathFinder  # lazy: start-up

    if dotted in sys.modules:
        return True
    parts = dotted.split(".")
    path, name = None, ""
    for i, part in enumerate(parts):
        name = part if i == 0 else f"{name}.{part}"
        spec = PathFinder.find_spec(name, path)
        if spec is None:
            return False
        path = spec.submodule_search_locations
        if path is None and i < len(parts) - 1:
            return False  # a plain module has no submodules
    return True


def unavailable_backends(data: dict[str, Any]) -> dict[str, str]:
    """Backends whose module is not installed, with the reason (``formulations.backends.quick_availability``'s)."""
    return {b: f"module {mod} is not installed" for b, mod in data.get("backend_modules", {}).items()
            if mod is not None and not module_present(mod)}


def _policy_lines(d: dict[str, Any], reprs: dict[str, Any]) -> list[str]:
    resizes = sorted(x for x in d["decisions"] if x in ("gpus", "plan"))
    tags = [d["family"]] + (["oracle"] if d["oracle"] else []) + (["preemptive"] if d["preemptive"] else []) \
        + ([f"resizes: {', '.join(resizes)}"] if resizes else [])
    lines = [f"  {d['name']}  [{', '.join(tags)}]  {d['summary']}"]
    if d["preset"]:
        lines.append("      preset: " + ", ".join(f"{k}={reprs['preset'][k]}" for k in d["preset"]))
    for p in d["params"]:
        rng = f" ({p['constraints']})" if p["constraints"] else ""
        origin = f" [{p['origin']}]" if p["origin"] else ""
        lines.append(f"      {p['name']}{origin}: {p['type']} = {reprs['defaults'][p['name']]}{rng}  {p['description']}")
    return lines


def _kind_lines(d: dict[str, Any]) -> list[str]:
    return [f"  {d['name']}  [objective: {d['objective']}]",
            f"      decisions: {', '.join(d['decisions'])}; exact twin: {d['exact']}; default: {d['default_cluster']}, "
            f"{d['default_jobs']} jobs",
            f"      options: {', '.join(d['options']) or 'none'}",
            f"      gap note: {d['gap_note']}"]


def _method_line(d: dict[str, Any]) -> str:
    caps = "".join(f", {c}" for c in d["capabilities"])
    return f"  {d['name']}  [{d['kind']}, {d['role']}{caps}]  {d['summary']}"


def render(data: dict[str, Any], registry: str | None, fmt: str) -> str:
    """What ``schedlab list [REGISTRY] --format FMT`` prints from ``data`` (:func:`collect`'s form, or the
    file's; ``registry`` must be one of ``data``'s)."""
    regs = data["registries"]
    names = [registry] if registry is not None else [n for n in REGISTRY_NAMES if n in regs]
    missing = {} if "backends" not in names else (
        data["backends_unavailable"] if "backends_unavailable" in data else unavailable_backends(data))
    if fmt != "text":
        out: dict[str, Any] = {n: list(regs[n]) for n in names}
        if "policies" in out:
            out["policies"] = {n: data["policies"][n] for n in regs["policies"]}
        if "backends" in out:
            out["backends_unavailable"] = missing
        if "kinds" in out:
            out["kinds"] = {n: data["kinds"][n] for n in regs["kinds"]}
        if "formulations" in out:
            out["formulations"] = {n: data["formulations"][n] for n in regs["formulations"]}
        if fmt == "json":
            return json.dumps(out, indent=2) + "\n"
        import yaml  # lazy: start-up

        return yaml.safe_dump(out, sort_keys=False, allow_unicode=True).rstrip() + "\n"
    lines: list[str] = []
    for name in names:
        items = regs[name]
        lines.append(f"{name} ({len(items)}):")
        for item in items:
            if name == "policies":
                lines.extend(_policy_lines(data["policies"][item], data["policy_reprs"][item]))
            elif name == "kinds":
                lines.extend(_kind_lines(data["kinds"][item]))
            elif name == "formulations":
                lines.append(_method_line(data["formulations"][item]))
            elif name == "backends" and item in missing:
                lines.append(f"  {item}  [unavailable: {missing[item]}]")
            else:
                lines.append(f"  {item}")
    return "".join(line + "\n" for line in lines)


# --------------------------------------------------------------------------------------- the fast path
def plugins_installed() -> bool:
    """Whether an installed distribution on the import path declares ``schedlab.*`` entry points (read
    from the ``entry_points.txt`` files; ``importlib.metadata`` is slow to import)."""
    for entry in list(_search_path):
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                eps = Path(entry or ".", name, "entry_points.txt").read_text(errors="replace")
            except OSError:
                continue
            if "[schedlab." in eps:
                return True
    return False


def usable() -> bool:
    """Whether the file is the whole truth in this process (see the module doc)."""
    if os.environ.get("SCHEDLAB_PLUGINS", "").strip():
        return False
    return not any(m in sys.modules for m in _REGISTRY_MODULES) and not plugins_installed()


def load() -> dict[str, Any] | None:
    try:
        return json.loads(META_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def fast_listing(args: list[str]) -> str | None:
    """``schedlab list [REGISTRY] [--format F]`` printed from the file, or ``None`` (anything else, or
    where the file is not usable: the command line computes it then)."""
    if not args or args[0] != "list":
        return None
    registry, fmt, rest = None, "text", args[1:]
    while rest:
        a = rest.pop(0)
        if a == "--format" and rest:
            fmt = rest.pop(0)
        elif a.startswith("--format="):
            fmt = a.partition("=")[2]
        elif not a.startswith("-") and registry is None:
            registry = a
        else:
            return None
    if fmt not in FORMATS or (registry is not None and registry not in REGISTRY_NAMES) or not usable():
        return None
    data = load()
    if data is None or set(data.get("registries", ())) != set(REGISTRY_NAMES):
        return None
    return render(data, registry, fmt)


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse  # lazy: start-up

    ap = argparse.ArgumentParser(prog="python -m schedlab.benchmarks.cli.list_meta",
                                 description="Write or check list_meta.json (what `schedlab list` prints).")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true", help=f"regenerate {META_FILE.name} from the registries")
    g.add_argument("--check", action="store_true", help="exit 1 when the file differs from the registries")
    a = ap.parse_args(argv)
    text = _dump(generated())
    if a.write:
        META_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {META_FILE}")
        return 0
    current = META_FILE.read_text(encoding="utf-8") if META_FILE.is_file() else ""
    if current != text:
        print(f"{META_FILE} is out of date: run {WRITE_COMMAND}", file=sys.stderr)
        return 1
    print(f"{META_FILE.name} is up to date")
    return 0


__all__ = ["FORMATS", "META_FILE", "REGISTRY_NAMES", "WRITE_COMMAND", "collect", "fast_listing", "generated", "load",
           "module_present", "plugins_installed", "render", "unavailable_backends", "usable"]

if __name__ == "__main__":
    raise SystemExit(main())
