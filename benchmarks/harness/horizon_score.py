r"""Score a heuristic's waiting decisions against the horizon twin (:mod:`formulations.horizon`).

:func:`simulate_policy` replays the horizon instance slot by slot with the policy's own ``schedule``
(:func:`scheduling.snapshot.snapshot_decide`, one policy object for the whole horizon, so stateful
policies — Dally's wait-time history, Tiresias' queues — keep their state): at every slot boundary
:math:`t_0 + \tau\Delta` the policy sees the jobs released by then and not yet started (queued, with
their real arrival, so delay timers and skew waits count from it), and as reserved capacity the
background (``base.reserved``), the running jobs still there, and the jobs it started itself, held for
:math:`\lceil d_j(1 + o_j(\text{real tier}))/\Delta \rceil` slots, exactly as the model holds them. The
jobs it starts are recorded with their slot and placement; a job it never starts is charged the
model's tail. The resulting :class:`~formulations.horizon.HorizonPlan` is scored with
:func:`~formulations.horizon.horizon_objective`, the model's own objective, so the gap is one number
on one decision set: starts at slot boundaries, rigid gangs, no preemption (a policy's timer that
expires between boundaries acts at the next one — the slot is the resolution of both sides).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schedlab.formulations.base import solve
from schedlab.formulations.horizon import (
    HorizonFormulation,
    HorizonInstance,
    HorizonPlan,
    horizon_objective,
    horizon_violations,
    real_tier,
)
from schedlab.formulations.result import SolveParams, SolveResult, Status
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.policy import Policy
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.snapshot import snapshot_decide


@dataclass(frozen=True)
class HorizonScore:
    """A policy's plan over the horizon, its objective, and what the replay noticed."""

    policy: str
    plan: HorizonPlan
    objective: float
    notes: tuple[str, ...]


def _held(inst: HorizonInstance, plan_start: Mapping[str, int], plan_place: Mapping[str, Mapping[str, int]],
          tau: int) -> dict[str, int]:
    held: dict[str, int] = {}
    for r in inst.running:
        if tau < math.ceil(r.remaining / inst.slot - 1e-9):
            for m, k in r.placement.items():
                held[m] = held.get(m, 0) + k
    for j, s in plan_start.items():
        pl = plan_place[j]
        if s <= tau < s + inst.run_slots(j, real_tier(inst, pl)):
            for m, k in pl.items():
                held[m] = held.get(m, 0) + k
    return held


def simulate_policy(inst: HorizonInstance, policy: Policy, *, name: str | None = None) -> HorizonScore:
    """The policy's decisions over the horizon (module docstring)."""
    base = inst.base
    start: dict[str, int] = {}
    place: dict[str, dict[str, int]] = {}
    notes: list[str] = []
    for tau in range(inst.slots):
        queued = tuple(j for j in base.jobs if j.id not in start and inst.release(j.id) <= tau)
        if not queued:
            continue
        reserved = dict(base.reserved)
        for m, k in _held(inst, start, place, tau).items():
            reserved[m] = reserved.get(m, Resources()) + Resources(k, 0, 0.0)
        now = base.time + tau * inst.slot
        snap = Instance(base.cluster, queued, quotas=base.quotas, reserved=reserved, time=now)
        alloc = snapshot_decide(policy, snap)
        for ja in alloc:
            start[ja.job_id] = tau
            place[ja.job_id] = {m: r.gpus for m, r in ja.placement.items() if r.gpus > 0}
    plan = HorizonPlan(start, place)
    bad = horizon_violations(inst, plan)
    notes += [f"violation: {v}" for v in bad]
    left = [j.id for j in base.jobs if j.id not in start]
    if left:
        notes.append(f"{len(left)} job(s) not started within the horizon (charged the tail): {', '.join(left[:5])}")
    return HorizonScore(name or getattr(policy, "name", type(policy).__name__), plan, horizon_objective(inst, plan),
                        tuple(notes))


@dataclass(frozen=True)
class HorizonGap:
    """``value`` (the policy) vs ``optimum`` (the twin's solve): ``gap = (value - best) / best`` where
    ``best`` is the optimum when proven, else the solver's dual bound (then ``bounded`` is False and the
    gap is an upper estimate)."""

    score: HorizonScore
    result: SolveResult
    best: float | None
    gap: float | None
    bounded: bool

    @property
    def objective_name(self) -> str:
        return "horizon total JCT (delay + slowed run time), seconds"


def horizon_gap(inst: HorizonInstance, policy: Policy, *, backend: str = "cpsat",
                params: SolveParams | None = None, name: str | None = None) -> HorizonGap:
    """Simulate ``policy`` over the horizon and solve the twin; their gap on the same objective."""
    score = simulate_policy(inst, policy, name=name)
    res = solve(HorizonFormulation(), inst, backend, params or SolveParams(threads=1, time_limit_s=60, seed=0))
    optimal = res.status is Status.OPTIMAL
    best = res.objective if optimal else res.bounds.dual
    gap = None if best is None or best <= 0 else (score.objective - best) / best
    return HorizonGap(score, res, best, gap, optimal)


def policy_by_name(name: str, params: Mapping[str, Any] | None = None, *, seed: int = 0) -> Policy:
    """A fresh heuristic from the registry (``schedlab.heuristics.POLICIES``)."""
    from schedlab.heuristics import POLICIES
    return POLICIES.spec(name).build(params, seed=seed)


__all__ = ["HorizonGap", "HorizonScore", "horizon_gap", "policy_by_name", "simulate_policy"]
