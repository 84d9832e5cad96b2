r"""Offline clairvoyant **preemptive** schedules of rigid gangs at slot boundaries (time-indexed;
method ``offline-preemptive-ti``), the exact counterpart of the preemptive bound
(:mod:`formulations.offline_bounds`) on small traces.

Slots :math:`t = 0, 1, \dots, T-1` of length :math:`\Delta`; job :math:`j` arrives at :math:`r_j`,
runs :math:`d_j` seconds on exactly :math:`g_j` GPUs (both multiples of :math:`\Delta`, checked),
and may be preempted and resumed, free of cost, at any slot boundary. Binary :math:`x_{jt}` (runs in
slot :math:`t`), completion slot :math:`c_j` (continuous):

.. math::

   \sum_{t \ge r_j/\Delta} x_{jt} = d_j/\Delta,\qquad \sum_j g_j x_{jt} \le G\ \ \forall t,\qquad
   c_j \ge (t + 1)\,x_{jt},\quad c_j \ge (r_j + d_j)/\Delta

   \min\ \frac{\Delta}{n}\sum_j c_j - \frac1n \sum_j r_j\ \text{(avg JCT)}\quad\text{or}\quad
   \min\ \Delta\,\max_j c_j\ \text{(makespan)}

Two valid cuts tighten the relaxation: the mean-busy-time row :math:`c_j \ge \frac{1}{d_j/\Delta}\sum_t
(t+1) x_{jt} + \frac{d_j/\Delta - 1}{2}` (:math:`d_j/\Delta` distinct slots before :math:`c_j` have mean
at most :math:`c_j - 1 - (d_j/\Delta - 1)/2`), and, in machine mode, loads ordered per slot across
machines of equal free GPUs (each slot may be permuted on its own: migration is free).

``mode="total"`` (default) checks capacity on the **total** free GPUs :math:`G` only: placement is
free in every slot (migration costs nothing), so a slot's gangs need not pack into machines — a
relaxation of the placed problem. ``mode="machine"`` adds integer GPUs per machine and slot
:math:`k_{jmt}` with :math:`\sum_m k_{jmt} = g_j x_{jt}` and :math:`\sum_j k_{jmt} \le G_m` (a job may
move between slots). Orders: ``total`` <= ``machine`` <= non-preemptive
(:mod:`formulations.offline`) when arrivals and durations are multiples of :math:`\Delta` (every
non-preemptive schedule with starts on slot boundaries is a preemptive one; with :math:`\Delta` = 1 s
and integer data every schedule of ``offline-nonpreemptive`` is). :math:`T` is the serial horizon
:math:`\max_j r_j/\Delta + \sum_j d_j/\Delta` (every job runs alone after the last arrival: feasible,
and no optimum needs more when every job fits), or ``horizon_slots`` when given (then the optimum is
over schedules that end by it, reported as a restriction in ``notes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schedlab.formulations import io
from schedlab.formulations.base import Built, check_deadline
from schedlab.formulations.model import LinExpr, Model
from schedlab.formulations.offline_slots import (
    SlotJob,
    completion_indicators,
    completion_of,
    greedy_schedule,
    horizons,
    order_identical,
    schedule_hints,
    unfinished_hints,
)
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.instance import Instance
from schedlab.topology.errors import SpecError

_SRC = "<offline-ti>"


def slots_of(value: float, slot: float, what: str, field: str) -> int:
    """``value / slot`` as an integer, or a :class:`SpecError` naming ``field``."""
    q = value / slot
    if abs(q - round(q)) > 1e-9:
        raise SpecError(f"{what} {value:g} is not a multiple of the slot {slot:g}", source=_SRC, field=field)
    return int(round(q))


@dataclass(frozen=True)
class PreemptiveTIInstance:
    """``base``: cluster (free GPUs = capacity minus ``reserved``) and rigid jobs with ``duration``;
    ``slot`` seconds; ``objective`` ``avg-jct`` | ``makespan``; ``mode`` ``total`` | ``machine``."""

    KIND = "offline-ti"
    base: Instance
    slot: float = 1.0
    objective: str = "avg-jct"
    mode: str = "total"
    horizon_slots: int | None = None

    def __post_init__(self) -> None:
        if self.objective not in ("avg-jct", "makespan"):
            raise SpecError(f"objective must be avg-jct or makespan, got {self.objective!r}", source=_SRC,
                            field="objective")
        if self.mode not in ("total", "machine"):
            raise SpecError(f"mode must be total or machine, got {self.mode!r}", source=_SRC, field="mode")
        if not self.slot > 0:
            raise SpecError(f"slot must be > 0, got {self.slot}", source=_SRC, field="slot")
        for j in self.base.jobs:
            if j.duration is None:
                raise SpecError(f"job {j.id!r} needs a duration", source=_SRC, field=f"jobs.{j.id}.duration")
            slots_of(j.duration, self.slot, f"job {j.id!r} duration", f"jobs.{j.id}.duration")
            slots_of(j.arrival, self.slot, f"job {j.id!r} arrival", f"jobs.{j.id}.arrival")
            if j.requested.gpus > self.total_gpus():
                raise SpecError(f"job {j.id!r} needs {j.requested.gpus} GPUs > {self.total_gpus()} free",
                                source=_SRC, field=f"jobs.{j.id}.requested")

    def total_gpus(self) -> int:
        return sum(max(0, self.base.capacity(m).gpus) for m in self.base.cluster.machines)

    def release(self, job_id: str) -> int:
        return slots_of(self.base.job(job_id).arrival, self.slot, "arrival", job_id)

    def length(self, job_id: str) -> int:
        return slots_of(self.base.job(job_id).duration, self.slot, "duration", job_id)

    def horizon(self) -> int:
        if self.horizon_slots is not None:
            return int(self.horizon_slots)
        jobs = self.base.jobs
        return max((self.release(j.id) for j in jobs), default=0) + sum(self.length(j.id) for j in jobs)

    def to_dict(self) -> dict[str, Any]:
        return {"base": io.instance_to_dict(self.base), "slot": self.slot, "objective": self.objective,
                "mode": self.mode, "horizon_slots": self.horizon_slots}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = _SRC) -> PreemptiveTIInstance:
        return cls(io.instance_from_dict(d["base"], source), float(d.get("slot", 1.0)), d.get("objective", "avg-jct"),
                   d.get("mode", "total"), d.get("horizon_slots"))


@dataclass(frozen=True)
class SlotSchedule:
    """The slots each job runs in and (``mode="machine"``) its GPUs per machine in each of them."""

    slots: Mapping[str, tuple[int, ...]]
    placement: Mapping[str, Mapping[int, Mapping[str, int]]] | None = None


def slot_objective(objective: str, slot: float, arrivals: Mapping[str, float], slots: Mapping[str, tuple[int, ...]],
                   ) -> float:
    """THE objective of a slotted schedule: completion = end of a job's last slot; average JCT
    ``mean(C_j - r_j)`` or makespan ``max C_j`` (a job with no slot is an error, not a value)."""
    if not arrivals:
        return 0.0
    ends = {}
    for j in arrivals:
        if not slots.get(j):
            raise ValueError(f"job {j!r} has no slot")
        ends[j] = (max(slots[j]) + 1) * slot
    if objective == "makespan":
        return max(ends.values())
    return sum(ends[j] - arrivals[j] for j in arrivals) / len(arrivals)


def ti_objective(inst: PreemptiveTIInstance, sched: SlotSchedule) -> float:
    return slot_objective(inst.objective, inst.slot, {j.id: j.arrival for j in inst.base.jobs}, sched.slots)


def ti_violations(inst: PreemptiveTIInstance, sched: SlotSchedule) -> list[str]:
    """Each job runs exactly ``d_j/Δ`` distinct slots at or after its release; every slot fits the free
    GPUs (total) or, in machine mode, each machine's free GPUs with every job's full gang placed."""
    out = []
    use: dict[int, int] = {}
    for j in inst.base.jobs:
        s = sched.slots.get(j.id, ())
        if len(set(s)) != len(s) or len(s) != inst.length(j.id):
            out.append(f"[schedule] job {j.id!r} runs {len(set(s))} slots, needs {inst.length(j.id)}")
        if s and min(s) < inst.release(j.id):
            out.append(f"[schedule] job {j.id!r} runs in slot {min(s)} before its release {inst.release(j.id)}")
        for t in s:
            use[t] = use.get(t, 0) + j.requested.gpus
    G = inst.total_gpus()
    out += [f"[capacity] slot {t}: {u} GPUs > {G}" for t, u in sorted(use.items()) if u > G]
    if inst.mode == "machine":
        if sched.placement is None:
            return out + ["[placement] machine mode needs a placement per slot"]
        per: dict[tuple[int, str], int] = {}
        for j in inst.base.jobs:
            for t in sched.slots.get(j.id, ()):
                pl = sched.placement.get(j.id, {}).get(t, {})
                if sum(pl.values()) != j.requested.gpus:
                    out.append(f"[placement] job {j.id!r} slot {t}: {sum(pl.values())} GPUs placed, "
                               f"needs {j.requested.gpus}")
                for m, k in pl.items():
                    per[t, m] = per.get((t, m), 0) + k
        for (t, m), k in sorted(per.items()):
            cap = max(0, inst.base.capacity(m).gpus)
            if k > cap:
                out.append(f"[capacity] slot {t} machine {m!r}: {k} GPUs > {cap}")
    return out


def completion_rows(mdl: Model, obj_kind: str, slot: float, runs: Mapping[str, list[tuple[int, LinExpr]]],
                    earliest: Mapping[str, int], arrivals: Mapping[str, float], horizon: int) -> dict[str, Any]:
    """Completion slots ``c_j >= (t+1)·run_{jt}``, ``c_j >= earliest_j``, and the objective (shared by
    the rigid and the resizable time-indexed models); returns the completion variables."""
    n = max(1, len(runs))
    cs = {}
    for j, per_t in runs.items():
        c = mdl.integer(f"c[{j}]", earliest[j], horizon)
        cs[j] = c
        for t, run in per_t:
            if t + 1 > earliest[j]:
                mdl.add(c - run * (t + 1) >= 0, f"end[{j},{t}]")
    if obj_kind == "makespan":
        M = mdl.integer("makespan", max(earliest.values(), default=0), horizon)
        for c in cs.values():
            mdl.add(M - c >= 0)
        mdl.minimize(M * slot)
    else:
        obj = LinExpr({}, -sum(arrivals.values()) / n)
        for c in cs.values():
            obj.add_term(c.index, slot / n)
        mdl.minimize(obj)
    return cs


def unfinished_cut(mdl: Model, job: str, c: Any, release: int, work: float,
                   done: list[tuple[int, LinExpr]]) -> None:
    r"""Valid cut :math:`c_j \ge 1 + r_j + \sum_{t \ge r_j} u_{jt}` with :math:`u_{jt} \in [0, 1]`,
    :math:`u_{jt} \ge 1 - (\text{work done in slots} \le t)/W_j`: a job is unfinished in every slot before
    its completion slot (a time-indexed fluid relaxation; ``done`` = per-slot work expressions in order)."""
    cum = LinExpr()
    unf = LinExpr()
    for t, e in done:
        cum.iadd(e)
        u = mdl.var(f"u[{job},{t}]", 0.0, 1.0)
        unf.add_term(u.index, 1)
        mdl.add(u + cum * (1.0 / work) >= 1.0, f"unf[{job},{t}]")
    mdl.add(c - unf >= 1 + release, f"unfsum[{job}]")


class PreemptiveTIFormulation:
    """``strong`` (default): the model of :mod:`formulations.offline_slots` — per-job horizons, completion
    indicators, identical jobs ordered, the greedy schedule as MIP start; ``strong=False``: the plain
    model of the module docstring over the serial horizon (kept for comparison: same optimum).
    ``cuts``: the mean-busy-time and unfinished-slot cuts (on by default)."""

    name = "offline-preemptive-ti"

    def __init__(self, strong: bool = True, cuts: bool = True, maximal: bool = True) -> None:
        self.strong, self.cuts, self.maximal = strong, cuts, maximal

    def build(self, inst: PreemptiveTIInstance, deadline: float | None = None) -> Built:
        mdl = Model(f"offline-preemptive-ti-{inst.mode}", sense="min")
        T = inst.horizon()
        mach = [m for m in inst.base.cluster.machines if inst.base.capacity(m).gpus > 0]
        caps = {m: inst.base.capacity(m).gpus for m in mach}
        G = inst.total_gpus()
        sjobs = [SlotJob(j.id, inst.release(j.id), float(inst.length(j.id)), {j.requested.gpus: 1.0})
                 for j in inst.base.jobs]
        greedy = greedy_schedule(sjobs, G, T, inst.objective) if self.strong and inst.horizon_slots is None else None
        hmax = horizons(sjobs, G, T, inst.objective, True, None if greedy is None else completion_of(greedy)) \
            if self.strong and inst.horizon_slots is None else {j.id: T for j in sjobs}
        x: dict[tuple[str, int], Any] = {}
        k: dict[tuple[str, str, int], Any] = {}
        per_slot: dict[int, LinExpr] = {t: LinExpr() for t in range(T)}
        per_mach: dict[tuple[int, str], LinExpr] = {}
        runs: dict[str, list[tuple[int, LinExpr]]] = {}
        for j in inst.base.jobs:
            check_deadline(deadline)
            r, d, g = inst.release(j.id), inst.length(j.id), j.requested.gpus
            if r + d > T:
                raise SpecError(f"job {j.id!r} cannot finish within {T} slots", source=_SRC, field="horizon_slots")
            tot = LinExpr()
            runs[j.id] = []
            for t in range(r, hmax[j.id]):
                v = x[j.id, t] = mdl.binary(f"x[{j.id},{t}]")
                tot.add_term(v.index, 1)
                per_slot[t].add_term(v.index, g)
                runs[j.id].append((t, v.expr()))
                if inst.mode == "machine":
                    gang = LinExpr()
                    for m in mach:
                        kv = k[j.id, m, t] = mdl.integer(f"k[{j.id},{m},{t}]", 0, min(g, caps[m]))
                        gang.add_term(kv.index, 1)
                        per_mach.setdefault((t, m), LinExpr()).add_term(kv.index, 1)
                    mdl.add(gang - v * g == 0, f"gang[{j.id},{t}]")
            mdl.add(tot == d, f"work[{j.id}]")
        for t, e in per_slot.items():
            if e.terms:
                mdl.add(e <= G, f"cap[{t}]")
        for (t, m), e in per_mach.items():
            mdl.add(e <= caps[m], f"cap[{t},{m}]")
        # machines of equal free GPUs are interchangeable in every slot (migration is free): order loads
        for t in range(T):
            for a_, b_ in zip(mach, mach[1:], strict=False):
                if caps[a_] == caps[b_] and (t, a_) in per_mach:
                    mdl.add(per_mach[t, a_] - per_mach[t, b_] >= 0, f"sym[{t},{a_}]")
        earliest = {j.id: inst.release(j.id) + inst.length(j.id) for j in inst.base.jobs}
        cs = completion_rows(mdl, inst.objective, inst.slot, runs, earliest,
                             {j.id: j.arrival for j in inst.base.jobs}, max(hmax.values(), default=T))
        u: dict[tuple[str, int], int] = {}
        if self.cuts:
            for j in inst.base.jobs:  # mean-busy-time cut: d distinct slots before c have mean <= c - 1 - (d-1)/2
                d = inst.length(j.id)
                mean = LinExpr({x[j.id, t].index: (t + 1) / d for t in range(inst.release(j.id), hmax[j.id])})
                mdl.add(cs[j.id] - mean >= (d - 1) / 2, f"mbt[{j.id}]")
                n0 = len(mdl.vars)
                unfinished_cut(mdl, j.id, cs[j.id], inst.release(j.id), float(d),
                               [(t, x[j.id, t].expr()) for t in range(inst.release(j.id), hmax[j.id])])
                u.update({(j.id, t): n0 + i for i, t in enumerate(range(inst.release(j.id), hmax[j.id]))})
        z: dict = {}
        if self.strong:
            done = {j: [(t, e) for t, e in rs] for j, rs in runs.items()}
            z, aux = completion_indicators(mdl, sjobs, runs, done, cs, hmax)
            order_identical(mdl, sjobs, cs)
            if self.maximal:
                for j in inst.base.jobs:  # greedy-maximal: j waits in slot t only if its gang does not fit
                    g = j.requested.gpus
                    for t in range(inst.release(j.id), hmax[j.id]):
                        row = LinExpr(dict(per_slot[t].terms))
                        row.add_term(x[j.id, t].index, float(G - g + 1))
                        if (j.id, t) in aux["zc"]:
                            row.add_term(aux["zc"][j.id, t].index, float(G - g + 1))
                        mdl.add(row >= G - g + 1, f"maximal[{j.id},{t}]")
            if greedy is not None:
                extra = unfinished_hints(greedy, sjobs, hmax, lambda j, t: u.get((j, t)))
                if inst.mode == "machine":
                    extra.update(_machine_hints(greedy, sjobs, mach, caps, k))
                mdl.hints = schedule_hints(greedy, sjobs, lambda j, t, _g: x.get((j, t)), cs, z, aux, extra)
        return Built(mdl, {"x": x, "k": k, "hmax": hmax, "greedy": greedy})

    def extract(self, inst: PreemptiveTIInstance, built: Built, values: list[float]) -> SlotSchedule:
        slots: dict[str, list[int]] = {j.id: [] for j in inst.base.jobs}
        for (j, t), v in built.data["x"].items():
            if values[v.index] > 0.5:
                slots[j].append(t)
        place = None
        if inst.mode == "machine":
            place = {j: {t: {} for t in s} for j, s in slots.items()}
            for (j, m, t), v in built.data["k"].items():
                val = int(round(values[v.index]))
                if val and t in place[j]:
                    place[j][t][m] = val
        return SlotSchedule({j: tuple(s) for j, s in slots.items()}, place)

    def objective(self, inst: PreemptiveTIInstance, solution: SlotSchedule) -> float:
        return ti_objective(inst, solution)

    def allocation_of(self, solution: SlotSchedule) -> Allocation | None:
        return None

    def verify(self, inst: PreemptiveTIInstance, solution: SlotSchedule) -> list[str]:
        return ti_violations(inst, solution)

    def hints(self, inst: PreemptiveTIInstance, built: Built, allocation: Allocation) -> dict[int, float]:
        return {}



def _machine_hints(sched, jobs, mach, caps, k) -> dict[int, float]:
    """Per-machine GPUs of a total-capacity schedule (each slot's gangs split first fit over the machines,
    loads in machine order, as the symmetry rows want them)."""
    out: dict[int, float] = {}
    g = {j.id: next(iter(j.rates)) for j in jobs}
    slots = sorted({t for s in sched.values() for t in s})
    for t in slots:
        free = dict(caps)
        for j in sorted(sched, key=lambda j: (-g[j], j)):
            if t not in sched[j]:
                continue
            need = g[j]
            for m in mach:
                take = min(need, free[m])
                if take and (j, m, t) in k:
                    out[k[j, m, t].index] = float(take)
                    free[m] -= take
                    need -= take
                if not need:
                    break
    return out


__all__ = ["PreemptiveTIFormulation", "PreemptiveTIInstance", "SlotSchedule", "completion_rows", "unfinished_cut",
           "slot_objective", "slots_of", "ti_objective", "ti_violations"]
