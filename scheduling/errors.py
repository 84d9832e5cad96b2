"""The public exception vocabulary (defined in :mod:`topology.errors`, the bottom layer)."""

from schedlab.topology.errors import (
    AllocationError,
    CapacityError,
    PlanError,
    PolicyError,
    SchedlabError,
    SolverError,
    SpecError,
    TopologyError,
    TraceError,
)

__all__ = [
    "AllocationError",
    "CapacityError",
    "PlanError",
    "PolicyError",
    "SchedlabError",
    "SolverError",
    "SpecError",
    "TopologyError",
    "TraceError",
]
