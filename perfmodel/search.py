"""Enumeration of execution plans for a job on a placement (as integer columns, then plans).

A plan ``(d, t, p, m, a, gc, zero)`` is valid for ``g`` GPUs split as ``counts`` over machines when

* ``d * t * p = g``; TP and PP only for models that use them (``ModelSpec.allow_3d``: the paper's
  evaluation gives TP/PP to models of >= 1B parameters only);
* ``t`` divides every machine's GPU count (a TP group never crosses machines), the hidden size and the
  number of attention heads (Megatron);
* ``p`` divides the layers; ``m`` (1F1B micro-batches, PP only) divides the per-replica batch ``b / d``;
* GA steps ``a`` in 1, 2, 4, ... (without PP), with the global batch divisible by ``d * a * m``;
* ZeRO (DP or Offload) only without TP/PP and for models that use it (``allow_zero``);
* the per-GPU memory estimate fits the smallest GPU of the placement (:mod:`perfmodel.memory`).

The global batch never changes.
"""

from __future__ import annotations

import math
from functools import lru_cache, reduce

import numpy as np

from schedlab.perfmodel.memory import GB_BYTES, gpu_memory_bytes
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode
from schedlab.perfmodel.zoo import ModelSpec, get_model, resolve_name

COLUMNS = ("dp", "tp", "pp", "mb", "ga", "gc", "zero")
ZEROS = (ZeroMode.NONE, ZeroMode.DP, ZeroMode.OFFLOAD)
MAX_GA = 16
MAX_MICRO_BATCH_CHOICES = 4


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def structural_table(spec: ModelSpec, gpus: int, tp_group_limit: int, global_batch: int) -> np.ndarray:
    """Integer rows ``(d, t, p, m, a, gc, zero)`` that are structurally valid (memory not checked).

    ``tp_group_limit`` is the gcd of the per-machine GPU counts: TP degrees must divide it.
    """
    b = global_batch
    rows: list[tuple[int, ...]] = []
    tps = [t for t in _divisors(tp_group_limit) if gpus % t == 0] if spec.allow_3d else [1]
    if spec.family == "transformer":
        # Megatron splits attention heads and the hidden size across the TP group
        tps = [t for t in tps if spec.hidden % t == 0 and spec.heads % t == 0]
    for t in tps:
        pps = [p for p in _divisors(gpus // t) if spec.layers % p == 0] if spec.allow_3d else [1]
        for p in pps:
            d = gpus // (t * p)
            if b % d:
                continue
            per_replica = b // d
            if p > 1:
                ms = _divisors(per_replica)[-MAX_MICRO_BATCH_CHOICES:]
                gas = [1]
            else:
                ms = [1]
                gas = [a for a in (1, 2, 4, 8, MAX_GA) if per_replica % a == 0]
            zeros = (0, 1, 2) if (t == 1 and p == 1 and spec.allow_zero) else (0,)
            for m in ms:
                for a in gas:
                    for gc in (0, 1):
                        for z in zeros:
                            rows.append((d, t, p, m, a, gc, z))
    return np.array(rows, dtype=np.int64).reshape(-1, 7)


def memory_columns(spec: ModelSpec, table: np.ndarray, global_batch: int) -> np.ndarray:
    """Per-GPU memory (GB) of each row."""
    if table.size == 0:
        return np.zeros(0)
    return gpu_memory_bytes(spec, dp=table[:, 0], tp=table[:, 1], pp=table[:, 2], mb=table[:, 3],
                            ga=table[:, 4], gc=table[:, 5], zero=table[:, 6], global_batch=global_batch) / GB_BYTES


def row_to_plan(row) -> ExecutionPlan:
    d, t, p, m, a, gc, z = (int(x) for x in row)
    return ExecutionPlan(dp=d, tp=t, pp=p, micro_batches=m, ga_steps=a, gc=bool(gc), zero=ZEROS[z])


def plan_to_row(plan: ExecutionPlan) -> tuple[int, ...]:
    return (plan.dp, plan.tp, plan.pp, plan.micro_batches, plan.ga_steps, int(plan.gc), ZEROS.index(plan.zero))


def tp_group_limit(counts) -> int:
    """gcd of the per-machine GPU counts of a placement."""
    vals = [int(c) for c in counts if c]
    return reduce(math.gcd, vals) if vals else 0


def structural_problem(spec: ModelSpec, plan: ExecutionPlan, counts, global_batch: int) -> str | None:
    """Why ``plan`` is structurally invalid for ``counts`` (None if valid); memory not checked."""
    g = sum(counts)
    if plan.gpus != g:
        return f"plan uses {plan.gpus} GPUs, placement has {g}"
    if (plan.tp > 1 or plan.pp > 1) and not spec.allow_3d:
        return f"{spec.name} does not use TP/PP"
    if any(c % plan.tp for c in counts if c):
        return f"TP degree {plan.tp} does not divide the per-machine GPU counts {sorted(counts)}"
    if spec.family == "transformer" and (spec.heads % plan.tp or spec.hidden % plan.tp):
        return f"TP degree {plan.tp} does not divide {spec.heads} attention heads and hidden size {spec.hidden}"
    if spec.layers % plan.pp:
        return f"PP degree {plan.pp} does not divide {spec.layers} layers"
    if plan.zero is not ZeroMode.NONE and (plan.tp > 1 or plan.pp > 1 or not spec.allow_zero):
        return "ZeRO is not combined with TP/PP (and not used by this model)"
    return batch_problem(global_batch, plan)


def batch_problem(global_batch: int, plan: ExecutionPlan) -> str | None:
    """Why ``plan`` cannot split ``global_batch`` (None if it can): every data-parallel replica runs ``a``
    accumulation steps of ``m`` micro-batches of whole samples, so ``d * a * m`` must divide the global
    batch, which never changes (Megatron's rule). The one batch rule: the perf model's plan search, its
    pricer and the verifier (:func:`~schedlab.scheduling.verify.check_plan`) all apply it."""
    if global_batch % (plan.dp * plan.ga_steps * plan.micro_batches):
        return (f"global batch {global_batch} is not divisible by d*a*m = "
                f"{plan.dp * plan.ga_steps * plan.micro_batches}")
    return None


@lru_cache(maxsize=8192)
def plan_batch_violation(model_name: str, global_batch: int | None, plan: ExecutionPlan) -> str | None:
    """:func:`batch_problem` for a job: its own ``global_batch``, else its model's default in the zoo; None
    when neither is known (nothing to check against). Memoised: the simulator verifies every decision."""
    if global_batch is None:
        spec = get_model(model_name) if resolve_name(model_name) is not None else None
        if spec is None:
            return None
        global_batch = spec.global_batch
    return batch_problem(int(global_batch), plan)


__all__ = ["COLUMNS", "MAX_GA", "MAX_MICRO_BATCH_CHOICES", "ZEROS", "batch_problem", "memory_columns",
           "plan_batch_violation", "plan_to_row", "row_to_plan", "structural_problem", "structural_table", "tp_group_limit"]
