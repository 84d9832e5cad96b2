"""Rate models: seconds per iteration of a job under a plan and a placement.

``speed(job, plan, placement) -> (iteration_time, comm_fraction)``; the simulator runs a job at
``1 / iteration_time`` iterations per second and books ``comm_fraction`` of its running time as exposed
communication.

**Durations are ground truth.** A job's *request* is its requested GPUs, plan and CPUs on the most
consolidated placement of those GPUs on an empty cluster (:func:`consolidated_counts`). Its iteration
time at the request, ``t_req`` (:func:`request_iter_time`: ``attrs["iter_time"]``, else ``duration /
iterations``), is what the trace recorded; every rate model only scales it by its *speed model* ``S``
relative to the request::

    t(alloc) = t_req * S(alloc) / S(request)

so a job given exactly its request runs exactly its recorded duration, under every semantics and
whatever else the trace gives (iterations, model, batch, plan). A job with neither a duration nor an
iteration time runs at the speed model's own time ``S(alloc)`` where ``S`` is a time (perf model; tier
model with ``attrs["compute_time"]``).

* :class:`ReferenceRates` (Tiresias semantics): ``S = 1 / g`` (linear in GPUs; placement ignored).
* :class:`TierRates` (Dally): ``S = (1 / g) * (1 + o(model, tier))`` with ``o`` the perf model's
  communication overhead at the placement's tier (0 on one GPU), bounded by ``max_overhead``
  (:data:`MAX_COMM_OVERHEAD` = 5, i.e. exposed communication at most 5x compute: the most any
  measurement the Dally paper cites reports, §3.1 "communication overheads can be as high as 5x the
  actual compute time" [28, 40]; Dally's Table 1 rack/network values above it — MobileNetV3 rack 940 %,
  network 19,592 %, ResNet18 network 2,749 %, BERT-large network 715 % — are ASTRA-sim
  extrapolations, the paper calibrated only the machine tier, and our perf model derives at most 13 %
  for these models at any tier); ``comm_fraction = o / (1 + o)``. ``capped`` counts the
  (model, tier) look-ups the bound changed. Without ``t_req``, ``t = attrs["compute_time"] * (g_req /
  g) * (1 + o)``.
* :class:`PerfModelRates` (Rubick): ``S`` = the perf model's iteration time for (model, plan,
  placement, CPUs, global batch).
* :class:`RealisticRates` picks per job: ``job.attrs["rates"]`` if set, else the perf model if the zoo
  knows the model (and the job has no ``compute_time``), else tiers if the model has communication
  overheads, else the reference (counted in ``sources``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol

from schedlab.benchmarks.simulator import perf_adapter
from schedlab.perfmodel.params import DEFAULT_CALIBRATION
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.tiers import Tier


class RateModel(Protocol):
    def speed(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> tuple[float, float]:
        ...


def consolidated_counts(cluster: Cluster, gpus: int) -> dict[str, int]:
    """The most consolidated placement shape of ``gpus`` GPUs on an empty cluster (a job's request): one
    machine if one is large enough, else the first rack that can hold them, else machines in cluster
    order (largest first)."""
    for m in cluster.machines:
        if cluster.machine(m).gpus >= gpus:
            return {m: gpus}
    for r in cluster.racks:
        ms = cluster.machines_in(r)
        if sum(cluster.machine(m).gpus for m in ms) >= gpus:
            return _fill(cluster, ms, gpus)
    return _fill(cluster, cluster.machines, gpus)


def _fill(cluster: Cluster, machines: Sequence[str], gpus: int) -> dict[str, int]:
    out: dict[str, int] = {}
    left = gpus
    for m in sorted(machines, key=lambda m: -cluster.machine(m).gpus):
        k = min(cluster.machine(m).gpus, left)
        if k:
            out[m] = k
            left -= k
        if not left:
            break
    return out


def _gpus(placement: Mapping[str, Resources]) -> int:
    return sum(r.gpus for r in placement.values())


def request_iter_time(job: Job) -> float | None:
    """Seconds per iteration at the request, as recorded: ``attrs["iter_time"]``, else ``duration /
    iterations``; ``None`` when the job states neither."""
    t = job.attrs.get("iter_time")
    if t is None and job.duration is not None:
        t = job.duration / job.iterations
    if t is None:
        return None
    if not t > 0:
        raise SpecError(f"job {job.id!r} has iteration time {t!r} at its request; need > 0",
                        source=f"<job {job.id!r}>", field="attrs.iter_time")
    return float(t)


def reference_iter_time(job: Job) -> float:
    t = request_iter_time(job)
    if t is None:
        raise SpecError(f"job {job.id!r} has no iteration time (attrs['iter_time'] or duration)",
                        source=f"<job {job.id!r}>", field="attrs.iter_time")
    return t


class ReferenceRates:
    def speed(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> tuple[float, float]:
        return reference_iter_time(job) * job.requested.gpus / _gpus(placement), 0.0


#: upper bound of the communication overhead (fraction of compute) the tier rates apply (module docstring)
MAX_COMM_OVERHEAD = 5.0


class TierRates:
    def __init__(self, cluster: Cluster, *, max_overhead: float = MAX_COMM_OVERHEAD) -> None:
        if not max_overhead >= 0:
            raise SpecError(f"max_overhead must be >= 0, got {max_overhead!r}", source="<TierRates>",
                            field="max_overhead")
        self.cluster = cluster
        self.max_overhead = max_overhead
        self.capped: Counter[str] = Counter()
        self._cache: dict[tuple[str, Tier], float] = {}
        self._req_tier: dict[int, Tier] = {}
        self._base: dict[str, tuple[Job, float]] = {}  # job id -> (job, its request's compute x GPUs): ``base``

    def tier(self, placement: Mapping[str, Resources] | Mapping[str, int]) -> Tier:
        return self.cluster.tier_of(placement)

    def overhead(self, model: str, tier: Tier) -> float:
        key = (model, tier)
        o = self._cache.get(key)
        if o is None:
            o = perf_adapter.comm_overhead(model, tier)
            if o is None:
                raise SpecError(f"no communication overhead known for model {model!r} at tier {tier.label}",
                                source="<perfmodel.network>", field="model")
            if o > self.max_overhead:
                self.capped[f"{model}@{tier.label}"] += 1
                o = self.max_overhead
            self._cache[key] = o
        return o

    def request_overhead(self, job: Job) -> float:
        """``o`` at the request's tier (0 for one GPU)."""
        g = job.requested.gpus
        if g <= 1:
            return 0.0
        tier = self._req_tier.get(g)
        if tier is None:
            tier = self._req_tier[g] = self.tier(consolidated_counts(self.cluster, g))
        return self.overhead(job.model, tier)

    def base(self, job: Job) -> float:
        """The job's compute time per iteration at its request times its requested GPUs (``t = base / g
        x (1 + o)``), kept per job (a job is immutable; the entry holds the job, so a reused id is
        recomputed)."""
        hit = self._base.get(job.id)
        if hit is not None and hit[0] is job:
            return hit[1]
        t_req = request_iter_time(job)
        if t_req is not None:
            c = t_req / (1.0 + (self.request_overhead(job) if job.requested.gpus > 1 else 0.0))
        else:
            c = job.attrs.get("compute_time")
            if c is None:
                raise SpecError(f"job {job.id!r} has no iteration time (attrs['iter_time'], duration or "
                                "compute_time)", source=f"<job {job.id!r}>", field="attrs.iter_time")
        b = float(c) * job.requested.gpus
        self._base[job.id] = (job, b)
        return b

    def forget(self, job_id: str) -> None:
        """Drop a finished job's ``base``."""
        self._base.pop(job_id, None)

    def speed_of(self, job: Job, g: int, tier: Tier | None) -> tuple[float, float]:
        """:meth:`speed` of a placement of ``g`` GPUs at ``tier`` (read only when ``g > 1``)."""
        c = self.base(job) / g
        if g <= 1:
            return c, 0.0
        o = self.overhead(job.model, tier)
        return c * (1.0 + o), o / (1.0 + o)

    def speed(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> tuple[float, float]:
        g = 0  # (``_gpus``, inline)
        for r in placement.values():
            g += r.gpus
        c = self.base(job) / g
        if g <= 1:
            return c, 0.0
        o = self.overhead(job.model, self.tier(placement))
        return c * (1.0 + o), o / (1.0 + o)


class PerfModelRates:
    def __init__(self, cluster: Cluster, *, calibration: str = DEFAULT_CALIBRATION) -> None:
        self.cluster = cluster
        self.pm = perf_adapter.perf_instance(cluster, calibration)
        self._fn = self.pm.iteration_time
        self._cache: dict[tuple, float] = {}
        self._counts: dict[int, dict[str, int]] = {}

    def model_time(self, job: Job, plan: ExecutionPlan, counts: Mapping[str, int], cpus: int) -> float:
        """The perf model's iteration time ``S`` (cached)."""
        key = (job.model, plan, tuple(sorted(counts.items())), cpus, job.global_batch)
        t = self._cache.get(key)
        if t is None:
            t = float(self._fn(job.model, plan, counts, cpus, global_batch=job.global_batch))
            if not t > 0:
                raise SpecError(f"job {job.id!r}: the perf model gives iteration time {t!r} for {plan.name}",
                                source="<perfmodel>", field="iter_time")
            self._cache[key] = t
        return t

    def request_time(self, job: Job) -> float:
        """``S(request)``: the requested plan and CPUs on the consolidated placement of the requested GPUs."""
        g = job.requested.gpus
        counts = self._counts.get(g)
        if counts is None:
            counts = self._counts[g] = consolidated_counts(self.cluster, g)
        return self.model_time(job, job.requested_plan, counts, int(job.requested.cpus))

    def speed(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources]) -> tuple[float, float]:
        counts = {m: r.gpus for m, r in placement.items() if r.gpus > 0}
        cpus = int(sum(r.cpus for r in placement.values()))
        s = self.model_time(job, plan, counts, cpus)
        t_req = request_iter_time(job)
        if t_req is None:
            return s, 0.0
        return t_req * s / self.request_time(job), 0.0


class RealisticRates:
    """Per-job choice of rate model (see the module docstring); ``sources`` counts the choices."""

    def __init__(self, cluster: Cluster, *, max_overhead: float = MAX_COMM_OVERHEAD,
                 calibration: str = DEFAULT_CALIBRATION) -> None:
        self.cluster = cluster
        self.calibration = calibration
        self.reference = ReferenceRates()
        self.tiers = TierRates(cluster, max_overhead=max_overhead)
        self._perf: PerfModelRates | None = None
        self._choice: dict[str, object] = {}
        self.sources: Counter[str] = Counter()
        self._shapes: dict[int, dict[str, int]] = {}  # consolidated_counts by GPU count (a scan of the machines)
        self._best: dict[int, tuple[int, Tier | None]] = {}  # by GPU count: that shape's GPUs and tier

    def perfmodel(self) -> PerfModelRates:
        if self._perf is None:
            self._perf = PerfModelRates(self.cluster, calibration=self.calibration)
        return self._perf

    def kind(self, job: Job) -> str:
        kind = job.attrs.get("rates")
        if kind is None:
            if perf_adapter.zoo_name(job.model) is not None and job.attrs.get("compute_time") is None:
                kind = "perfmodel"
            elif perf_adapter.comm_overhead(job.model, Tier.NETWORK) is not None:
                kind = "tier"
            else:
                kind = "reference"
        return kind

    def _pick(self, job: Job):
        kind = job.attrs.get("rates")  # (``kind``'s answer when the job names its rate model: converted traces do)
        if kind is None:
            kind = self.kind(job)
        if kind == "tier":
            impl = self.tiers
        elif kind == "reference":
            impl = self.reference
        else:
            impl = self.perfmodel() if kind == "perfmodel" else None
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

    def speed_at(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources], g: int,
                 tier: Tier) -> tuple[float, float]:
        """:meth:`speed`, given what the simulator's ``_allocate`` already knows of the placement: its
        ``g`` GPUs and (when ``g > 1``) its tier (the same floats; no second scan of the placement)."""
        impl = self._choice.get(job.id)
        if impl is None:
            impl = self._choice[job.id] = self._pick(job)
        if impl is self.tiers:
            return impl.speed_of(job, g, tier)
        return impl.speed(job, plan, placement)

    def slowdown_at(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources], iter_time: float,
                    g: int) -> float:
        """:meth:`placement_slowdown` of a placement of ``g`` GPUs on several machines, after
        :meth:`speed_at`: the tier rates' time on the consolidated shape of ``g`` GPUs is ``speed_of``
        its GPUs and tier (the same floats as ``speed`` of the built placement; CPUs and memory do not
        enter the tier rates)."""
        impl = self._choice.get(job.id)
        if impl is not self.tiers:
            return self.placement_slowdown(job, plan, placement, iter_time)
        best = self._best.get(g)
        if best is None:
            shape = self._shapes.get(g)
            if shape is None:
                shape = self._shapes[g] = consolidated_counts(self.cluster, g)
            gb = sum(shape.values())
            best = self._best[g] = (gb, self.cluster.tier_of(shape) if gb > 1 else None)
        return iter_time / impl.speed_of(job, best[0], best[1])[0]

    def forget(self, job_id: str) -> None:
        self._choice.pop(job_id, None)
        self.tiers.forget(job_id)

    @property
    def capped(self) -> Counter[str]:
        """The tier rates' bounded (model, tier) overheads (see :class:`TierRates`)."""
        return self.tiers.capped

    def placement_slowdown(self, job: Job, plan: ExecutionPlan, placement: Mapping[str, Resources],
                           iter_time: float) -> float:
        """``iter_time`` over the iteration time of the same plan, GPUs and CPUs on the most
        consolidated placement of those GPUs (1 on one machine)."""
        counts = [(m, r) for m, r in placement.items() if r.gpus > 0]
        if len(counts) <= 1:
            return 1.0
        g = sum(r.gpus for _, r in counts)
        total = Resources(0, int(sum(r.cpus for r in placement.values())),
                          float(sum(r.mem_gb for r in placement.values())))
        shape = self._shapes.get(g)
        if shape is None:
            shape = self._shapes[g] = consolidated_counts(self.cluster, g)
        best: dict[str, Resources] = {}
        for i, (m, k) in enumerate(shape.items()):
            best[m] = Resources(k, total.cpus, total.mem_gb) if i == 0 else Resources(k)
        return iter_time / self.speed(job, plan, best)[0]


def make_rates(cluster: Cluster, *, placement_speed: bool, calibration: str = DEFAULT_CALIBRATION) -> RateModel:
    """The semantics' rate model; ``calibration`` is the perf model's (for the jobs it times)."""
    return RealisticRates(cluster, calibration=calibration) if placement_speed else ReferenceRates()


__all__ = ["MAX_COMM_OVERHEAD", "PerfModelRates", "RateModel", "RealisticRates", "ReferenceRates", "TierRates",
           "consolidated_counts", "make_rates", "reference_iter_time", "request_iter_time"]
