r"""A lower bound on average JCT / makespan valid for **preemptive** schedules (method
``offline-preemptive``).

The non-preemptive optimum (:mod:`formulations.offline`) is not a bound for a policy that preempts:
one GPU, A arrives at 0 and runs 10 s, B arrives at 1 and runs 1 s; the best non-preemptive
schedule has average JCT 6.5 (B first, A waits), preemptive SRPT reaches 6.0 (A runs 0-1, B 1-2, A
2-11). This module bounds every preemptive schedule of rigid gangs (job :math:`j`: arrival
:math:`r_j`, duration :math:`d_j` at its :math:`g_j` GPUs, preemption and resumption free) on
:math:`G` free GPUs by relaxations solved exactly:

* **per job**: :math:`C_j \ge r_j + d_j`;
* **fluid**: at most :math:`G` GPU-seconds of work are done per second, so the schedule is feasible
  for one machine of speed :math:`G` processing work :math:`g_j d_j`; SRPT is optimal there for
  :math:`\sum_j C_j` (Schrage 1968, also against processor sharing);
* **per GPU count** (:math:`k = 1, 2, \dots`): jobs with :math:`g_j > G / (k + 1)` never run more than
  :math:`k` at a time, so they are feasible for one machine of speed :math:`k` processing work
  :math:`d_j` (SRPT again); the other jobs contribute :math:`r_j + d_j`.

Average JCT: the largest of these bounds on :math:`\frac1n\sum_j (C_j - r_j)`. Makespan: the
largest of :math:`\max_j (r_j + d_j)`, :math:`t + \sum_{r_j \ge t} g_j d_j / G` and
:math:`t + \sum_{r_j \ge t, g_j > G/(k+1)} d_j / k` over arrival times :math:`t`. Every bound is also
valid for non-preemptive schedules, so ``offline-nonpreemptive`` uses it to strengthen its own.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass


@dataclass(frozen=True)
class PreemptiveBound:
    """``value`` (the bound) and each relaxation's value (``parts``)."""

    value: float
    parts: dict[str, float]


def srpt_completions(jobs: list[tuple[float, float]], speed: float) -> list[float]:
    """Completion times of preemptive SRPT on one machine of ``speed`` for ``(release, work)`` jobs
    (in input order)."""
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i][0], i))
    done = [0.0] * len(jobs)
    heap: list[tuple[float, int]] = []
    t = 0.0
    k = 0
    while k < len(order) or heap:
        if not heap:
            t = max(t, jobs[order[k]][0])
        while k < len(order) and jobs[order[k]][0] <= t:
            i = order[k]
            heapq.heappush(heap, (jobs[i][1], i))
            k += 1
        rem, i = heapq.heappop(heap)
        nxt = jobs[order[k]][0] if k < len(order) else float("inf")
        finish = t + rem / speed
        if finish <= nxt:
            t = finish
            done[i] = t
        else:
            heapq.heappush(heap, (rem - (nxt - t) * speed, i))
            t = nxt
    return done


def preemptive_bound(jobs: list[tuple[float, float, int]], gpus: int, objective: str = "avg-jct") -> PreemptiveBound:
    """The bound for ``(arrival, duration, gpus)`` jobs on ``gpus`` free GPUs (module docstring)."""
    if not jobs:
        return PreemptiveBound(0.0, {})
    n = len(jobs)
    G = float(gpus)
    parts: dict[str, float] = {}
    counts = sorted({gpus // g for _, _, g in jobs if 0 < g <= gpus})  # where {j: g_j > G/(k+1)} changes
    if objective == "makespan":
        parts["per-job"] = max(r + d for r, d, _ in jobs)
        starts = sorted({r for r, _, _ in jobs})
        parts["fluid"] = max(t + sum(g * d for r, d, g in jobs if r >= t) / G for t in starts)
        for k in counts:
            big = [(r, d) for r, d, g in jobs if g > G / (k + 1)]
            parts[f"at-most-{k}"] = max(t + sum(d for r, d in big if r >= t) / k for t in starts)
    else:
        parts["per-job"] = sum(d for _, d, _ in jobs) / n
        fluid = srpt_completions([(r, g * d) for r, d, g in jobs], G)
        parts["fluid"] = sum(c - r for c, (r, _, _) in zip(fluid, jobs, strict=True)) / n
        for k in counts:
            big = [(r, d) for r, d, g in jobs if g > G / (k + 1)]
            rest = sum(d for r, d, g in jobs if not g > G / (k + 1))
            done = srpt_completions(big, float(k))
            parts[f"at-most-{k}"] = (sum(c - r for c, (r, _) in zip(done, big, strict=True)) + rest) / n
    return PreemptiveBound(max(parts.values()), parts)


def bound_result(method: str, source: str, bound: PreemptiveBound, valid_for: str, backend: str, params, wall: float):
    """The :class:`~formulations.result.SolveResult` of a combinatorial bound (no schedule, no backend):
    ``primal = dual = bound.value``, its relaxations' values in the notes."""
    from schedlab.formulations.result import Bounds, Provenance, Reason, SolveResult, Termination, Timing

    parts = ", ".join(f"{k} {v:.6g}" for k, v in bound.parts.items())
    return SolveResult(Termination(Reason.OPTIMAL), Provenance(method, "none", source, 1, params.seed),
                       Bounds("min", bound.value, bound.value, params.rel_gap),
                       Timing(solve_s=wall, wall_s=wall, time_limit_s=params.time_limit_s),
                       notes=(f"lower bound for {valid_for} schedules; relaxations: {parts}",
                              f"backend {backend!r} not used: the bound is combinatorial"))


__all__ = ["PreemptiveBound", "bound_result", "preemptive_bound", "srpt_completions"]
