"""The merged registries: every policy and every instance kind with its methods, built-in and
registered by plugins. Plain data: merging loads nothing; plugins are loaded once at the boundary (the
command line, ``run_bench``, a worker process, the conformance checks:
:func:`schedlab.benchmarks.harness.plugins.load_plugins`)."""

from __future__ import annotations

from collections.abc import Iterable
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


def policies_for(names: Iterable[str]) -> PolicyRegistry:
    """A registry that holds (at least) the policies ``names``, as :func:`all_policies` gives them.
    Built-in heuristics (``heuristics.POLICY_HOMES``) come from their family registry alone, so that
    replaying one policy imports neither the other policies nor the solver layer; any other name (a
    formulation-side or plugin policy, an unknown name and its error), or any loaded plugin policy,
    gives :func:`all_policies`."""
    from schedlab.heuristics import policy_specs  # lazy: start-up (policy modules)

    specs = None if PLUGIN_POLICIES else policy_specs(names)
    if specs is None or any("warm_start" in s.params.model_fields for s in specs.values()):
        return all_policies()
    return PolicyRegistry.merged(specs)


def all_kinds() -> KindRegistry:
    """Every instance kind with its methods: the built-in ``formulations.KINDS`` merged with the
    plugins' kinds and methods (entry points, ``--plugin``). A name taken twice is an error."""
    return PLUGIN_KINDS.merged()


__all__ = ["all_kinds", "all_policies", "policies_for"]
