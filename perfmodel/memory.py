r"""Memory feasibility (ours, from public ZeRO / Megatron accounting; papers-digest §1.3).

Per-GPU bytes of a plan (``P`` parameters, DP ``d``, TP ``t``, PP ``p``, micro-batches ``m``, GA ``a``):

* model states (mixed-precision Adam, 16 bytes/parameter = 2 fp16 params + 2 fp16 grads + 12 fp32
  master params, momentum, variance): plain/3D ``16 P / (t p)``; ZeRO-2 ``(2 + 14 / d) P / (t p)``;
  ZeRO-Offload ``2 P / (t p)`` (only fp16 parameters stay on the GPU);
* activations of one sample and one layer, transformers: ``A = 34 s h / t`` bytes (Megatron's
  count with fused attention kernels: the ``5 a s^2`` attention-score term is not materialised,
  which is what the artifact's OOM tables imply, e.g. RoBERTa at 64 samples per GPU fits 80 GB);
  CNNs: ``act_bytes_per_sample / layers``;
* micro-batch on a GPU ``u = b / (d a m)``; in-flight micro-batches under 1F1B: ``min(p, m)``;
  without GC: ``inflight u A l / p``; with GC: ``inflight u (2 s h l / p + A)`` (layer inputs kept
  plus one layer's full activations; CNNs: ``2 / sqrt(l)`` of the activations, Chen et al.);
* plus a fixed framework reserve ``RESERVE_GB`` (CUDA context, allocator slack).

Host memory of a job: ``HOST_GB_PER_GPU`` per GPU worker (ours) + with ZeRO-Offload ``14 P`` bytes
(fp16 gradients + fp32 optimizer states live in host memory).
"""

from __future__ import annotations

from functools import lru_cache
from types import MappingProxyType

import numpy as np

from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode
from schedlab.perfmodel.zoo import ModelSpec, get_model, resolve_name

RESERVE_GB = 2.0           # framework reserve per GPU (ours)
HOST_GB_PER_GPU = 4.0      # host memory per GPU worker process (ours)
STATE_BYTES = 16.0         # mixed-precision Adam bytes per parameter
OFFLOAD_HOST_BYTES = 14.0  # fp16 grads (2) + fp32 params/momentum/variance (12) per parameter
GB_BYTES = 1e9  # memory is reported in GB (10^9 bytes), like the cluster specs


def _states(spec: ModelSpec, d, t, p, zero) -> np.ndarray:
    P = float(spec.params)
    shard = P / (t * p)
    return np.where(zero == 0, STATE_BYTES * shard,
                    np.where(zero == 1, (2.0 + (STATE_BYTES - 2.0) / d) * shard, 2.0 * shard))


def _activations(spec: ModelSpec, b: float, d, t, p, m, ga, gc) -> np.ndarray:
    u = b / (d * ga * m)
    inflight = np.minimum(p, m)
    if spec.family == "cnn":
        full = float(spec.act_bytes_per_sample or 0.0)
        ckpt = full * 2.0 / np.sqrt(spec.layers)
        return inflight * u * np.where(gc > 0, ckpt, full) / p
    sh = float(spec.seq_len * spec.hidden)
    per_layer = 34.0 * sh / t
    lp = spec.layers / p
    full = per_layer * lp
    ckpt = 2.0 * sh * lp + per_layer
    return inflight * u * np.where(gc > 0, ckpt, full)


def gpu_memory_bytes(spec: ModelSpec, *, dp, tp, pp, mb, ga, gc, zero, global_batch: int | None = None
                     ) -> np.ndarray:
    """Per-GPU memory estimate in bytes (vectorised over plan columns; ``zero`` as 0/1/2 codes)."""
    b = float(global_batch or spec.global_batch)
    d, t, p, m, a = (np.asarray(x, dtype=float) for x in (dp, tp, pp, mb, ga))
    g = np.asarray(gc, dtype=float)
    z = np.asarray(zero, dtype=float)
    return _states(spec, d, t, p, z) + _activations(spec, b, d, t, p, m, a, g) + RESERVE_GB * GB_BYTES


def host_memory_bytes(spec: ModelSpec, *, gpus, zero) -> np.ndarray:
    """Host memory of the whole job in bytes."""
    z = np.asarray(zero, dtype=float)
    return np.asarray(gpus, dtype=float) * HOST_GB_PER_GPU * GB_BYTES + np.where(
        z == 2, OFFLOAD_HOST_BYTES * float(spec.params), 0.0)


_Z = MappingProxyType({ZeroMode.NONE: 0, ZeroMode.DP: 1, ZeroMode.OFFLOAD: 2})


def plan_gpu_memory_gb(spec: ModelSpec, plan: ExecutionPlan, global_batch: int | None = None) -> float:
    """Per-GPU memory of ``plan`` in GB."""
    return float(gpu_memory_bytes(spec, dp=plan.dp, tp=plan.tp, pp=plan.pp, mb=plan.micro_batches,
                                  ga=plan.ga_steps, gc=plan.gc, zero=_Z[plan.zero],
                                  global_batch=global_batch)) / GB_BYTES


def plan_host_memory_gb(spec: ModelSpec, plan: ExecutionPlan) -> float:
    """Host memory of the job under ``plan`` in GB."""
    return float(host_memory_bytes(spec, gpus=plan.gpus, zero=_Z[plan.zero])) / GB_BYTES


@lru_cache(maxsize=65536)
def plan_memory_violation(model_name: str, global_batch: int | None, plan: ExecutionPlan,
                          gpu_memory_gb: float) -> str | None:
    """A message if ``plan`` does not fit GPUs of ``gpu_memory_gb`` GB, else None.

    None also when the model is unknown to the zoo (nothing to check against). A pure function of
    immutable arguments (the zoo is read-only), so it is memoised: the simulator verifies every
    started job and sees the same (model, batch, plan, GPU) combinations over and over.
    """
    if resolve_name(model_name) is None:
        return None
    spec = get_model(model_name)
    need = plan_gpu_memory_gb(spec, plan, global_batch)
    if need > gpu_memory_gb + 1e-9:
        return (f"plan {plan.name} of {spec.name} needs about {need:.1f} GB per GPU "
                f"(batch {global_batch or spec.global_batch}), more than the {gpu_memory_gb:g} GB GPU")
    return None


__all__ = ["GB_BYTES", "HOST_GB_PER_GPU", "OFFLOAD_HOST_BYTES", "RESERVE_GB", "STATE_BYTES",
           "gpu_memory_bytes", "host_memory_bytes", "plan_gpu_memory_gb", "plan_host_memory_gb",
           "plan_memory_violation"]
