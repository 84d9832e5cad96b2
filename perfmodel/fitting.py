r"""Fitting the 7 parameters (Rubick Sec. 4.3) and online refitting.

``fit(spec, samples, cluster)`` minimises the RMSLE between predicted and measured throughput,

    RMSLE(k) = sqrt( mean_i ( log(b / T_iter(k; sample_i)) - log(throughput_i) )^2 ),

with ``scipy.optimize.minimize`` (SLSQP, bounded) inside the bounds of :data:`perfmodel.params.BOUNDS`,
from several deterministic starts (the model's default parameters, the artifact's start
``[1.5, 0.1, 0.001, 1, 1, 1, 1]`` mapped into our bounds, and a scrambled Sobol design seeded with
``seed``). Parameters are searched in log space (exponents and scale factors span decades).
At least 7 samples are required, 3 of them ZeRO-Offload when any offload parameter is to be
identified (``require_offload``).

:class:`OnlineRefitter` feeds observed throughputs of running jobs and refits when the relative error
of the current prediction exceeds ``threshold``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from scipy.stats import qmc

from schedlab.perfmodel.environment import group_bandwidths, placement_env
from schedlab.perfmodel.iteration import PlanArrays, iteration_times
from schedlab.perfmodel.params import BOUNDS, PARAM_NAMES, PerfParams, default_params
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode
from schedlab.perfmodel.zoo import ModelSpec
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError

MIN_SAMPLES = 7
MIN_OFFLOAD_SAMPLES = 3
_FLOOR = 1e-7  # log-space lower bound for parameters whose bound is 0
# SLSQP: as accurate as L-BFGS-B here and ~5x faster on small shared machines (no BLAS threading)
_METHOD = "SLSQP"


@dataclass(frozen=True, slots=True)
class Sample:
    """One measurement: ``plan`` on ``placement`` ({machine: gpus}) with ``cpus`` cores reached
    ``throughput`` samples/s (``global_batch`` None = the model's)."""

    plan: ExecutionPlan
    placement: Mapping[str, int]
    cpus: int
    throughput: float
    global_batch: int | None = None
    fwd_time_s: float | None = None  # measured forward time of the iteration, when profiled


@dataclass(frozen=True, slots=True)
class FitResult:
    params: PerfParams
    rmsle: float
    n_samples: int
    errors: tuple[float, ...] = field(default=())  # relative throughput error per sample

    @property
    def avg_error(self) -> float:
        return float(np.mean(self.errors)) if self.errors else 0.0

    @property
    def max_error(self) -> float:
        return float(np.max(self.errors)) if self.errors else 0.0


@dataclass(frozen=True, slots=True)
class _Design:
    groups: tuple[tuple[int, np.ndarray, PlanArrays], ...]  # (global batch, row indices, rows)
    log_meas: np.ndarray


def _design(spec: ModelSpec, samples: Sequence[Sample], cluster: Cluster) -> _Design:
    plans = [s.plan for s in samples]
    envs = [placement_env(cluster, s.placement) for s in samples]
    for s, e in zip(samples, envs, strict=True):
        if s.plan.gpus != e.gpus:
            raise SpecError(f"sample plan {s.plan.name} uses {s.plan.gpus} GPUs, placement has {e.gpus}",
                            source="<fit samples>", field="plan")
        if not s.throughput > 0:
            raise SpecError(f"sample throughput must be > 0, got {s.throughput!r}", source="<fit samples>",
                            field="throughput")
    bws = [group_bandwidths(cluster, e, s.plan.dp, s.plan.tp, s.plan.pp) for s, e in zip(samples, envs, strict=True)]
    arr = PlanArrays.from_plans(plans, [bw[0] for bw in bws], [e.bw_tp for e in envs],
                                [e.bw_pcie for e in envs], [s.cpus for s in samples], [bw[1] for bw in bws])
    if any(s.fwd_time_s for s in samples):
        arr = PlanArrays(**{f: getattr(arr, f) for f in PlanArrays.__dataclass_fields__ if f != "fwd_s"},
                         fwd_s=np.array([s.fwd_time_s if s.fwd_time_s else np.nan for s in samples]))
    batch = np.array([int(s.global_batch or spec.global_batch) for s in samples])
    groups = []
    for b in np.unique(batch):  # the batch enters T_fwd, V_tp, V_pp: one group per distinct batch
        idx = np.nonzero(batch == b)[0]
        sub = PlanArrays(**{f: (None if getattr(arr, f) is None else getattr(arr, f)[idx])
                            for f in PlanArrays.__dataclass_fields__})
        groups.append((int(b), idx, sub))
    return _Design(tuple(groups), np.log([s.throughput for s in samples]))


def predict_log_throughput(spec: ModelSpec, params, design: _Design) -> np.ndarray:
    out = np.empty(design.log_meas.size)
    for b, idx, sub in design.groups:
        out[idx] = math.log(b) - np.log(iteration_times(spec, params, sub, global_batch=b))
    return out


@dataclass(frozen=True, slots=True)
class _Raw:
    """Unvalidated parameter record for the optimiser's inner loop (bounds already hold)."""

    k_bwd: float
    k_sync: float
    k_opt: float
    k_opt_off: float
    k_off: float
    k_swap: float
    k_const: float


_LO = np.log([max(lo, _FLOOR) for lo, _ in BOUNDS])
_HI = np.log([hi for _, hi in BOUNDS])


def _values(u: np.ndarray) -> list[float]:
    x = np.exp(_LO + np.clip(u, 0.0, 1.0) * (_HI - _LO))
    return [float(v) for v in np.clip(x, np.exp(_LO), np.exp(_HI))]


def _to_params(u: np.ndarray) -> PerfParams:
    return PerfParams.from_sequence(_values(u))


def _to_unit(p: PerfParams) -> np.ndarray:
    out = []
    for v, (lo, hi) in zip(p.as_tuple(), BOUNDS, strict=True):
        lo_e = max(lo, _FLOOR)
        v = min(max(v, lo_e), hi)
        out.append((math.log(v) - math.log(lo_e)) / (math.log(hi) - math.log(lo_e)))
    return np.array(out)


def rmsle(spec: ModelSpec, params: PerfParams, samples: Sequence[Sample], cluster: Cluster) -> float:
    d = _design(spec, samples, cluster)
    return float(np.sqrt(np.mean((predict_log_throughput(spec, params, d) - d.log_meas) ** 2)))


def fit(spec: ModelSpec, samples: Sequence[Sample], cluster: Cluster, *, seed: int = 0, starts: int = 8,
        require_offload: bool = True, initial: PerfParams | None = None) -> FitResult:
    """Fit the 7 parameters to ``samples`` (see the module docstring). Deterministic for a seed."""
    samples = list(samples)
    if len(samples) < MIN_SAMPLES:
        raise SpecError(f"fitting needs >= {MIN_SAMPLES} samples, got {len(samples)}", source="<fit samples>")
    n_off = sum(s.plan.zero is ZeroMode.OFFLOAD for s in samples)
    if require_offload and n_off < MIN_OFFLOAD_SAMPLES:
        raise SpecError(f"fitting needs >= {MIN_OFFLOAD_SAMPLES} ZeRO-Offload samples (they alone inform "
                        f"k_opt_off, k_off, k_swap), got {n_off}; pass require_offload=False to fit "
                        "without them", source="<fit samples>")
    design = _design(spec, samples, cluster)

    def loss(u: np.ndarray) -> float:
        r = predict_log_throughput(spec, _Raw(*_values(u)), design) - design.log_meas
        v = float(np.mean(r * r))
        return v if math.isfinite(v) else 1e6

    artifact_start = PerfParams(k_bwd=1.5, k_sync=1.0, k_opt=0.001, k_opt_off=0.001, k_off=1.0, k_swap=1.0,
                                k_const=0.001)
    x0s = [_to_unit(initial or default_params(spec.name)), _to_unit(artifact_start)]
    if starts > 2:
        sob = qmc.Sobol(d=len(PARAM_NAMES), scramble=True, seed=seed)
        x0s += list(sob.random(2 ** math.ceil(math.log2(starts - 2)))[: starts - 2])
    best_u, best_v = None, math.inf
    for x0 in x0s:
        res = minimize(loss, np.asarray(x0, dtype=float), method=_METHOD, bounds=[(0.0, 1.0)] * len(BOUNDS),
                       options={"maxiter": 300, "ftol": 1e-14})
        if res.fun < best_v - 1e-15:
            best_u, best_v = res.x, float(res.fun)
    params = _to_params(best_u)
    pred = np.exp(predict_log_throughput(spec, params, design))
    meas = np.exp(design.log_meas)
    return FitResult(params=params, rmsle=math.sqrt(best_v), n_samples=len(samples),
                     errors=tuple(float(x) for x in np.abs(pred - meas) / meas))


def predict(spec: ModelSpec, params: PerfParams, samples: Sequence[Sample], cluster: Cluster) -> np.ndarray:
    """Predicted throughputs (samples/s) for the samples' plans and resources."""
    return np.exp(predict_log_throughput(spec, params, _design(spec, samples, cluster)))


class OnlineRefitter:
    """Online refitting of one model's parameters inside a :class:`~perfmodel.PerfModel`.

    ``observe(...)`` records a measured throughput of a running job; when the relative error of the
    current prediction exceeds ``threshold`` (and at least ``MIN_SAMPLES`` samples are known), the
    parameters are refitted on all samples and installed with ``perf.set_params``. Returns whether a
    refit happened.
    """

    def __init__(self, perf, model: str, *, threshold: float = 0.1, samples: Iterable[Sample] = (),
                 seed: int = 0, starts: int = 4) -> None:
        if not threshold > 0:
            raise SpecError(f"threshold must be > 0, got {threshold!r}", source="<OnlineRefitter>",
                            field="threshold")
        self.perf = perf
        self.spec = perf.spec(model)
        self.threshold = threshold
        self.samples: list[Sample] = list(samples)
        self.seed = seed
        self.starts = starts
        self.refits = 0
        self.last_fit: FitResult | None = None

    def relative_error(self, sample: Sample) -> float:
        pred = self.perf.throughput(self.spec, sample.plan, sample.placement, sample.cpus,
                                    global_batch=sample.global_batch)
        return abs(pred - sample.throughput) / sample.throughput

    def observe(self, plan: ExecutionPlan, placement: Mapping[str, int], cpus: int, throughput: float,
                global_batch: int | None = None) -> bool:
        s = Sample(plan, dict(placement), cpus, throughput, global_batch)
        self.samples.append(s)
        if self.relative_error(s) <= self.threshold or len(self.samples) < MIN_SAMPLES:
            return False
        res = fit(self.spec, self.samples, self.perf.cluster, seed=self.seed, starts=self.starts,
                  require_offload=False, initial=self.perf.params_for(self.spec))
        self.perf.set_params(self.spec, res.params)
        self.last_fit = res
        self.refits += 1
        return True
