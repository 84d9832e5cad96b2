"""The merged registries: every policy and every instance kind with its methods, built-in and
registered by plugins. Plain data: merging loads nothing; plugins are loaded once at the boundary (the
command line, ``run_bench``, a worker process, the conformance checks:
:func:`schedlab.benchmarks.harness.plugins.load_plugins`)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from schedlab.benchmarks.harness.plugins import PLUGIN_KINDS, PLUGIN_POLICIES
from schedlab.scheduling.registry import PolicyRegistry

if TYPE_CHECKING:
    from schedlab.formulations.kinds import KindRegistry


def all_policies() -> PolicyRegistry:
    """Every registered policy: the heuristics' registry merged with the formulation-side one
    (policies that solve a model in the loop) and the plugins' (entry points, ``--plugin``). Duplicate
    names are an error. A policy with a ``warm_start`` parameter (``exact-joint``) is built with this
    registry (``registry=``) to resolve the name: formulations never import heuristics."""
    from schedlab.formulations import POLICIES as EXACT  # lazy: start-up (solver layer)
    from schedlab.heuristics import POLICIES as HEURISTICS  # lazy: start-up (policy modules)

    reg = PolicyRegistry.merged(HEURISTICS, EXACT, PLUGIN_POLICIES)
    for name, spec in list(reg.items()):
        if "warm_start" in spec.params.model_fields:  # exact-joint: a named heuristic hints its rounds
            reg[name] = replace(spec, factory=partial(spec.factory, registry=reg))
    return reg


def all_kinds() -> KindRegistry:
    """Every instance kind with its methods: the built-in ``formulations.KINDS`` merged with the
    plugins' kinds and methods (entry points, ``--plugin``). A name taken twice is an error."""
    return PLUGIN_KINDS.merged()


__all__ = ["all_kinds", "all_policies"]
