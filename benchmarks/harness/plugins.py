"""Plugins: research code extends schedlab without forking it.

A plugin registers policies, formulations, workloads and suites through Python entry points, declared
in its own ``pyproject.toml``::

    [project.entry-points."schedlab.policies"]
    my-policies = "my_pkg.plugin:POLICIES"        # a PolicySpec, an iterable of them, or a PolicyRegistry
    [project.entry-points."schedlab.formulations"]
    my-formulation = "my_pkg.plugin:FORMULATIONS"  # a formulations.Method or Kind, or an iterable of them
    [project.entry-points."schedlab.workloads"]
    my-workload = "my_pkg.plugin:WORKLOADS"        # a WorkloadSpec or an iterable of them
    [project.entry-points."schedlab.suites"]
    my-suite = "my_pkg.plugin:my_suite"            # a suite builder; the entry point's name is the suite's

or, without installing anything, with ``schedlab --plugin MODULE`` (repeatable; also the
``SCHEDLAB_PLUGINS`` environment variable, comma-separated): a module with any of the attributes
``POLICIES``, ``FORMULATIONS``, ``WORKLOADS`` (as above) and ``SUITES`` (``{name: builder}``). A
``--plugin`` module that is not importable is looked for in the current directory (a module file or a
package there), for that module only: the import path is left as it is.

A formulation plugin registers a :class:`~schedlab.formulations.kinds.Method` (a solver of an existing
or new kind, with its declared role: exact, relaxation, restriction or heuristic-in-model) or a whole
:class:`~schedlab.formulations.kinds.Kind`; nothing patches a dict. ``all_policies()`` and
``all_kinds()`` (``schedlab.benchmarks.merged``) merge the plugins' entries with the built-in ones,
as ``WORKLOADS`` and ``harness.suites.all_suites()`` do, so they appear in ``schedlab list``, suite
files, worker processes and reports like built-ins. Loading is idempotent; a name already taken by a
different object is an error naming the plugin.

Plugins are loaded once, at the boundary: the command line (commands that resolve a name),
``run_bench``, each worker process, the conformance checks. The merged registries load nothing; this
module imports nothing of the harness (the registries and suites build on it, not it on them).
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Any

from schedlab.scheduling.registry import PolicyRegistry, PolicySpec
from schedlab.topology.errors import SpecError

GROUPS = ("schedlab.policies", "schedlab.formulations", "schedlab.workloads", "schedlab.suites")
ENV = "SCHEDLAB_PLUGINS"

#: policies registered by plugins (``schedlab.benchmarks.registry.all_policies`` merges it)
PLUGIN_POLICIES: PolicyRegistry = PolicyRegistry()
#: suites registered by plugins (``schedlab.benchmarks.harness.suites.all_suites`` merges them), and
#: which plugin registered each
PLUGIN_SUITES: dict[str, Callable[..., Any]] = {}
SUITE_ORIGINS: dict[str, str] = {}
#: the modules plugins were loaded from (their source is part of the results' code version)
PLUGIN_MODULES: set[str] = set()


class PluginKinds:
    """The kinds and methods plugins registered (merged by ``all_kinds()``; a plain record, checked
    against the built-in kinds on every registration)."""

    def __init__(self) -> None:
        self.kinds: dict[str, Any] = {}
        self.methods: dict[str, Any] = {}

    def register(self, obj: Any, origin: str) -> None:
        from schedlab.formulations.builtin_kinds import KINDS  # lazy: start-up (solver layer)
        from schedlab.formulations.kinds import Kind, Method  # lazy: start-up (solver layer)

        if isinstance(obj, Kind):
            if obj.name in KINDS:
                raise SpecError(f"plugin {origin}: instance kind {obj.name!r} is a built-in kind", source=origin,
                                field=obj.name)
            _put(self.kinds, obj.name, obj, origin, "instance kind")
        elif isinstance(obj, Method):
            if obj.name in KINDS.methods:
                raise SpecError(f"plugin {origin}: method {obj.name!r} is a built-in method", source=origin,
                                field=obj.name)
            _put(self.methods, obj.name, obj, origin, "method")
        else:
            raise SpecError(f"plugin {origin}: expected a formulations Method or Kind, got {type(obj).__name__}",
                            source=origin, field="formulations")
        self.merged(origin)  # a method of an unknown kind, or a name taken twice, fails here, naming the plugin

    def merged(self, origin: str = "<plugins>") -> Any:
        from schedlab.formulations.builtin_kinds import KINDS  # lazy: start-up (solver layer)

        return KINDS.merged(self.kinds.values(), self.methods.values(), origin=origin)


#: kinds and methods registered by plugins (``schedlab.benchmarks.registry.all_kinds`` merges them)
PLUGIN_KINDS = PluginKinds()


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
    from schedlab.formulations import POLICIES as EXACT  # lazy: start-up (solver layer)
    from schedlab.heuristics import POLICIES as HEURISTICS  # lazy: start-up (policy modules)

    for spec in _items(obj):
        if not isinstance(spec, PolicySpec):
            raise SpecError(f"plugin {origin}: expected a PolicySpec, got {type(spec).__name__}", source=origin,
                            field="policies")
        if spec.name in HEURISTICS or spec.name in EXACT:
            raise SpecError(f"plugin {origin}: policy {spec.name!r} is a built-in policy", source=origin,
                            field=spec.name)
        _put(PLUGIN_POLICIES, spec.name, spec, origin, "policy")


def register_formulations(obj: Any, origin: str) -> None:
    for f in _items(obj):
        PLUGIN_KINDS.register(f, origin)


def register_workloads(obj: Any, origin: str) -> None:
    from schedlab.benchmarks.workloads import WORKLOADS, WorkloadSpec  # lazy: start-up (trace loaders)

    for w in _items(obj):
        if not isinstance(w, WorkloadSpec):
            raise SpecError(f"plugin {origin}: expected a WorkloadSpec, got {type(w).__name__}", source=origin,
                            field="workloads")
        _put(WORKLOADS, w.name, w, origin, "workload")


def register_suites(obj: Mapping[str, Callable[..., Any]], origin: str) -> None:
    """Into :data:`PLUGIN_SUITES` (a clash with a built-in suite is an error when they are merged)."""
    for name, builder in obj.items():
        if not callable(builder):
            raise SpecError(f"plugin {origin}: suite {name!r} is not a builder", source=origin, field=name)
        _put(PLUGIN_SUITES, name, builder, origin, "suite")
        SUITE_ORIGINS[name] = origin


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
    import hashlib  # lazy: start-up (only a sweep's code version asks)
    from pathlib import Path  # lazy: start-up (only a sweep's code version asks)

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


__all__ = ["ENV", "GROUPS", "PLUGIN_KINDS", "PLUGIN_MODULES", "PLUGIN_POLICIES", "PLUGIN_SUITES", "SUITE_ORIGINS",
           "PluginKinds", "add_env_plugins", "entry_point_plugins", "load_module", "load_plugins", "plugin_digest"]
