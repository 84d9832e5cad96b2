"""The one place the simulator touches ``perfmodel``'s speed API (a changed signature is fixed here).

Expected (perfmodel issue): ``perfmodel.PerfModel(cluster).iteration_time(model, plan, placement:
{machine: gpus}, cpus) -> s``, ``perfmodel.zoo.get_model(name)`` / ``MODELS``, and
``perfmodel.network.comm_overhead(model, tier) -> fraction of compute time`` (Dally Table 1). Each
function here degrades to ``None`` when that part of the perf model is not available, and the rate
models then fall back as documented in :mod:`benchmarks.simulator.rates`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import cache

from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.topology.cluster import Cluster
from schedlab.topology.tiers import Tier


def _module(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


@cache
def comm_overhead_fn() -> Callable[[str, Tier], float] | None:
    mod = _module("schedlab.perfmodel.network")
    return getattr(mod, "comm_overhead", None) if mod is not None else None


@cache
def comm_overhead(model: str, tier: Tier) -> float | None:
    """Exposed communication as a fraction of compute time at ``tier``; ``None`` if unknown."""
    fn = comm_overhead_fn()
    if fn is None:
        return None
    try:
        return float(fn(model, tier))
    except (KeyError, ValueError, LookupError):
        return None


@cache
def zoo_models() -> frozenset[str]:
    """Names the perf model's zoo knows (empty without a zoo)."""
    mod = _module("schedlab.perfmodel.zoo")
    if mod is None:
        return frozenset()
    models = getattr(mod, "MODELS", None)
    return frozenset(models) if models is not None else frozenset()


def perf_model_available() -> bool:
    mod = _module("schedlab.perfmodel")
    return mod is not None and hasattr(mod, "PerfModel")


def perf_model(cluster: Cluster) -> Callable[[str, ExecutionPlan, Mapping[str, int], int], float] | None:
    """``iteration_time(model, plan, {machine: gpus}, cpus)`` of the perf model, or ``None``."""
    pm = perf_instance(cluster)
    return pm.iteration_time if pm is not None else None


def perf_instance(cluster: Cluster):
    """A new ``perfmodel.PerfModel(cluster)``, or ``None`` without a perf model."""
    mod = _module("schedlab.perfmodel")
    cls = getattr(mod, "PerfModel", None) if mod is not None else None
    return cls(cluster) if cls is not None else None


def best_plan(pm, model: str, counts: Mapping[str, int], cpus: int) -> ExecutionPlan | None:
    """``pm``'s (a :func:`perf_instance`) fastest valid plan for ``model`` on ``counts`` with ``cpus``
    cores, or ``None``."""
    if pm is None or model not in zoo_models():
        return None
    hit = pm.best_plan(model, dict(counts), cpus)
    return hit[0] if hit is not None else None


def memory_problem(model: str, plan: ExecutionPlan, gpu_memory_gb: float,
                   global_batch: int | None = None) -> str | None:
    """The perf model's memory verdict for ``plan`` (``None``: fits, or no estimator/unknown model)."""
    mod = _module("schedlab.perfmodel.memory")
    fn = getattr(mod, "plan_memory_violation", None) if mod is not None else None
    return fn(model, global_batch, plan, gpu_memory_gb) if fn is not None else None
