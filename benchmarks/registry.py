"""The registries ``schedlab list`` shows: one entry per layer, each a dict owned by its package."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from schedlab.perfmodel.zoo import MODELS
from schedlab.topology.presets import PRESETS


def _clusters() -> Iterable[str]:
    return PRESETS.keys()


def _workloads() -> Iterable[str]:
    from schedlab.benchmarks.workloads import WORKLOADS

    return WORKLOADS.keys()


def _policies() -> Iterable[str]:
    from schedlab.heuristics import POLICIES

    return POLICIES.keys()


def _formulations() -> Iterable[str]:
    from schedlab.formulations import METHODS

    return METHODS.keys()


def _backends() -> Iterable[str]:
    from schedlab.formulations import BACKENDS

    return BACKENDS.keys()


REGISTRY_SOURCES: dict[str, Callable[[], Iterable[str]]] = {
    "clusters": _clusters,
    "workloads": _workloads,
    "policies": _policies,
    "models": lambda: MODELS.keys(),
    "formulations": _formulations,
    "backends": _backends,
}


def registries() -> dict[str, list[str]]:
    return {name: list(src()) for name, src in REGISTRY_SOURCES.items()}
