"""Dally (Sharma et al., "GPU Cluster Scheduling for Network-Sensitive Deep Learning"): delay
scheduling over the network tiers (:mod:`.delay`, Algorithm 1), the delay-timer auto-tuner
(:mod:`.autotune`, Algorithm 2), the network-sensitive priority (:mod:`.priority`, §4.3.1), and the
policy that puts them together (:mod:`.policy`). Dally has no public code; this is written to be read
beside the paper, with the algorithm lines cited in the comments.

Registered policies (``DALLY_POLICIES``, merged into ``schedlab.heuristics.POLICIES``):

* ``dally`` — tuned timers (Algorithm 2), network-sensitive offers and preemption;
* ``dally-manual`` — the same with fixed timers (default 12 h machine, another 12 h rack).

Both are scored in snapshot form against the tier-aware formulation (``tier-placement``).
"""

from __future__ import annotations

from schedlab.heuristics.dally.autotune import AutoTuner, FixedTimers
from schedlab.heuristics.dally.delay import Levels, Offer, on_resource_offer
from schedlab.heuristics.dally.policy import DallyPolicy, waiting_since
from schedlab.heuristics.dally.priority import ideal_iteration_time, job_nw_sens, nw_sens
from schedlab.scheduling.registry import PolicyFamily, PolicyParams, PolicyRegistry, PolicySpec, ours, paper

HOUR = 3600.0


class DallyManualParams(PolicyParams):
    """Dally-manual: fixed delay timers; offers and preemption as Dally's."""

    machine_timer: float = paper(12 * HOUR, ge=0, description="machine-level delay timer (s): a job that fits one "
                                 "machine rejects other offers until it has starved this long (paper: 12 h)")
    rack_timer: float = paper(12 * HOUR, ge=0, description="rack-level delay timer (s) on top of the machine timer: "
                              "after machine + rack timers a job accepts any placement (paper: another 12 h)")
    preemption: bool = paper(True, description="network-sensitive preemption (the paper, §4.3.1): a queued job "
                             "slowed more (lower Nw_sens) preempts less slowed running jobs to get its best tier; "
                             "false = never preempt")
    upgrade: bool = ours(False, description="ours (off: not in the paper): a running job placed below its best "
                          "tier is offered better tiers and moves up when one frees (a migration), and with "
                          "preemption may preempt to get it")
    preempt_margin: float = ours(0.0, ge=0, le=1, description="ours (0 = the paper's strict priority order): a job "
                                  "preempts only running jobs whose Nw_sens exceeds its own by more than this")
    lease: float = ours(0.0, ge=0, description="ours (0 = off, the paper): a running job can be preempted only "
                         "after running this long since its last start or move (a Themis-style lease that "
                         "bounds preemption churn; 3600 s was our earlier default)")


class DallyParams(DallyManualParams):
    """Dally: timers tuned by Algorithm 2 (mean + sigmas x sample std of recent waits per tier and demand)."""

    machine_timer: float = paper(12 * HOUR, ge=0, description="cold-start machine timer (s), used while the "
                                 "(machine, GPU demand) wait list has fewer than min_samples entries")
    rack_timer: float = paper(12 * HOUR, ge=0, description="cold-start rack timer (s) on top of the machine one, "
                              "used while the (rack, GPU demand) wait list has fewer than min_samples entries")
    history_window: float = paper(24 * HOUR, gt=0, description="auto-tuner sliding window (s): waits recorded "
                                  "longer ago are dropped (Algorithm 2's HISTORY_TIME_LIMIT; ours: 24 h)")
    min_samples: int = ours(2, ge=1, neutral="a cold start the paper leaves open",
                            description="waits a list needs before its timer is tuned (cold start below it); "
                                        "2 = the fewest with a sample standard deviation")
    sigmas: float = paper(2.0, ge=0, description="timer = mean + sigmas x sample standard deviation of the "
                          "waits (paper: 2)")


def _manual(*, seed: int = 0, **params) -> DallyPolicy:
    return DallyPolicy(autotune=False, seed=seed, **params)


def _tuned(*, seed: int = 0, **params) -> DallyPolicy:
    return DallyPolicy(autotune=True, seed=seed, **params)


DALLY_POLICIES = PolicyRegistry()
DALLY_POLICIES.register(PolicySpec(
    "dally", _tuned, "Dally: delay scheduling over network tiers with auto-tuned timers, network-sensitive "
    "priority and preemption", PolicyFamily.DALLY, DallyParams, preemptive=True, twins=("tier-placement",),
    reference="Dally §4.3 (Algorithms 1 and 2, Nw_sens priority)"))
DALLY_POLICIES.register(PolicySpec(
    "dally-manual", _manual, "Dally-manual: Dally with fixed delay timers (12 h machine, +12 h rack)",
    PolicyFamily.DALLY, DallyManualParams, preemptive=True, twins=("tier-placement",),
    reference="Dally §4.3.2, §5.1.3 (Dally-manual baseline)"))

__all__ = ["DALLY_POLICIES", "AutoTuner", "DallyManualParams", "DallyParams", "DallyPolicy", "FixedTimers",
           "Levels", "Offer", "ideal_iteration_time", "job_nw_sens", "nw_sens", "on_resource_offer",
           "waiting_since"]
