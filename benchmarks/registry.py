"""The registries ``schedlab list`` shows: one entry per layer, each a dict owned by its package."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from schedlab.perfmodel.zoo import MODELS
from schedlab.scheduling.registry import PolicyRegistry
from schedlab.topology.presets import PRESETS

if TYPE_CHECKING:
    from schedlab.formulations.kinds import KindRegistry


def _clusters() -> Iterable[str]:
    return PRESETS.keys()


def _plugins() -> None:
    from schedlab.benchmarks.harness.plugins import load_plugins

    load_plugins()


def _workloads() -> Iterable[str]:
    from schedlab.benchmarks.workloads import WORKLOADS

    _plugins()
    return WORKLOADS.keys()


def all_policies() -> PolicyRegistry:
    """Every registered policy: the heuristics' registry merged with the formulation-side one
    (policies that solve a model in the loop) and the plugins' (entry points, ``--plugin``). Duplicate
    names are an error. A policy with a ``warm_start`` parameter (``exact-joint``) is built with this
    registry (``registry=``) to resolve the name: formulations never import heuristics."""
    from schedlab.benchmarks.harness.plugins import PLUGIN_POLICIES
    from schedlab.formulations import POLICIES as EXACT
    from schedlab.heuristics import POLICIES as HEURISTICS

    _plugins()
    reg = PolicyRegistry.merged(HEURISTICS, EXACT, PLUGIN_POLICIES)
    for name, spec in list(reg.items()):
        if "warm_start" in spec.params.model_fields:  # exact-joint: a named heuristic hints its rounds
            reg[name] = replace(spec, factory=partial(spec.factory, registry=reg))
    return reg


def all_kinds() -> KindRegistry:
    """Every instance kind with its methods: the built-in ``formulations.KINDS`` merged with the
    plugins' kinds and methods (entry points, ``--plugin``). A name taken twice is an error."""
    from schedlab.benchmarks.harness.plugins import PLUGIN_KINDS

    _plugins()
    return PLUGIN_KINDS.merged()


def _policies() -> Iterable[str]:
    return all_policies().keys()


def _formulations() -> Iterable[str]:
    return all_kinds().methods.keys()


def _kinds() -> Iterable[str]:
    return all_kinds().keys()


def _backends() -> Iterable[str]:
    from schedlab.formulations import BACKENDS

    return BACKENDS.keys()


def _suites() -> Iterable[str]:
    from schedlab.benchmarks.harness.suites import SUITES

    _plugins()
    return SUITES.keys()


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
