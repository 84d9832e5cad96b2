"""Lazy package exports (PEP 562): a package's ``__init__`` names what it exports and from which
submodule; each name is imported on first use, so importing one small submodule of the package (which
runs its ``__init__``) does not import the heavy ones (numpy, networkx, pydantic, YAML)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` resolving ``name`` from ``package.names[name]``
    (and caching it in the package namespace)."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


__all__ = ["lazy_exports"]
