r"""The time-slotted instance kinds (issue 21's exact twins), as :class:`~formulations.kinds.Kind` objects:

* ``horizon-wait`` (:mod:`formulations.horizon`): wait or place now over a short horizon; exact method
  ``horizon-wait``; decisions admission, placement, waiting. Policies are scored on it by replaying the
  horizon slot by slot (:mod:`benchmarks.harness.horizon_score`), not in snapshot form.
* ``offline-ti`` (:mod:`formulations.offline_ti`): rigid gangs preempted and resumed at slot boundaries;
  exact method ``offline-preemptive-ti``; decisions admission, waiting, preemption (+ placement in
  ``mode="machine"``; the kind's set is the larger one).
* ``offline-resizable`` (:mod:`formulations.offline_resizable`): one GPU count per slot; exact method
  ``offline-resizable-ti`` and the fluid bound ``offline-fluid`` (:mod:`formulations.offline_fluid`)
  as its ``relaxation`` (also the kind's relaxation bound).

Their generators make slotted data by construction (below); none is in the built-in suites' ``plan``.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import Any

from schedlab.formulations.horizon import (
    HorizonFormulation,
    HorizonInstance,
    generate_horizon,
    horizon_objective,
)
from schedlab.formulations.kind_options import HorizonOptions, OfflineTIOptions, ResizableOptions
from schedlab.formulations.kinds import Capability, Kind, Method, Role, Sense, SuitePlan
from schedlab.formulations.offline import generate_offline
from schedlab.formulations.offline_fluid import FluidBoundMethod, fluid_bound
from schedlab.formulations.offline_resizable import (
    ResizableInstance,
    ResizableJob,
    ResizableTIFormulation,
    resizable_objective,
)
from schedlab.formulations.offline_ti import PreemptiveTIFormulation, PreemptiveTIInstance, ti_objective
from schedlab.formulations.result import SolveParams, SolveResult
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.registry import Decision
from schedlab.topology.cluster import Cluster

D = Decision


def _min(inst: object) -> Sense:
    return "min"


def _slotted_base(cluster: Cluster, n_jobs: int, seed: int, slot: float, mean_gap: int) -> Instance:
    """:func:`~formulations.offline.generate_offline`'s trace with arrivals rounded down and durations up
    to a multiple of ``slot`` (a generator choice, not a fill-in: the data are born slotted)."""
    base = generate_offline(cluster, n_jobs, seed=seed, mean_gap=mean_gap).base
    jobs = tuple(replace(j, arrival=math.floor(j.arrival / slot) * slot,
                         duration=math.ceil(j.duration / slot) * slot) for j in base.jobs)
    return Instance(base.cluster, jobs)


def generate_offline_ti(cluster: Cluster, n_jobs: int, *, seed: int = 0, slot: float = 600.0, mean_gap: int = 300,
                        objective: str = "avg-jct", mode: str = "total") -> PreemptiveTIInstance:
    """A seeded ``offline-ti`` instance: :func:`_slotted_base` (GPUs in {1, 2, 4, 8}, 10 min - 2 h)."""
    return PreemptiveTIInstance(_slotted_base(cluster, n_jobs, seed, slot, mean_gap), slot, objective, mode)


def generate_resizable(cluster: Cluster, n_jobs: int, *, seed: int = 0, slot: float = 600.0, mean_gap: int = 300,
                       objective: str = "avg-jct") -> ResizableInstance:
    r"""A seeded ``offline-resizable`` instance on :func:`_slotted_base`'s trace with synthetic concave
    speeds :math:`s_j(k) = k^{\alpha_j}` iterations/s, :math:`\alpha_j \sim U[0.5, 1]`, for :math:`k` a
    power of two or :math:`g_j`, up to the free GPUs :math:`G`; work :math:`W_j = s_j(g_j) d_j` (the rigid
    run at the request finishes it, so resizable <= rigid preemptive holds on the twin)."""
    base = _slotted_base(cluster, n_jobs, seed, slot, mean_gap)
    G = sum(max(0, base.capacity(m).gpus) for m in base.cluster.machines)
    rng = random.Random(seed + 1)
    jobs = []
    for j in base.jobs:
        a = rng.uniform(0.5, 1.0)
        ks = sorted({k for k in (1, 2, 4, 8, 16, 32, 64, 128, 256) if k <= G} | {j.requested.gpus})
        sp = {k: float(k) ** a for k in ks}
        jobs.append(ResizableJob(j.id, j.arrival, sp[j.requested.gpus] * float(j.duration), sp))
    return ResizableInstance(G, tuple(jobs), slot, objective)


def _fluid(inst: ResizableInstance, backend: str, params: SolveParams) -> SolveResult:
    return FluidBoundMethod().solve(inst, backend, params)


HORIZON = Kind(
    "horizon-wait", HorizonInstance, generate_horizon, HorizonOptions, horizon_objective,
    "total JCT of the decided jobs (delay + run time slowed by the real tier's overhead; a job not started "
    "within the horizon is charged as started at its end)", _min,
    frozenset({D.ADMISSION, D.PLACEMENT, D.WAITING}),
    methods=(Method.of(HorizonFormulation, "horizon-wait", role=Role.EXACT,
                       summary="wait or place now over T slots: start slot, tier and machines of each job"),),
    gap_note=("horizon-wait: a policy is replayed slot by slot on the horizon (benchmarks.harness.horizon_score) "
              "and its plan scored by the model's objective: starts at slot boundaries, rigid gangs, no "
              "preemption, the same optimistic tail for jobs not started"),
    default_cluster="dally-2", default_jobs=6, snapshot=False,
    # the built-in suites' sizes: HiGHS proves 30 jobs on 16 machines at 8 slots within 60 s (docs)
    plan=SuitePlan("dally-2", (6,), (5, 10, 20, 30), (5, 10, 20, 30), scale_fixed_jobs=10),
)

OFFLINE_TI = Kind(
    "offline-ti", PreemptiveTIInstance, generate_offline_ti, OfflineTIOptions,
    lambda inst, sched: ti_objective(inst, sched),
    "slotted average JCT or makespan of a clairvoyant preemptive schedule of rigid gangs", _min,
    frozenset({D.ADMISSION, D.PLACEMENT, D.WAITING, D.PREEMPTION}),
    methods=(Method.of(PreemptiveTIFormulation, "offline-ti", role=Role.EXACT,
                       summary="time-indexed preemptive schedule (mode=total: placement free every slot)"),),
    gap_note=("offline-ti: exact over slotted preemptive schedules of rigid gangs; mode=total checks only the "
              "total free GPUs (a relaxation of placed schedules), mode=machine packs every slot"),
    default_cluster="rubick-64", default_jobs=6, snapshot=False,
)


def _fluid_value(inst: ResizableInstance, backend: str | None) -> float:
    return fluid_bound(inst).value


OFFLINE_RESIZABLE = Kind(
    "offline-resizable", ResizableInstance, generate_resizable, ResizableOptions,
    lambda inst, sched: resizable_objective(inst, sched),
    "slotted average JCT or makespan of a clairvoyant schedule with one GPU count per job and slot", _min,
    frozenset({D.ADMISSION, D.WAITING, D.PREEMPTION, D.GPUS}),
    methods=(
        Method.of(ResizableTIFormulation, "offline-resizable", role=Role.EXACT,
                  summary="time-indexed resizable schedule on the total free GPUs"),
        Method("offline-fluid", "offline-resizable", _fluid, Role.RELAXATION, frozenset({Capability.NO_BACKEND}),
               "fluid lower bound (per-job speed and GPU-work SRPT; continuous time, any size)"),
    ),
    relaxation=_fluid_value,
    gap_note=("offline-resizable: speeds s_j(k) (synthetic when generated; the perf model's best placement of k GPUs "
              "from resizable_from_instance) on the total free "
              "GPUs (fragmentation not modelled); reconfiguration is free at slot boundaries"),
    default_cluster="rubick-64", default_jobs=6, snapshot=False,
)

SLOTTED_KINDS: tuple[Kind[Any], ...] = (HORIZON, OFFLINE_TI, OFFLINE_RESIZABLE)

__all__ = ["HORIZON", "OFFLINE_RESIZABLE", "OFFLINE_TI", "SLOTTED_KINDS", "generate_offline_ti", "generate_resizable"]
