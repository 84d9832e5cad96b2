r"""Fitting the 7 parameters (Rubick Sec. 4.3) and the effective bandwidths, and online refitting.

``fit(spec, samples, cluster)`` minimises the RMSLE between predicted and measured throughput,

    RMSLE(k) = sqrt( mean_i ( log(b / T_iter(k; sample_i)) - log(throughput_i) )^2 ),

with ``scipy.optimize.least_squares`` (trust-region reflective, bounded) inside the bounds of :data:`perfmodel.params.BOUNDS`
and, for the effective bandwidths ``b_intra`` / ``b_inter`` (GB/s; fitted only when some sample
communicates inside a machine / across machines, else left ``None``), inside ``[figure / 1000,
figure]`` where ``figure`` is the cluster's own link (:func:`perfmodel.environment.link_figures`),
from several deterministic starts (the model's default parameters, the artifact's start
``[1.5, 0.1, 0.001, 1, 1, 1, 1]`` mapped into our bounds, both with the bandwidths at the cluster's
figures, and a scrambled Sobol design seeded with ``seed``). Parameters are searched in log space (exponents and scale factors span decades).
At least 7 samples are required, 3 of them ZeRO-Offload when any offload parameter is to be
identified (``require_offload``).

:class:`OnlineRefitter` feeds observed throughputs of running jobs and refits when the relative error
of the current prediction exceeds ``threshold``; it fits the form its :class:`~perfmodel.PerfModel` predicts
with (flat or hierarchical, ``PerfModel.hierarchical``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import qmc

from schedlab.perfmodel.environment import dp_group_shape, group_links, link_figures, placement_env
from schedlab.perfmodel.iteration import PlanArrays, Terms, combine, terms
from schedlab.perfmodel.params import (
    BANDWIDTH_SPAN,
    BOUNDS,
    FWD3D_BOUNDS,
    OFFX_BOUNDS,
    PARAM_NAMES,
    PARITY_BOUNDS,
    SHARE_BOUNDS,
    PerfParams,
    default_params,
)
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode
from schedlab.perfmodel.zoo import ModelSpec
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError

MIN_SAMPLES = 7
OFFLOAD_PARAMS = ("k_opt_off", "k_off", "k_swap")
MIN_OFFLOAD_SAMPLES = 3
_FLOOR = 1e-7  # log-space lower bound for parameters whose bound is 0
# Trust-region reflective least squares on the log residuals (bounded Gauss-Newton): converges in a few
# dozen Jacobians where SLSQP on the mean square stalls ~1e-5 short of the optimum on weakly identified
# exponents (k_off, k_swap).
_SCOUT_EVALS = 15   # residual evaluations per start (each Jacobian is one more, batched, evaluation)
_POLISHED = 2       # starts continued from their scouting end point
_STEP = 1e-7        # finite-difference step in unit coordinates
_MAX_EVALS = 60


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
    free: tuple[str, ...] = field(default=())  # the parameters fitted (the 7, plus informed bandwidths)

    @property
    def avg_error(self) -> float:
        return float(np.mean(self.errors)) if self.errors else 0.0

    @property
    def max_error(self) -> float:
        return float(np.max(self.errors)) if self.errors else 0.0


@dataclass(frozen=True, slots=True)
class _Design:
    groups: tuple[tuple[int, np.ndarray, Terms], ...]  # (global batch, row indices, precomputed terms)
    log_meas: np.ndarray
    intra_comm: bool  # some sample communicates inside a machine (b_intra matters)
    inter_comm: bool  # some sample communicates across machines (b_inter matters)
    mixed_3d: bool    # both TP/PP and DP-family samples (k_fwd3d identified)
    offload: bool     # some ZeRO-Offload sample (k_opt_off, k_off, k_swap identified)
    shares: bool = False  # DP groups crossing machines with >= 2 distinct n_min (k_share identified)
    parity: bool = False  # DP groups crossing machines, odd-count and even-count ones (k_parity identified)
    offx: bool = False    # DP groups crossing machines, ZeRO-Offload and DP-family ones (k_offx identified)


def _design(spec: ModelSpec, samples: Sequence[Sample], cluster: Cluster, hierarchical: bool = True) -> _Design:
    plans = [s.plan for s in samples]
    envs = [placement_env(cluster, s.placement) for s in samples]
    for s, e in zip(samples, envs, strict=True):
        if s.plan.gpus != e.gpus:
            raise SpecError(f"sample plan {s.plan.name} uses {s.plan.gpus} GPUs, placement has {e.gpus}",
                            source="<fit samples>", field="plan")
        if not s.throughput > 0:
            raise SpecError(f"sample throughput must be > 0, got {s.throughput!r}", source="<fit samples>",
                            field="throughput")
    links = [group_links(cluster, e, s.plan.dp, s.plan.tp, s.plan.pp) for s, e in zip(samples, envs, strict=True)]
    shapes = [dp_group_shape(e, s.plan.dp, s.plan.tp, s.plan.pp) for s, e in zip(samples, envs, strict=True)]
    arr = PlanArrays.from_plans(plans, [x[0] for x in links], [e.bw_tp for e in envs],
                                [e.bw_pcie for e in envs], [s.cpus for s in samples], [x[1] for x in links],
                                dp_inter=[float(x[2]) for x in links], pp_inter=[float(x[3]) for x in links],
                                dp_shape=shapes if hierarchical else None)  # None: the flat model
    if any(s.fwd_time_s for s in samples):
        arr = PlanArrays(**{f: getattr(arr, f) for f in PlanArrays.__dataclass_fields__ if f != "fwd_s"},
                         fwd_s=np.array([s.fwd_time_s if s.fwd_time_s else np.nan for s in samples]))
    batch = np.array([int(s.global_batch or spec.global_batch) for s in samples])
    groups = []
    for b in np.unique(batch):  # the batch enters T_fwd, V_tp, V_pp: one group per distinct batch
        idx = np.nonzero(batch == b)[0]
        sub = PlanArrays(**{f: (None if getattr(arr, f) is None else getattr(arr, f)[idx])
                            for f in PlanArrays.__dataclass_fields__})
        groups.append((int(b), idx, terms(spec, sub, global_batch=int(b))))
    intra = inter = False
    for s, (_, _, dx, px) in zip(samples, links, strict=True):
        pl = s.plan
        intra |= pl.tp > 1 or (pl.dp > 1 and not dx) or (pl.pp > 1 and not px)
        inter |= (pl.dp > 1 and dx) or (pl.pp > 1 and px)
    n3 = sum(s.plan.is_3d for s in samples)
    cross = [s.plan.dp > 1 and sh[0] > 1 and hierarchical for s, sh in zip(samples, shapes, strict=True)]
    crossing = [sh for sh, c in zip(shapes, cross, strict=True) if c]
    cross_off = {s.plan.zero is ZeroMode.OFFLOAD for s, c in zip(samples, cross, strict=True) if c}
    return _Design(tuple(groups), np.log([s.throughput for s in samples]), intra, inter, 0 < n3 < len(samples),
                   any(s.plan.zero is ZeroMode.OFFLOAD for s in samples), len({sh[2] for sh in crossing}) > 1,
                   len({sh[3] for sh in crossing}) > 1, len(cross_off) > 1)


def predict_log_throughput(spec: ModelSpec, params, design: _Design) -> np.ndarray:
    """Log throughput of every sample; with parameter fields given as ``(m, 1)`` arrays, an ``(m, n)``
    array (``m`` parameter sets evaluated at once, e.g. the columns of a finite-difference Jacobian)."""
    shape = np.broadcast_shapes(*(np.shape(getattr(params, f)) for f in PARAM_NAMES))
    out = np.empty(shape[:-1] + (design.log_meas.size,) if shape else design.log_meas.size)
    for b, idx, sub in design.groups:
        out[..., idx] = math.log(b) - np.log(combine(params, sub)["iter"])
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
    b_intra: float | None = None
    b_inter: float | None = None
    k_fwd3d: float | None = None
    k_share: float | None = None
    k_parity: float | None = None
    k_offx: float | None = None


@dataclass(frozen=True, slots=True)
class _Space:
    """The search box in log coordinates over the free parameters (``names``); the others keep the
    values in ``fixed``."""

    names: tuple[str, ...]
    lo: np.ndarray
    hi: np.ndarray
    fixed: tuple[tuple[str, float | None], ...] = ()

    def values(self, u: np.ndarray) -> list[float]:
        x = np.exp(self.lo + np.clip(u, 0.0, 1.0) * (self.hi - self.lo))
        return [float(v) for v in np.clip(x, np.exp(self.lo), np.exp(self.hi))]

    def raw(self, u: np.ndarray) -> _Raw:
        return _Raw(**dict(self.fixed), **dict(zip(self.names, self.values(u), strict=True)))

    def raw_batch(self, us: np.ndarray) -> _Raw:
        """``m`` points at once (``us`` of shape ``(m, k)``): every free field an ``(m, 1)`` array."""
        x = np.exp(self.lo + np.clip(us, 0.0, 1.0) * (self.hi - self.lo))
        return _Raw(**dict(self.fixed), **{n: x[:, j:j + 1] for j, n in enumerate(self.names)})

    def params(self, u: np.ndarray) -> PerfParams:
        return PerfParams(**dict(self.fixed), **dict(zip(self.names, self.values(u), strict=True)))

    def unit(self, p: PerfParams, figures: dict[str, float]) -> np.ndarray:
        """``p`` in unit coordinates (an optional parameter at ``None`` starts at ``figures``: the
        cluster's link for a bandwidth, 1 for ``k_fwd3d``)."""
        out = []
        for name, lo, hi in zip(self.names, self.lo, self.hi, strict=True):
            v = getattr(p, name)
            v = figures[name] if v is None else v
            v = min(max(math.log(max(v, _FLOOR)), lo), hi)
            out.append((v - lo) / (hi - lo))
        return np.array(out)


def _space(cluster: Cluster, design: _Design, fit_bandwidths: bool, start: PerfParams, hold: Sequence[str] = ()
           ) -> tuple[_Space, dict[str, float]]:
    """The free parameters: the 4 that every sample informs, the 3 ZeRO-Offload ones when some sample
    is ZeRO-Offload, each effective bandwidth when some sample communicates over it (and
    ``fit_bandwidths``), ``k_fwd3d`` when the samples mix TP/PP and DP-family plans, ``k_share`` (with
    ``fit_bandwidths``) when DP groups crossing machines hold two or more distinct ``n_min``, ``k_parity``
    (with ``fit_bandwidths``) when they hold both odd-count and even-count groups, ``k_offx`` (with
    ``fit_bandwidths``) when they hold both ZeRO-Offload and DP-family groups. The others keep
    their values in ``start``."""
    intra, inter = link_figures(cluster)
    figures = {"b_intra": intra, "b_inter": inter, "k_fwd3d": 1.0, "k_share": 1e-6, "k_parity": 1e-6, "k_offx": 1.0}
    free = {n: (max(lo, _FLOOR), hi) for n, (lo, hi) in zip(PARAM_NAMES, BOUNDS, strict=True)
            if design.offload or n not in OFFLOAD_PARAMS}
    if fit_bandwidths:
        for name, used in (("b_intra", design.intra_comm), ("b_inter", design.inter_comm)):
            if used:
                free[name] = (figures[name] / BANDWIDTH_SPAN, figures[name])
    if design.mixed_3d:
        free["k_fwd3d"] = FWD3D_BOUNDS
    if design.shares and fit_bandwidths:  # the inter-machine bandwidth's dependence on the GPUs per machine
        free["k_share"] = (max(SHARE_BOUNDS[0], 1e-6), SHARE_BOUNDS[1])
    if design.parity and fit_bandwidths:
        free["k_parity"] = PARITY_BOUNDS
    if design.offx and fit_bandwidths:
        free["k_offx"] = OFFX_BOUNDS
    for n in hold:  # held at their value in ``start`` (e.g. a profiled k_opt)
        free.pop(n, None)
    fixed = tuple((n, v) for n, v in start.to_dict().items() if n not in free)
    names = tuple(free)
    return (_Space(names, np.log([free[n][0] for n in names]), np.log([free[n][1] for n in names]), fixed),
            figures)


def rmsle(spec: ModelSpec, params: PerfParams, samples: Sequence[Sample], cluster: Cluster, *,
          hierarchical: bool = True) -> float:
    d = _design(spec, samples, cluster, hierarchical)
    return float(np.sqrt(np.mean((predict_log_throughput(spec, params, d) - d.log_meas) ** 2)))


def fit(spec: ModelSpec, samples: Sequence[Sample], cluster: Cluster, *, seed: int = 0, starts: int = 8,
        require_offload: bool = True, initial: PerfParams | None = None, fit_bandwidths: bool = True,
        hierarchical: bool = True, hold: Sequence[str] = ()) -> FitResult:
    """Fit the parameters the samples inform to ``samples`` (see the module docstring and
    :func:`_space`: the 3 ZeRO-Offload parameters only with ZeRO-Offload samples, ``b_intra`` /
    ``b_inter`` (with ``fit_bandwidths``) when some sample communicates inside a machine / across
    machines, ``k_fwd3d`` when TP/PP and DP-family samples mix); the others keep their values in
    ``initial`` (default: the model's ``fitted`` calibration). ``FitResult.free`` names the fitted ones.
    ``hierarchical`` False fits the flat model (calibration ``flat``: no per-machine counts, no ``k_share``
    / ``k_parity``; default start ``FLAT_PARAMS``). ``hold``: parameters kept at their value in ``initial``
    (a profiled ``k_opt``). Deterministic for a seed."""
    samples = list(samples)
    if len(samples) < MIN_SAMPLES:
        raise SpecError(f"fitting needs >= {MIN_SAMPLES} samples, got {len(samples)}", source="<fit samples>")
    n_off = sum(s.plan.zero is ZeroMode.OFFLOAD for s in samples)
    if require_offload and n_off < MIN_OFFLOAD_SAMPLES:
        raise SpecError(f"fitting needs >= {MIN_OFFLOAD_SAMPLES} ZeRO-Offload samples (they alone inform "
                        f"k_opt_off, k_off, k_swap), got {n_off}; pass require_offload=False to fit "
                        "without them", source="<fit samples>")
    design = _design(spec, samples, cluster, hierarchical)
    start = initial or default_params(spec.name, "fitted" if hierarchical else "flat")
    space, figures = _space(cluster, design, fit_bandwidths, start, hold)

    def residuals(u: np.ndarray) -> np.ndarray:
        r = predict_log_throughput(spec, space.raw(u), design) - design.log_meas
        return np.where(np.isfinite(r), r, 1e3)

    def jacobian(u: np.ndarray) -> np.ndarray:
        """Forward differences (backward at the upper bound), all columns in one batched evaluation."""
        k = u.size
        h = np.where(u + _STEP <= 1.0, _STEP, -_STEP)
        pts = np.repeat(u[None, :], k + 1, axis=0)
        pts[np.arange(1, k + 1), np.arange(k)] += h
        r = predict_log_throughput(spec, space.raw_batch(pts), design) - design.log_meas
        r = np.where(np.isfinite(r), r, 1e3)
        return ((r[1:] - r[0]) / h[:, None]).T

    artifact_start = PerfParams(k_bwd=1.5, k_sync=1.0, k_opt=0.001, k_opt_off=0.001, k_off=1.0, k_swap=1.0,
                                k_const=0.001)
    x0s = [space.unit(start, figures), space.unit(artifact_start, figures)]
    if starts > 2:
        sob = qmc.Sobol(d=len(space.names), scramble=True, seed=seed)
        x0s += list(sob.random(2 ** math.ceil(math.log2(starts - 2)))[: starts - 2])
    def solve(x0: np.ndarray, evals: int) -> tuple[float, np.ndarray]:
        res = least_squares(residuals, np.clip(np.asarray(x0, dtype=float), 0.0, 1.0), bounds=(0.0, 1.0),
                            method="trf", jac=jacobian, xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=evals)
        return float(np.mean(res.fun ** 2)), res.x

    # every start with a short budget, then the best few polished (ties broken by start order)
    first = sorted(((*solve(x0, _SCOUT_EVALS), j) for j, x0 in enumerate(x0s)), key=lambda r: (r[0], r[2]))
    best_v, best_u = math.inf, None
    for v0, u0, _ in first[:_POLISHED]:
        v, u = solve(u0, _MAX_EVALS) if v0 > 1e-24 else (v0, u0)
        if v < best_v - 1e-18:
            best_v, best_u = v, u
    params = space.params(best_u)
    pred = np.exp(predict_log_throughput(spec, params, design))
    meas = np.exp(design.log_meas)
    return FitResult(params=params, rmsle=math.sqrt(best_v), n_samples=len(samples),
                     errors=tuple(float(x) for x in np.abs(pred - meas) / meas), free=space.names)


def predict(spec: ModelSpec, params: PerfParams, samples: Sequence[Sample], cluster: Cluster, *,
            hierarchical: bool = True) -> np.ndarray:
    """Predicted throughputs (samples/s) for the samples' plans and resources (``hierarchical`` False: the
    flat model, calibration ``flat``)."""
    return np.exp(predict_log_throughput(spec, params, _design(spec, samples, cluster, hierarchical)))


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
                  require_offload=False, initial=self.perf.params_for(self.spec),
                  hierarchical=getattr(self.perf, "hierarchical", True))
        self.perf.set_params(self.spec, res.params)
        self.last_fit = res
        self.refits += 1
        return True


__all__ = ["FitResult", "MIN_OFFLOAD_SAMPLES", "MIN_SAMPLES", "OFFLOAD_PARAMS", "OnlineRefitter", "Sample",
           "fit", "predict", "predict_log_throughput", "rmsle"]
