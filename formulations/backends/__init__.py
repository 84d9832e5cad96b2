"""Solver backends behind one interface; ``BACKENDS`` maps name -> factory (a dict registry)."""

from __future__ import annotations

from collections.abc import Callable

from formulations.backends.base import CAPABILITIES, Availability, Backend, incompatibility
from formulations.backends.cpsat import CpSatBackend
from formulations.backends.mathopt import highs, scip
from formulations.backends.pulp_cbc import CbcBackend
from formulations.backends.scipy_milp import ScipyBackend
from topology.errors import SolverError

BACKENDS: dict[str, Callable[[], Backend]] = {
    "cpsat": CpSatBackend,
    "highs": highs,
    "scip": scip,
    "cbc": CbcBackend,
    "scipy": ScipyBackend,
}


def get_backend(name: str) -> Backend:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise SolverError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}") from None


__all__ = ["BACKENDS", "CAPABILITIES", "Availability", "Backend", "get_backend", "incompatibility"]
