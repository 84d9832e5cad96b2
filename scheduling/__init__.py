"""Shared vocabulary: resources, jobs, allocations, cluster state, instances, the verifier, errors."""

from schedlab.scheduling.allocation import Allocation, JobAllocation, single_machine
from schedlab.scheduling.errors import (
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
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.resources import ZERO, Resources
from schedlab.scheduling.state import ClusterState, machine_capacity
from schedlab.scheduling.verify import CHECKS, Violation, ViolationKind, assert_valid, validate_allocation

__all__ = [
    "CHECKS", "ZERO", "Allocation", "AllocationError", "CapacityError", "ClusterState", "Instance", "Job",
    "JobAllocation", "JobClass", "PlanError", "PolicyError", "Resources", "SchedlabError", "SolverError",
    "SpecError", "TopologyError", "TraceError", "Violation", "ViolationKind", "assert_valid",
    "machine_capacity", "single_machine", "validate_allocation",
]
