r"""A fluid lower bound on average JCT / makespan for **resizable** jobs (method ``offline-fluid``),
valid on traces of any size (no solver; :math:`O(n \log n)`).

Job :math:`j`: arrival :math:`r_j`, work :math:`W_j`, speed :math:`s_j(k)` at :math:`k` GPUs
(:class:`~formulations.offline_resizable.ResizableJob`), :math:`G` GPUs in all. A schedule gives
each job a GPU count :math:`k_j(t)` with :math:`\sum_j k_j(t) \le G`, changed at any time (no slots,
free reconfiguration: every slotted schedule is one of these). Two relaxations, each solved exactly:

* **per job**: job :math:`j` progresses at most at :math:`\hat s_j = \max_{k \le G} s_j(k)`, so
  :math:`C_j \ge r_j + W_j / \hat s_j`.
* **GPU work** (the fluid part): let :math:`e_j = \max_{1 \le k \le G} s_j(k)/k` (best work per
  GPU-second; :math:`= s_j(1)` when the speed-up is concave with :math:`s_j(0) = 0`, but the max makes
  the bound valid for any curve). At every instant :math:`\dot w_j = s_j(k_j) \le e_j k_j`, so job
  :math:`j` consumes at least :math:`p_j = W_j/e_j` GPU-seconds before :math:`C_j`, at a total rate
  :math:`\sum_j k_j \le G`. The schedule is therefore feasible (truncating each job once it has
  received :math:`p_j`, which only makes it finish earlier) for one preemptive machine of speed
  :math:`G` processing works :math:`p_j` released at :math:`r_j`, where SRPT minimises
  :math:`\sum_j C_j` (Schrage 1968): :math:`\sum_j C_j \ge \sum_j C^{SRPT}_j`.

Average JCT: the larger of :math:`\frac1n\sum_j W_j/\hat s_j` and
:math:`\frac1n\sum_j (C^{SRPT}_j - r_j)`. Makespan: the larger of :math:`\max_j (r_j + W_j/\hat s_j)`
and :math:`\max_t \big(t + \sum_{r_j \ge t} p_j / G\big)` over arrival times :math:`t` (work released
at or after :math:`t` needs that long on :math:`G` GPUs). Both are <= the slotted optimum of
:mod:`formulations.offline_resizable` (a slotted schedule is a continuous one whose completions are
rounded up to slot ends).
"""

from __future__ import annotations

import time

from schedlab.formulations.offline_bounds import PreemptiveBound, bound_result, srpt_completions
from schedlab.formulations.offline_resizable import ResizableInstance
from schedlab.formulations.result import SolveParams, SolveResult


def fluid_bound(inst: ResizableInstance) -> PreemptiveBound:
    """The bound of the module docstring for ``inst`` (``slot`` is not used: continuous time)."""
    jobs = inst.jobs
    if not jobs:
        return PreemptiveBound(0.0, {})
    G = inst.gpus
    n = len(jobs)
    best = [j.best_rate(G) for j in jobs]
    eff = [max(v / k for k, v in j.speeds.items() if k <= G) for j in jobs]
    gpu_work = [j.work / e for j, e in zip(jobs, eff, strict=True)]
    parts: dict[str, float] = {}
    if inst.objective == "makespan":
        parts["per-job"] = max(j.arrival + j.work / s for j, s in zip(jobs, best, strict=True))
        starts = sorted({j.arrival for j in jobs})
        parts["fluid"] = max(t + sum(p for j, p in zip(jobs, gpu_work, strict=True) if j.arrival >= t) / G
                             for t in starts)
    else:
        parts["per-job"] = sum(j.work / s for j, s in zip(jobs, best, strict=True)) / n
        done = srpt_completions([(j.arrival, p) for j, p in zip(jobs, gpu_work, strict=True)], float(G))
        parts["fluid"] = sum(c - j.arrival for c, j in zip(done, jobs, strict=True)) / n
    return PreemptiveBound(max(parts.values()), parts)


class FluidBoundMethod:
    """Method ``offline-fluid``: :func:`fluid_bound` (combinatorial; the result carries only the bound)."""

    name = "offline-fluid"

    def solve(self, inst: ResizableInstance, backend: str = "none", params: SolveParams | None = None) -> SolveResult:
        params = params or SolveParams()
        t0 = time.perf_counter()
        b = fluid_bound(inst)
        return bound_result(self.name, "schedlab fluid relaxations", b, "resizable (and rigid)", backend, params,
                            time.perf_counter() - t0)


__all__ = ["FluidBoundMethod", "fluid_bound"]
