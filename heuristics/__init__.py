"""Online scheduling policies (heuristics). ``POLICIES`` is the registry of every heuristic:
``name -> PolicySpec`` with documented, validated parameters (:mod:`schedlab.scheduling.registry`).

Each family keeps its own registry in its package and is merged here; formulation-side policies
(exact-in-the-loop) live in ``schedlab.formulations`` and are merged with these by the benchmarks layer
(``schedlab.benchmarks.registry.all_policies``). The policy classes are exported by their family's
package (``heuristics.fifo``, ``heuristics.rubick``, ``heuristics.dally``, ...), none of them here.

The package imports nothing at import time: ``POLICIES`` is merged on first access, and
``POLICY_HOMES`` says, per policy name, which family registry (an import string) holds it, so that a
caller who needs one policy (``schedlab simulate -p fifo``) imports its family only
(:func:`policy_specs`). ``tests/heuristics/test_policy_homes.py`` checks the table against the
registries.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schedlab.scheduling.registry import PolicyRegistry, PolicySpec

#: the family registries, in merge order (``module:ATTRIBUTE``)
FAMILIES: tuple[str, ...] = (
    "schedlab.heuristics.fifo:FIFO_POLICIES",
    "schedlab.heuristics.dally:DALLY_POLICIES",
    "schedlab.heuristics.rubick:RUBICK_POLICIES",
    "schedlab.heuristics.baselines.synergy:SYNERGY_POLICIES",
    "schedlab.heuristics.baselines.antman:ANTMAN_POLICIES",
    "schedlab.heuristics.tiresias:TIRESIAS_POLICIES",
    "schedlab.heuristics.baselines:BASELINE_POLICIES",
)
_F = dict(zip(("fifo", "dally", "rubick", "synergy", "antman", "tiresias", "baselines"), FAMILIES, strict=True))
#: policy name -> the family registry that holds it
POLICY_HOMES: Mapping[str, str] = MappingProxyType({
    "fifo": _F["fifo"], "yarn-cs": _F["fifo"], "fifo-backfill": _F["fifo"],
    "dally": _F["dally"], "dally-manual": _F["dally"],
    "rubick": _F["rubick"], "rubick-e": _F["rubick"], "rubick-r": _F["rubick"], "rubick-n": _F["rubick"],
    "synergy": _F["synergy"], "antman": _F["antman"],
    "2d-las": _F["tiresias"], "2d-gittins": _F["tiresias"], "dlas-gpu": _F["tiresias"],
    "dlas-gpu-gittins": _F["tiresias"],
    **{n: _F["baselines"] for n in ("best-effort", "srtf", "srsf", "shortest", "shortest-gpu", "gandiva",
                                    "gandiva-like")},
})


def family_registry(home: str) -> PolicyRegistry:
    """The registry an import string (``module:ATTRIBUTE``) of :data:`FAMILIES` names (imports its module)."""
    module, _, attr = home.partition(":")
    return getattr(importlib.import_module(module), attr)


def policy_specs(names: Iterable[str]) -> dict[str, PolicySpec] | None:
    """``{name: spec}`` of built-in heuristics ``names``, importing only their families; ``None`` if a
    name is not a built-in heuristic."""
    names = list(names)
    if any(n not in POLICY_HOMES for n in names):
        return None
    return {n: family_registry(POLICY_HOMES[n])[n] for n in names}


def __getattr__(name: str) -> Any:
    if name == "POLICIES":
        from schedlab.scheduling.registry import PolicyRegistry

        reg = PolicyRegistry.merged(*(family_registry(h) for h in FAMILIES))
        globals()["POLICIES"] = reg  # merged once, as an import-time constant would be
        return reg
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["FAMILIES", "POLICIES", "POLICY_HOMES", "family_registry", "policy_specs"]  # noqa: F822 (lazy)
