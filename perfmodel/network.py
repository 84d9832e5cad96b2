"""Network sensitivity for Dally and Tiresias.

* :func:`comm_overhead` — communication overhead as a **fraction** of compute time per placement tier.
  Dally's Table 1 (ASTRA-sim) where it has the model (VGG11 machine 0.01, rack 0.06, network 0.07, ...).
  For every other model it is derived from the iteration-time model's communication terms:
  plain data parallelism over ``DERIVE_GPUS`` = 8 GPUs (at most a machine's GPUs) placed at the tier on the reference cluster
  (Dally's ``dally-2`` unless one is given: one machine for ``machine``, 8 machines of one rack for
  ``rack``, 8 machines over two racks for ``network``), with the model's default fitted parameters::

      overhead(tier) = T_iter(bandwidth of the tier) / T_iter(infinite bandwidth) - 1

  Dally's iteration time is then ``compute x (1 + overhead(tier))`` (:func:`dally_iteration_time`).
* :func:`skew` — Tiresias' skew: largest tensor / model size, from :func:`tensor_sizes`.
* :func:`tensor_sizes` — per-tensor sizes in **bytes** (parameter counts of the architecture's
  tensors, :mod:`perfmodel.architectures`, times the training precision's bytes per element); they
  sum to :func:`model_size_bytes`. Used as the parameter-server shards of Tiresias' ILP.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from types import MappingProxyType

from schedlab.perfmodel.iteration import PlanArrays, iteration_times
from schedlab.perfmodel.params import default_params
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.perfmodel.zoo import MODELS, get_model
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.tiers import Tier

# Dally Table 1: communication overhead in % of compute time (machine, rack, network).
DALLY_TABLE1: MappingProxyType[str, tuple[float, float, float]] = MappingProxyType({
    "vgg11": (1.0, 6.0, 7.0),
    "alexnet": (2.0, 13.0, 100.0),
    "mobilenetv3": (42.0, 940.0, 19592.0),
    "resnet18": (7.0, 116.0, 2749.0),
    "resnet50": (12.0, 12.0, 38.0),
    "bert_large": (8.0, 23.0, 715.0),
})
DERIVE_GPUS = 8


def model_size_bytes(model: str) -> int:
    """Model size in bytes (parameters x bytes per element of the training precision)."""
    return get_model(model).size_bytes


def tensor_sizes(model: str) -> tuple[float, ...]:
    """Per-tensor sizes in bytes, summing to :func:`model_size_bytes`."""
    spec = get_model(model)
    return tuple(float(n * spec.bytes_per_element) for n in spec.tensors)


def skew(model: str) -> float:
    """Largest tensor / model size (Tiresias)."""
    return get_model(model).skew


def _tier_placement(cluster: Cluster, tier: Tier, gpus: int) -> dict[str, int]:
    if tier is Tier.MACHINE:
        for m in cluster.machines:
            if cluster.machine(m).gpus >= gpus:
                return {m: gpus}
        raise SpecError(f"no machine of {cluster.name!r} has {gpus} GPUs", source="<comm_overhead>", field="tier")
    if tier is Tier.RACK:
        for r in cluster.racks:
            ms = cluster.machines_in(r)
            if len(ms) >= 2:
                k = min(len(ms), gpus)
                return {m: gpus // k + (1 if i < gpus % k else 0) for i, m in enumerate(ms[:k])}
        raise SpecError(f"no rack of {cluster.name!r} has two machines", source="<comm_overhead>", field="tier")
    if len(cluster.racks) < 2:
        raise SpecError(f"cluster {cluster.name!r} has one rack: no network tier", source="<comm_overhead>",
                        field="tier")
    per_rack = [cluster.machines_in(r) for r in cluster.racks[:2]]
    ms = [m for pair in zip(*per_rack, strict=False) for m in pair][:gpus]
    return {m: gpus // len(ms) + (1 if i < gpus % len(ms) else 0) for i, m in enumerate(ms)}


@lru_cache(maxsize=4)
def _reference_cluster() -> Cluster:
    from schedlab.topology.presets import preset

    return preset("dally-2")


@lru_cache(maxsize=1024)
def _derived(model: str, tier: Tier, cluster: Cluster) -> float:
    spec = MODELS[model]
    gpus = min(DERIVE_GPUS, cluster.max_gpus_per_machine)  # the same GPU count at every tier
    placement = _tier_placement(cluster, tier, gpus)
    plan = ExecutionPlan(dp=gpus)
    params = default_params(model)
    bw = cluster.bottleneck_bandwidth(placement)
    specs = [cluster.machine(m) for m in placement]
    tp_bw = min(s.intra.bandwidth_gbps for s in specs)
    pcie = min(s.pcie_gbps for s in specs)
    multi = 1.0 if len(placement) > 1 else 0.0
    a = PlanArrays.from_plans([plan], bw, tp_bw, pcie, gpus, dp_inter=multi, pp_inter=multi)
    ideal = PlanArrays.from_plans([plan], float("inf"), tp_bw, pcie, gpus)
    # the ideal run has no communication cost at all: no effective-bandwidth cap either
    with_comm = iteration_times(spec, params, a)[0]
    free = iteration_times(spec, replace(params, b_intra=None, b_inter=None), ideal)[0]
    return float(with_comm / free - 1.0)


def comm_overhead(model: str, tier: Tier | str, *, cluster: Cluster | None = None, derived: bool = False) -> float:
    """Communication overhead of ``model`` at ``tier`` as a fraction of compute time.

    Dally's Table 1 where it lists the model (unless ``derived``), else derived from the
    iteration-time model on ``cluster`` (default: the ``dally-2`` preset).
    """
    spec = get_model(model)
    t = Tier.parse(tier, source="<comm_overhead>")
    if not derived and spec.name in DALLY_TABLE1:
        return DALLY_TABLE1[spec.name][int(t) - 1] / 100.0
    return _derived(spec.name, t, cluster if cluster is not None else _reference_cluster())


def dally_iteration_time(compute_s: float, model: str, tier: Tier | str, **kw) -> float:
    """Dally's model: ``compute x (1 + overhead(tier))`` seconds."""
    return compute_s * (1.0 + comm_overhead(model, tier, **kw))


__all__ = ["DALLY_TABLE1", "DERIVE_GPUS", "comm_overhead", "dally_iteration_time", "model_size_bytes", "skew",
           "tensor_sizes"]
