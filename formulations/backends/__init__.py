"""Solver backends behind one interface; ``BACKENDS`` maps name -> factory (a dict registry)."""

from __future__ import annotations

from collections.abc import Callable

from schedlab.formulations.backends.base import CAPABILITIES, Availability, Backend, incompatibility
from schedlab.formulations.backends.cpsat import CpSatBackend
from schedlab.formulations.backends.mathopt import highs, scip
from schedlab.formulations.backends.pulp_cbc import CbcBackend
from schedlab.formulations.backends.scipy_milp import ScipyBackend
from schedlab.topology.errors import SolverError

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
