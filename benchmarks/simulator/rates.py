"""Rate models: seconds per iteration of a job under a plan and a placement.

``speed(job, plan, placement) -> (iteration_time, comm_fraction)``; the simulator runs a job at
``1 / iteration_time`` iterations per second and books ``comm_fraction`` of its running time as exposed
communication.

* :class:`ReferenceRates` (Tiresias semantics): ``t_iter = job.attrs["iter_time"] * g_req / g`` (the
  requested-resources iteration time, scaled linearly if the GPU count differs); placement is ignored.
* :class:`TierRates` (Dally): ``t_iter = c * (1 + o(model, tier))`` with ``c`` =
  ``job.attrs["compute_time"]`` (compute per iteration) and ``o`` the perf model's communication
  overhead at the placement's tier (0 on one GPU); ``comm_fraction = o / (1 + o)``.
* :class:`PerfModelRates` (Rubick): the perf model's iteration time for (model, plan, placement, CPUs).
* :class:`RealisticRates` picks per job: ``job.attrs["rates"]`` if set, else the perf model if it knows
  the model, else tiers if the model has Dally overheads, else the reference (counted in ``sources``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Protocol

from schedlab.benchmarks.simulator import perf_adapter
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.tiers import Tier


class RateModel(Protocol):
    def speed(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> tuple[float, float]:
        ...


def _gpus(placement: Mapping[str, Resources]) -> int:
    return sum(r.gpus for r in placement.values())


def reference_iter_time(job: Job) -> float:
    t = job.attrs.get("iter_time")
    if t is None and job.duration is not None:
        t = job.duration / job.iterations
    if t is None or not t > 0:
        raise SpecError(f"job {job.id!r} has no iteration time (attrs['iter_time'] or duration)",
                        source=f"<job {job.id!r}>", field="attrs.iter_time")
    return float(t)


class ReferenceRates:
    def speed(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> tuple[float, float]:
        g = _gpus(placement)
        return reference_iter_time(job) * job.requested.gpus / g, 0.0


class TierRates:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._rack = {m: cluster.rack_of(m) for m in cluster.machines}
        self._cache: dict[tuple[str, Tier], float] = {}

    def tier(self, placement: Mapping[str, Resources]) -> Tier:
        ms = [m for m, r in placement.items() if r.gpus > 0]
        if len(ms) == 1:
            return Tier.MACHINE
        rack = self._rack
        r0 = rack[ms[0]]
        return Tier.RACK if all(rack[m] == r0 for m in ms) else Tier.NETWORK

    def overhead(self, model: str, tier: Tier) -> float:
        key = (model, tier)
        o = self._cache.get(key)
        if o is None:
            o = perf_adapter.comm_overhead(model, tier)
            if o is None:
                raise SpecError(f"no communication overhead known for model {model!r} at tier {tier.label}",
                                source="<perfmodel.network>", field="model")
            self._cache[key] = o
        return o

    def speed(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> tuple[float, float]:
        c = job.attrs.get("compute_time")
        if c is None:
            c = reference_iter_time(job)
        if _gpus(placement) <= 1:
            return float(c), 0.0
        o = self.overhead(job.model, self.tier(placement))
        return c * (1.0 + o), o / (1.0 + o)


class PerfModelRates:
    def __init__(self, cluster: Cluster) -> None:
        fn = perf_adapter.perf_model(cluster)
        if fn is None:
            raise SpecError("the perf model (perfmodel.PerfModel) is not available", source="<perfmodel>")
        self._fn = fn
        self._cache: dict[tuple, float] = {}

    def speed(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> tuple[float, float]:
        counts = {m: r.gpus for m, r in placement.items() if r.gpus > 0}
        cpus = sum(r.cpus for r in placement.values())
        key = (job.model, plan, tuple(sorted(counts.items())), cpus)
        t = self._cache.get(key)
        if t is None:
            t = float(self._fn(job.model, plan, counts, cpus))
            self._cache[key] = t
        return t, 0.0


class RealisticRates:
    """Per-job choice of rate model (see the module docstring); ``sources`` counts the choices."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.reference = ReferenceRates()
        self.tiers = TierRates(cluster)
        self._perf: PerfModelRates | None = None
        self._perf_tried = False
        self._choice: dict[str, object] = {}
        self.sources: Counter[str] = Counter()

    def _perfmodel(self) -> PerfModelRates | None:
        if not self._perf_tried:
            self._perf_tried = True
            try:
                self._perf = PerfModelRates(self.cluster)
            except SpecError:
                self._perf = None
        return self._perf

    def _pick(self, job: Job):
        kind = job.attrs.get("rates")
        if kind is None:
            if job.model in perf_adapter.zoo_models() and self._perfmodel() is not None \
                    and job.attrs.get("compute_time") is None:
                kind = "perfmodel"
            elif perf_adapter.comm_overhead(job.model, Tier.NETWORK) is not None:
                kind = "tier"
            else:
                kind = "reference"
        impl = {"perfmodel": self._perfmodel, "tier": lambda: self.tiers,
                "reference": lambda: self.reference}.get(kind, lambda: None)()
        if impl is None:
            raise SpecError(f"job {job.id!r}: rate model {kind!r} is not available", source=f"<job {job.id!r}>",
                            field="attrs.rates")
        self.sources[kind] += 1
        return impl

    def speed(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> tuple[float, float]:
        impl = self._choice.get(job.id)
        if impl is None:
            impl = self._choice[job.id] = self._pick(job)
        return impl.speed(job, plan, placement)

    def forget(self, job_id: str) -> None:
        self._choice.pop(job_id, None)


def make_rates(cluster: Cluster, *, placement_speed: bool) -> RateModel:
    return RealisticRates(cluster) if placement_speed else ReferenceRates()
