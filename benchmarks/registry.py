"""The registries ``schedlab list`` shows: one entry per layer, each a dict owned by its package.
``all_policies`` / ``all_kinds`` (the built-in entries merged with the plugins') live in
:mod:`schedlab.benchmarks.merged` and are re-exported here."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from schedlab.benchmarks.merged import all_kinds, all_policies
from schedlab.perfmodel.zoo import MODELS
from schedlab.topology.presets import PRESETS


def _clusters() -> Iterable[str]:
    return PRESETS.keys()


def _workloads() -> Iterable[str]:
    from schedlab.benchmarks.workloads import WORKLOADS  # lazy: start-up (trace loaders)

    return WORKLOADS.keys()


def _policies() -> Iterable[str]:
    return all_policies().keys()


def _formulations() -> Iterable[str]:
    return all_kinds().methods.keys()


def _kinds() -> Iterable[str]:
    return all_kinds().keys()


def _backends() -> Iterable[str]:
    from schedlab.formulations import BACKENDS  # lazy: start-up (solver layer)

    return BACKENDS.keys()


def _suites() -> Iterable[str]:
    from schedlab.benchmarks.harness.suites import all_suites  # lazy: start-up (the harness)

    return all_suites().keys()


REGISTRY_SOURCES: dict[str, Callable[[], Iterable[str]]] = {
    "clusters": _clusters,
    "workloads": _workloads,
    "policies": _policies,
    "models": lambda: MODELS.keys(),
    "kinds": _kinds,
    "formulations": _formulations,
    "backends": _backends,
    "suites": _suites,
}


def registries(names: Iterable[str] | None = None) -> dict[str, list[str]]:
    """``{registry: [entry, ...]}`` for ``names`` (default: all of ``REGISTRY_SOURCES``)."""
    return {name: list(REGISTRY_SOURCES[name]()) for name in (names or REGISTRY_SOURCES)}


__all__ = ["REGISTRY_SOURCES", "all_kinds", "all_policies", "registries"]
