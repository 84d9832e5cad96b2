r"""What Rubick knows about a job: its resource sensitivity curves, slopes, SLO and minRes.

A job's GPU curve ``E(a)`` is its best throughput with at most ``a`` GPUs (samples/s, the monotone
envelope; ``E(0) = 0``), its CPU curve ``E_c(c | g)`` the same over CPUs with ``g`` GPUs. What "best"
ranges over depends on what the policy may change (:class:`Mode`):

* ``FULL`` (Rubick): any plan, any amount: :meth:`PerfModel.curve`;
* ``PLANS`` (Rubick-E): the requested amount only, any plan: ``E`` is a step at the request;
* ``RESOURCES`` (Rubick-R): any amount, the requested plan's *family* (TP, PP, micro-batches, GA,
  GC, ZeRO fixed, DP = ``a / (tp pp)``; Sia's way of scaling 3D jobs);
* ``NONE`` (Rubick-N, rigid jobs, models outside the zoo): the request and its plan.

**Slopes** (Rubick Sec. 5.2: "throughput change per unit of (pre-)allocated resources"), normalised
by the job's SLO throughput ``T_ref`` so that jobs of different models compare (the artifact divides
by the throughput of the request, too). Envelopes are steps where amounts are invalid (a plan needs
``d t p = a``), so a one-unit difference is not a rate; we use the rate towards the best reachable
point (ours, exact for concave curves):

.. math::  gain(a) = \max_{k \ge 1} \frac{E(a+k) - E(a)}{k\,T_{ref}}, \qquad
           loss(a) = \min_{1 \le k \le a} \frac{E(a) - E(a-k)}{k\,T_{ref}}

``gain`` is what one more unit is worth to a job being scheduled, ``loss`` what one unit less costs a
job being shrunk. **SLO** ``T_ref``: the requested plan's throughput at the requested resources on the
best canonical placement of the request (the perf model's :meth:`~PerfModel.min_resources` target);
if that plan does not fit, the best plan's at the request; ``None`` if no plan runs there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from schedlab.perfmodel.curves import MIN_CPUS_PER_GPU
from schedlab.perfmodel.environment import shape_placements
from schedlab.perfmodel.facade import PerfModel
from schedlab.perfmodel.memory import plan_host_memory_gb
from schedlab.perfmodel.params import DEFAULT_CALIBRATION
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode
from schedlab.perfmodel.search import structural_problem
from schedlab.perfmodel.zoo import resolve_name
from schedlab.scheduling.feasible import plan_runs
from schedlab.scheduling.job import Job
from schedlab.topology.cluster import Cluster


class Mode(Enum):
    """What the policy may change about a job (Rubick and its break-down variants)."""

    FULL = "full"            # plans and resources (Rubick)
    PLANS = "plans"          # plans only, fixed resources (Rubick-E)
    RESOURCES = "resources"  # resources only, fixed plan family, DP scaled (Rubick-R)
    NONE = "none"            # neither (Rubick-N)

    @property
    def elastic(self) -> bool:
        return self in (Mode.FULL, Mode.RESOURCES)

    @property
    def replans(self) -> bool:
        return self in (Mode.FULL, Mode.PLANS)


class Slopes:
    """An envelope ``env[a]`` (a = 0..top, ``env[0] = 0``) with its hull rates ``gain(a)``/``loss(a)``
    (unnormalised; module docstring), each an O(top) numpy reduction memoised per amount, and
    ``valid[a]``: a plan runs on exactly ``a`` units (``valid[0]`` is False)."""

    __slots__ = ("env", "valid", "_gain", "_loss", "_sat", "_steps")

    def __init__(self, env: np.ndarray, valid: np.ndarray) -> None:
        self.env = env
        self.valid = valid
        self._gain: dict[int, float] = {}
        self._loss: dict[int, float] = {}
        self._sat: dict[int, int] = {}
        self._steps = np.arange(1, env.size, dtype=float)

    @property
    def top(self) -> int:
        return self.env.size - 1

    def gain(self, a: int) -> float:
        """``max_{k >= 1} (env[a + k] - env[a]) / k`` (0 at the top)."""
        hit = self._gain.get(a)
        if hit is None:
            n = self.top - a
            hit = 0.0 if n <= 0 else float(((self.env[a + 1:] - self.env[a]) / self._steps[:n]).max())
            self._gain[a] = hit
        return hit

    def loss(self, a: int) -> float:
        """``min_{1 <= k <= a} (env[a] - env[a - k]) / k`` (0 at ``a = 0``)."""
        hit = self._loss.get(a)
        if hit is None:
            hit = 0.0 if a <= 0 else float(((self.env[a] - self.env[a - 1::-1]) / self._steps[:a]).min())
            self._loss[a] = hit
        return hit

    def saturation(self, upto: int) -> int:
        """The fewest units at which the envelope reaches its top within ``upto`` (cached per ``upto``)."""
        hit = self._sat.get(upto)
        if hit is None:
            hit = self._sat[upto] = int(self.env[: upto + 1].argmax())
        return hit


def hull_slopes(raw: np.ndarray) -> Slopes:
    """``Slopes`` of a curve given its best throughput at exactly ``a`` units, ``raw[a - 1]`` (0 = invalid)."""
    raw = np.asarray(raw, dtype=float)
    env = np.concatenate(([0.0], np.maximum.accumulate(raw))) if raw.size else np.zeros(1)
    valid = np.concatenate(([False], raw > 0))
    env.setflags(write=False)
    valid.setflags(write=False)
    return Slopes(env, valid)


def step_slopes(amount: int, height: float) -> Slopes:
    """A fixed-amount job: nothing below ``amount``, ``height`` at it (and flat beyond)."""
    raw = np.zeros(amount)
    raw[amount - 1] = height
    return hull_slopes(raw)


@dataclass(frozen=True, slots=True)
class PlanChoice:
    """A plan for a placement: ``throughput`` in samples/s."""

    plan: ExecutionPlan
    throughput: float


@dataclass
class JobModel:
    """Everything Rubick reads about one job (built once per job by :class:`CurveBook`).

    ``ref`` is the SLO throughput ``T_ref`` (samples/s; 1 for jobs the perf model cannot time), ``cap``
    the most GPUs the job may hold, ``granule`` the GPU step per machine (TP degree of a fixed plan),
    ``family`` the fixed plan (family) of Rubick-R/-N and rigid jobs.
    """

    job: Job
    mode: Mode
    known: bool
    ref: float
    gpu: Slopes
    cap: int
    granule: int = 1
    family: ExecutionPlan | None = None
    book: CurveBook | None = field(default=None, repr=False)

    @property
    def elastic(self) -> bool:
        return self.mode.elastic and self.known

    def gain_g(self, a: int) -> float:
        if a >= self.cap:
            return 0.0
        return self.gpu.gain(min(a, self.gpu.top)) / self.ref

    def loss_g(self, a: int) -> float:
        return self.gpu.loss(min(a, self.gpu.top)) / self.ref

    def value(self, a: int) -> float:
        """Normalised envelope throughput at ``a`` GPUs."""
        return float(self.gpu.env[min(a, self.gpu.top)]) / self.ref

    def valid_amounts(self, upto: int) -> list[int]:
        """Amounts ``<= upto`` a plan can run on, largest first."""
        v = self.gpu.valid[: min(upto, self.gpu.top) + 1]
        return [int(a) for a in np.nonzero(v)[0][::-1]]

    def cpu(self, g: int) -> Slopes | None:
        """CPU slopes with ``g`` GPUs (``None``: CPUs are not allocated by slope in this mode)."""
        if not self.elastic or self.book is None:
            return None
        return self.book.cpu_slopes(self, g)

    def gain_c(self, g: int, c: int) -> float:
        s = self.cpu(g)
        return 0.0 if s is None or c >= s.top else s.gain(c) / self.ref

    def loss_c(self, g: int, c: int) -> float:
        s = self.cpu(g)
        return math.inf if s is None else s.loss(min(c, s.top)) / self.ref


class CurveBook:
    """Curves, slopes, SLOs and plan choices for every job, cached (one per cluster and policy)."""

    def __init__(self, cluster: Cluster, calibration: str = DEFAULT_CALIBRATION) -> None:
        self.cluster = cluster
        self.pm = PerfModel(cluster, calibration=calibration)
        gpm = cluster.max_gpus_per_machine
        self.gpus_per_machine = gpm
        self.cpus_per_machine = max(cluster.machine(m).cpus for m in cluster.machines)
        self._gpu: dict[tuple, Slopes] = {}
        self._cpu: dict[tuple, Slopes] = {}
        self._ref: dict[tuple, tuple[float, ExecutionPlan] | None] = {}
        self._minres: dict[tuple, tuple[int, int]] = {}
        self._plans: dict[tuple, PlanChoice | None] = {}
        self._host: dict[tuple, float] = {}

    # ---------------------------------------------------------------- SLO
    def request_throughput(self, job: Job) -> tuple[float, ExecutionPlan] | None:
        """``(T_ref, plan)``: the requested plan's best throughput over the canonical placements of the
        request, else the best plan's; ``None`` if nothing runs at the request."""
        g = job.requested.gpus
        cpus = max(job.requested.cpus, MIN_CPUS_PER_GPU * g)
        plan = job.requested_plan
        key = (job.model, job.global_batch, g, cpus, plan)
        if key in self._ref:
            return self._ref[key]
        pm, b = self.pm, job.global_batch
        best: tuple[float, ExecutionPlan] | None = None
        places = shape_placements(self.cluster, g) if g <= self.cluster.total_gpus else []
        for p in places:
            if self.fixed_plan_runs(job, plan, p):
                t = pm.throughput(job.model, plan, p, cpus, global_batch=b)
                if best is None or t > best[0]:
                    best = (t, plan)
        if best is None:
            for p in places:
                hit = pm.best_plan(job.model, p, cpus, global_batch=b)
                if hit is not None and (best is None or hit[1] > best[0]):
                    best = (hit[1], hit[0])
        self._ref[key] = best
        return best

    # -------------------------------------------------------------- curves
    def family_plan(self, family: ExecutionPlan, gpus: int) -> ExecutionPlan | None:
        """Rubick-R / Sia: the family's plan with DP scaled to ``gpus`` (None if it does not divide)."""
        per = family.tp * family.pp
        if gpus < per or gpus % per:
            return None
        return replace(family, dp=gpus // per)

    def gpu_slopes(self, job: Job, mode: Mode, family: ExecutionPlan | None) -> Slopes:
        key = (job.model, job.global_batch, mode, family)
        hit = self._gpu.get(key)
        if hit is not None:
            return hit
        pm, b, top = self.pm, job.global_batch, self.cluster.total_gpus
        if mode is Mode.FULL:
            raw = pm.curve(job.model, "gpu", global_batch=b).raw
        else:
            assert family is not None
            raw = np.zeros(top)
            for g in range(1, top + 1):
                plan = self.family_plan(family, g)
                if plan is None:
                    continue
                for p in shape_placements(self.cluster, g):
                    cpus = self._cpus_of(p)
                    if self.scaled_plan_runs(job, plan, p):
                        raw[g - 1] = max(raw[g - 1], pm.throughput(job.model, plan, p, cpus, global_batch=b))
        hit = self._gpu[key] = hull_slopes(raw)
        return hit

    def cpu_slopes(self, jm: JobModel, g: int) -> Slopes:
        job = jm.job
        key = (job.model, job.global_batch, jm.mode, jm.family, g)
        hit = self._cpu.get(key)
        if hit is not None:
            return hit
        pm, b = self.pm, job.global_batch
        cmax = min(self.cpus_per_machine * -(-g // self.gpus_per_machine), self.cluster.total_cpus)
        if jm.mode is Mode.FULL:
            raw = np.asarray(pm.curve(job.model, "cpu", gpus=g, max_amount=cmax, global_batch=b).raw)
        else:
            raw = np.zeros(cmax)
            plan = self.family_plan(jm.family, g) if jm.family is not None else None
            places = shape_placements(self.cluster, g) if plan is not None else []
            for p in places:
                if self.scaled_plan_runs(job, plan, p):
                    cpus = np.arange(g, cmax + 1)
                    t = pm.throughputs(job.model, [plan] * cpus.size, p, cpus, global_batch=b)
                    raw[g - 1:] = np.maximum(raw[g - 1:], t)
                    break
        hit = self._cpu[key] = hull_slopes(raw)
        return hit

    def fixed_plan_runs(self, job: Job, plan: ExecutionPlan, counts: dict[str, int]) -> bool:
        """Whether a user-fixed plan (Rubick-N/-R, rigid jobs) runs on ``counts``: the verifier's rules
        (:func:`scheduling.feasible.plan_runs`), not the perf model's stricter search rules."""
        return plan_runs(job, plan, counts, self.cluster)

    def scaled_plan_runs(self, job: Job, plan: ExecutionPlan, counts: dict[str, int]) -> bool:
        """Whether ``plan``, the job's plan family scaled by the scheduler (Rubick-R, Sia), runs on
        ``counts``: the verifier's rules, and unless it is the user's own plan also the perf model's
        structural rules (global batch divisible by ``d*a*m``): a plan the scheduler derives is one the
        perf model's search could have chosen, so the exact joint model holds it too."""
        if not self.fixed_plan_runs(job, plan, counts):
            return False
        if plan == job.requested_plan:
            return True
        spec = self.pm.spec(resolve_name(job.model))
        batch = job.global_batch or spec.global_batch
        return structural_problem(spec, plan, list(counts.values()), batch) is None

    def _cpus_of(self, placement: dict[str, int]) -> int:
        return sum(self.cluster.machine(m).cpus for m in placement)

    # -------------------------------------------------------------- minRes
    def min_resources(self, jm: JobModel) -> tuple[int, int]:
        """minRes of a guaranteed job in ``jm``'s mode: the fewest GPUs, then CPUs, reaching ``T_ref``
        (never above the request; the request when nothing smaller reaches it)."""
        job = jm.job
        req = job.requested
        key = (job.model, job.global_batch, jm.mode, jm.family, req.gpus, req.cpus, job.requested_plan)
        hit = self._minres.get(key)
        if hit is not None:
            return hit
        cpus = max(req.cpus, MIN_CPUS_PER_GPU * req.gpus)
        out = (req.gpus, cpus)
        if jm.mode is Mode.FULL:
            g, c, _ = self.pm.min_resources(job.model, req.gpus, cpus, job.requested_plan,
                                            global_batch=job.global_batch)
            out = (g, c)
        elif jm.mode is Mode.RESOURCES:
            for g in jm.valid_amounts(req.gpus)[::-1]:
                if jm.value(g) >= 1 - 1e-9:
                    s = self.cpu_slopes(jm, g)
                    ok = np.nonzero(s.env[: cpus + 1] >= jm.ref * (1 - 1e-9))[0]
                    if ok.size:
                        out = (g, max(int(ok[0]), g))
                        break
        self._minres[key] = out
        return out

    # --------------------------------------------------------------- plans
    def plan_for(self, jm: JobModel, counts: dict[str, int], cpus: int) -> PlanChoice | None:
        """GetBestPlan: the plan ``jm`` runs with on ``counts`` (``{machine: gpus}``) and ``cpus`` cores."""
        job = jm.job
        g = sum(counts.values())
        if g <= 0:
            return None
        mode = jm.mode
        key = (job.model, job.global_batch, mode, jm.family, tuple(sorted(counts.items())),
               cpus if mode is not Mode.NONE else 0)
        if key in self._plans:
            return self._plans[key]
        out: PlanChoice | None = None
        pm, b = self.pm, job.global_batch
        if not jm.known:
            if g == job.requested.gpus and self.fixed_plan_runs(job, job.requested_plan, counts):
                out = PlanChoice(job.requested_plan, jm.ref)
        elif mode.replans:
            if mode is Mode.FULL or g == job.requested.gpus:
                hit = pm.best_plan(job.model, counts, cpus, global_batch=b)
                out = PlanChoice(*hit) if hit is not None else None
            if g == job.requested.gpus and self.fixed_plan_runs(job, job.requested_plan, counts):
                t = pm.throughput(job.model, job.requested_plan, counts, max(cpus, g), global_batch=b)
                if out is None or t > out.throughput:  # the user's own plan is always an option
                    out = PlanChoice(job.requested_plan, t)
        else:
            plan = self.family_plan(jm.family, g) if mode is Mode.RESOURCES else (
                job.requested_plan if g == job.requested.gpus else None)
            if plan is not None and self.scaled_plan_runs(job, plan, counts):
                out = PlanChoice(plan, pm.throughput(job.model, plan, counts, max(cpus, g), global_batch=b))
        self._plans[key] = out
        return out

    def knows(self, model: str) -> bool:
        """Whether the perf model can time ``model`` (its zoo has it)."""
        return resolve_name(model) is not None

    def throughput(self, job: Job, plan: ExecutionPlan, counts: dict[str, int], cpus: int) -> float:
        """Samples/s of ``job`` running ``plan`` on ``counts`` with ``cpus`` cores (0 if the plan's GPUs
        differ from the placement's)."""
        if plan.gpus != sum(counts.values()):
            return 0.0
        return self.pm.throughput(job.model, plan, counts, max(cpus, MIN_CPUS_PER_GPU * plan.gpus),
                                  global_batch=job.global_batch)

    def host_memory_gb(self, job: Job, plan: ExecutionPlan) -> float:
        """AllocMem: the plan's host memory (0 for models outside the zoo)."""
        key = (job.model, plan)
        hit = self._host.get(key)
        if hit is None:
            name = resolve_name(job.model)
            hit = self._host[key] = 0.0 if name is None else plan_host_memory_gb(self.pm.spec(name), plan)
        return hit

    # ------------------------------------------------------------ building
    def job_model(self, job: Job, mode: Mode, *, max_scale: float | None = None) -> JobModel:
        """The :class:`JobModel` of ``job`` under ``mode`` (rigid jobs and unknown models: ``NONE``).
        ``ref <= 0`` or ``floor`` ``None``-ness is left to the caller (bad-input handling)."""
        known = self.knows(job.model)
        if not job.reconfigurable or not known:
            mode = Mode.NONE
        req = job.requested.gpus
        ref_hit = self.request_throughput(job) if known else (1.0, job.requested_plan)
        ref = ref_hit[0] if ref_hit is not None else 0.0
        family = None
        if mode is Mode.RESOURCES or mode is Mode.NONE:
            family = job.requested_plan
        if mode.elastic:
            gpu = self.gpu_slopes(job, mode, family)
            cap = gpu.top if max_scale is None else max(req, min(gpu.top, int(math.floor(req * max_scale))))
        else:
            height = ref
            if mode is Mode.PLANS and ref_hit is not None:
                height = max(ref, self._best_at_request(job) or 0.0)
            gpu = step_slopes(req, max(height, 1e-12))
            cap = req
        granule = family.tp if (family is not None and known) else 1
        jm = JobModel(job, mode, known, ref if ref > 0 else 1.0, gpu, cap, granule, family=family, book=self)
        if ref <= 0:
            jm.ref = 0.0  # marks an unreachable SLO for the caller
        return jm

    def _best_at_request(self, job: Job) -> float | None:
        g = job.requested.gpus
        cpus = max(job.requested.cpus, MIN_CPUS_PER_GPU * g)
        best = None
        for p in shape_placements(self.cluster, g):
            hit = self.pm.best_plan(job.model, p, cpus, global_batch=job.global_batch)
            if hit is not None and (best is None or hit[1] > best):
                best = hit[1]
        return best


def is_offload(plan: ExecutionPlan) -> bool:
    return plan.zero is ZeroMode.OFFLOAD


__all__ = ["CurveBook", "JobModel", "Mode", "PlanChoice", "Slopes", "hull_slopes", "is_offload", "step_slopes"]
