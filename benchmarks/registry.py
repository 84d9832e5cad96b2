"""The registries ``schedlab list`` shows: one entry per layer, each a dict owned by its package."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from topology.presets import PRESETS


def _clusters() -> Iterable[str]:
    return PRESETS.keys()


REGISTRY_SOURCES: dict[str, Callable[[], Iterable[str]]] = {
    "clusters": _clusters,
}


def registries() -> dict[str, list[str]]:
    return {name: list(src()) for name, src in REGISTRY_SOURCES.items()}
