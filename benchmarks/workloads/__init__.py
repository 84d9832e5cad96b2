"""Workloads: trace loaders (``LOADERS``), seeded generators, trace -> simulated jobs, and the named
workloads of the CLI (``WORKLOADS``)."""

from schedlab.benchmarks.workloads.convert import (
    DALLY_MODELS,
    LARGE_MODELS,
    RUBICK_MODELS,
    TIRESIAS_MODELS,
    consolidated_counts,
    trace_to_jobs,
    trace_workload,
)
from schedlab.benchmarks.workloads.detect import load_trace
from schedlab.benchmarks.workloads.loaders import LOADERS, parse_mapping
from schedlab.benchmarks.workloads.named import WORKLOADS, WorkloadSpec, get_workload
from schedlab.benchmarks.workloads.trace import Trace, TraceJob, Workload

__all__ = [
    "DALLY_MODELS", "LARGE_MODELS", "LOADERS", "RUBICK_MODELS", "TIRESIAS_MODELS", "WORKLOADS", "Trace",
    "TraceJob", "Workload", "WorkloadSpec", "consolidated_counts", "get_workload", "load_trace",
    "parse_mapping", "trace_to_jobs", "trace_workload",
]
