"""Plugins: research code extends schedlab without forking it.

A plugin registers policies, formulations, workloads and suites through Python entry points, declared
in its own ``pyproject.toml``::

    [project.entry-points."schedlab.policies"]
    my-policies = "my_pkg.plugin:POLICIES"        # a PolicySpec, an iterable of them, or a PolicyRegistry
    [project.entry-points."schedlab.formulations"]
    my-formulation = "my_pkg.plugin:FORMULATIONS"  # a FormulationPlugin or an iterable of them
    [project.entry-points."schedlab.workloads"]
    my-workload = "my_pkg.plugin:WORKLOADS"        # a WorkloadSpec or an iterable of them
    [project.entry-points."schedlab.suites"]
    my-suite = "my_pkg.plugin:my_suite"            # a suite builder; the entry point's name is the suite's

or, without installing anything, with ``schedlab --plugin MODULE`` (repeatable; also the
``SCHEDLAB_PLUGINS`` environment variable, comma-separated): a module with any of the attributes
``POLICIES``, ``FORMULATIONS``, ``WORKLOADS`` (as above) and ``SUITES`` (``{name: builder}``). A
``--plugin`` module that is not importable is looked for in the current directory (a module file or a
package there), for that module only: the import path is left as it is.

Registered entries land in the same registries as the built-in ones (``all_policies()``,
``formulations.METHODS``/``GENERATORS``/``OBJECTIVES``, ``WORKLOADS``, ``SUITES``), so they appear in
``schedlab list``, suite files, worker processes and reports like built-ins. Loading is idempotent; a
name already taken by a different object is an error naming the plugin.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from schedlab.scheduling.registry import PolicyRegistry, PolicySpec
from schedlab.topology.errors import SpecError

GROUPS = ("schedlab.policies", "schedlab.formulations", "schedlab.workloads", "schedlab.suites")
ENV = "SCHEDLAB_PLUGINS"

#: policies registered by plugins (``schedlab.benchmarks.registry.all_policies`` merges it)
PLUGIN_POLICIES: PolicyRegistry = PolicyRegistry()
#: the modules plugins were loaded from (their source is part of the results' code version)
PLUGIN_MODULES: set[str] = set()


@dataclass(frozen=True)
class FormulationPlugin:
    """A formulation method: ``solver(instance, backend, SolveParams) -> SolveResult`` for instances of
    ``kind``. A new kind also brings its seeded ``generator(cluster, n_jobs, *, seed, **options)`` and its
    ONE ``objective(instance, solution) -> float``; ``instance_type`` (with ``KIND``, ``to_dict``,
    ``from_dict``) lets ``schedlab solve --instance`` read it."""

    method: str
    kind: str
    solver: Callable[..., Any]
    generator: Callable[..., Any] | None = None
    objective: Callable[[Any, Any], float] | None = None
    instance_type: type | None = None

    @classmethod
    def of(cls, formulation: Callable[[], Any], kind: str, method: str | None = None, **kw: Any) -> FormulationPlugin:
        """From a :class:`~schedlab.formulations.base.Formulation` factory, solved by the one driver."""
        from schedlab.formulations.base import solve

        name = method or formulation().name
        return cls(name, kind, lambda inst, backend, params: solve(formulation(), inst, backend, params), **kw)


def _items(obj: Any) -> list[Any]:
    if isinstance(obj, Mapping):
        return list(obj.values())
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        return list(obj)
    return [obj]


def _put(registry: dict, name: str, value: Any, origin: str, what: str) -> None:
    have = registry.get(name)
    if have is not None and have is not value and have != value:
        raise SpecError(f"plugin {origin}: {what} {name!r} is already registered", source=origin, field=name)
    registry[name] = value


def register_policies(obj: Any, origin: str) -> None:
    from schedlab.formulations import POLICIES as EXACT
    from schedlab.heuristics import POLICIES as HEURISTICS

    for spec in _items(obj):
        if not isinstance(spec, PolicySpec):
            raise SpecError(f"plugin {origin}: expected a PolicySpec, got {type(spec).__name__}", source=origin,
                            field="policies")
        if spec.name in HEURISTICS or spec.name in EXACT:
            raise SpecError(f"plugin {origin}: policy {spec.name!r} is a built-in policy", source=origin,
                            field=spec.name)
        _put(PLUGIN_POLICIES, spec.name, spec, origin, "policy")


def register_formulations(obj: Any, origin: str) -> None:
    from schedlab.formulations import GENERATORS, METHODS, OBJECTIVES, io

    for f in _items(obj):
        if not isinstance(f, FormulationPlugin):
            raise SpecError(f"plugin {origin}: expected a FormulationPlugin, got {type(f).__name__}", source=origin,
                            field="formulations")
        if f.kind not in GENERATORS and (f.generator is None or f.objective is None):
            raise SpecError(f"plugin {origin}: method {f.method!r} brings a new instance kind {f.kind!r}; give its "
                            "generator and objective", source=origin, field=f.method)
        if f.generator is not None:
            _put(GENERATORS, f.kind, f.generator, origin, "instance kind generator")
        if f.objective is not None:
            _put(OBJECTIVES, f.kind, f.objective, origin, "instance kind objective")
        if f.instance_type is not None:
            _put(io.INSTANCE_KINDS, f.kind, f.instance_type, origin, "instance type")
        have = METHODS.get(f.method)
        if have is None or have[1] is not f.solver:
            _put(METHODS, f.method, (f.kind, f.solver), origin, "method")


def register_workloads(obj: Any, origin: str) -> None:
    from schedlab.benchmarks.workloads import WORKLOADS, WorkloadSpec

    for w in _items(obj):
        if not isinstance(w, WorkloadSpec):
            raise SpecError(f"plugin {origin}: expected a WorkloadSpec, got {type(w).__name__}", source=origin,
                            field="workloads")
        _put(WORKLOADS, w.name, w, origin, "workload")


def register_suites(obj: Mapping[str, Callable[..., Any]], origin: str) -> None:
    from schedlab.benchmarks.harness.suites import SUITES

    for name, builder in obj.items():
        if not callable(builder):
            raise SpecError(f"plugin {origin}: suite {name!r} is not a builder", source=origin, field=name)
        _put(SUITES, name, builder, origin, "suite")


_BY_GROUP = {"schedlab.policies": register_policies, "schedlab.formulations": register_formulations,
             "schedlab.workloads": register_workloads}


@functools.cache
def entry_point_plugins() -> tuple[str, ...]:
    """Load every installed plugin's entry points (once per process); their names."""
    names = []
    for group in GROUPS:
        for ep in metadata.entry_points(group=group):
            origin = f"{ep.value} (entry point {group}:{ep.name})"
            try:
                obj = ep.load()
            except Exception as e:  # noqa: BLE001 - name the plugin that failed, whatever its error
                raise SpecError(f"plugin {origin} failed to load: {type(e).__name__}: {e}", source=origin,
                                field=ep.name) from e
            if group == "schedlab.suites":
                register_suites({ep.name: obj}, origin)
            else:
                _BY_GROUP[group](obj, origin)
            PLUGIN_MODULES.add(ep.module)
            names.append(f"{group}:{ep.name}")
    return tuple(names)


@functools.cache
def load_module(name: str) -> str:
    """Import ``--plugin MODULE`` and register its ``POLICIES``/``FORMULATIONS``/``WORKLOADS``/``SUITES``."""
    origin = f"module {name}"
    try:
        mod = _import(name)
    except ImportError as e:
        raise SpecError(f"cannot import plugin module {name!r}: {e}", source="--plugin", field=name) from None
    found = False
    for attr, fn in (("POLICIES", register_policies), ("FORMULATIONS", register_formulations),
                     ("WORKLOADS", register_workloads), ("SUITES", register_suites)):
        if hasattr(mod, attr):
            fn(getattr(mod, attr), origin)
            found = True
    if not found:
        raise SpecError(f"plugin module {name!r} defines none of POLICIES, FORMULATIONS, WORKLOADS, SUITES",
                        source="--plugin", field=name)
    PLUGIN_MODULES.add(name)
    return name


def _import(name: str) -> Any:
    """``importlib.import_module(name)``; when its top-level package is not importable, that package (or
    module) found in the current directory. The console script ``schedlab`` puts its own folder first on the
    import path, not the working directory as ``python -m schedlab`` does: this makes ``--plugin MODULE``
    mean the same under both, without adding the working directory to the import path for anything else."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        top = name.split(".")[0]
        if e.name != top:
            raise  # the plugin was found; something it imports is missing
        spec = importlib.machinery.PathFinder.find_spec(top, [os.getcwd()])
        if spec is None or spec.loader is None:
            raise
    mod = importlib.util.module_from_spec(spec)
    sys.modules[top] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(top, None)
        raise
    return importlib.import_module(name)


def plugin_digest() -> str | None:
    """A SHA-256 of the loaded plugins' source (a module's file, a package's ``.py`` files), so that
    stored results are not reused after a plugin changes; ``None`` without plugins."""
    import hashlib
    import importlib.util
    from pathlib import Path

    if not PLUGIN_MODULES:
        return None
    h = hashlib.sha256()
    for name in sorted({m.split(".")[0] for m in PLUGIN_MODULES}):
        spec = importlib.util.find_spec(name)
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        if origin is None or not origin.is_file():
            h.update(name.encode())
            continue
        files = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
        for f in files:
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:12]


def env_plugins() -> tuple[str, ...]:
    return tuple(m.strip() for m in os.environ.get(ENV, "").split(",") if m.strip())


def add_env_plugins(modules: Iterable[str]) -> None:
    """``--plugin``: remember the modules for this process and the workers it starts."""
    mods = list(dict.fromkeys([*env_plugins(), *modules]))
    if mods:
        os.environ[ENV] = ",".join(mods)


def load_plugins(modules: Iterable[str] = ()) -> tuple[str, ...]:
    """Entry points, ``SCHEDLAB_PLUGINS`` and ``modules``: everything a process needs before it resolves
    a name. Returns the plugin modules given by name (what worker processes must load too)."""
    entry_point_plugins()
    mods = tuple(dict.fromkeys([*env_plugins(), *modules]))
    for m in mods:
        load_module(m)
    return mods


__all__ = ["ENV", "GROUPS", "PLUGIN_MODULES", "PLUGIN_POLICIES", "FormulationPlugin", "plugin_digest", "add_env_plugins", "entry_point_plugins",
           "load_module", "load_plugins"]
