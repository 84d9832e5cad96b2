"""Performance model: execution plans, Rubick iteration-time model, memory, sensitivity curves.

Entry point: :class:`PerfModel` (see ``docs/perfmodel.md``). Modules: :mod:`~perfmodel.plans`,
:mod:`~perfmodel.zoo`, :mod:`~perfmodel.params`, :mod:`~perfmodel.iteration`, :mod:`~perfmodel.memory`,
:mod:`~perfmodel.search`, :mod:`~perfmodel.network`, :mod:`~perfmodel.fitting`,
:mod:`~perfmodel.validation`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedlab.topology.lazy import lazy_exports

# Names are imported on first use (PEP 562): ``from schedlab.perfmodel.plans import ExecutionPlan`` (every
# layer above does it) must not import numpy, scipy or networkx (``schedlab --help`` starts in < 0.5 s).
_LAZY = {
    "Curve": "curves", "ResourceOption": "curves",
    "DEFAULT_CPUS_PER_GPU_CHOICES": "facade", "PerfModel": "facade",
    "plan_gpu_memory_gb": "memory", "plan_host_memory_gb": "memory", "plan_memory_violation": "memory",
    "comm_overhead": "network", "model_size_bytes": "network", "skew": "network", "tensor_sizes": "network",
    "ARTIFACT_PARAMS": "params", "PerfParams": "params", "default_params": "params",
    "DEFAULT_GA_STEPS": "plans", "ExecutionPlan": "plans", "ZeroMode": "plans", "parse_plan": "plans",
    "MODELS": "zoo", "ModelSpec": "zoo", "get_model": "zoo",
}

if TYPE_CHECKING:
    from schedlab.perfmodel.curves import Curve, ResourceOption
    from schedlab.perfmodel.facade import DEFAULT_CPUS_PER_GPU_CHOICES, PerfModel
    from schedlab.perfmodel.memory import plan_gpu_memory_gb, plan_host_memory_gb, plan_memory_violation
    from schedlab.perfmodel.network import comm_overhead, model_size_bytes, skew, tensor_sizes
    from schedlab.perfmodel.params import ARTIFACT_PARAMS, PerfParams, default_params
    from schedlab.perfmodel.plans import DEFAULT_GA_STEPS, ExecutionPlan, ZeroMode, parse_plan
    from schedlab.perfmodel.zoo import MODELS, ModelSpec, get_model


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "ARTIFACT_PARAMS", "DEFAULT_CPUS_PER_GPU_CHOICES", "DEFAULT_GA_STEPS", "MODELS", "Curve", "ExecutionPlan",
    "ModelSpec", "PerfModel", "PerfParams", "ResourceOption", "ZeroMode", "comm_overhead", "default_params",
    "get_model", "model_size_bytes", "parse_plan", "plan_gpu_memory_gb", "plan_host_memory_gb",
    "plan_memory_violation", "skew", "tensor_sizes",
]
