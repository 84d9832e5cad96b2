r"""A column-generation (Dantzig-Wolfe) lower bound for the rigid preemptive time-indexed offline model
(:mod:`formulations.offline_ti`, ``mode="total"``, average JCT): stronger than the time-indexed LP, cheap to
compute, and with an upper bound (a greedy schedule or a MIP incumbent) a proof of optimality where the
MIP alone stops at its limit.

**Master** (columns = whole schedules of one job): a column :math:`S` of job :math:`j` is a set of
:math:`d_j` distinct slots in :math:`[r_j, H_j)` (:math:`H_j`: the per-job horizons of
:func:`~formulations.offline_slots.horizons`, which keep one optimum), cost :math:`c(S) = \max S + 1` (its
completion slot). :math:`\min \sum_{j,S} c(S)\,\lambda_{jS}` s.t. :math:`\sum_S \lambda_{jS} = 1` per job,
:math:`\sum_{j,S \ni t} g_j \lambda_{jS} \le G` per slot, :math:`\lambda \ge 0`. Its LP optimum is the
Dantzig-Wolfe bound: each job's own constraints (work, release, horizon) are convexified, so it is at
least the time-indexed LP's value.

**Pricing** (exact, no solver): with slot prices :math:`p_t = -\pi_t \ge 0` (the capacity rows' duals),
the cheapest column of job :math:`j` completing at :math:`c` runs slot :math:`c - 1` and the
:math:`d_j - 1` cheapest slots of :math:`[r_j, c - 1)`: :math:`c + g_j (p_{c-1} + \text{those})`.

**Bound at every iteration** (Lagrangian, valid before convergence): for any :math:`p \ge 0`,
:math:`L(p) = \sum_j \min_S \bigl(c(S) + g_j p(S)\bigr) - G \sum_t p_t \le` the optimum; the best
:math:`L` over the iterations is returned, so a deadline never makes the bound invalid.

The bound is on :math:`\sum_j C_j` in slots, an integer: a schedule whose :math:`\sum_j C_j \le \lceil L
\rceil` is optimal (:func:`proves`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from schedlab.formulations.offline_slots import SlotJob


@dataclass(frozen=True)
class ColgenBound:
    """``bound``: the best Lagrangian bound on :math:`\\sum_j C_j` (slots); ``lp``: the last master LP value
    (equal to the Dantzig-Wolfe bound when ``converged``); ``iterations``, ``columns``."""

    bound: float
    lp: float
    converged: bool
    iterations: int
    columns: int

    def proves(self, sum_completions: int) -> bool:
        """Whether a feasible schedule of ``sum_completions`` (slots) is optimal by this bound."""
        return sum_completions <= math.ceil(self.bound - 1e-6)


def _price(job: SlotJob, gpus: int, horizon: int, p: np.ndarray) -> tuple[float, tuple[int, ...]]:
    """The cheapest column of ``job`` (``gpus`` per slot) at slot prices ``p``: (cost + priced use, slots)."""
    d, r = int(round(job.work)), job.release
    best, cols = math.inf, ()
    for c in range(r + d, horizon + 1):
        before = np.arange(r, c - 1)
        pick = before[np.argsort(p[r:c - 1], kind="stable")[:d - 1]] if d > 1 else before[:0]
        v = c + gpus * (p[c - 1] + float(p[pick].sum()))
        if v < best - 1e-12:
            best, cols = v, tuple(sorted(int(t) for t in (*pick, c - 1)))
    return best, cols


def colgen_bound(jobs: Sequence[SlotJob], gpus: int, hmax: Mapping[str, int],
                 start: Mapping[str, Sequence[int]], *, max_iter: int = 500, deadline: float | None = None
                 ) -> ColgenBound:
    """The bound of the module docstring for rigid ``jobs`` (``rates`` = ``{g: 1}``, integer ``work`` = slots)
    on ``gpus`` GPUs, each job within ``hmax``; ``start``: a feasible schedule (job -> its slots), the first
    columns. Stops at convergence, ``max_iter`` or the ``deadline`` (``time.monotonic()``)."""
    from scipy.optimize import linprog

    n = len(jobs)
    T = max(hmax[j.id] for j in jobs)
    g = [next(iter(j.rates)) for j in jobs]
    cols: list[tuple[int, tuple[int, ...]]] = [(i, tuple(sorted(start[j.id]))) for i, j in enumerate(jobs)]
    seen = set(cols)
    best, lp_val, it, converged = -math.inf, math.inf, 0, False
    while it < max_iter and (deadline is None or time.monotonic() < deadline):
        it += 1
        m = len(cols)
        cost = np.array([max(s) + 1 for _, s in cols], dtype=float)
        a_eq = np.zeros((n, m))
        a_ub = np.zeros((T, m))
        for k, (i, s) in enumerate(cols):
            a_eq[i, k] = 1.0
            a_ub[list(s), k] = g[i]
        res = linprog(cost, A_ub=a_ub, b_ub=np.full(T, float(gpus)), A_eq=a_eq, b_eq=np.ones(n),
                      bounds=(0, None), method="highs")
        if res.status != 0:
            break
        lp_val = float(res.fun)
        p = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0)
        mu = np.asarray(res.eqlin.marginals, dtype=float)
        lag = -gpus * float(p.sum())
        added = 0
        for i, j in enumerate(jobs):
            v, s = _price(j, g[i], hmax[j.id], p)
            lag += v
            if v - mu[i] < -1e-7 and (i, s) not in seen:
                seen.add((i, s))
                cols.append((i, s))
                added += 1
        best = max(best, lag)
        if not added:
            converged = True
            best = max(best, lp_val)
            break
    return ColgenBound(best, lp_val, converged, it, len(cols))


__all__ = ["ColgenBound", "colgen_bound"]
