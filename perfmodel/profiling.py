"""Profiles read from a measured table's *fit rows* only (what a profiler run on the fit configurations
would measure): the forward time (:func:`profiled_forward`, ``--forward profiled``) and the optimizer step
(:func:`profiled_k_opt`, ``--optimizer profiled``). Used by :mod:`perfmodel.validation`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from schedlab.perfmodel.plans import ZeroMode
from schedlab.perfmodel.tables import TableRow

# The profiled optimizer step is trusted only where the fit rows' plain-DP steps agree across DP degrees
# within this ratio (max / min): plain DP updates all P parameters on every GPU whatever d.
OPT_PROFILE_SPREAD = 1.25


def profiled_forward(rows: Sequence[TableRow], fit_idx: Sequence[int], batch: int) -> list[float | None]:
    """Forward time (s, whole iteration) of every non-3D row, interpolated log-log over the per-GPU
    batch ``b / d`` between the measured forward times of the fit rows (module docstring); None where
    nothing was profiled (then the zoo's is used)."""
    pts: dict[float, list[float]] = {}
    for i in fit_idx:
        r = rows[i]
        if r.forward_s and not r.plan.is_3d:
            pts.setdefault(batch / r.plan.dp, []).append(math.log(r.forward_s))
    if not pts:
        return [None] * len(rows)
    xs = np.log(sorted(pts))
    ys = np.array([float(np.mean(pts[x])) for x in sorted(pts)])

    def at(x: float) -> float:
        lx = math.log(x)
        if len(xs) == 1:
            return math.exp(ys[0] + lx - xs[0])  # one profile point: linear scaling
        if lx < xs[0]:
            return math.exp(ys[0] + (lx - xs[0]) * (ys[1] - ys[0]) / (xs[1] - xs[0]))
        if lx > xs[-1]:
            return math.exp(ys[-1] + (lx - xs[-1]) * (ys[-1] - ys[-2]) / (xs[-1] - xs[-2]))
        return math.exp(float(np.interp(lx, xs, ys)))

    return [None if r.plan.is_3d else at(batch / r.plan.dp) for r in rows]


def profiled_k_opt(rows: Sequence[TableRow], fit_idx: Sequence[int], params: float) -> float | None:
    """``k_opt`` (s per 10^6 parameters) from the measured ``optimize`` column of the *fit rows* only: the
    plain-DP (no ZeRO, no TP/PP) rows on one machine, whose step updates all ``P`` parameters on every GPU
    (``T_opt = k_opt P'``, the paper's profiling of the optimizer); the median of ``optimize / P'``. None
    (``k_opt`` is then fitted) where fewer than two such rows at two or more DP degrees exist, or where
    their steps differ by more than :data:`OPT_PROFILE_SPREAD` (the column then holds something else, e.g.
    ViT's, which falls with ``d``)."""
    pts = [(rows[i].plan.dp, rows[i].optimize_s) for i in fit_idx
           if rows[i].optimize_s and rows[i].machines == 1 and not rows[i].plan.is_3d
           and rows[i].plan.zero is ZeroMode.NONE]
    if len(pts) < 2 or len({d for d, _ in pts}) < 2:
        return None
    ts = [t for _, t in pts]
    if max(ts) > OPT_PROFILE_SPREAD * min(ts):
        return None
    return float(np.median(ts)) / (params / 1e6)


__all__ = ["OPT_PROFILE_SPREAD", "profiled_forward", "profiled_k_opt"]
