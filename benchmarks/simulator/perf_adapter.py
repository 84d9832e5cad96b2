"""The one place the simulator and the workload conversion touch ``perfmodel``'s speed API (a changed
signature is fixed here): ``PerfModel(cluster).iteration_time(model, plan, {machine: gpus}, cpus,
global_batch=)``, ``PerfModel.best_plan``, the zoo (``MODELS``, ``resolve_name``), Dally's
communication overheads (``network.comm_overhead``) and the memory check. Model names are resolved
through the zoo's aliases (case-insensitive); functions answer ``None`` for a model the zoo does not
know, and the rate models then fall back as documented in :mod:`benchmarks.simulator.rates`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache

from schedlab.perfmodel import PerfModel
from schedlab.perfmodel.memory import plan_memory_violation
from schedlab.perfmodel.network import comm_overhead as _comm_overhead
from schedlab.perfmodel.params import DEFAULT_CALIBRATION
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.perfmodel.zoo import resolve_name
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SchedlabError
from schedlab.topology.tiers import Tier


def zoo_name(model: str | None) -> str | None:
    """The zoo's name of ``model`` (case-insensitive, with the zoo's aliases), or ``None``."""
    return resolve_name(model) if model else None


@cache
def comm_overhead(model: str, tier: Tier) -> float | None:
    """Exposed communication as a fraction of compute time at ``tier`` (Dally Table 1, else derived
    from the iteration-time model); ``None`` for a model the zoo does not know."""
    if zoo_name(model) is None:
        return None
    try:
        return float(_comm_overhead(model, tier))
    except SchedlabError:
        return None


def perf_model(cluster: Cluster, calibration: str = DEFAULT_CALIBRATION) -> Callable[..., float]:
    """``iteration_time(model, plan, {machine: gpus}, cpus, *, global_batch=None)`` of the perf model."""
    return perf_instance(cluster, calibration).iteration_time


def perf_instance(cluster: Cluster, calibration: str = DEFAULT_CALIBRATION) -> PerfModel:
    """A new ``perfmodel.PerfModel(cluster, calibration=calibration)`` (it caches per instance)."""
    return PerfModel(cluster, calibration=calibration)


def best_plan(pm: PerfModel | None, model: str, counts: Mapping[str, int], cpus: int, *,
              global_batch: int | None = None) -> ExecutionPlan | None:
    """``pm``'s fastest valid plan for ``model`` on ``counts`` with ``cpus`` cores (at ``global_batch``,
    default the zoo's), or ``None`` (no plan fits, or the zoo does not know the model)."""
    if pm is None or zoo_name(model) is None:
        return None
    hit = pm.best_plan(model, dict(counts), cpus, global_batch=global_batch)
    return hit[0] if hit is not None else None


def memory_problem(model: str, plan: ExecutionPlan, gpu_memory_gb: float,
                   global_batch: int | None = None) -> str | None:
    """The perf model's memory verdict for ``plan`` (``None``: fits, or a model the zoo does not know)."""
    return plan_memory_violation(model, global_batch, plan, gpu_memory_gb)


__all__ = ["best_plan", "comm_overhead", "memory_problem", "perf_instance", "perf_model",
           "zoo_name"]
