"""Named workloads for the CLI: ``WORKLOADS`` maps a name to a :class:`WorkloadSpec` whose
``build(cluster, seed=..., load=...)`` returns a :class:`Workload`. ``load`` compresses time by that
factor (more load for ``> 1``). Each entry is documented in ``docs/workloads.md``; values the papers
give are used as given, the rest are marked *(ours)*.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from schedlab.benchmarks.simulator import perf_adapter
from schedlab.benchmarks.workloads import generators as gen
from schedlab.benchmarks.workloads.convert import (
    DALLY_MODELS,
    LARGE_MODELS,
    RUBICK_MODELS,
    TIRESIAS_MODELS,
    consolidated_counts,
    trace_to_jobs,
)
from schedlab.benchmarks.workloads.tiresias_philly import tiresias_480_philly
from schedlab.benchmarks.workloads.trace import Trace, Workload
from schedlab.perfmodel.plans import parse_plan
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    cluster: str
    description: str
    make: Callable[..., Workload]

    def build(self, cluster: Cluster, *, seed: int = 0, load: float = 1.0, **params) -> Workload:
        """``params``: workload-specific knobs (``large_share`` for the Rubick mixes)."""
        try:
            return self.make(cluster, seed=seed, load=load, **params)
        except TypeError as e:
            if params and "unexpected keyword" in str(e):
                raise SpecError(f"workload {self.name!r} does not take {', '.join(params)}",
                                source="<workloads>", field=next(iter(params))) from None
            raise


def _scaled(trace: Trace, load: float) -> Trace:
    return trace if load == 1.0 else gen.scale_load(trace, load, method="compress")


# ------------------------------------------------------------------ Tiresias
def tiresias_480(cluster: Cluster, *, seed: int = 0, load: float = 1.0) -> Workload:
    """Tiresias testbed: 480 jobs (240x1, 40x2, 80x4, 90x8, 25x16, 5x32 GPUs), Poisson arrivals with
    mean inter-arrival 30 s, durations log-uniform in [2 min, 2 h] (distribution ours), CNN models
    drawn uniformly (ours)."""
    gpus = gen.exact_mix(gen.TIRESIAS_MIX, seed=seed)
    n = len(gpus)
    trace = gen.synthetic_trace("tiresias-480", gen.poisson_arrivals(n, 30.0, seed=seed + 1), gpus,
                                gen.log_uniform(n, 120.0, 7200.0, seed=seed + 2))
    jobs = trace_to_jobs(_scaled(trace, load), cluster, seed=seed + 3, model_pool=TIRESIAS_MODELS)
    return Workload("tiresias-480", jobs, cluster="tiresias-60", small_gpus=4, short_s=800.0,
                    description=tiresias_480.__doc__ or "")


# --------------------------------------------------------------------- Dally
DALLY_GPU_SHARES: Mapping[int, float] = {1: 0.45, 2: 0.1, 4: 0.12, 8: 0.18, 16: 0.08, 32: 0.05, 64: 0.02}  # ours


def _dally(name: str, cluster: Cluster, *, n: int, poisson: bool, seed: int, load: float,
           duration_scale: float = 1.0) -> Workload:
    if not (duration_scale > 0 and np.isfinite(duration_scale)):
        raise SpecError(f"duration_scale must be > 0, got {duration_scale!r}", source=f"<workload {name}>",
                        field="duration_scale")
    gpus = gen.categorical(n, DALLY_GPU_SHARES, seed=seed)
    submits = gen.poisson_arrivals(n, 120.0, seed=seed + 1) if poisson else gen.batch_arrivals(n)
    durations = gen.log_normal(n, 2 * 3600.0, 1.5, seed=seed + 2, lo=300.0, hi=14 * 86400.0) * duration_scale
    trace = gen.synthetic_trace(name, submits, gpus, durations)
    jobs = trace_to_jobs(_scaled(trace, load), cluster, seed=seed + 3, model_pool=DALLY_MODELS, rates="tier")
    return Workload(name, jobs, cluster="dally-8", small_gpus=8, short_s=4 * 3600.0)


def dally_batch(cluster: Cluster, *, seed: int = 0, load: float = 1.0, duration_scale: float = 1.0) -> Workload:
    """Dally batch: 500 jobs all at t = 0 over Dally's 6 models (Table 1); GPU demand and durations
    Helios-like (ours: demand shares 1:45 %, 2:10 %, 4:12 %, 8:18 %, 16:8 %, 32:5 %, 64:2 %; log-normal
    durations, median 2 h, sigma 1.5, in [5 min, 14 days], times ``duration_scale``). Tier rates
    (compute x (1 + overhead))."""
    return _dally("dally-batch", cluster, n=500, poisson=False, seed=seed, load=load, duration_scale=duration_scale)


def dally_poisson(cluster: Cluster, *, seed: int = 0, load: float = 1.0, duration_scale: float = 1.0) -> Workload:
    """Dally Poisson: 400 jobs, Poisson arrivals with mean inter-arrival 120 s (ours), otherwise as
    ``dally-batch``."""
    return _dally("dally-poisson", cluster, n=400, poisson=True, seed=seed, load=load, duration_scale=duration_scale)


# -------------------------------------------------------------------- Rubick
_RUBICK_3D = {"gpt2": {5: "151"}, "llama7": {8: "zero-offload", 16: "182", 32: "244"},
              "llama30": {24: "641", 40: "524", 48: "344"}}  # plans of Rubick's workload-base.csv
#: what "large" means in the Rubick mixes' ``large_share``: ours (>= 1B parameters) or Fig. 11's (LLaMA only)
LARGE_SETS: Mapping[str, tuple[str, ...]] = {"all": LARGE_MODELS, "llama": ("llama7", "llama30")}
_RUBICK_GPUS = {"gpt2": gen.RUBICK_GPT2_GPUS, "llama7": gen.RUBICK_LLAMA7_GPUS, "llama30": gen.RUBICK_LLAMA30_GPUS}


def rubick_trace(variant: str, cluster: Cluster, *, seed: int = 0, n: int = 406, hours: float = 12.0,
                 large_share: float | None = None,
                 large_models: str = "all") -> tuple[Trace, dict[str, Resources]]:
    """The Rubick mix: ``n`` jobs over ``hours`` (Poisson), a model per job (uniform over the 7, or
    ``large_share`` of them drawn from the large models: ``large_models`` ``"all"``, the >= 1B-parameter
    ones (ours), or ``"llama"``, LLaMA-7B and -30B only (Rubick Fig. 11's definition)), GPUs by model family as in the
    artifact's trace, 8 CPUs per GPU, log-normal durations (median 4 min, sigma 1.5, in [30 s, 8 h];
    ours). Plans: ``base`` = a random plan of those the artifact uses that fits in memory; ``bp`` = the
    perf model's best plan for the request; ``mt`` = base plans, about half the jobs guaranteed in
    tenant A (quota 64 GPUs), the rest best-effort in tenant B."""
    rng = np.random.default_rng(seed)
    if large_share is None:
        models = [RUBICK_MODELS[int(i)] for i in rng.integers(len(RUBICK_MODELS), size=n)]
    else:
        large = LARGE_SETS[large_models]
        small = [m for m in RUBICK_MODELS if m not in large]
        models = [(large[int(rng.integers(len(large)))] if rng.random() < large_share
                   else small[int(rng.integers(len(small)))]) for _ in range(n)]
    gpus, plans = [], []
    pm = perf_adapter.perf_instance(cluster) if variant == "bp" else None
    gpu_mem = min(cluster.machine(m).gpu_memory_gb for m in cluster.machines)
    for k, model in enumerate(models):
        shares = _RUBICK_GPUS.get(model, gen.RUBICK_SMALL_GPUS)
        g = int(gen.categorical(1, shares, seed=seed * 7919 + k)[0])
        g = min(g, cluster.total_gpus)
        plan = _RUBICK_3D.get(model, {}).get(g)
        if plan is None:
            options = [p for p in ("ga", "zero-dp", "gc", "zero-offload")
                       if perf_adapter.memory_problem(model, parse_plan(p, g), gpu_mem) is None]
            plan = options[int(rng.integers(len(options)))] if options else "zero-offload"
        if variant == "bp":
            best = perf_adapter.best_plan(pm, model, consolidated_counts(cluster, g), 8 * g)
            if best is not None:
                plan = best.canonical()
        gpus.append(g)
        plans.append(plan)
    submits = np.sort(rng.uniform(0, hours * 3600.0, size=n))
    submits[0] = 0.0
    durations = gen.log_normal(n, 240.0, 1.5, seed=seed + 1, lo=30.0, hi=8 * 3600.0)
    guaranteed = [variant == "mt" and bool(b) for b in rng.random(n) < 0.48]
    tenants = [("A" if gu else "B") if variant == "mt" else "default" for gu in guaranteed]
    trace = gen.synthetic_trace(f"rubick-{variant}", submits, gpus, durations, models=models, tenants=tenants,
                                guaranteed=guaranteed, plans=plans, cpus=[8 * g for g in gpus])
    quotas = {"A": Resources(64)} if variant == "mt" else {}
    return trace, quotas


def _rubick(variant: str) -> Callable[..., Workload]:
    def make(cluster: Cluster, *, seed: int = 0, load: float = 1.0, large_share: float | None = None,
             large_models: str = "all") -> Workload:
        if large_share is not None and not 0.0 <= large_share <= 1.0:
            raise SpecError("large_share must be in [0, 1]", source=f"<workload rubick-{variant}>",
                            field="large_share")
        if large_models not in LARGE_SETS:
            raise SpecError(f"large_models must be one of {', '.join(LARGE_SETS)}, got {large_models!r}",
                            source=f"<workload rubick-{variant}>", field="large_models")
        trace, quotas = rubick_trace(variant, cluster, seed=seed, large_share=large_share, large_models=large_models)
        jobs = trace_to_jobs(_scaled(trace, load), cluster, seed=seed, reconfigurable=True)
        return Workload(f"rubick-{variant}", jobs, cluster="rubick-64", quotas=quotas, small_gpus=8,
                        short_s=4 * 3600.0)
    make.__doc__ = rubick_trace.__doc__
    return make


# -------------------------------------------------------------------- Philly
def philly_like(cluster: Cluster, *, seed: int = 0, load: float = 1.0, n: int = 5000) -> Workload:
    """Philly-like: ``n`` = 5,000 jobs, Poisson arrivals (mean 100 s, about the Philly table's rate),
    GPU demand shares of the 82,247-job Philly table, log-normal durations (median 1,144 s as in the
    table, sigma 2.2 to match its mean of 13,136 s, in [1 min, 30 days]; shape ours), CNN models drawn uniformly (ours). The real table
    is replayed with ``--trace sia_philly_jobs.csv --trace-format philly``."""
    gpus = gen.categorical(n, gen.PHILLY_GPU_SHARES, seed=seed)
    trace = gen.synthetic_trace("philly", gen.poisson_arrivals(n, 100.0, seed=seed + 1), gpus,
                                gen.log_normal(n, 1144.0, 2.2, seed=seed + 2, lo=60.0, hi=30 * 86400.0))
    jobs = trace_to_jobs(_scaled(trace, load), cluster, seed=seed + 3, model_pool=TIRESIAS_MODELS)
    return Workload("philly", jobs, cluster="philly", small_gpus=8, short_s=4 * 3600.0)


def smoke(cluster: Cluster, *, seed: int = 0, load: float = 1.0) -> Workload:
    """A 24-job smoke test: Tiresias' GPU mix scaled down, Poisson arrivals (mean 60 s), 1-20 min."""
    gpus = gen.exact_mix({1: 12, 2: 4, 4: 4, 8: 3, 16: 1}, seed=seed)
    n = len(gpus)
    trace = gen.synthetic_trace("smoke", gen.poisson_arrivals(n, 60.0, seed=seed + 1), gpus,
                                gen.log_uniform(n, 60.0, 1200.0, seed=seed + 2))
    jobs = trace_to_jobs(_scaled(trace, load), cluster, seed=seed + 3, model_pool=TIRESIAS_MODELS)
    return Workload("smoke", jobs, cluster="tiresias-60", small_gpus=4, short_s=800.0)


def smoke_mt(cluster: Cluster, *, seed: int = 0, load: float = 1.0) -> Workload:
    """A 24-job multi-tenant smoke test on the Rubick mix: reconfigurable jobs with the Rubick plans,
    about half guaranteed in tenant A (quota: 3/4 of the cluster's GPUs), the rest best-effort in B, Poisson
    arrivals over one hour (ours; for conformance tests of every policy)."""
    trace, _ = rubick_trace("mt", cluster, seed=seed, n=24, hours=1.0)
    jobs = trace_to_jobs(_scaled(trace, load), cluster, seed=seed, reconfigurable=True)
    return Workload("smoke-mt", jobs, cluster="rubick-64", quotas={"A": Resources(cluster.total_gpus * 3 // 4)},
                    small_gpus=8, short_s=4 * 3600.0)


WORKLOADS: dict[str, WorkloadSpec] = {
    "tiresias-480": WorkloadSpec("tiresias-480", "tiresias-60", "Tiresias testbed mix, 480 jobs", tiresias_480),
    "tiresias-480-philly": WorkloadSpec("tiresias-480-philly", "tiresias-60", "Tiresias testbed mix, 480 jobs, "
                                        "durations drawn from the Philly table by GPU count", tiresias_480_philly),
    "dally-batch": WorkloadSpec("dally-batch", "dally-8", "Dally, ~500 jobs, batch arrival", dally_batch),
    "dally-poisson": WorkloadSpec("dally-poisson", "dally-8", "Dally, ~400 jobs, Poisson arrivals", dally_poisson),
    "rubick-base": WorkloadSpec("rubick-base", "rubick-64", "Rubick 406-job 12 h mix, random plans",
                                _rubick("base")),
    "rubick-bp": WorkloadSpec("rubick-bp", "rubick-64", "Rubick mix, best plans", _rubick("bp")),
    "rubick-mt": WorkloadSpec("rubick-mt", "rubick-64", "Rubick mix, two tenants (A guaranteed, quota 64)",
                              _rubick("mt")),
    "philly": WorkloadSpec("philly", "philly", "Philly-like synthetic, 5,000 jobs", philly_like),
    "smoke": WorkloadSpec("smoke", "tiresias-60", "24-job smoke test", smoke),
    "smoke-mt": WorkloadSpec("smoke-mt", "rubick-64", "24-job multi-tenant Rubick-mix smoke test", smoke_mt),
}


def get_workload(name: str) -> WorkloadSpec:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise SpecError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}", source="<workloads>",
                        field="workload") from None


__all__ = ["DALLY_GPU_SHARES", "WORKLOADS", "WorkloadSpec", "dally_batch", "dally_poisson", "get_workload",
           "philly_like", "rubick_trace", "smoke", "smoke_mt", "tiresias_480"]
