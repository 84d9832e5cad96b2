"""Solver backends behind one interface; ``BACKENDS`` maps name -> factory (a dict registry)."""

from __future__ import annotations

from collections.abc import Callable

from schedlab.formulations.backends.base import (
    CAPABILITIES,
    Availability,
    Backend,
    incompatibility,
)
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


#: the Python module each backend needs (a cheap presence check for listings; solving runs the full
#: :meth:`Backend.availability` check, which may also fail when the module is there but unusable)
BACKEND_MODULES = {"cpsat": "ortools.sat.python.cp_model", "highs": "ortools.math_opt.python.mathopt",
                   "scip": "ortools.math_opt.python.mathopt", "cbc": "pulp", "scipy": "scipy.optimize"}


def quick_availability(name: str) -> Availability:
    """Whether ``name``'s module can be found, without importing it (fast enough for ``schedlab list``)."""
    import importlib.util

    mod = BACKEND_MODULES.get(name)
    if mod is None:
        return Availability(True)
    try:
        found = importlib.util.find_spec(mod) is not None
    except (ImportError, ValueError):
        found = False
    return Availability(True) if found else Availability(False, f"module {mod} is not installed")


def get_backend(name: str) -> Backend:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise SolverError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}") from None


__all__ = ["BACKENDS", "BACKEND_MODULES", "CAPABILITIES", "Availability", "Backend", "get_backend",
           "incompatibility",
           "quick_availability"]
