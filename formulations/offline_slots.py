r"""What makes the time-indexed offline models (:mod:`formulations.offline_ti`, rigid preemptive;
:mod:`formulations.offline_resizable`, one GPU count per slot) reach 30 jobs: per-job horizons, the
completion-indicator rows, symmetry among identical jobs, and a greedy schedule as the MIP start.

**Greedy schedules** (:func:`greedy_schedule`): slot by slot, the released unfinished jobs in a priority
order (:data:`RULES`: shortest remaining time, smallest remaining area or fewest GPUs; the best of the
three is kept) take their smallest allowed count while it fits (rigid: the gang), then the leftover GPUs raise
each, in the same order, to the largest allowed count that fits (a job about to finish keeps its count). Feasible by construction; the value is an upper bound ``UB`` and
the slots the MIP start.

**Per-job horizons** (completion slot :math:`c_j \le H_j`; every bound holds for one optimal schedule
simultaneously, so the restricted model keeps an optimum):

* *greedy-maximal* (rigid only): moving one slot of job :math:`j` from its last slot to an earlier slot
  :math:`t \ge r_j` where it does not run and its gang fits never delays :math:`j` and changes no other
  job, so some optimal schedule has, in every slot :math:`t \in [r_j, c_j)` where :math:`j` does not run,
  at least :math:`G - g_j + 1` GPUs busy; those slots carry at most :math:`\sum_{i \ne j} g_i d_i` GPU-slots:

  .. math:: c_j \le r_j + d_j + \Big\lfloor \frac{\sum_{i \ne j} g_i d_i}{G - g_j + 1} \Big\rfloor

* *from the greedy value*: average JCT: :math:`\sum_i c_i \le UB_\Sigma`, so
  :math:`c_j \le UB_\Sigma - \sum_{i \ne j} e_i` (:math:`e_i` = the earliest completion slot);
  makespan: :math:`c_j \le UB_{\max}`.

**Completion indicators**: :math:`z_{jt} = 1` iff :math:`j` completes at the end of slot :math:`t`
(:math:`\sum_t z_{jt} = 1`, :math:`c_j = \sum_t (t+1) z_{jt}`), with the work done by :math:`t` at least
:math:`W_j \sum_{s \le t} z_{js}` and no run after completion (:math:`\text{run}_{jt} \le \sum_{s \ge t}
z_{js}`): a much tighter relaxation than :math:`c_j \ge (t+1)\,\text{run}_{jt}` alone (kept as well).

**Symmetry**: jobs with equal release, length (work and speeds) and GPUs are interchangeable: their
completions are ordered (:math:`c_i \le c_{i'}` for :math:`i` before :math:`i'`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schedlab.formulations.model import LinExpr, Model


@dataclass(frozen=True)
class SlotJob:
    """A job as the slotted models see it: ``release`` slot, ``work`` (slots at the request for rigid jobs,
    iterations for resizable ones) and ``rates``: GPU count -> work per slot (rigid: ``{g: 1}``)."""

    id: str
    release: int
    work: float
    rates: Mapping[int, float]

    def min_slots(self) -> int:
        return max(1, math.ceil(self.work / max(self.rates.values()) - 1e-9))

    def key(self) -> tuple:
        return (self.release, round(self.work, 9), tuple(sorted((k, round(v, 12)) for k, v in self.rates.items())))


def efficient_counts(rates: Mapping[int, float]) -> dict[int, float]:
    """The counts worth using: a count whose rate does not exceed every smaller count's is dominated (the
    smaller one does as much work with fewer GPUs), so no optimum needs it."""
    out, best = {}, 0.0
    for k in sorted(rates):
        if rates[k] > best + 1e-12:
            out[k] = rates[k]
            best = rates[k]
    return out


#: the priority rules the greedy schedule tries (the best schedule is kept): shortest remaining time,
#: smallest remaining GPU-slots (area), fewest GPUs first
RULES = ("time", "area", "gpus")


def _greedy(jobs: Sequence[SlotJob], gpus: int, horizon: int, rule: str) -> dict[str, dict[int, int]] | None:
    left = {j.id: j.work for j in jobs}
    out: dict[str, dict[int, int]] = {j.id: {} for j in jobs}
    eff = {j.id: max(j.rates, key=lambda k: (j.rates[k] / k, -k)) for j in jobs}
    rates_of = {j.id: j.rates for j in jobs}

    def prio(j: SlotJob) -> tuple:
        rem = left[j.id] / max(j.rates.values())
        if rule == "area":
            return (rem * eff[j.id], rem, j.id)
        if rule == "gpus":
            return (min(j.rates), rem, j.id)
        return (rem, min(j.rates), j.id)

    for t in range(horizon):
        pending = [j for j in jobs if j.release <= t and left[j.id] > 1e-9]
        if not pending and all(v <= 1e-9 for v in left.values()):
            break
        pending.sort(key=prio)
        free = gpus
        got: dict[str, int] = {}
        for j in pending:  # each job its smallest count, in priority order, while it fits
            k = min(j.rates)
            if k <= free:
                got[j.id] = k
                free -= k
        for j in pending:  # then the leftover GPUs: each job up to the largest count that fits
            g0 = got.get(j.id)
            if g0 is None or not free or j.rates[g0] >= left[j.id] - 1e-9:
                continue
            k = max(c for c in j.rates if g0 <= c <= g0 + free)
            free -= k - g0
            got[j.id] = k
        for jid, k in got.items():
            out[jid][t] = k
            left[jid] -= rates_of[jid][k]
    return out if all(v <= 1e-9 for v in left.values()) else None


def greedy_schedule(jobs: Sequence[SlotJob], gpus: int, horizon: int, objective: str = "avg-jct"
                    ) -> dict[str, dict[int, int]] | None:
    """The best of the greedy schedules of the module docstring under :data:`RULES` (by ``objective``):
    ``job -> {slot: GPUs}``; ``None`` if none finishes every job within ``horizon`` slots."""
    best, best_v = None, math.inf
    for rule in RULES:
        s = _greedy(jobs, gpus, horizon, rule)
        if s is None:
            continue
        c = completion_of(s)
        v = max(c.values(), default=0) if objective == "makespan" else sum(c.values())
        if v < best_v:
            best, best_v = s, v
    return best


def completion_of(sched: Mapping[str, Mapping[int, int]]) -> dict[str, int]:
    """Completion slot (end of the last slot run) of each job of a schedule."""
    return {j: max(s) + 1 for j, s in sched.items() if s}


def horizons(jobs: Sequence[SlotJob], gpus: int, serial: int, objective: str, rigid: bool,
             ub: Mapping[str, int] | None) -> dict[str, int]:
    r"""Each job's largest completion slot :math:`H_j` (module docstring), never above ``serial``. The
    greedy-maximal bound counts only the GPU-slots other jobs can run inside :math:`[r_j, H_j)` (job
    :math:`i` at most :math:`g_i \min(d_i, H_j - r_i, H_i - r_j)` of them), iterated to a fixpoint."""
    earliest = {j.id: j.release + j.min_slots() for j in jobs}
    out = {j.id: serial for j in jobs}
    if ub is not None:
        tot_e = sum(earliest.values())
        for j in jobs:
            out[j.id] = min(out[j.id], sum(ub.values()) - (tot_e - earliest[j.id]) if objective == "avg-jct"
                            else max(ub.values()))
    if rigid:
        g = {j.id: next(iter(j.rates)) for j in jobs}
        d = {j.id: int(round(j.work)) for j in jobs}
        for _ in range(20):
            changed = False
            for j in jobs:
                inside = sum(g[i.id] * max(0, min(d[i.id], out[j.id] - i.release, out[i.id] - j.release))
                             for i in jobs if i.id != j.id)
                h = min(out[j.id], earliest[j.id] + inside // (gpus - g[j.id] + 1))
                if h < out[j.id]:
                    out[j.id], changed = h, True
            if not changed:
                break
    return {j: max(h, earliest[j]) for j, h in out.items()}


def completion_indicators(mdl: Model, jobs: Sequence[SlotJob], runs: Mapping[str, list[tuple[int, LinExpr]]],
                          done: Mapping[str, list[tuple[int, LinExpr]]], cs: Mapping[str, Any],
                          hmax: Mapping[str, int]) -> tuple[dict[tuple[str, int], Any], dict[str, dict]]:
    """The completion-indicator rows of the module docstring, linked to the completion variables ``cs``;
    ``runs``/``done``: per job, (slot, runs-in-slot) and (slot, work-in-slot) expressions in slot order.
    The completion by ``t`` is a 0/1 variable ``zc`` (at least the indicators' sum so far: all the rows need),
    and the work rows sum the slots' work directly: integer coefficients for rigid jobs, nothing a backend
    must put on a grid (CP-SAT)."""
    z: dict[tuple[str, int], Any] = {}
    aux: dict[str, dict] = {"zc": {}}
    for j in jobs:
        e = j.release + j.min_slots()
        one, val = LinExpr(), LinExpr()
        for t in range(e - 1, hmax[j.id]):
            v = z[j.id, t] = mdl.binary(f"z[{j.id},{t}]")
            one.add_term(v.index, 1)
            val.add_term(v.index, t + 1)
        mdl.add(one == 1, f"done1[{j.id}]")
        mdl.add(cs[j.id] - val == 0, f"cdef[{j.id}]")
        prev_z = None
        closed: dict[int, Any] = {}  # slot -> completed by the end of it (0/1)
        cum = LinExpr()
        for t, w in done[j.id]:
            cum.iadd(w)
            if (j.id, t) in z:
                zc = mdl.binary(f"zc[{j.id},{t}]")
                row = LinExpr({zc.index: 1.0, z[j.id, t].index: -1.0})
                if prev_z is not None:
                    row.add_term(prev_z.index, -1.0)
                mdl.add(row >= 0, f"zc[{j.id},{t}]")  # zc >= completed by t
                # as a fraction of W_j where the work is not integral (small coefficients: CP-SAT rounds them
                # at 1e-6; the slack below absorbs that, the job's work row stays exact)
                w_scale = 1.0 if all(float(c).is_integer() for c in cum.terms.values()) and j.work.is_integer() \
                    else 1.0 / j.work
                row = LinExpr({i: c * w_scale for i, c in cum.terms.items()})
                row.add_term(zc.index, -j.work * w_scale * (1 - 1e-6))
                mdl.add(row >= 0, f"cumw[{j.id},{t}]")  # the work done by t >= W_j if completed by t
                prev_z = closed[t] = aux["zc"][j.id, t] = zc
        for t, r in runs[j.id]:  # no run after the completion slot
            if t - 1 in closed:
                row = LinExpr(dict(r.terms))
                row.add_term(closed[t - 1].index, 1.0)
                mdl.add(row <= 1, f"nolate[{j.id},{t}]")
    return z, aux


def order_identical(mdl: Model, jobs: Sequence[SlotJob], cs: Mapping[str, Any]) -> int:
    """``c_i <= c_i'`` along each class of identical jobs (module docstring); returns the rows added."""
    classes: dict[tuple, list[str]] = {}
    for j in jobs:
        classes.setdefault(j.key(), []).append(j.id)
    n = 0
    for ids in classes.values():
        for a, b in zip(ids, ids[1:], strict=False):
            mdl.add(cs[b] - cs[a] >= 0, f"symjob[{a},{b}]")
            n += 1
    return n


def schedule_hints(sched: Mapping[str, Mapping[int, int]], jobs: Sequence[SlotJob],
                   var_of: Callable[[str, int, int], Any], cs: Mapping[str, Any], z: Mapping[tuple[str, int], Any],
                   aux: Mapping[str, Mapping], extra: Mapping[int, float] | None = None) -> dict[int, float]:
    """A complete MIP start from a schedule: ``var_of(job, slot, gpus)`` is the run variable of that choice
    (or ``None``); completions, indicators and their cumulative variables follow; ``extra`` adds values of
    other variables."""
    hints: dict[int, float] = dict(extra or {})
    for j in jobs:
        slots = sched[j.id]
        for t, k in slots.items():
            v = var_of(j.id, t, k)
            if v is not None:
                hints[v.index] = 1.0
        c = max(slots) + 1
        hints[cs[j.id].index] = float(c)
        if (j.id, c - 1) in z:
            hints[z[j.id, c - 1].index] = 1.0
        for (jid, t), v in aux["zc"].items():
            if jid == j.id:
                hints[v.index] = 1.0 if t >= c - 1 else 0.0
    return hints


def unfinished_hints(sched: Mapping[str, Mapping[int, int]], jobs: Sequence[SlotJob], hmax: Mapping[str, int],
                     u_index: Callable[[str, int], int | None]) -> dict[int, float]:
    """Values of the unfinished-slot cut's ``u`` variables (:func:`~formulations.offline_ti.unfinished_cut`)
    at a schedule: ``u_jt = max(0, 1 - work done by t / W_j)``."""
    out = {}
    for j in jobs:
        done = 0.0
        for t in range(j.release, hmax[j.id]):
            k = sched[j.id].get(t)
            if k:
                done += j.rates[k]
            i = u_index(j.id, t)
            if i is not None:
                out[i] = max(0.0, 1.0 - done / j.work)
    return out


__all__ = ["RULES", "SlotJob", "completion_indicators", "completion_of", "efficient_counts", "greedy_schedule", "horizons",
           "order_identical", "schedule_hints", "unfinished_hints"]
