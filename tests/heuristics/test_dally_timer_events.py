"""Every pending delay-timer expiry is a simulator event strictly after ``now`` (round 7b, branch dtm7):
a wait list whose oldest entry left the window while nobody queried its demand no longer gives a
wake-up at or before ``now`` that cancels the other demands' timers."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import simulate
from schedlab.benchmarks.simulator.costs import cost_model
from schedlab.heuristics import POLICIES
from schedlab.heuristics.dally.policy import DallyPolicy
from schedlab.scheduling import Job, Resources

from .test_dally import cluster, djob, run


def test_a_stale_wait_list_does_not_cancel_a_delay_timer():
    """Dally (tuned), window 100 s, cold timers 50 s machine / 50 s rack in total (min_samples 2), no
    preemption; one rack of two 8-GPU machines.

    * t = 0: P (2 GPUs, 10 s) takes a machine: the (machine, 2) list holds its wait, recorded at 0 (it
      leaves the window at 100). No 2-GPU job is ever queried again.
    * t = 200: A and B (6 GPUs each, until 5200) fill m0 and m1 (the (machine, 6) list: two entries at 200).
    * t = 201: X (4 GPUs, 1000 iterations) arrives: 2 + 2 free GPUs, no machine with 4 -> a rack offer;
      starvation 0 < 50 (cold), X rejects. Its machine timer runs out at 201 + 50 = 251 (rack timer 50 in
      total too): the pass must ask for a timer at 251. The window changes next at 300 (the 6-GPU list).

    Before the fix the (machine, 2) list still showed its head recorded at 0, ``next_change`` answered
    100 <= 201, and the pass asked for no timer at all: X waited for A and B to end (t = 5200) and ran
    on a machine. Now: a timer event at 251, X accepts the rack offer then.
    JCT = 50 + 1000 x 2.16 = 2210 s (rack tier, ResNet18, as in ``test_dally``)."""
    pol = POLICIES.build("dally", {"machine_timer": 50.0, "rack_timer": 0.0, "history_window": 100.0,
                                   "preemption": False})
    jobs = [djob("P", 2, 10.0), djob("A", 6, 5000.0, arrival=200.0), djob("B", 6, 5000.0, arrival=200.0),
            Job("X", Resources(4), iterations=1000.0, arrival=201.0, model="resnet18",
                attrs={"compute_time": 1.0, "rates": "tier"})]
    res, r = run(cluster(1, 2), jobs, pol)
    x = r["X"]
    assert x.first_start == pytest.approx(251.0)
    assert x.tiers == "rack"
    assert x.jct == pytest.approx(50.0 + 2160.0)


class _Checked(DallyPolicy):
    """Dally that checks, after every pass's step 4, that the earliest pending wake-up is after ``now``
    and no later than every delay-timer expiry it must bring (computed here by brute force over the
    queued jobs, as the docstring of :mod:`schedlab.heuristics.dally.policy` states step 4)."""

    checked = 0

    def _timers(self, view, offer, waiting_on_timer, preempted):
        out = super()._timers(view, offer, waiting_on_timer, preempted)
        now = view.now
        free = offer.free_gpus
        due = now + 1.0 if preempted else math.inf
        if free > 0:
            demands = set()
            for jid in self._key:
                g = view.job(jid).job.requested.gpus
                if g > free:
                    continue
                demands.add(g)
                since = self._since[jid]
                for tk in self.tuner.timers(g, now):
                    if tk > 0 and now - since < tk:     # (Algorithm 1's test: the timer has not run out)
                        at = since + tk
                        while at - since < tk:          # (the first instant that test says it has)
                            at = math.nextafter(at, math.inf)
                        due = min(due, at)
            if waiting_on_timer and demands:
                due = min(due, self.tuner.next_change(now, sorted(demands)))
        if math.isfinite(due):
            assert self._wakeups, f"t={now}: a timer is due at {due} but no wake-up is pending"
            assert now < self._wakeups[0] <= due
            type(self).checked += 1
        assert all(t.at > now for t in out)
        return out


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), n=st.integers(8, 40), window=st.sampled_from([30.0, 200.0, 2000.0]),
       timer=st.sampled_from([20.0, 150.0, 1000.0]), preempt=st.booleans())
def test_every_pending_timer_is_an_event_after_now(seed, n, window, timer, preempt):
    rng = random.Random(seed)
    jobs = [Job(f"j{i}", Resources(rng.choice([1, 2, 4, 6, 8, 16])), iterations=rng.uniform(20, 600),
                arrival=float(rng.randrange(0, 1500)), model=rng.choice(["resnet18", "bert"]),
                attrs={"compute_time": 1.0, "rates": "tier"}) for i in range(n)]
    pol = _Checked(machine_timer=timer, rack_timer=timer, history_window=window, min_samples=1,
                   preemption=preempt, seed=seed)
    res = simulate(cluster(2, 2), jobs, pol, costs=cost_model("rubick"))
    assert res.unfinished == ()


def test_the_property_checks_passes_with_timers_due():
    """(The property above is not vacuous: its examples reach passes with a timer due — 132 of them.)"""
    _Checked.checked = 0
    test_every_pending_timer_is_an_event_after_now()
    assert _Checked.checked > 50


def test_a_timer_expiry_is_when_algorithm_1_sees_it_run_out():
    """(The case the property found: since 1006, timer 43.428139310260654; ``since + tk`` rounds to an
    instant where ``now - since < tk`` still holds, so a wake-up there rejects again and asks for none.)"""
    from schedlab.heuristics.dally.steps import _expiry
    since, tk = 1006.0, 43.428139310260654
    at = _expiry(since, tk)
    assert at - since >= tk
    assert math.nextafter(at, -math.inf) - since < tk
    assert (since + tk) - since < tk      # (the rounded sum falls one step short)
