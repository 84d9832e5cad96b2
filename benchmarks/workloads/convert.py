"""Trace jobs -> simulated jobs, the way the papers did it.

A trace gives GPUs and a duration. Each job gets a model (the trace's, or one drawn from a pool with
the seed), and its duration *at the requested resources* becomes a number of iterations:
``iterations = duration / t_iter(model, plan, consolidated placement of the requested GPUs)``
(Rubick's method; ``t_iter`` from the simulator's realistic rate model, so replaying the job on a
consolidated placement takes exactly its trace duration). When the trace gives iterations (Tiresias,
Rubick steps) they are kept and ``t_iter = duration / iterations``.

Infeasible GPU counts (more than the cluster has, fewer than a given minimum, or, for perf-model jobs
without a plan, no plan of the model fits in GPU memory) are replaced by the nearest feasible count
keeping GPU-hours: ``duration' = duration * g / g'``. Perf-model jobs without a plan get the perf
model's best plan for the request (Rubick's feasible initial plan) and, when the trace gives no CPUs,
``min(8, CPUs per GPU of the cluster)`` CPUs per GPU.

Every job carries ``attrs["iter_time"]`` (seconds per iteration at the request; what the Tiresias
reference semantics run at). Jobs whose model has Dally tier overheads also carry
``attrs["compute_time"] = t_iter / (1 + o(model, tier of the request))``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from schedlab.benchmarks.simulator import perf_adapter
from schedlab.benchmarks.simulator.rates import RealisticRates
from schedlab.benchmarks.workloads.trace import Trace, TraceJob, Workload
from schedlab.perfmodel.plans import ExecutionPlan, parse_plan
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.policy import split_resources
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import PlanError, SpecError
from schedlab.topology.tiers import Tier

RUBICK_MODELS: tuple[str, ...] = ("vit", "roberta", "bert", "t5", "gpt2", "llama7", "llama30")
LARGE_MODELS: tuple[str, ...] = ("t5", "gpt2", "llama7", "llama30")  # >= 1B parameters (Rubick Table 1)
DALLY_MODELS: tuple[str, ...] = ("vgg11", "alexnet", "mobilenetv3", "resnet18", "resnet50", "bert_large")
TIRESIAS_MODELS: tuple[str, ...] = ("vgg11", "vgg16", "vgg19", "alexnet", "resnet50", "resnet101", "resnet152",
                                    "inception3", "inception4")
CNN_BATCH_PER_GPU = 32  # tf_cnn_benchmarks' default per-GPU batch (Tiresias' jobs); data-parallel jobs
DEFAULT_CPUS_PER_GPU = 8  # Rubick's traces: num_cpus = 8 x num_gpus (capped by the cluster's CPUs per GPU)
NOMINAL_ITER_S = 1.0  # seconds per iteration for jobs no model can time (ours; only ratios matter)


def consolidated_counts(cluster: Cluster, gpus: int) -> dict[str, int]:
    """The most consolidated placement shape of ``gpus`` GPUs on an empty cluster: one machine if
    one is large enough, else the first rack that can hold them, else machines in cluster order."""
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


def _tier(cluster: Cluster, counts: Mapping[str, int]) -> Tier:
    return cluster.tier_of(counts)


RATE_KINDS = ("auto", "perfmodel", "tier", "reference")


def rate_kind(model: str, plan: str | None, kind: str = "auto") -> str:
    """``auto``: the perf model for Rubick's models or jobs with a plan, Dally tiers for models with
    known communication overheads, else the reference (placement-independent) rate."""
    if kind != "auto":
        if kind not in RATE_KINDS:
            raise SpecError(f"unknown rate kind {kind!r}; known: {', '.join(RATE_KINDS)}", source="<convert>",
                            field="rates")
        return kind
    zoo = perf_adapter.zoo_models()
    if (model in RUBICK_MODELS or plan is not None) and model in zoo and perf_adapter.perf_model_available():
        return "perfmodel"
    if perf_adapter.comm_overhead(model, Tier.NETWORK) is not None:
        return "tier"
    return "reference"


def trace_to_jobs(trace: Trace, cluster: Cluster, *, seed: int = 0, model_pool: Sequence[str] | None = None,
                  override_models: bool = False, reconfigurable: bool = False, min_gpus: Mapping[str, int] | None = None,
                  keep_cpus: bool = True, rates: str = "auto") -> tuple[Job, ...]:
    """Simulated jobs of ``trace`` on ``cluster`` (see the module docstring).

    ``model_pool``: models drawn (uniformly, ``numpy.random.default_rng(seed)``) for jobs whose trace
    names none, or for every job with ``override_models``. ``min_gpus``: per-model minimum GPU count.
    ``rates``: the rate model each job runs under in realistic semantics (:func:`rate_kind`).
    """
    rng = np.random.default_rng(seed)
    conv = _Converter(cluster, trace.source, reconfigurable=reconfigurable, keep_cpus=keep_cpus)
    out: list[Job] = []
    for tj in trace.jobs:
        model = tj.model
        if model_pool and (override_models or not model):
            model = str(model_pool[int(rng.integers(len(model_pool)))])
        model = model or "unknown"
        out.append(conv.job(tj, model, (min_gpus or {}).get(model, 1), rate_kind(model, tj.plan, rates)))
    return tuple(out)


class _Converter:
    """One trace's conversion, with caches of the perf model's answers per (model, GPUs)."""

    def __init__(self, cluster: Cluster, source: str, *, reconfigurable: bool, keep_cpus: bool) -> None:
        self.cluster = cluster
        self.source = source
        self.reconfigurable = reconfigurable
        self.keep_cpus = keep_cpus
        self.rates = RealisticRates(cluster)
        self.total = cluster.total_gpus
        self._pm = None
        self._plans: dict[tuple[str, int, int], ExecutionPlan | None] = {}
        per_gpu = [cluster.machine(m).cpus // cluster.machine(m).gpus for m in cluster.machines
                   if cluster.machine(m).gpus]
        self.cpus_per_gpu = max(1, min([DEFAULT_CPUS_PER_GPU, *per_gpu]))
        self.min_gpu_mem = min(cluster.machine(m).gpu_memory_gb for m in cluster.machines
                               if cluster.machine(m).gpus)
        self._batches: dict[tuple[str, int], int] = {}

    def dp_batch(self, model: str, g: int) -> int:
        """Global batch of a rigid data-parallel job: ``CNN_BATCH_PER_GPU`` per GPU, halved until the
        plan fits the cluster's smallest GPU (so any machine can run it)."""
        key = (model, g)
        b = self._batches.get(key)
        if b is None:
            per = CNN_BATCH_PER_GPU
            while per > 1 and perf_adapter.memory_problem(model, ExecutionPlan(dp=g), self.min_gpu_mem, per * g):
                per //= 2
            b = self._batches[key] = per * g
        return b

    def best_plan(self, model: str, g: int, cpus: int) -> ExecutionPlan | None:
        key = (model, g, cpus)
        if key not in self._plans:
            if self._pm is None:
                self._pm = perf_adapter.perf_instance(self.cluster)
            self._plans[key] = perf_adapter.best_plan(self._pm, model, consolidated_counts(self.cluster, g), cpus)
        return self._plans[key]

    def feasible_gpus(self, model: str, g: int) -> tuple[int, ExecutionPlan] | None:
        """The nearest GPU count (``g`` first, then larger, then smaller) with a valid plan."""
        for k in [g, *range(g + 1, self.total + 1), *range(g - 1, 0, -1)]:
            plan = self.best_plan(model, k, k * self.cpus_per_gpu)
            if plan is not None:
                return k, plan
        return None

    def job(self, tj: TraceJob, model: str, min_g: int, kind: str) -> Job:
        where = dict(source=self.source, line=tj.line or None)
        cluster = self.cluster
        g = tj.gpus
        duration = tj.duration
        if duration is None and tj.iterations is None:
            raise SpecError(f"job {tj.id!r} has neither a duration nor iterations", field="duration", **where)
        attrs: dict = dict(tj.attrs)
        attrs["rates"] = kind
        g_new = min(max(g, min_g), self.total)
        plan: ExecutionPlan | None = None
        if tj.plan is not None:
            try:
                plan = parse_plan(tj.plan, g_new)
            except PlanError:
                if g_new == g:
                    raise
                attrs["requested_plan"] = tj.plan  # a 3D plan for the old GPU count: choose again
        if kind == "perfmodel" and plan is None:
            found = self.feasible_gpus(model, g_new)
            if found is None:
                raise SpecError(f"job {tj.id!r}: model {model!r} has no valid plan on cluster {cluster.name!r}",
                                field="model", **where)
            g_new, plan = found
        if g_new != g:
            attrs["requested_gpus"] = g
            if duration is not None:
                duration = duration * g / g_new  # keep GPU-hours
            g = g_new
        batch = tj.batch_size
        if batch is None and kind == "tier":
            batch = self.dp_batch(model, g)  # rigid DP job: the per-GPU batch is what the user fixed
        cpus = tj.cpus if tj.cpus is not None else (g * self.cpus_per_gpu if kind == "perfmodel" else 0)
        if not self.keep_cpus:
            cpus = 0
        mem = (tj.mem_gb or 0.0) if self.keep_cpus else 0.0
        req = Resources(g, cpus, mem)
        counts = consolidated_counts(cluster, g)
        overhead = perf_adapter.comm_overhead(model, Tier.NETWORK) if kind == "tier" else None
        probe_attrs = {"iter_time": NOMINAL_ITER_S, "rates": kind}
        if overhead is not None:
            o_req = perf_adapter.comm_overhead(model, _tier(cluster, counts)) if g > 1 else 0.0
            probe_attrs["compute_time"] = NOMINAL_ITER_S / (1.0 + o_req)
        probe = Job(tj.id, req, iterations=1.0, arrival=tj.submit, model=model, plan=plan,
                    global_batch=batch, attrs=probe_attrs)
        placement = split_resources(probe, counts)
        if tj.iterations is not None and "requested_gpus" not in attrs and duration is not None:
            iterations = tj.iterations
            iter_time = duration / iterations
        else:
            iter_time, _ = self.rates.speed(probe, probe.requested_plan, placement)
            if duration is None:
                iterations = float(tj.iterations)
                duration = iterations * iter_time
            else:
                iterations = duration / iter_time
        attrs["iter_time"] = iter_time
        if overhead is not None:
            o = perf_adapter.comm_overhead(model, _tier(cluster, counts)) if g > 1 else 0.0
            attrs["compute_time"] = iter_time / (1.0 + o)
        min_res = None
        if tj.guaranteed and self.reconfigurable and kind == "perfmodel":
            min_res = self.min_resources(model, req, plan, batch)  # Rubick's minRes = the quota usage
        return Job(tj.id, req, iterations=iterations, arrival=tj.submit, model=model, tenant=tj.tenant, plan=plan,
                   job_class=JobClass.GUARANTEED if tj.guaranteed else JobClass.BEST_EFFORT,
                   reconfigurable=self.reconfigurable, global_batch=batch, duration=duration, attrs=attrs,
                   min_resources=min_res)

    def min_resources(self, model: str, req: Resources, plan: ExecutionPlan | None, batch: int | None) -> Resources:
        """Rubick's minRes of a guaranteed reconfigurable job: the fewest GPUs, then CPUs, any plan,
        reaching the throughput of its request (the perf model's ``min_resources``; never above it)."""
        if self._pm is None:
            self._pm = perf_adapter.perf_instance(self.cluster)
        g, c, _ = self._pm.min_resources(model, req.gpus, max(req.cpus, req.gpus), plan, global_batch=batch)
        return Resources(min(g, req.gpus), min(c, req.cpus), 0.0)


def trace_workload(trace: Trace, cluster: Cluster, *, name: str | None = None, seed: int = 0,
                   model_pool: Sequence[str] | None = None, cluster_name: str | None = None, **kwargs) -> Workload:
    jobs = trace_to_jobs(trace, cluster, seed=seed, model_pool=model_pool, **kwargs)
    return Workload(name or trace.name, jobs, cluster=cluster_name or cluster.name, skipped=trace.skipped,
                    description=f"{len(jobs)} jobs from {trace.source}")
