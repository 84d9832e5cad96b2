r"""The neutral objective shared by every policy of a kind: the snapshot's **estimated average
completion time** at the decided rates (a proxy for JCT; minimised).

For a snapshot with jobs :math:`J`, a decision (allocation) :math:`A`, and per job

* :math:`d_j` — its remaining run time *at its request*: ``duration * (1 - progress / iterations)``
  when the job states a duration, else its remaining iterations over its reference rate
  (``iterations - progress`` iterations at ``ref_rate`` iterations per second; the kinds below say
  what the reference rate is);
* :math:`r_j(A) > 0` — its speed under :math:`A` relative to its request (1 = as fast as requested),
  given by the kind (joint: throughput over the request's throughput; tier: :math:`(1 + o_j(\text{machine}))
  / (1 + o_j(\text{tier}))`; Tiresias: :math:`1 / (1 + o_a x_a)`, its skew :math:`o_a` times the share
  :math:`x_a` of its worker-PS traffic that crosses machines, :func:`formulations.tiresias.tiresias_neutral`),

a **placed** job finishes at :math:`C_j = d_j / r_j(A)`. A **queued** job (not in :math:`A`) is charged
:math:`C_q = w_q + d_q` with the decision-independent wait

.. math::

   w_q = \max\big(d_{\min},\ f_q\big), \qquad d_{\min} = \min_{j \in J} d_j,

where :math:`f_q` is the earliest time its requested GPUs fit in the aggregate free GPUs (the decision's
machines minus ``reserved``) as the jobs running *before* the decision (``base.current``) finish at
their current speeds, and as reserved work releases its GPUs (``releases``: a placement instance converted
from a replay state; fragmentation ignored; :math:`+\infty` is replaced by the last such finish plus
:math:`\max_j d_j` when the request never fits). :math:`d_{\min}` is the earliest the next
decision could come (the soonest any job can finish): a job left queued on idle GPUs waits at least
that long. The objective is :math:`\frac{1}{|J|}\sum_j C_j` (0 with no jobs).

Because :math:`w_q` does not depend on the decision, starting a queued job at its request on idle
GPUs (:math:`r_j = 1`) changes only its own term, from :math:`w_j + d_j` to :math:`d_j < w_j + d_j`:
the objective never prefers leaving it queued (property P2). Every snapshot kind gives it an exact form
(:attr:`Objective.exact_instance`: joint ``JointObjective.NEUTRAL``, tier mode ``est-avg-jct``, a Tiresias
instance with ``neutral=True``), each built on :func:`job_terms`: the harness solves each decision set's
twin under it and measures a gap to that proven optimum; where no optimum was proven, a gap under it is
measured against the exact twin's allocation (a reference, not a bound).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job

#: the name every report prints beside a gap under this objective
NEUTRAL_NAME = "est-avg-jct"
NEUTRAL_SUMMARY = ("estimated average completion time [s] at the decided rates; queued jobs charged "
                   "max(soonest finish, first fit as running jobs end) plus their run time at the request")

#: ``(job allocation) -> speed relative to the request`` (> 0)
RateFn = Callable[[JobAllocation], float]


@dataclass(frozen=True)
class Objective:
    """A named scoring objective of a kind: ``fn(instance, allocation) -> value``; ``sense`` min/max;
    ``optimised_by`` names the methods whose optimum is this objective (empty: scoring only).

    ``exact_instance`` (optional): the instance whose *kind* objective is an increasing or decreasing
    affine map of this one, so the kind's exact methods solved on it optimise this objective exactly (the
    joint kind: ``JointObjective.NEUTRAL``, no reconfiguration penalty); ``value_of(exact_instance,
    value)`` maps that instance's objective value or dual bound back to this objective's units."""

    name: str
    fn: Callable[..., float]
    sense: str
    summary: str = ""
    optimised_by: tuple[str, ...] = ()
    exact_instance: Callable[[Any], Any] | None = None
    value_of: Callable[[Any, float], float] | None = None
    #: ``fn`` also scores a solver's own solution (Tiresias: with the solver's PS hosts), which the harness
    #: then passes instead of its plain allocation
    scores_solution: bool = False


#: generated instances' run times at the request: log-normal, median 240 s, sigma 1.5, clipped to
#: [30 s, 8 h] (the distribution of the smoke / rubick mixes, ``benchmarks.workloads.named``), so a generated
#: snapshot's est-avg-jct is in seconds comparable with a replay state's
DURATION_MEDIAN_S, DURATION_SIGMA, DURATION_RANGE_S = 240.0, 1.5, (30.0, 8 * 3600.0)


def generated_durations(n: int, seed: int) -> list[float]:
    """``n`` seeded run times at the request (:data:`DURATION_MEDIAN_S`), drawn from their own stream
    (``random.Random(seed + 104729)``): the generators' other draws are unchanged."""
    rng = random.Random(seed + 104729)
    lo, hi = DURATION_RANGE_S
    return [round(min(hi, max(lo, rng.lognormvariate(math.log(DURATION_MEDIAN_S), DURATION_SIGMA))), 3)
            for _ in range(n)]


def remaining_time(base: Instance, job: Job, ref_rate: float = 1.0) -> float:
    """:math:`d_j`: remaining run time at the request (module docstring)."""
    p = base.progress.get(job.id)
    done = p.progress if p is not None else 0.0
    if job.duration is not None:
        return job.duration * max(0.0, 1.0 - done / job.iterations)
    return max(0.0, job.iterations - done) / ref_rate


def first_fit_time(base: Instance, gpus: int, finishes: list[tuple[float, int]], horizon: float,
                   extra: int = 0) -> float:
    """The earliest time ``gpus`` fit in the aggregate free GPUs as running jobs release theirs
    (``finishes``: (time, GPUs) sorted by time; ``extra`` of those GPUs are outside the capacity, held by
    reserved work); ``horizon`` where they never do."""
    used = sum(g for _, g in finishes)
    total = extra + sum(max(0, base.capacity(m).gpus) for m in base.cluster.machines)
    free = total - used
    if free >= gpus:
        return 0.0
    for t, g in finishes:
        free += g
        if free >= gpus:
            return t
    return horizon


#: ``(seconds from now, GPUs)`` that work outside the decision (``reserved``) releases when it ends
Releases = tuple[tuple[float, int], ...]


def job_terms(base: Instance, rate: RateFn, ref_rate: Callable[[Job], float],
              releases: Releases = ()) -> dict[str, tuple[float, float]]:
    """Per job of ``base``: ``(d_j, C_q)``, its remaining run time at the request and the completion
    time it is charged when left queued (module docstring). Neither depends on the decision: a placed
    job's term is ``d_j / r_j(A)``. What :func:`est_avg_jct` sums, and what an exact model of this
    objective (``JointObjective.NEUTRAL``, the tier and Tiresias neutral models) takes as constants.

    ``releases``: GPUs held outside the decision (``base.reserved``: the running jobs of a placement
    instance converted from a replay state) and when they come free; they join the running jobs'
    finishes in :math:`f_q` (the free GPUs they add were not counted before). Without them reserved GPUs
    never come free within the estimate."""
    jobs = base.jobs
    if not jobs:
        return {}
    d = {j.id: remaining_time(base, j, ref_rate(j)) for j in jobs}
    d_min, d_max = min(d.values()), max(d.values())
    finishes = sorted((d[ja.job_id] / max(rate(ja), 1e-12), ja.gpus) for ja in base.current if ja.job_id in d)
    later = sorted((float(t), int(g)) for t, g in releases)
    horizon = max([f[0] for f in finishes] + [t for t, _ in later] + [0.0]) + d_max
    if later:  # the released GPUs are not in the capacity yet: count them as "used" until they come free
        finishes = sorted(finishes + later)
        extra = sum(g for _, g in later)
        return {j.id: (d[j.id], max(d_min, first_fit_time(base, j.requested.gpus, finishes, horizon, extra))
                       + d[j.id]) for j in jobs}
    return {j.id: (d[j.id], max(d_min, first_fit_time(base, j.requested.gpus, finishes, horizon)) + d[j.id])
            for j in jobs}


def est_avg_jct(base: Instance, allocation: Allocation, rate: RateFn, ref_rate: Callable[[Job], float],
                releases: Releases = ()) -> float:
    """The neutral objective (module docstring) of ``allocation`` on ``base``."""
    jobs = base.jobs
    if not jobs:
        return 0.0
    terms = job_terms(base, rate, ref_rate, releases)
    total = 0.0
    for j in jobs:
        d, queued = terms[j.id]
        ja = allocation.get(j.id)
        if ja is not None:
            r = rate(ja)
            total += d / r if r > 0 else math.inf
        else:
            total += queued
    return total / len(jobs)


__all__ = ["NEUTRAL_NAME", "NEUTRAL_SUMMARY", "Objective", "RateFn", "Releases", "est_avg_jct", "first_fit_time",
           "generated_durations", "job_terms", "remaining_time"]
