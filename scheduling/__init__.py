"""Shared vocabulary: resources, jobs, allocations, cluster state, instances, the verifier (errors:
:mod:`schedlab.topology.errors`, the one public error module)."""

from schedlab.scheduling.allocation import Allocation, JobAllocation, single_machine
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.resources import ZERO, Resources
from schedlab.scheduling.state import ClusterState, machine_capacity
from schedlab.scheduling.verify import CHECKS, Violation, ViolationKind, assert_valid, validate_allocation

__all__ = [
    "CHECKS", "ZERO", "Allocation", "ClusterState", "Instance", "Job",
    "JobAllocation", "JobClass", "Resources", "Violation", "ViolationKind", "assert_valid",
    "machine_capacity", "single_machine", "validate_allocation",
]
