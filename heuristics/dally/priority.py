r"""Dally's network-sensitive priority (§4.3.1).

.. math::

   W_{compl} = \frac{I_{compl}}{I_{total\text{-}expected}},\qquad
   T_{norm} = \frac{T_{run}}{T_{total\text{-}ideal\text{-}run}},\qquad
   Nw_{sens} = \frac{W_{compl}}{T_{norm}}

with ``T_total_ideal_run = c x I_total_expected`` (``c``: compute time of one iteration on one GPU, no
communication). ``Nw_sens`` is therefore the job's average speed relative to its ideal speed: 1 for a
job that has never been slowed, ``1 / (1 + o)`` for one that has only run at a tier with overhead
``o`` (Table 1: ResNet18 across the network, ``1 / 28.49 = 0.035``). **Lower = more slowed = higher
priority**: offers go in increasing ``Nw_sens`` order and preemption takes from higher values.

Our readings (the paper leaves them open):

* ``I_compl`` = iterations done (``JobView.progress``), ``I_total_expected`` = ``Job.iterations``,
  ``T_run`` = seconds of productive running (``JobView.executed_time``; time spent restoring a
  checkpoint holds GPUs but is not "run").
* ``c`` (:func:`ideal_iteration_time`): ``attrs["compute_time"]`` (Dally workloads carry it), else the
  trace's reference time per iteration at the requested GPUs (``attrs["iter_time"]`` or
  ``duration / iterations``). With a reference time the ratio may exceed 1 (a placement faster than the
  trace's), so ``Nw_sens`` is clamped to ``[0, 1]``.
* A job that has never run (``T_run = 0``, ``W_compl = 0``: 0/0) gets ``Nw_sens = 1`` — no slowdown
  observed, the value of an unslowed job. So fresh arrivals never preempt running work, and jobs that
  have endured slowdowns are offered resources first (as the paper intends).
* Ties (equal ``Nw_sens``) go by queue-entry order (first come, first served).
"""

from __future__ import annotations

from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import JobView

UNSTARTED = 1.0


def ideal_iteration_time(job: Job) -> float | None:
    """``c``: compute seconds per iteration without communication (see the module docstring)."""
    a = job.attrs
    for key in ("compute_time", "iter_time"):
        v = a.get(key)
        if v is not None and v > 0:
            return float(v)
    if job.duration is not None and job.duration > 0 and job.iterations > 0:
        return job.duration / job.iterations
    return None


def nw_sens(*, completed: float, total: float, run_time: float, compute_time: float | None) -> float:
    """``Nw_sens = W_compl / T_norm`` (Dally §4.3.1), clamped to ``[0, 1]``; 1 when nothing has run."""
    if run_time <= 0 or compute_time is None or total <= 0:
        return UNSTARTED
    w_compl = completed / total                       # W_compl = I_compl / I_total_expected
    t_norm = run_time / (compute_time * total)        # T_norm = T_run / T_total_ideal_run
    return min(1.0, max(0.0, w_compl / t_norm))       # Nw_sens = W_compl / T_norm


def job_nw_sens(jv: JobView) -> float:
    """``Nw_sens`` of a job as the view shows it now."""
    run_time = jv.executed_time
    if run_time <= 0:  # nothing has run (every arrival): ``nw_sens`` gives UNSTARTED whatever the rest is
        return UNSTARTED
    job = jv.job
    return nw_sens(completed=jv.progress, total=job.iterations, run_time=run_time,
                   compute_time=ideal_iteration_time(job))


__all__ = ["UNSTARTED", "ideal_iteration_time", "job_nw_sens", "nw_sens"]
