r"""Offline clairvoyant **non-preemptive** schedules (method ``offline-nonpreemptive``; CP-SAT
intervals + cumulative). Its values bound only policies that never preempt: for preemptive ones
use ``offline-preemptive`` (:mod:`formulations.offline_bounds`), which is also added here as a row
``objective >= preemptive bound`` (valid, it bounds every schedule) to give CP-SAT a real dual bound.

Jobs :math:`j` with arrival :math:`r_j`, known integer duration :math:`d_j` (placement-independent)
and a rigid gang of :math:`g_j` GPUs; machines :math:`m` with free GPUs :math:`G_m`. Integer start
:math:`s_j \ge r_j`, end :math:`e_j = s_j + d_j` (a fixed-size interval), GPUs per machine
:math:`k_{jm}` with :math:`\sum_m k_{jm} = g_j` (held for the whole run):

.. math::

   \text{cumulative}_m\big(\{[s_j, e_j)\}, \{k_{jm}\}\big) \le G_m\ \forall m,\qquad
   \text{cumulative}\big(\{[s_j, e_j)\}, \{g_j\}\big) \le \sum_m G_m

   \min\ \frac{1}{n}\sum_j (e_j - r_j)\ \text{(avg JCT)}\quad\text{or}\quad \min\ \max_j e_j\ \text{(makespan)}

``mode="machine"`` solves the per-machine model (a schedule with placements; its optimum is the
best non-preemptive value). ``mode="total"`` keeps only the total-GPU cumulative: a relaxation whose
dual bound is a **lower bound for non-preemptive schedules**; its solution is not a runnable
schedule, so the result reports no ``objective`` in that mode, only the bound. Needs the
``intervals`` capability (CP-SAT).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schedlab.formulations import io
from schedlab.formulations.base import Built
from schedlab.formulations.model import LinExpr, Model
from schedlab.formulations.offline_bounds import PreemptiveBound, bound_result, preemptive_bound
from schedlab.formulations.result import SolveParams, SolveResult
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError


@dataclass(frozen=True)
class OfflineInstance:
    KIND = "offline"
    base: Instance
    objective: str = "avg-jct"  # or "makespan"
    mode: str = "machine"  # or "total" (relaxation: lower bound)

    def __post_init__(self) -> None:
        if self.objective not in ("avg-jct", "makespan"):
            raise SpecError(f"objective must be avg-jct or makespan, got {self.objective!r}", source="<offline>",
                            field="objective")
        if self.mode not in ("machine", "total"):
            raise SpecError(f"mode must be machine or total, got {self.mode!r}", source="<offline>", field="mode")
        for j in self.base.jobs:
            if j.duration is None or j.duration <= 0 or j.duration != int(j.duration) or j.arrival != int(j.arrival):
                raise SpecError(f"job {j.id!r} needs a positive integer duration and an integer arrival",
                                source="<offline>", field=f"jobs.{j.id}.duration")

    def horizon(self) -> int:
        return int(max((j.arrival for j in self.base.jobs), default=0) + sum(j.duration for j in self.base.jobs))

    def to_dict(self) -> dict[str, Any]:
        return {"base": io.instance_to_dict(self.base), "objective": self.objective, "mode": self.mode}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<offline>") -> OfflineInstance:
        return cls(io.instance_from_dict(d["base"], source), d.get("objective", "avg-jct"), d.get("mode", "machine"))



@dataclass(frozen=True)
class OfflineSchedule:
    """Start time per job and (``mode="machine"``) GPUs per machine; ``placement`` is ``None`` for the
    total-GPU relaxation (a bound, not a runnable schedule)."""

    start: Mapping[str, int]
    placement: Mapping[str, Mapping[str, int]] | None

    def end(self, inst: OfflineInstance, job_id: str) -> int:
        return self.start[job_id] + int(inst.base.job(job_id).duration)

    def running_at(self, inst: OfflineInstance, t: int) -> list[str]:
        return [j for j in self.start if self.start[j] <= t < self.end(inst, j)]


def offline_objective(inst: OfflineInstance, sched: OfflineSchedule) -> float:
    """THE objective: average JCT ``mean(end - arrival)`` or makespan ``max(end)``."""
    jobs = inst.base.jobs
    if not jobs:
        return 0.0
    if inst.objective == "makespan":
        return float(max(sched.end(inst, j.id) for j in jobs))
    return sum(sched.end(inst, j.id) - j.arrival for j in jobs) / len(jobs)


def schedule_violations(inst: OfflineInstance, sched: OfflineSchedule) -> list[str]:
    """Every job scheduled once at or after arrival; at every start instant the running jobs form an
    allocation that passes :func:`scheduling.validate_allocation` (machine mode) or fit the total
    free GPUs (relaxation)."""
    out = []
    for j in inst.base.jobs:
        if j.id not in sched.start:
            out.append(f"[schedule] job {j.id!r} not scheduled")
        elif sched.start[j.id] < j.arrival:
            out.append(f"[schedule] job {j.id!r} starts at {sched.start[j.id]} before arrival {j.arrival}")
    total = sum(max(0, inst.base.capacity(m).gpus) for m in inst.base.cluster.machines)
    for t in sorted(set(sched.start.values())):
        run = sched.running_at(inst, t)
        if sched.placement is None:
            used = sum(inst.base.job(j).requested.gpus for j in run)
            if used > total:
                out.append(f"[capacity] {used} GPUs in use at t={t} > {total}")
            continue
        alloc = Allocation.of(JobAllocation(j, ExecutionPlan(dp=inst.base.job(j).requested.gpus),
                                            {m: Resources(k, 0, 0.0) for m, k in sched.placement[j].items() if k})
                              for j in run)
        out += [f"t={t}: {v}" for v in validate_allocation(inst.base, alloc)]
    return out


def lower_bound(inst: OfflineInstance) -> PreemptiveBound:
    """:func:`formulations.offline_bounds.preemptive_bound` of the instance's jobs on its free GPUs."""
    gpus = sum(max(0, inst.base.capacity(m).gpus) for m in inst.base.cluster.machines)
    jobs = [(j.arrival, float(j.duration), j.requested.gpus) for j in inst.base.jobs]
    return preemptive_bound(jobs, gpus, inst.objective)


class OfflineFormulation:
    name = "offline-nonpreemptive"

    def is_relaxation(self, inst: OfflineInstance) -> bool:
        """Total-GPU mode: the solution is a relaxation's, not a schedule (only its bound counts)."""
        return inst.mode == "total"

    def build(self, inst: OfflineInstance, deadline: float | None = None) -> Built:
        mdl = Model(f"offline-{inst.mode}", sense="min")
        H = inst.horizon()
        mach = [m for m in inst.base.cluster.machines if inst.base.capacity(m).gpus > 0]
        caps = {m: inst.base.capacity(m).gpus for m in mach}
        starts, ends, ivs, k = {}, {}, [], {}
        for j in inst.base.jobs:
            d = int(j.duration)
            s = mdl.integer(f"s[{j.id}]", int(j.arrival), H - d)
            e = mdl.integer(f"e[{j.id}]", int(j.arrival) + d, H)
            mdl.add(e - s == d, f"dur[{j.id}]")
            starts[j.id], ends[j.id] = s, e
            ivs.append(mdl.interval(s, e, d, f"I[{j.id}]"))
        mdl.cumulative(ivs, [j.requested.gpus for j in inst.base.jobs], sum(caps.values()), "total")
        if inst.mode == "machine":
            for j in inst.base.jobs:
                tot = LinExpr()
                for m in mach:
                    v = mdl.integer(f"k[{j.id},{m}]", 0, min(j.requested.gpus, caps[m]))
                    k[j.id, m] = v
                    tot.add_term(v.index, 1)
                mdl.add(tot == j.requested.gpus, f"gang[{j.id}]")
            for m in mach:
                mdl.cumulative(ivs, [k[j.id, m] for j in inst.base.jobs], caps[m], f"cum[{m}]")
        n = max(1, len(inst.base.jobs))
        lb = lower_bound(inst).value
        if inst.objective == "makespan":
            C = mdl.integer("makespan", min(H, math.ceil(lb - 1e-9)), H)
            for j in inst.base.jobs:
                mdl.add(C - ends[j.id] >= 0)
            mdl.minimize(C)
        else:
            arrivals = sum(j.arrival for j in inst.base.jobs)
            obj = LinExpr({}, -arrivals / n)
            total = LinExpr()
            for e in ends.values():
                obj.add_term(e.index, 1.0 / n)
                total.add_term(e.index, 1.0)
            if ends:
                mdl.add(total >= math.ceil(n * lb + arrivals - 1e-6), "preemptive-bound")
            mdl.minimize(obj)
        return Built(mdl, {"s": starts, "k": k, "machines": mach})

    def extract(self, inst: OfflineInstance, built: Built, values: list[float]) -> OfflineSchedule:
        start = {j: int(round(values[v.index])) for j, v in built.data["s"].items()}
        if inst.mode != "machine":
            return OfflineSchedule(start, None)
        pl: dict[str, dict[str, int]] = {j.id: {} for j in inst.base.jobs}
        for (j, m), v in built.data["k"].items():
            val = int(round(values[v.index]))
            if val:
                pl[j][m] = val
        return OfflineSchedule(start, pl)

    def objective(self, inst: OfflineInstance, solution: OfflineSchedule) -> float:
        return offline_objective(inst, solution)

    def allocation_of(self, solution: OfflineSchedule) -> Allocation | None:
        return None

    def verify(self, inst: OfflineInstance, solution: OfflineSchedule) -> list[str]:
        return schedule_violations(inst, solution)

    def hints(self, inst: OfflineInstance, built: Built, allocation: Allocation) -> dict[int, float]:
        return {}


def generate_offline(cluster: Cluster, n_jobs: int, *, seed: int = 0, mean_gap: int = 300,
                     objective: str = "avg-jct", mode: str = "machine") -> OfflineInstance:
    """A seeded small workload: Poisson-like arrivals (mean gap ``mean_gap`` s), GPUs in
    {1, 2, 4, 8} (<= a machine), integer durations 10 min - 2 h."""
    rng = random.Random(seed)
    t = 0
    jobs = []
    per = cluster.max_gpus_per_machine
    for i in range(n_jobs):
        g = rng.choice([x for x in (1, 1, 2, 4, 8) if x <= per])
        jobs.append(Job(id=f"o{i:03d}", requested=Resources(g, 0, 0.0), arrival=float(t),
                        duration=float(rng.randint(600, 7200))))
        t += int(rng.expovariate(1 / mean_gap))
    return OfflineInstance(Instance(cluster, tuple(jobs)), objective, mode)


class PreemptiveBoundMethod:
    """Method ``offline-preemptive``: :func:`lower_bound` (combinatorial, exact for its relaxations;
    no backend needed). The result carries no ``objective`` (there is no schedule), only the bound."""

    name = "offline-preemptive"

    def solve(self, inst: OfflineInstance, backend: str = "none", params: SolveParams | None = None) -> SolveResult:
        params = params or SolveParams()
        t0 = time.perf_counter()
        b = lower_bound(inst)
        return bound_result(self.name, "schedlab SRPT relaxations", b, "preemptive (and non-preemptive)", backend,
                            params, time.perf_counter() - t0)


#: which offline bound an online policy is compared with (``PolicySpec.preemptive``)
BOUND_METHOD = {True: "offline-preemptive", False: "offline-nonpreemptive"}


__all__ = ["BOUND_METHOD", "OfflineFormulation", "OfflineInstance", "OfflineSchedule", "PreemptiveBoundMethod",
           "generate_offline", "lower_bound", "offline_objective", "schedule_violations"]
