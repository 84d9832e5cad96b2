"""Sensitivity queries of :class:`perfmodel.PerfModel` (the resource-sensitivity layer over the point
predictions): best-throughput surfaces, GPU / CPU curves and their slopes, Pareto resource options and
Rubick's minRes.

Everything here reads the evaluated canonical placements of the model (``PerfModel._shapes``: one
:class:`perfmodel.curves.ShapeEval` per placement shape, cached per parameters) and the point
predictions (``throughput``, ``best_plan``, ``plan_problem``); nothing here evaluates the
iteration-time formulas itself. :class:`SensitivityQueries` is a mixin: ``PerfModel`` supplies
``cluster``, ``spec``, ``_mkey``, ``params_for``, ``_batch``, ``_shapes``, ``_max_gpus`` and the
``_curve_cache`` dict.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from schedlab.perfmodel import curves as cv
from schedlab.perfmodel.environment import shape_placements
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.perfmodel.search import row_to_plan
from schedlab.perfmodel.zoo import ModelSpec
from schedlab.topology.errors import SpecError

RESOURCES = ("gpu", "cpu")
DEFAULT_CPUS_PER_GPU_CHOICES = (1, 2, 4, 8, 12)
MAX_CACHED_CURVES = 50_000


class SensitivityQueries:
    """Surfaces, curves, slopes, options and minRes (mixin of :class:`perfmodel.PerfModel`)."""

    def surface(self, model: str, *, max_gpus: int | None = None, max_cpus: int | None = None,
                global_batch: int | None = None) -> np.ndarray:
        """Best throughput for every (GPUs, CPUs): array ``[g - 1, c - 1]`` (0 where infeasible)."""
        spec = self.spec(model)
        b = self._batch(spec, global_batch)
        gmax = self._max_gpus(max_gpus)
        cmax = int(max_cpus or self.cluster.total_cpus)
        cpus = np.arange(1, cmax + 1, dtype=float)
        out = np.full((gmax, cmax), np.inf)
        for gi, shapes in enumerate(self._shapes(spec, b, gmax)):
            for sh in shapes:
                out[gi] = np.minimum(out[gi], sh.best_over_cpus(cpus)[0])
        with np.errstate(divide="ignore"):
            return np.where(np.isfinite(out), b / out, 0.0)

    def _best_for(self, shapes, cpus: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Best T over ``shapes`` for each CPU count, the index of the shape reaching it and its row
        (inf / -1 / -1 where nothing is feasible)."""
        if not shapes:
            return np.full(cpus.shape, np.inf), np.full(cpus.shape, -1), np.full(cpus.shape, -1)
        res = [sh.best_over_cpus(cpus) for sh in shapes]
        times = np.stack([r[0] for r in res])
        rows = np.stack([r[1] for r in res])
        k = np.argmin(times, axis=0)
        cols = np.arange(cpus.size)
        best = times[k, cols]
        ok = np.isfinite(best)
        return best, np.where(ok, k, -1), np.where(ok, rows[k, cols], -1)

    def curve(self, model: str, resource: str = "gpu", *, cpus: int | None = None, gpus: int | None = None,
              max_amount: int | None = None, global_batch: int | None = None) -> cv.Curve:
        """Sensitivity curve. ``gpu``: amounts 1..max GPUs, CPUs fixed at ``cpus`` (default: all cores
        of the machines spanned); ``cpu``: amounts 1..max CPUs with ``gpus`` GPUs (default 1)."""
        if resource not in RESOURCES:
            raise SpecError(f"resource must be one of {RESOURCES}, got {resource!r}", source="<curve>",
                            field="resource")
        spec = self.spec(model)
        b = self._batch(spec, global_batch)
        key = (self._mkey(spec), self.params_for(spec), b, resource, cpus, gpus, max_amount)
        hit = self._curve_cache.get(key)
        if hit is None:
            if len(self._curve_cache) > MAX_CACHED_CURVES:
                self._curve_cache.clear()
            hit = self._curve_cache[key] = self._curve(spec, b, resource, cpus, gpus, max_amount)
        return hit

    def _curve(self, spec: ModelSpec, b: int, resource: str, cpus: int | None, gpus: int | None,
               max_amount: int | None) -> cv.Curve:
        all_shapes = self._shapes(spec, b, self.cluster.total_gpus)
        if resource == "gpu":
            gmax = self._max_gpus(max_amount)
            amounts = np.arange(1, gmax + 1)
            raw_t = np.full(gmax, np.inf)
            who: list = [None] * gmax
            for gi, shapes in enumerate(all_shapes[:gmax]):
                for sh in shapes:
                    c = float(min(cpus, sh.env.cpu_capacity)) if cpus is not None else float(sh.env.cpu_capacity)
                    t, idx = sh.best_over_cpus(np.array([c]))
                    if t[0] < raw_t[gi]:
                        raw_t[gi], who[gi] = t[0], (sh, int(idx[0]))
            fixed = cpus
        else:
            g = int(gpus or 1)
            cmax = int(max_amount or self.cluster.total_cpus)
            amounts = np.arange(1, cmax + 1)
            shapes = all_shapes[g - 1] if 1 <= g <= len(all_shapes) else ()
            raw_t, k, row = self._best_for(shapes, amounts.astype(float))
            who = None
            fixed = g
        with np.errstate(divide="ignore"):
            raw = np.where(np.isfinite(raw_t), b / raw_t, 0.0)
        env, at = cv.envelope(raw)
        plans, machines, memo = [], [], {}
        for i in at.tolist():
            if raw[i] <= 0:
                plans.append(None)
                machines.append(0)
                continue
            sh, r = who[i] if who is not None else (shapes[k[i]], int(row[i]))
            key = (id(sh), r)
            if key not in memo:
                memo[key] = (row_to_plan(sh.rows[r]), sh.env.machines)
            plans.append(memo[key][0])
            machines.append(memo[key][1])
        for arr in (amounts, env, raw):  # cached and shared: read-only
            arr.setflags(write=False)
        return cv.Curve(model=spec.name, resource=resource, fixed=fixed, amounts=amounts, throughput=env, raw=raw,
                        plans=tuple(plans), machines=tuple(machines))

    def slope(self, model: str, resource: str, amount: int, *, delta: int = 1, normalize: str = "relative",
              reference: int | None = None, **fixed) -> float:
        """Throughput gain per unit of ``resource`` going from ``amount`` to ``amount + delta`` on the
        envelope. ``normalize``: ``"none"`` (samples/s per unit) or ``"relative"`` (divided by the
        envelope throughput at ``reference``, default ``max(amount, 1)``: comparable across models).
        Negative ``delta`` gives the loss per unit of giving resources back."""
        c = self.curve(model, resource, **fixed)
        gain = (c.at(amount + delta) - c.at(amount)) / delta
        if normalize == "none":
            return gain
        if normalize != "relative":
            raise SpecError(f"normalize must be 'none' or 'relative', got {normalize!r}", source="<slope>",
                            field="normalize")
        ref = c.at(reference if reference is not None else max(amount, 1))
        return gain / ref if ref > 0 else 0.0

    def options(self, model: str, *, max_gpus: int | None = None,
                cpus_per_gpu_choices: Iterable[int] = DEFAULT_CPUS_PER_GPU_CHOICES,
                global_batch: int | None = None) -> list[cv.ResourceOption]:
        """Pareto-optimal resource options (each with its best plan) for the joint formulations."""
        spec = self.spec(model)
        b = self._batch(spec, global_batch)
        out: list[cv.ResourceOption] = []
        choices = sorted({int(c) for c in cpus_per_gpu_choices if c >= cv.MIN_CPUS_PER_GPU})
        for shapes in self._shapes(spec, b, self._max_gpus(max_gpus)):
            for sh in shapes:
                g = sh.env.gpus
                cpus = np.array([c * g for c in choices if c * max(sh.env.counts) <=
                                 min(self.cluster.machine(m).cpus for m, _ in sh.env.placement)], dtype=float)
                if cpus.size == 0:
                    continue
                t, idx = sh.best_over_cpus(cpus)
                for c, tt, i in zip(cpus, t, idx, strict=True):
                    if np.isfinite(tt):
                        out.append(cv.ResourceOption(
                            gpus=g, cpus=int(c), machines=sh.env.machines, throughput=b / float(tt),
                            plan=row_to_plan(sh.rows[i]), host_mem_gb=float(sh.host_mem_gb[i]),
                            gpu_mem_gb=float(sh.gpu_mem_gb[i])))
        return cv.pareto(out)

    def min_resources(self, model: str, requested_gpus: int, requested_cpus: int,
                      requested_plan: ExecutionPlan | None = None, *, global_batch: int | None = None
                      ) -> tuple[int, int, ExecutionPlan]:
        """Rubick's minRes: the fewest GPUs, then CPUs (any plan, canonical placements) reaching the
        throughput of the requested resources and plan; never above the request; else the request."""
        spec = self.spec(model)
        b = self._batch(spec, global_batch)
        req_plan = requested_plan or ExecutionPlan(dp=requested_gpus)
        shapes = self._shapes(spec, b, min(requested_gpus, self.cluster.total_gpus))
        target = 0.0
        for p in shape_placements(self.cluster, requested_gpus):
            if self.plan_problem(spec, req_plan, p, requested_cpus, global_batch=b) is None:
                target = max(target, self.throughput(spec, req_plan, p, requested_cpus, global_batch=b))
        if target <= 0:
            best = [self.best_plan(spec, p, requested_cpus, global_batch=b)
                    for p in shape_placements(self.cluster, requested_gpus)]
            best = [x for x in best if x is not None]
            if not best:
                return requested_gpus, requested_cpus, req_plan
            target = max(t for _, t in best)
        cpus = np.arange(1, requested_cpus + 1, dtype=float)
        for g in range(1, min(requested_gpus, len(shapes)) + 1):
            t, k, row = self._best_for(shapes[g - 1], cpus)
            ok = np.nonzero(np.isfinite(t) & (b / np.where(np.isfinite(t), t, np.inf) >= target * (1 - 1e-9)))[0]
            if ok.size:
                j = int(ok[0])
                return g, int(cpus[j]), row_to_plan(shapes[g - 1][k[j]].rows[row[j]])
        return requested_gpus, requested_cpus, req_plan


__all__ = ["DEFAULT_CPUS_PER_GPU_CHOICES", "RESOURCES", "SensitivityQueries"]
