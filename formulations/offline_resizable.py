r"""Offline clairvoyant schedules of **resizable** jobs (time-indexed, one GPU count per slot;
method ``offline-resizable-ti``): the same-metric optimum for policies that resize (Rubick, Sia).

Job :math:`j`: arrival :math:`r_j` (a multiple of :math:`\Delta`), work :math:`W_j` (iterations) and a
speed curve :math:`s_j(k)` (iterations per second at :math:`k` GPUs, :math:`k \in K_j`; from the perf
model by :func:`resizable_from_instance`). Binary :math:`y_{jkt}` (job at :math:`k` GPUs in slot
:math:`t`), completion slot :math:`c_j`:

.. math::

   \sum_{k} y_{jkt} \le 1,\qquad \sum_{j,k} k\,y_{jkt} \le G,\qquad
   \sum_{t,k} \Delta\, s_j(k)\, y_{jkt} \ge W_j,\qquad c_j \ge (t+1)\sum_k y_{jkt}

and the objective of :mod:`formulations.offline_ti` (average JCT or makespan; a job completes at the
end of the slot in which its work is done). Capacity is on the **total** free GPUs :math:`G`:
:math:`s_j(k)` is the curve's best placement of :math:`k` GPUs, and fragmentation across machines
is not modelled (a relaxation of placed schedules; stated in every result's notes by the caller).
Reconfiguration is free at slot boundaries. The relaxation is tightened by the unfinished-slot cut
(:func:`~formulations.offline_ti.unfinished_cut`: :math:`c_j \ge 1 + \sum_t u_{jt}`,
:math:`u_{jt} \ge 1 - (\text{work done by } t)/W_j`).

True orders (tested): with :math:`g_j \in K_j` and :math:`\Delta s_j(g_j) \cdot d_j/\Delta \ge W_j`
(the rigid run at the request finishes the work), every rigid preemptive schedule
(``offline-preemptive-ti``, total mode) is a resizable one, so **resizable <= rigid preemptive**;
this needs no linearity of the speed-up. The fluid bound (:mod:`formulations.offline_fluid`) is <=
this optimum. The horizon :math:`T = \max_j r_j/\Delta + \sum_j \lceil W_j / (\Delta \max_k s_j(k))
\rceil` lets every job run alone at its fastest count after the last arrival (feasible; no optimum
needs more).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from schedlab.formulations.base import Built, check_deadline
from schedlab.formulations.model import LinExpr, Model
from schedlab.formulations.offline_slots import (
    SlotJob,
    completion_indicators,
    completion_of,
    efficient_counts,
    greedy_schedule,
    horizons,
    order_identical,
    schedule_hints,
    unfinished_hints,
)
from schedlab.formulations.offline_ti import completion_rows, slot_objective, slots_of, unfinished_cut
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.instance import Instance
from schedlab.topology.errors import SpecError

_SRC = "<offline-resizable>"


@dataclass(frozen=True)
class ResizableJob:
    """``speeds[k]``: iterations per second at ``k`` GPUs (only positive entries are allowed counts)."""

    id: str
    arrival: float
    work: float
    speeds: Mapping[int, float]

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise SpecError(f"job id must be a non-empty string, got {self.id!r}"[:200], source=_SRC, field="jobs.id")
        sp = {int(k): float(v) for k, v in self.speeds.items() if float(v) > 0}
        if not all(math.isfinite(v) for v in sp.values()):
            raise SpecError(f"job {self.id!r}: speeds must be finite", source=_SRC, field=f"jobs.{self.id}.speeds")
        if not (math.isfinite(self.work) and math.isfinite(self.arrival)):
            raise SpecError(f"job {self.id!r}: work and arrival must be finite", source=_SRC, field=f"jobs.{self.id}")
        if not sp or min(sp) < 1:
            raise SpecError(f"job {self.id!r}: speeds need a positive rate at some k >= 1", source=_SRC,
                            field=f"jobs.{self.id}.speeds")
        if not self.work > 0 or not self.arrival >= 0:
            raise SpecError(f"job {self.id!r}: work must be > 0 and arrival >= 0", source=_SRC,
                            field=f"jobs.{self.id}")
        object.__setattr__(self, "speeds", MappingProxyType(dict(sorted(sp.items()))))

    def best_rate(self, gpus: int) -> float:
        return max((v for k, v in self.speeds.items() if k <= gpus), default=0.0)


@dataclass(frozen=True)
class ResizableInstance:
    KIND = "offline-resizable"
    gpus: int
    jobs: tuple[ResizableJob, ...]
    slot: float = 1.0
    objective: str = "avg-jct"

    def __post_init__(self) -> None:
        if self.objective not in ("avg-jct", "makespan"):
            raise SpecError(f"objective must be avg-jct or makespan, got {self.objective!r}", source=_SRC,
                            field="objective")
        if not (self.slot > 0 and math.isfinite(self.slot)) or self.gpus < 1:
            raise SpecError("slot must be > 0 and gpus >= 1", source=_SRC, field="slot")
        object.__setattr__(self, "jobs", tuple(self.jobs))
        for j in self.jobs:
            slots_of(j.arrival, self.slot, f"job {j.id!r} arrival", f"jobs.{j.id}.arrival")
            if j.best_rate(self.gpus) <= 0:
                raise SpecError(f"job {j.id!r} has no speed at <= {self.gpus} GPUs", source=_SRC,
                                field=f"jobs.{j.id}.speeds")

    def release(self, j: ResizableJob) -> int:
        return int(round(j.arrival / self.slot))

    def min_slots(self, j: ResizableJob) -> int:
        return max(1, math.ceil(j.work / (self.slot * j.best_rate(self.gpus)) - 1e-9))

    def horizon(self) -> int:
        return max((self.release(j) for j in self.jobs), default=0) + sum(self.min_slots(j) for j in self.jobs)

    def to_dict(self) -> dict[str, Any]:
        return {"gpus": self.gpus, "slot": self.slot, "objective": self.objective,
                "jobs": [{"id": j.id, "arrival": j.arrival, "work": j.work,
                          "speeds": {str(k): v for k, v in j.speeds.items()}} for j in self.jobs]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = _SRC) -> ResizableInstance:
        jobs = tuple(ResizableJob(j["id"], float(j["arrival"]), float(j["work"]),
                                  {int(k): float(v) for k, v in j["speeds"].items()}) for j in d["jobs"])
        return cls(int(d["gpus"]), jobs, float(d.get("slot", 1.0)), d.get("objective", "avg-jct"))


@dataclass(frozen=True)
class ResizableSchedule:
    """``counts[job][slot]``: GPUs the job runs with in that slot (slots without it are absent)."""

    counts: Mapping[str, Mapping[int, int]]


def resizable_objective(inst: ResizableInstance, sched: ResizableSchedule) -> float:
    return slot_objective(inst.objective, inst.slot, {j.id: j.arrival for j in inst.jobs},
                          {j: tuple(c) for j, c in sched.counts.items()})


def resizable_violations(inst: ResizableInstance, sched: ResizableSchedule) -> list[str]:
    out = []
    use: dict[int, int] = {}
    for j in inst.jobs:
        c = sched.counts.get(j.id, {})
        done = sum(inst.slot * j.speeds.get(k, 0.0) for k in c.values())
        if done < j.work * (1 - 1e-9):
            out.append(f"[work] job {j.id!r} does {done:.6g} of {j.work:.6g}")
        for t, k in c.items():
            if t < inst.release(j):
                out.append(f"[schedule] job {j.id!r} runs in slot {t} before its release")
            if k not in j.speeds:
                out.append(f"[count] job {j.id!r} slot {t}: {k} GPUs is not an allowed count")
            use[t] = use.get(t, 0) + k
    return out + [f"[capacity] slot {t}: {u} GPUs > {inst.gpus}" for t, u in sorted(use.items()) if u > inst.gpus]


class ResizableTIFormulation:
    """``strong`` (default): the model of :mod:`formulations.offline_slots` — dominated counts dropped,
    per-job horizons from the greedy schedule's value, completion indicators, identical jobs ordered, the
    greedy schedule as MIP start; ``strong=False``: the plain model above over the serial horizon (kept for
    comparison: same optimum)."""

    name = "offline-resizable-ti"

    def __init__(self, strong: bool = True) -> None:
        self.strong = strong

    def build(self, inst: ResizableInstance, deadline: float | None = None) -> Built:
        mdl = Model("offline-resizable-ti", sense="min")
        T = inst.horizon()
        rates = {j.id: {k: inst.slot * v for k, v in j.speeds.items() if k <= inst.gpus} for j in inst.jobs}
        if self.strong:
            rates = {j: efficient_counts(r) for j, r in rates.items()}
        sjobs = [SlotJob(j.id, inst.release(j), j.work, rates[j.id]) for j in inst.jobs]
        greedy = greedy_schedule(sjobs, inst.gpus, T, inst.objective) if self.strong else None
        hmax = horizons(sjobs, inst.gpus, T, inst.objective, False, None if greedy is None else completion_of(greedy)) \
            if self.strong else {j.id: T for j in inst.jobs}
        y: dict[tuple[str, int, int], Any] = {}
        per_slot: dict[int, LinExpr] = {t: LinExpr() for t in range(T)}
        runs: dict[str, list[tuple[int, LinExpr]]] = {}
        done: dict[str, list[tuple[int, LinExpr]]] = {}
        for j in inst.jobs:
            check_deadline(deadline)
            work = LinExpr()
            runs[j.id], done[j.id] = [], []
            for t in range(inst.release(j), hmax[j.id]):
                one, w = LinExpr(), LinExpr()
                for k, rate in rates[j.id].items():
                    v = y[j.id, k, t] = mdl.binary(f"y[{j.id},{k},{t}]")
                    one.add_term(v.index, 1)
                    per_slot[t].add_term(v.index, k)
                    work.add_term(v.index, rate)
                    w.add_term(v.index, rate)
                mdl.add(one <= 1, f"one[{j.id},{t}]")
                runs[j.id].append((t, one))
                done[j.id].append((t, w))
            mdl.add(work >= j.work, f"work[{j.id}]")
        for t, e in per_slot.items():
            if e.terms:
                mdl.add(e <= inst.gpus, f"cap[{t}]")
        earliest = {j.id: inst.release(j) + inst.min_slots(j) for j in inst.jobs}
        cs = completion_rows(mdl, inst.objective, inst.slot, runs, earliest, {j.id: j.arrival for j in inst.jobs},
                             max(hmax.values(), default=T))
        u: dict[tuple[str, int], int] = {}
        for j in inst.jobs:
            n0 = len(mdl.vars)
            unfinished_cut(mdl, j.id, cs[j.id], inst.release(j), j.work, done[j.id])
            u.update({(j.id, t): n0 + i for i, (t, _) in enumerate(done[j.id])})
        if self.strong:
            z, aux = completion_indicators(mdl, sjobs, runs, done, cs, hmax)
            order_identical(mdl, sjobs, cs)
            if greedy is not None:
                extra = unfinished_hints(greedy, sjobs, hmax, lambda j, t: u.get((j, t)))
                mdl.hints = schedule_hints(greedy, sjobs, lambda j, t, k: y.get((j, k, t)), cs, z, aux, extra)
        return Built(mdl, {"y": y, "hmax": hmax, "greedy": greedy})

    def extract(self, inst: ResizableInstance, built: Built, values: list[float]) -> ResizableSchedule:
        counts: dict[str, dict[int, int]] = {j.id: {} for j in inst.jobs}
        for (j, k, t), v in built.data["y"].items():
            if values[v.index] > 0.5:
                counts[j][t] = k
        return ResizableSchedule({j: dict(sorted(c.items())) for j, c in counts.items()})

    def objective(self, inst: ResizableInstance, solution: ResizableSchedule) -> float:
        return resizable_objective(inst, solution)

    def allocation_of(self, solution: ResizableSchedule) -> Allocation | None:
        return None

    def verify(self, inst: ResizableInstance, solution: ResizableSchedule) -> list[str]:
        return resizable_violations(inst, solution)

    def hints(self, inst: ResizableInstance, built: Built, allocation: Allocation) -> dict[int, float]:
        return {}


def perf_speeds(pm: Any, model: str, max_gpus: int, global_batch: int | None = None) -> dict[int, float]:
    """Iterations per second at exactly ``k`` GPUs (the perf model's best plan and placement of ``k``
    GPUs: :meth:`perfmodel.PerfModel.curve` ``raw`` / global batch), for ``k = 1..max_gpus`` where
    feasible."""
    curve = pm.curve(model, "gpu", max_amount=max_gpus, global_batch=global_batch)
    b = float(global_batch or pm.spec(model).global_batch)
    return {int(k): float(r) / b for k, r in zip(curve.amounts.tolist(), curve.raw.tolist(), strict=True) if r > 0}


def resizable_from_instance(inst: Instance, pm: Any, *, slot: float, objective: str = "avg-jct",
                            max_gpus: int | None = None) -> tuple[ResizableInstance, list[str]]:
    """The resizable twin of a trace: each job's work is its remaining iterations
    (``iterations - progress``), its speeds :func:`perf_speeds` up to ``max_gpus`` (default: the free
    GPUs); arrivals are rounded **down** to a slot (earlier release only relaxes: the value stays a
    lower bound for the trace's real arrivals) — every rounding is returned in the notes."""
    G = sum(max(0, inst.capacity(m).gpus) for m in inst.cluster.machines)
    cap = int(max_gpus or G)
    jobs, notes = [], []
    for j in inst.jobs:
        rel = math.floor(j.arrival / slot + 1e-9) * slot
        if abs(rel - j.arrival) > 1e-9:
            notes.append(f"job {j.id!r}: arrival {j.arrival:g} rounded down to {rel:g}")
        done = inst.progress[j.id].progress if j.id in inst.progress else 0.0
        jobs.append(ResizableJob(j.id, rel, max(j.iterations - done, 1e-9),
                                 perf_speeds(pm, j.model, cap, j.global_batch)))
    return ResizableInstance(G, tuple(jobs), slot, objective), notes


__all__ = ["ResizableInstance", "ResizableJob", "ResizableSchedule", "ResizableTIFormulation", "perf_speeds",
           "resizable_from_instance", "resizable_objective", "resizable_violations"]
