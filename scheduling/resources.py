"""Multi-resource amounts: GPUs, CPU cores, host memory (GB).

A :class:`Resources` built by a caller is validated: ``gpus`` and ``cpus`` are integers >= 0 (not
booleans, not floats), ``mem_gb`` a finite number >= 0; anything else raises :class:`SpecError` naming
the field. Arithmetic (``a + b``, ``a - b``, :meth:`Resources.scale`, :meth:`Resources.total`) builds
its result without re-validating it: a difference such as ``free - need`` may legitimately be
negative, and :meth:`Resources.is_nonnegative` says whether it is (the verifier and
``ClusterState.allocate`` check exactly that).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedlab.topology.checks import integer, number

_EPS = 1e-9
_INF = math.inf


@dataclass(frozen=True, slots=True, order=False)
class Resources:
    """An amount of resources. ``gpus`` and ``cpus`` are whole units, ``mem_gb`` is host memory in GB.

    ``a <= b`` is component-wise (fits), ``a + b`` / ``a - b`` are component-wise (unchecked: see the
    module docstring).
    """

    gpus: int = 0
    cpus: int = 0
    mem_gb: float = 0.0

    def __post_init__(self) -> None:
        g, c, m = self.gpus, self.cpus, self.mem_gb
        if type(g) is int and type(c) is int and type(m) is float and g >= 0 and c >= 0 and 0.0 <= m < _INF:
            return  # the common case, checked in a few comparisons
        _set_gpus(self, integer(g, "gpus", source="<Resources>", ge=0))
        _set_cpus(self, integer(c, "cpus", source="<Resources>", ge=0))
        _set_mem(self, number(m, "mem_gb", source="<Resources>", ge=0))

    def __add__(self, other: Resources) -> Resources:
        return _raw(self.gpus + other.gpus, self.cpus + other.cpus, self.mem_gb + other.mem_gb)

    def __sub__(self, other: Resources) -> Resources:
        return _raw(self.gpus - other.gpus, self.cpus - other.cpus, self.mem_gb - other.mem_gb)

    def __neg__(self) -> Resources:
        return _raw(-self.gpus, -self.cpus, -self.mem_gb)

    def __le__(self, other: Resources) -> bool:  # type: ignore[override]
        return (self.gpus <= other.gpus and self.cpus <= other.cpus
                and self.mem_gb <= other.mem_gb + _EPS)

    def __ge__(self, other: Resources) -> bool:  # type: ignore[override]
        return other <= self

    def scale(self, k: int) -> Resources:
        return _raw(self.gpus * k, self.cpus * k, self.mem_gb * k)

    def is_nonnegative(self) -> bool:
        return self.gpus >= 0 and self.cpus >= 0 and self.mem_gb >= -_EPS

    def is_zero(self) -> bool:
        return self.gpus == 0 and self.cpus == 0 and abs(self.mem_gb) <= _EPS

    def exceeded(self, capacity: Resources) -> list[str]:
        """Names of the resources in which ``self`` exceeds ``capacity``."""
        out = []
        if self.gpus > capacity.gpus:
            out.append("gpus")
        if self.cpus > capacity.cpus:
            out.append("cpus")
        if self.mem_gb > capacity.mem_gb + _EPS:
            out.append("mem_gb")
        return out

    def as_dict(self) -> dict[str, float]:
        return {"gpus": self.gpus, "cpus": self.cpus, "mem_gb": self.mem_gb}

    @classmethod
    def total(cls, items) -> Resources:
        g = c = 0
        m = 0.0
        for r in items:
            g += r.gpus
            c += r.cpus
            m += r.mem_gb
        return _raw(g, c, m)


# Slot setters bypass the frozen ``__setattr__`` (used by ``__post_init__`` to store normalised values
# and by :func:`_raw`, the unchecked constructor of arithmetic results).
_set_gpus = Resources.gpus.__set__  # type: ignore[attr-defined]
_set_cpus = Resources.cpus.__set__  # type: ignore[attr-defined]
_set_mem = Resources.mem_gb.__set__  # type: ignore[attr-defined]
_new = object.__new__


def _raw(gpus: int, cpus: int, mem_gb: float) -> Resources:
    """A :class:`Resources` from already-typed components, without validation (arithmetic results,
    which may be negative). Not for user input: call ``Resources(...)``."""
    r = _new(Resources)
    _set_gpus(r, gpus)
    _set_cpus(r, cpus)
    _set_mem(r, mem_gb)
    return r


ZERO = Resources()


__all__ = ["Resources", "ZERO"]
