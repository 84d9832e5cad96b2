"""Trace jobs -> simulated jobs. Durations are ground truth; everything else is said.

A trace row gives GPUs, a submit time and (usually) a duration. The simulated job keeps that duration
*at its request* exactly (see :mod:`schedlab.benchmarks.simulator.rates`: every rate model scales the
recorded iteration time by its speed model relative to the request), whatever else the trace maps:

* **Model**: the trace's name, matched against the zoo and the trace alias table
  (:mod:`~schedlab.benchmarks.workloads.models`); a name the zoo cannot serve keeps its name and runs at
  the reference rate. Jobs without a model (or every job, with ``override_models``) draw one uniformly
  from ``model_pool`` with ``numpy.random.default_rng(seed)``.
* **Iterations**: kept when the trace gives them (``t_iter = duration / iterations``); else
  ``iterations = duration / T(request)`` with ``T`` the perf model's iteration time of the model at the
  request (Rubick's method; 1 s for models the zoo cannot time). Without a duration, the perf model gives
  it: ``duration = iterations x T(request)``.
* **GPU count**: a request larger than the cluster, below a given minimum, or (perf-model jobs without a
  plan) at which no plan of the model fits in GPU memory is replaced by the nearest feasible count
  (the request first, then larger, then smaller) keeping GPU-hours: ``duration' = duration x g / g'``.
* **Plan, CPUs, batch**: perf-model jobs without a plan get the perf model's best plan for the request,
  without CPUs ``min(8, CPUs per GPU of the cluster)`` per GPU; rigid data-parallel jobs (tier rates)
  without a batch get 32 per GPU (tf_cnn_benchmarks' default), halved until it fits the smallest GPU.

Each of these choices is a note in the :class:`~schedlab.benchmarks.workloads.assumptions.AssumptionLog`
(counted, with examples); with a strict log the first one is an error naming the job, line and field.
Every job carries ``attrs["iter_time"]`` (seconds per iteration at the request), ``attrs["rates"]``
and, for tier rates, ``attrs["compute_time"] = t_iter / (1 + o(model, tier of the request))`` (``o`` bounded
as the simulator bounds it, ``rates.MAX_COMM_OVERHEAD``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

import numpy as np

from schedlab.benchmarks.simulator import perf_adapter
from schedlab.benchmarks.simulator.rates import TierRates, consolidated_counts
from schedlab.benchmarks.workloads.assumptions import AssumptionLog
from schedlab.benchmarks.workloads.convert_rows import NoteSink, Shape, ShapeNote, row_job
from schedlab.benchmarks.workloads.models import UNSERVED, model_key, resolve_trace_model
from schedlab.benchmarks.workloads.trace import Trace, TraceJob, Workload
from schedlab.perfmodel.plans import ExecutionPlan, parse_plan
from schedlab.perfmodel.zoo import get_model
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import PlanError, SchedlabError, SpecError
from schedlab.topology.tiers import Tier

RUBICK_MODELS: tuple[str, ...] = ("vit", "roberta", "bert", "t5", "gpt2", "llama7", "llama30")
LARGE_MODELS: tuple[str, ...] = ("t5", "gpt2", "llama7", "llama30")  # >= 1B parameters (Rubick Table 1)
DALLY_MODELS: tuple[str, ...] = ("vgg11", "alexnet", "mobilenetv3", "resnet18", "resnet50", "bert_large")
TIRESIAS_MODELS: tuple[str, ...] = ("vgg11", "vgg16", "vgg19", "alexnet", "resnet50", "resnet101", "resnet152",
                                    "inception3", "inception4")
CNN_BATCH_PER_GPU = 32  # tf_cnn_benchmarks' default per-GPU batch (Tiresias' jobs); data-parallel jobs
DEFAULT_CPUS_PER_GPU = 8  # Rubick's traces: num_cpus = 8 x num_gpus (capped by the cluster's CPUs per GPU)
NOMINAL_ITER_S = 1.0  # seconds per iteration for jobs no model can time (ours; only ratios matter)
RATE_KINDS = ("auto", "perfmodel", "tier", "reference")
#: largest ratio between a trace's duration and iterations x the perf model's iteration time not noted
DURATION_RATIO = 2.0
_BATCH_TIER = (f"global batch assumed: {CNN_BATCH_PER_GPU} per GPU (tf_cnn_benchmarks' default), halved until "
               "it fits GPU memory")
_BATCH_ZOO = "global batch assumed: the zoo's default for the model"

__all__ = ["CNN_BATCH_PER_GPU", "DALLY_MODELS", "LARGE_MODELS", "RATE_KINDS", "RUBICK_MODELS", "TIRESIAS_MODELS",
           "consolidated_counts", "rate_kind", "trace_to_jobs", "trace_workload"]


def rate_kind(model: str, plan: str | None, kind: str = "auto") -> str:
    """``auto``: the perf model for Rubick's models or jobs with a plan, Dally tiers for models with
    known communication overheads, else the reference (placement-independent) rate."""
    if kind != "auto":
        if kind not in RATE_KINDS:
            raise SpecError(f"unknown rate kind {kind!r}; known: {', '.join(RATE_KINDS)}", source="<convert>",
                            field="rates")
        return kind
    z = perf_adapter.zoo_name(model)
    if z is not None and (z in RUBICK_MODELS or plan is not None):
        return "perfmodel"
    if z is not None and perf_adapter.comm_overhead(z, Tier.NETWORK) is not None:
        return "tier"
    return "reference"


def trace_to_jobs(trace: Trace, cluster: Cluster, *, seed: int = 0, model_pool: Sequence[str] | None = None,
                  pool_name: str | None = None, override_models: bool = False, reconfigurable: bool = False,
                  min_gpus: Mapping[str, int] | None = None, keep_cpus: bool = True, rates: str = "auto",
                  log: AssumptionLog | None = None, lenient: bool = False, memo: bool = True) -> tuple[Job, ...]:
    """Simulated jobs of ``trace`` on ``cluster`` (see the module docstring); notes go to ``log``.

    ``model_pool``: models drawn (uniformly, ``numpy.random.default_rng(seed)``) for jobs whose trace
    names none, or for every job with ``override_models``; ``pool_name`` names it in reports.
    ``min_gpus``: per-model minimum GPU count. ``rates``: the rate model each job runs under in
    realistic semantics (:func:`rate_kind`). ``lenient``: a job that cannot be converted is skipped and
    reported instead of raising. ``memo``: convert each job shape once (:mod:`.convert_rows`; ``False``
    converts every row afresh and sends every note to the log as it is made: the same jobs and notes).
    """
    log = log if log is not None else AssumptionLog(source=trace.source)
    conv = _Converter(cluster, trace.source, reconfigurable=reconfigurable, keep_cpus=keep_cpus, log=log, memo=memo)
    jobs = trace.jobs
    draw = [bool(model_pool) and (override_models or not tj.model) for tj in jobs]
    picks = iter(np.random.default_rng(seed).integers(len(model_pool), size=sum(draw)).tolist()) \
        if model_pool else iter(())
    pool_label = f"{pool_name or 'pool'} ({', '.join(model_pool)})" if model_pool else ""
    why_pool = tuple(f"model drawn from the {pool_label} pool with seed {seed}" + tail
                     for tail in (" (the trace names none)", " in place of the trace's"))  # by bool(tj.model)
    out: list[Job] = []
    kinds: dict[tuple[str, bool], str] = {}  # rate_kind depends on the model and whether a plan is given
    sink, job, mins = conv.sink, conv.job, min_gpus or {}
    names = [str(m) for m in model_pool] if model_pool else []
    try:
        for tj, d in zip(jobs, draw, strict=True):
            if d:
                model = names[next(picks)]
                sink.add("model-pool", why_pool[bool(tj.model)], tj.id, tj.line, "model",
                         f"{tj.model} -> {model}" if tj.model else model)
            else:
                model = conv.model(tj)
            try:
                rk = kinds.get((model, tj.plan is None))
                if rk is None:
                    rk = kinds[model, tj.plan is None] = rate_kind(model, tj.plan, rates)
                out.append(job(tj, model, mins.get(model, 1), rk))
            except SchedlabError as e:
                if not lenient:
                    raise
                text = getattr(e, "message", None) or str(e.args[0] if e.args else e)  # without file and line
                reason = text.replace(f"job {tj.id!r}", "job")  # one note per reason, the jobs as its examples
                log.add("job-skipped", f"jobs skipped (--lenient): {reason}", job=tj.id, line=tj.line,
                        field=getattr(e, "field", None))
    finally:
        sink.flush()
    if not out:
        raise SpecError("no job left after conversion (every job was skipped)", source=trace.source)
    return tuple(out)


@cache
def _dp_plan(g: int) -> ExecutionPlan:
    """``ExecutionPlan(dp=g)``, built once per GPU count (plans are immutable)."""
    return ExecutionPlan(dp=g)


class _Converter:
    """One trace's conversion, with caches of the perf model's answers."""

    def __init__(self, cluster: Cluster, source: str, *, reconfigurable: bool, keep_cpus: bool,
                 log: AssumptionLog, memo: bool = True) -> None:
        self.cluster = cluster
        self.source = source
        self.reconfigurable = reconfigurable
        self.keep_cpus = keep_cpus
        self.log = log
        self.sink = NoteSink(log, defer=memo)
        self.memo = memo
        self._shapes: dict[tuple, Shape] = {}
        self._first: dict[tuple, Job] = {}  # a shape's first job (validated in full): the template of the rest
        self.total = cluster.total_gpus
        self.tiers = TierRates(cluster)
        self._pm = None
        self._plans: dict[tuple[str, int, int, int | None], ExecutionPlan | None] = {}
        self._times: dict[tuple, float] = {}
        self._counts: dict[int, dict[str, int]] = {}
        self._names: dict[str, str] = {}
        per_gpu = [cluster.machine(m).cpus // cluster.machine(m).gpus for m in cluster.machines
                   if cluster.machine(m).gpus]
        self.cpus_per_gpu = max(1, min([DEFAULT_CPUS_PER_GPU, *per_gpu]))
        mems = [cluster.machine(m).gpu_memory_gb for m in cluster.machines if cluster.machine(m).gpus]
        self.min_gpu_mem, self.max_gpu_mem = min(mems), max(mems)
        self._batches: dict[tuple[str, int], int] = {}
        self._mem: dict[tuple, str | None] = {}

    @property
    def pm(self):
        if self._pm is None:
            self._pm = perf_adapter.perf_instance(self.cluster)
        return self._pm

    def counts(self, g: int) -> dict[str, int]:
        c = self._counts.get(g)
        if c is None:
            c = self._counts[g] = consolidated_counts(self.cluster, g)
        return c

    def model(self, tj: TraceJob) -> str:
        """The zoo name of the trace's model, or the trace's own name (reported) when the zoo cannot serve it."""
        name = tj.model
        if not name:
            self.sink.add("model-missing", "no model in the trace: runs at the reference rate (recorded "
                          "duration, linear in GPUs, placement-independent)", tj.id, tj.line, "model")
            return "unknown"
        z = self._names.get(name)
        if z is None:
            zn, how = resolve_trace_model(name)
            z = self._names[name] = zn if zn is not None else f"?{how}"
        if z.startswith("?"):
            why = UNSERVED.get(model_key(name), "not in the zoo")
            self.sink.add("model-unknown", f"model {name!r} cannot be served by the zoo ({why}): runs at the "
                          "reference rate (recorded duration, linear in GPUs, placement-independent)",
                          tj.id, tj.line, "model")
            return name
        if z != name:
            self.sink.add("model-name", f"model name {name!r} read as the zoo's {z!r} (docs/workloads.md, model "
                          "names)", tj.id, tj.line, "model", assumption=False)
        return z

    def dp_batch(self, model: str, g: int) -> int:
        """Global batch of a rigid data-parallel job: ``CNN_BATCH_PER_GPU`` per GPU, halved until the
        plan fits the cluster's smallest GPU (so any machine can run it)."""
        key = (model, g)
        b = self._batches.get(key)
        if b is None:
            per = CNN_BATCH_PER_GPU
            while per > 1 and perf_adapter.memory_problem(model, _dp_plan(g), self.min_gpu_mem, per * g):
                per //= 2
            b = self._batches[key] = per * g
        return b

    def valid_micro_batches(self, tj: TraceJob, model: str, plan: ExecutionPlan,
                            notes: list[ShapeNote]) -> ExecutionPlan:
        """A 3-digit plan code does not record its micro-batch count (``parse_plan`` assumes ``2 p``): the
        perf model's reading (:func:`~schedlab.perfmodel.tables.with_valid_micro_batches`, the largest count
        not above ``2 p`` that divides the per-replica batch), so the requested plan passes the batch rule
        the verifier and the pricer share (LLaMA-30B's ``344`` on batch 32: 6 micro-batches -> 4)."""
        from schedlab.perfmodel.tables import with_valid_micro_batches  # scipy behind it: not at CLI start

        batch = tj.batch_size or get_model(str(perf_adapter.zoo_name(model))).global_batch
        fixed = with_valid_micro_batches(plan, int(batch))
        if fixed != plan:
            notes.append(("plan-micro-batches", "micro-batches of a 3D plan code: the largest count <= 2 x PP "
                          "dividing the per-replica batch (the code gives none)", "plan",
                          f"{tj.plan}: {plan.micro_batches} -> {fixed.micro_batches}", True))
        return fixed

    def best_plan(self, model: str, g: int, cpus: int, batch: int | None) -> ExecutionPlan | None:
        key = (model, g, cpus, batch)
        if key not in self._plans:
            self._plans[key] = perf_adapter.best_plan(self.pm, model, self.counts(g), cpus, global_batch=batch)
        return self._plans[key]

    def feasible_gpus(self, model: str, g: int, batch: int | None) -> tuple[int, ExecutionPlan] | None:
        """The nearest GPU count (``g`` first, then larger, then smaller) with a valid plan."""
        for k in [g, *range(g + 1, self.total + 1), *range(g - 1, 0, -1)]:
            plan = self.best_plan(model, k, k * self.cpus_per_gpu, batch)
            if plan is not None:
                return k, plan
        return None

    def model_time(self, model: str, plan: ExecutionPlan | None, g: int, cpus: int, batch: int | None) -> float:
        """The perf model's iteration time at the request (consolidated placement), seconds; ``plan``
        ``None``: data-parallel on ``g`` GPUs (keyed as ``None``: hashing a plan is not free)."""
        key = (model, plan, g, cpus, batch)
        t = self._times.get(key)
        if t is None:
            t = self._times[key] = float(self.pm.iteration_time(model, plan or _dp_plan(g), self.counts(g), cpus,
                                                                global_batch=batch))
        return t

    def memory_problem(self, model: str, plan: ExecutionPlan | None, g: int, batch: int | None) -> str | None:
        """:func:`perf_adapter.memory_problem` on the cluster's largest GPU, memoised (``plan`` ``None``:
        data-parallel on ``g`` GPUs)."""
        key = (model, plan, g, batch)
        if key in self._mem:
            return self._mem[key]
        why = self._mem[key] = perf_adapter.memory_problem(model, plan or _dp_plan(g), self.max_gpu_mem, batch)
        return why

    def job(self, tj: TraceJob, model: str, min_g: int, kind: str) -> Job:
        """The row's job: its shape's (memoised when ``memo``), then its own per-row work."""
        if tj.duration is None:
            if tj.iterations is None:
                raise SpecError(f"job {tj.id!r} has neither a duration nor iterations (map a duration column, or "
                                "iterations and a model; Pollux/Sia traces have no durations: --default-duration "
                                "S)", field="duration", source=self.source, line=tj.line or None)
            if perf_adapter.zoo_name(model) is None:
                raise SpecError(f"job {tj.id!r} has iterations but no duration, and the zoo has no model {model!r} "
                                "to time them", field="duration", source=self.source, line=tj.line or None)
        key = (model, min_g, kind, tj.gpus, type(tj.gpus), tj.plan, tj.batch_size, type(tj.batch_size), tj.cpus,
               type(tj.cpus), tj.mem_gb, type(tj.mem_gb), bool(tj.guaranteed), tj.duration is None,
               tj.iterations is None)
        s = self._shapes.get(key) if self.memo else None
        if s is None:
            notes: list[ShapeNote] = []
            try:
                s = self.shape(tj, model, min_g, kind, notes)
            except Exception:  # any error: the notes made before it, as the unshared conversion logs them
                for kind_, what, field, detail, assumption in notes:
                    self.sink.add(kind_, what, tj.id, tj.line, field, detail, assumption)
                raise
            if self.memo:
                self._shapes[key] = s
        elif (template := self._first.get(key)) is not None:  # the shape's first job builds the rest
            return row_job(tj, model, kind, s, self.sink, reconfigurable=self.reconfigurable,
                           ratio_max=DURATION_RATIO, template=template)
        job = row_job(tj, model, kind, s, self.sink, reconfigurable=self.reconfigurable, ratio_max=DURATION_RATIO)
        if self.memo:
            self._first[key] = job  # (validated in full by ``Job``: the template of the shape's later rows)
        return job

    def shape(self, tj: TraceJob, model: str, min_g: int, kind: str, notes: list[ShapeNote]) -> Shape:
        """What the row's shape decides (:class:`~.convert_rows.Shape`); its notes go to ``notes``. Reads
        of ``tj`` other than its shape fields (the memo key in :meth:`job`) only name it in errors."""
        where = dict(source=self.source, line=tj.line or None)
        g = g_req = tj.gpus
        has_duration = tj.duration is not None
        zoo = perf_adapter.zoo_name(model) is not None
        extra: list[tuple[str, object]] = []
        g_new = min(max(g, min_g), self.total)
        reason = (f"larger than the cluster ({self.total} GPUs)" if g > self.total
                  else f"below the minimum of {min_g} GPUs for {model}" if g < min_g else "")
        plan: ExecutionPlan | None = None
        if tj.plan is not None:
            try:
                plan = parse_plan(tj.plan, g_new)
                if zoo:
                    plan = self.valid_micro_batches(tj, model, plan, notes)
            except PlanError:
                if g_new == g:
                    raise SpecError(f"job {tj.id!r}: plan {tj.plan!r} is not valid on {g} GPUs", field="plan",
                                    **where) from None
                extra.append(("requested_plan", tj.plan))  # a 3D plan for the old GPU count: choose again
        if kind == "perfmodel" and plan is None:
            found = self.feasible_gpus(model, g_new, tj.batch_size)
            if found is None:
                raise SpecError(f"job {tj.id!r}: model {model!r} has no valid plan on cluster "
                                f"{self.cluster.name!r}", field="model", **where)
            if found[0] != g_new:
                reason = f"no plan of {model} fits in GPU memory on {g_new} GPUs"
            g_new, plan = found
            chosen = plan
        else:
            chosen = None
        if g_new != g:
            extra.append(("requested_gpus", g))
            notes.append(("gpus-resized", f"GPU request resized ({reason}), keeping GPU-hours (duration x g/g')",
                          "gpus", f"{g} -> {g_new}", True))
            g = g_new
        if chosen is not None:
            notes.append(("plan-chosen", "plan chosen: the perf model's best plan for the request (the trace gives "
                          "none" + (" valid for the new GPU count)" if tj.plan is not None else ")"), "plan",
                          chosen.name, True))
        batch = tj.batch_size
        if batch is None and kind == "tier":
            batch = self.dp_batch(model, g)  # rigid DP job: the per-GPU batch is what the user fixed
            notes.append(("batch-default", _BATCH_TIER, "batch", str(batch), True))
        elif batch is None and kind == "perfmodel":
            notes.append(("batch-default", _BATCH_ZOO, "batch", model, True))
        if zoo and batch is not None or plan is not None:
            why = self.memory_problem(model, plan, g, batch)
            if why:
                raise SpecError(f"job {tj.id!r}: {why}; no GPU of cluster {self.cluster.name!r} holds it",
                                field="batch" if tj.batch_size is not None else "plan", **where)
        if tj.cpus is not None:
            cpus = tj.cpus
        elif kind == "perfmodel":
            cpus = g * self.cpus_per_gpu
            notes.append(("cpus-default", f"CPUs assumed: {self.cpus_per_gpu} per GPU (the trace gives none; "
                          "min(8, the cluster's CPUs per GPU))", "cpus", str(cpus), True))
        else:
            cpus = 0
        if not self.keep_cpus:
            cpus = 0
        req = Resources(g, cpus, (tj.mem_gb or 0.0) if self.keep_cpus else 0.0)
        if zoo and (not has_duration or tj.iterations is None):
            t_model = self.model_time(model, plan, g, cpus, batch)
        else:
            t_model = NOMINAL_ITER_S
        t_perf = (self.model_time(model, plan, g, cpus, batch)
                  if kind == "perfmodel" and zoo and has_duration and tj.iterations is not None else None)
        overhead = None
        if kind == "tier":
            overhead = self.tiers.overhead(model, self.tiers.tier(self.counts(g))) if g > 1 else 0.0
        min_res = None
        if tj.guaranteed and self.reconfigurable and kind == "perfmodel":
            min_res = self.min_resources(model, req, plan, batch)  # Rubick's minRes = the quota usage
        return Shape(g, g != g_req, plan, req, batch, t_model, t_perf, overhead, min_res, tuple(extra), tuple(notes),
                     JobClass.GUARANTEED if tj.guaranteed else JobClass.BEST_EFFORT)

    def min_resources(self, model: str, req: Resources, plan: ExecutionPlan | None, batch: int | None) -> Resources:
        """Rubick's minRes of a guaranteed reconfigurable job: the fewest GPUs, then CPUs, any plan,
        reaching the throughput of its request (the perf model's ``min_resources``; never above it)."""
        g, c, _ = self.pm.min_resources(model, req.gpus, max(req.cpus, req.gpus), plan, global_batch=batch)
        return Resources(min(g, req.gpus), min(c, req.cpus), 0.0)


def trace_workload(trace: Trace, cluster: Cluster, *, name: str | None = None, seed: int = 0,
                   model_pool: Sequence[str] | None = None, cluster_name: str | None = None,
                   strict: bool = False, **kwargs) -> Workload:
    """:func:`trace_to_jobs` wrapped in a :class:`Workload` whose ``assumptions`` hold the trace's notes
    and the conversion's."""
    log = AssumptionLog(strict=strict, source=trace.source)
    log.extend(trace.notes)
    jobs = trace_to_jobs(trace, cluster, seed=seed, model_pool=model_pool, log=log, **kwargs)
    report = log.report()
    skipped = trace.skipped + report.count("job-skipped")
    return Workload(name or trace.name, jobs, cluster=cluster_name or cluster.name, skipped=skipped,
                    description=f"{len(jobs)} jobs from {trace.source}", assumptions=report)
