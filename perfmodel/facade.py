"""``PerfModel``: the one entry point the simulator, the heuristics and the formulations use.

Every query is answered from caches keyed by (model, fitted parameters, global batch, placement or
shape), and every search over plans is one vectorised numpy evaluation (:mod:`perfmodel.iteration`).
Throughput is samples/s (``global batch / T_iter``); placements are ``{machine: gpus}``; ``cpus`` is
the job's total CPU cores.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from schedlab.perfmodel import curves as cv
from schedlab.perfmodel.environment import (
    Env,
    counts_placement,
    dp_group_shape,
    group_links,
    odd_counts,
    placement_env,
    shape_placements,
)
from schedlab.perfmodel.iteration import PlanArrays, components, iteration_time_scalar, overlap
from schedlab.perfmodel.measured import TESTBED_MACHINE, MeasuredTimes, load_measured, measured_columns
from schedlab.perfmodel.memory import GB_BYTES, host_memory_bytes
from schedlab.perfmodel.params import (
    CALIBRATIONS,
    DEFAULT_CALIBRATION,
    FLAT_CALIBRATIONS,
    PerfParams,
    default_params,
)
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.perfmodel.search import (
    memory_columns,
    plan_to_row,
    row_to_plan,
    structural_problem,
    structural_table,
    tp_group_limit,
)
from schedlab.perfmodel.sensitivity import DEFAULT_CPUS_PER_GPU_CHOICES, SensitivityQueries
from schedlab.perfmodel.zoo import MODELS, ModelSpec, get_model
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import PlanError, SpecError

MAX_CACHED_BEST = 200_000
MAX_CACHED_SHAPES = 50_000


class PerfModel(SensitivityQueries):
    """Rubick's performance model on ``cluster``.

    ``params`` maps model names (or aliases, or :class:`ModelSpec` objects) to fitted :class:`PerfParams`;
    wherever a method takes ``model``, a :class:`ModelSpec` outside the zoo works too. Missing models use
    :func:`perfmodel.params.default_params` under ``calibration``: ``"flat"`` (default: the flat DP
    all-reduce, no per-machine GPU counts, :data:`~perfmodel.params.FLAT_PARAMS`: the previous round's
    model, whose throughput depends on a placement only through its links, as the exact joint model
    assumes), ``"fitted"`` (ours, hierarchical all-reduce over the per-machine counts, fitted on
    the Rubick artifact's measured tables, effective bandwidths included), ``"measured"`` (the measured
    iteration time wherever the tables hold the exact model, plan, placement and batch, the fitted model
    elsewhere: :mod:`perfmodel.measured`; ``measured`` = a :class:`MeasuredTimes` or the tables' directory,
    default ``../shared/traces/rubick/placements``) or ``"artifact"`` (the artifact's shipped fits,
    converted; the topology's bandwidths). ``measured_hits`` / ``measured_misses`` count the time
    queries the tables answered / the fitted model answered under ``"measured"``.
    """

    def __init__(self, cluster: Cluster, params: Mapping[str, PerfParams] | None = None, *,
                 calibration: str = DEFAULT_CALIBRATION, measured: MeasuredTimes | str | None = None) -> None:
        if calibration not in CALIBRATIONS:
            raise SpecError(f"unknown calibration {calibration!r}; known: {', '.join(CALIBRATIONS)}",
                            source="<PerfModel>", field="calibration")
        self.cluster = cluster
        self.calibration = calibration
        self.hierarchical = calibration not in FLAT_CALIBRATIONS  # per-machine counts enter the all-reduce
        self.measured: MeasuredTimes | None = None
        if calibration == "measured":
            self.measured = measured if isinstance(measured, MeasuredTimes) else load_measured(measured)
        self.measured_hits = 0
        self.measured_misses = 0
        self._params: dict[str, PerfParams] = {}
        for name, p in (params or {}).items():
            self._params[self.spec(name).name] = p
        self._env_cache: dict[tuple, Env] = {}
        self._bw_cache: dict[tuple, tuple[float, float, bool, bool]] = {}
        self._table_cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._shape_cache: dict[tuple, cv.ShapeEval] = {}
        self._shapes_cache: dict[tuple, tuple[tuple[cv.ShapeEval, ...], ...]] = {}
        self._best_cache: dict[tuple, tuple[ExecutionPlan, float] | None] = {}
        self._curve_cache: dict[tuple, cv.Curve] = {}

    # ------------------------------------------------------------------ basics
    def spec(self, model: str | ModelSpec) -> ModelSpec:
        return model if isinstance(model, ModelSpec) else get_model(model)

    @staticmethod
    def _mkey(spec: ModelSpec):
        """Cache key of a model: its zoo name, or the spec itself when it is not the zoo's entry (a
        custom :class:`ModelSpec` may share a zoo name with other dimensions)."""
        return spec.name if MODELS.get(spec.name) is spec else spec

    def params_for(self, model: str | ModelSpec) -> PerfParams:
        """The installed parameters of ``model`` (a zoo name/alias or a :class:`ModelSpec`)."""
        name = self.spec(model).name
        return self._params.get(name) or default_params(name, self.calibration)

    def set_params(self, model: str | ModelSpec, params: PerfParams) -> None:
        """Install refitted parameters (caches are keyed by them, so nothing stale is served)."""
        self._params[self.spec(model).name] = params

    def env(self, placement: Mapping[str, int] | str | tuple[int, ...]) -> Env:
        """The environment of ``placement``: ``{machine: gpus}`` (values may be ``Resources``), or the GPU
        counts per machine (``"44"``, ``(4, 4)``) laid on the cluster's reference machines
        (:func:`perfmodel.environment.counts_placement`)."""
        if not isinstance(placement, Mapping):
            placement = counts_placement(self.cluster, placement)
        key = tuple(sorted((m, int(getattr(k, "gpus", k))) for m, k in placement.items()
                           if getattr(k, "gpus", k)))
        e = self._env_cache.get(key)
        if e is None:
            if not key:
                raise PlanError("empty placement: a job needs at least one GPU")
            e = self._env_cache[key] = placement_env(self.cluster, dict(key))
        return e

    def _batch(self, spec: ModelSpec, global_batch: int | None) -> int:
        b = int(global_batch or spec.global_batch)
        if b < 1:
            raise SpecError(f"global batch must be >= 1, got {b}", source=f"<model {spec.name}>",
                            field="global_batch")
        return b

    def _table(self, spec: ModelSpec, b: int, env: Env) -> tuple[np.ndarray, np.ndarray]:
        """Feasible plan rows for ``env`` and their per-GPU memory (GB)."""
        key = (self._mkey(spec), b, env.gpus, tp_group_limit(env.counts), env.gpu_memory_gb)
        hit = self._table_cache.get(key)
        if hit is None:
            rows = structural_table(spec, env.gpus, tp_group_limit(env.counts), b)
            mem = memory_columns(spec, rows, b)
            ok = mem <= env.gpu_memory_gb + 1e-9
            hit = self._table_cache[key] = (rows[ok], mem[ok])
        return hit

    def _group_bw(self, env: Env, d: int, t: int, p: int) -> tuple[float, float, bool, bool]:
        """``(B_dp, B_pp, dp_inter, pp_inter)`` of plan ``(d, t, p)`` on ``env`` (cached per placement and
        degrees; :func:`perfmodel.environment.group_links`)."""
        multi = env.machines > 1
        if not multi or (t == 1 and p == 1):
            return env.bw_dp, env.bw_dp, multi, multi
        key = (env.placement, d, t, p)
        hit = self._bw_cache.get(key)
        if hit is None:
            hit = self._bw_cache[key] = group_links(self.cluster, env, d, t, p)
        return hit

    def _dp_shape(self, env: Env, d: int, t: int, p: int) -> tuple[int, int, int, int]:
        """``(k, n_max, n_min, odd)`` of the slowest DP group (:func:`perfmodel.environment.dp_group_shape`)."""
        if env.machines == 1 or (t == 1 and p == 1):
            return env.machines, max(env.counts), min(env.counts), odd_counts(env.counts)
        key = ("shape", env.placement, d, t, p)
        hit = self._bw_cache.get(key)
        if hit is None:
            hit = self._bw_cache[key] = dp_group_shape(env, d, t, p)
        return hit

    def _arrays(self, rows: np.ndarray, env: Env, cpus) -> PlanArrays:
        """Columns of ``rows`` on ``env``; the DP groups' per-machine shape only when :attr:`hierarchical`."""
        f = rows.astype(float)
        n = len(rows)
        bw_dp, bw_pp = np.full(n, env.bw_dp), np.full(n, env.bw_dp)
        multi_machine = 1.0 if env.machines > 1 else 0.0
        dp_x, pp_x = np.full(n, multi_machine), np.full(n, multi_machine)
        k_m = np.full(n, float(env.machines))
        n_max, n_min = np.full(n, float(max(env.counts))), np.full(n, float(min(env.counts)))
        odd = np.full(n, float(odd_counts(env.counts)))
        if env.machines > 1 and n:
            multi = np.nonzero((rows[:, 1] > 1) | (rows[:, 2] > 1))[0]
            if multi.size:
                trip, inv = np.unique(rows[multi, :3], axis=0, return_inverse=True)
                bws = np.array([self._group_bw(env, int(d), int(t), int(p))
                                + (self._dp_shape(env, int(d), int(t), int(p)) if self.hierarchical else (0, 0, 0, 0))
                                for d, t, p in trip], dtype=float)
                j = inv.ravel()
                bw_dp[multi], bw_pp[multi], dp_x[multi], pp_x[multi] = bws[j, 0], bws[j, 1], bws[j, 2], bws[j, 3]
                k_m[multi], n_max[multi], n_min[multi], odd[multi] = bws[j, 4], bws[j, 5], bws[j, 6], bws[j, 7]
        return PlanArrays(dp=f[:, 0], tp=f[:, 1], pp=f[:, 2], mb=f[:, 3], ga=f[:, 4], gc=f[:, 5], zero=f[:, 6],
                          bw_dp=bw_dp, bw_tp=np.full(n, env.bw_tp), bw_pcie=np.full(n, env.bw_pcie),
                          cpus=np.broadcast_to(np.asarray(cpus, dtype=float), (n,)).astype(float), bw_pp=bw_pp,
                          dp_inter=dp_x, pp_inter=pp_x, **(dict(k_mach=k_m, n_max=n_max, n_min=n_min, odd=odd)
                                                           if self.hierarchical else {}))

    # ------------------------------------------------------------ measured calibration
    def _testbed(self, env: Env) -> bool:
        return all((self.cluster.machine(m).gpu_model, self.cluster.machine(m).gpus) == TESTBED_MACHINE
                   for m, _ in env.placement)

    def _measured_time(self, spec: ModelSpec, plan: ExecutionPlan, env: Env, b: int, cpus: float) -> float | None:
        """The measured time of ``plan`` on ``env`` (:mod:`perfmodel.measured`), None where the tables lack
        it; a ZeRO-Offload plan at another CPU count: ``T_meas(c0) x T_fit(c) / T_fit(c0)``. Counted."""
        hit = None
        if MODELS.get(spec.name) is spec and self._testbed(env):
            hit = self.measured.lookup(spec.name, plan, env.counts, b, float(cpus))
        if hit is None:
            self.measured_misses += 1
            return None
        self.measured_hits += 1
        t, c0 = hit
        if c0 is None:
            return t
        return t * self._fitted_time(spec, plan, env, b, cpus) / self._fitted_time(spec, plan, env, b, c0)

    def _fitted_time(self, spec: ModelSpec, plan: ExecutionPlan, env: Env, b: int, cpus: float) -> float:
        bw_dp, bw_pp, dp_x, pp_x = self._group_bw(env, plan.dp, plan.tp, plan.pp)
        return iteration_time_scalar(spec, self.params_for(spec), plan_to_row(plan), bw_dp, env.bw_tp,
                                     env.bw_pcie, float(cpus), b, bw_pp=bw_pp, dp_inter=dp_x, pp_inter=pp_x,
                                     dp_shape=self._dp_shape(env, plan.dp, plan.tp, plan.pp)
                                     if self.hierarchical else None)

    # ------------------------------------------------------------ predictions
    def components(self, model: str, plan: ExecutionPlan, placement: Mapping[str, int], cpus: int, *,
                   global_batch: int | None = None) -> dict[str, float]:
        """Every term of the iteration-time model (seconds) for one plan on one placement."""
        spec = self.spec(model)
        env = self.env(placement)
        if plan.gpus != env.gpus:
            raise PlanError(f"plan {plan.name} uses {plan.gpus} GPUs but the placement has {env.gpus}")
        arr = self._arrays(np.array([plan_to_row(plan)]), env, cpus)
        comp = components(spec, self.params_for(spec), arr, global_batch=self._batch(spec, global_batch))
        return {k: float(v[0]) for k, v in comp.items()}

    def iteration_time(self, model: str, plan: ExecutionPlan, placement: Mapping[str, int], cpus: int, *,
                       global_batch: int | None = None) -> float:
        """``T_iter`` in seconds (the formula, or under ``"measured"`` the measured time where the tables
        hold it; validity is :meth:`plan_problem`'s business)."""
        spec = self.spec(model)
        env = self.env(placement)
        if plan.gpus != env.gpus:
            raise PlanError(f"plan {plan.name} uses {plan.gpus} GPUs but the placement has {env.gpus}")
        b = self._batch(spec, global_batch)
        if self.measured is not None:
            t = self._measured_time(spec, plan, env, b, cpus)
            if t is not None:
                return t
        return self._fitted_time(spec, plan, env, b, cpus)

    def throughput(self, model: str, plan: ExecutionPlan, placement: Mapping[str, int], cpus: int, *,
                   global_batch: int | None = None) -> float:
        """Samples per second: ``global batch / T_iter``."""
        spec = self.spec(model)
        b = self._batch(spec, global_batch)
        return b / self.iteration_time(spec, plan, placement, cpus, global_batch=b)

    def throughputs(self, model: str, plans: Iterable[ExecutionPlan], placement: Mapping[str, int],
                    cpus, *, global_batch: int | None = None) -> np.ndarray:
        """Vectorised :meth:`throughput` for many plans (``cpus`` scalar or one per plan)."""
        spec = self.spec(model)
        env = self.env(placement)
        b = self._batch(spec, global_batch)
        plans = list(plans)
        rows = np.array([plan_to_row(p) for p in plans], dtype=np.int64).reshape(-1, 7)
        if rows.size and np.any(rows[:, 0] * rows[:, 1] * rows[:, 2] != env.gpus):
            raise PlanError(f"every plan must use the placement's {env.gpus} GPUs")
        t = components(spec, self.params_for(spec), self._arrays(rows, env, cpus), global_batch=b)["iter"]
        if self.measured is not None:
            cs = np.broadcast_to(np.asarray(cpus, dtype=float), (len(plans),))
            for i, (p, c) in enumerate(zip(plans, cs, strict=True)):
                m = self._measured_time(spec, p, env, b, float(c))
                if m is not None:
                    t[i] = m
        return b / t

    def plan_problem(self, model: str, plan: ExecutionPlan, placement: Mapping[str, int], cpus: int | None = None,
                     *, global_batch: int | None = None) -> str | None:
        """Why ``plan`` is not valid on ``placement`` (structure, memory, CPUs), or None."""
        spec = self.spec(model)
        env = self.env(placement)
        b = self._batch(spec, global_batch)
        why = structural_problem(spec, plan, env.counts, b)
        if why:
            return why
        mem = float(memory_columns(spec, np.array([plan_to_row(plan)]), b)[0])
        if mem > env.gpu_memory_gb + 1e-9:
            return f"needs {mem:.1f} GB per GPU, GPUs have {env.gpu_memory_gb:g} GB"
        if cpus is not None and cpus < cv.MIN_CPUS_PER_GPU * env.gpus:
            return f"{cpus} CPUs for {env.gpus} GPUs (need {cv.MIN_CPUS_PER_GPU} per GPU)"
        return None

    def enumerate_plans(self, model: str, placement: Mapping[str, int], cpus: int | None = None, *,
                        global_batch: int | None = None) -> list[ExecutionPlan]:
        """Every valid plan (structure + memory; with ``cpus``, at least one core per GPU)."""
        spec = self.spec(model)
        env = self.env(placement)
        if cpus is not None and cpus < cv.MIN_CPUS_PER_GPU * env.gpus:
            return []
        rows, _ = self._table(spec, self._batch(spec, global_batch), env)
        return [row_to_plan(r) for r in rows]

    def best_plan(self, model: str, placement: Mapping[str, int], cpus: int, *,
                  global_batch: int | None = None) -> tuple[ExecutionPlan, float] | None:
        """The fastest valid plan on ``placement`` with ``cpus`` cores and its throughput, or None."""
        spec = self.spec(model)
        env = self.env(placement)
        b = self._batch(spec, global_batch)
        key = (self._mkey(spec), self.params_for(spec), b, env.placement, int(cpus))
        if key in self._best_cache:
            return self._best_cache[key]
        out = None
        if cpus >= cv.MIN_CPUS_PER_GPU * env.gpus:
            shape = self._shape(spec, b, env)
            t, idx = shape.best_over_cpus(np.array([min(cpus, env.cpu_capacity)], dtype=float))
            if np.isfinite(t[0]):
                out = row_to_plan(shape.rows[idx[0]]), b / float(t[0])
        if len(self._best_cache) > MAX_CACHED_BEST:  # bounded: a long simulation sees many placements
            self._best_cache.clear()
        self._best_cache[key] = out
        return out

    # ------------------------------------------------------------- shapes
    def _shape(self, spec: ModelSpec, b: int, env: Env) -> cv.ShapeEval:
        params = self.params_for(spec)
        key = (self._mkey(spec), params, b, env.placement)
        hit = self._shape_cache.get(key)
        if hit is not None:
            return hit
        rows, mem = self._table(spec, b, env)
        comp = components(spec, params, self._arrays(rows, env, 1.0), global_batch=b)
        off = rows[:, 6] == 2
        t_fixed = np.where(off, np.inf, comp["iter"])
        off_idx = np.nonzero(off)[0]
        base = comp["cc"][off] + overlap(comp["dp1"][off], comp["off"][off], params.k_off) + params.k_const
        host = host_memory_bytes(spec, gpus=env.gpus, zero=rows[:, 6]) / GB_BYTES if rows.size else np.zeros(0)
        off_t, off_k = comp["off"][off], np.full(off_idx.size, params.k_opt_off * spec.params / 1e6)
        if self.measured is not None and MODELS.get(spec.name) is spec and self._testbed(env):
            t_fixed, base, off_t, off_k = measured_columns(  # the tables' times where they hold them
                self.measured, spec.name, b, env.counts, rows, t_fixed, off_idx, base, off_t, off_k, params.k_swap)
        hit = cv.ShapeEval(env=env, rows=rows, t_fixed=t_fixed, off_idx=off_idx, off_base=base,
                           off_t=off_t, off_k=off_k, k_swap=params.k_swap, gpu_mem_gb=mem, host_mem_gb=host)
        if len(self._shape_cache) > MAX_CACHED_SHAPES:  # bounded (the curves keep what they use)
            self._shape_cache.clear()
        self._shape_cache[key] = hit
        return hit

    def _shapes(self, spec: ModelSpec, b: int, max_gpus: int) -> tuple[tuple[cv.ShapeEval, ...], ...]:
        """For g = 1..max_gpus, the evaluated canonical placements of g GPUs (built lazily, cached)."""
        key = (self._mkey(spec), self.params_for(spec), b)
        hit = self._shapes_cache.get(key, ())
        if len(hit) < max_gpus:
            hit = hit + tuple(tuple(self._shape(spec, b, self.env(p)) for p in shape_placements(self.cluster, g))
                              for g in range(len(hit) + 1, max_gpus + 1))
            self._shapes_cache[key] = hit
        return hit[:max_gpus]

    def _max_gpus(self, max_gpus: int | None) -> int:
        return min(max_gpus or self.cluster.total_gpus, self.cluster.total_gpus)


__all__ = ["DEFAULT_CPUS_PER_GPU_CHOICES", "PerfModel"]
