"""Result types of the facade: resource options, sensitivity curves, and the per-shape evaluation
that makes GPU x CPU grids cheap.

Only ZeRO-Offload depends on the CPU count (``T_opt = k_opt_off P' / c_total`` since ``g = d``), so a
shape (placement of ``g`` GPUs) is summarised by the best plan that does not use the CPUs (a scalar)
and the offload rows as ``T(c) = base + f_{k_swap}(K / c, T_off)``: a whole CPU axis is one
broadcast per shape.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedlab.perfmodel.environment import Env
from schedlab.perfmodel.iteration import overlap
from schedlab.perfmodel.plans import ExecutionPlan

MIN_CPUS_PER_GPU = 1  # every GPU worker process needs a core (artifact: 1 per GPU, 8 with ZeRO-Offload)


@dataclass(frozen=True, slots=True)
class ResourceOption:
    """One resource shape with its best plan: ``gpus`` on ``machines`` machines, ``cpus`` cores in all,
    ``throughput`` samples/s, per-GPU memory ``gpu_mem_gb`` and job host memory ``host_mem_gb``."""

    gpus: int
    cpus: int
    machines: int
    throughput: float
    plan: ExecutionPlan
    host_mem_gb: float
    gpu_mem_gb: float


@dataclass(frozen=True, slots=True)
class Curve:
    """A sensitivity curve: ``throughput[i]`` is the monotone envelope (best over amounts <= amount[i]),
    ``raw[i]`` the best at exactly ``amounts[i]`` (0 = invalid), ``plans[i]`` the plan reaching the
    envelope and ``machines[i]`` how many machines it spans (0 where nothing is feasible)."""

    model: str
    resource: str
    fixed: int | None
    amounts: np.ndarray
    throughput: np.ndarray
    raw: np.ndarray
    plans: tuple[ExecutionPlan | None, ...]
    machines: tuple[int, ...]

    def at(self, amount: int) -> float:
        """Envelope throughput at ``amount`` (0 below the first amount, flat beyond the last)."""
        if amount < self.amounts[0]:
            return 0.0
        i = min(int(amount) - int(self.amounts[0]), len(self.amounts) - 1)
        return float(self.throughput[i])

    def rows(self) -> list[dict]:
        return [{"amount": int(a), "throughput": float(t), "raw_throughput": float(r),
                 "plan": p.name if p else None, "canonical_plan": p.canonical() if p else None, "machines": k}
                for a, t, r, p, k in zip(self.amounts, self.throughput, self.raw, self.plans, self.machines,
                                         strict=True)]


@dataclass(frozen=True, slots=True)
class ShapeEval:
    """A placement's feasible plans, evaluated (see the module docstring)."""

    env: Env
    rows: np.ndarray          # (n, 7) plan columns, feasible in memory
    t_fixed: np.ndarray       # (n,) T_iter for rows not using CPUs; inf for offload rows
    off_idx: np.ndarray       # indices of offload rows
    off_base: np.ndarray      # T_cc + f_koff(T_dp, T_off) + k_const
    off_t: np.ndarray         # T_off
    off_k: np.ndarray         # k_opt_off * P / 10^6 (so T_opt = off_k / c_total)
    k_swap: float
    gpu_mem_gb: np.ndarray
    host_mem_gb: np.ndarray

    def best_fixed(self) -> tuple[float, int]:
        if self.t_fixed.size == 0:
            return np.inf, -1
        i = int(np.argmin(self.t_fixed))
        return float(self.t_fixed[i]), i

    def offload_times(self, cpus: np.ndarray) -> np.ndarray:
        """(n_off, len(cpus)) iteration times of the offload rows for each total CPU count."""
        c = np.asarray(cpus, dtype=float)[None, :]
        opt = self.off_k[:, None] / c
        return self.off_base[:, None] + overlap(opt, self.off_t[:, None], self.k_swap)

    def best_over_cpus(self, cpus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Best T and the row index reaching it for each CPU count (inf/-1 where infeasible)."""
        cpus = np.asarray(cpus, dtype=float)
        tf, i_f = self.best_fixed()
        best = np.full(cpus.shape, tf)
        idx = np.full(cpus.shape, i_f, dtype=np.int64)
        if self.off_idx.size:
            to = self.offload_times(cpus)
            j = np.argmin(to, axis=0)
            tj = to[j, np.arange(cpus.size)]
            better = tj < best
            best = np.where(better, tj, best)
            idx = np.where(better, self.off_idx[j], idx)
        ok = (cpus >= MIN_CPUS_PER_GPU * self.env.gpus) & (cpus <= self.env.cpu_capacity)
        return np.where(ok, best, np.inf), np.where(ok, idx, -1)


def envelope(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Running maximum of ``raw`` and, for each position, the index where it was reached."""
    env = np.maximum.accumulate(raw)
    pos = np.arange(raw.size)
    reached = np.where(raw >= env, pos, 0)
    return env, np.maximum.accumulate(reached)


def pareto(options: list[ResourceOption]) -> list[ResourceOption]:
    """Keep options not dominated by another spanning the same number of machines (no more GPUs,
    no more CPUs, at least the throughput, one of them strictly)."""
    keep = []
    for o in options:
        dominated = any(
            q is not o and q.machines == o.machines and q.gpus <= o.gpus and q.cpus <= o.cpus
            and q.throughput >= o.throughput
            and (q.gpus < o.gpus or q.cpus < o.cpus or q.throughput > o.throughput)
            for q in options)
        if not dominated:
            keep.append(o)
    return keep


__all__ = ["Curve", "MIN_CPUS_PER_GPU", "ResourceOption", "ShapeEval", "envelope", "pareto"]
