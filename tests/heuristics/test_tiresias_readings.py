"""Issue 22: where the Tiresias paper reads two ways, the reading we chose, pinned on a hand-worked case
(docs/tiresias.md, "Ambiguities", lists both readings of each). Times in whole seconds under
``--semantics tiresias`` (one pool, free preemption); jobs run 1 iteration per second."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.simulator import simulate
from schedlab.heuristics import POLICIES
from schedlab.heuristics.tiresias.gittins import ServiceDistribution


def _ends(res):
    return {r.job_id: r.end for r in res.jobs}


def test_gittins_quantum_is_what_is_left_of_the_queue():
    """Δ = Q^hi - a (chosen) or Δ = Q^hi? Samples {2, 12}, Q1^hi = 10, a job with a = 3 GPU-s.
    Δ = 10 - 3 = 7: P(S - 3 <= 7 | S > 3) = P(S <= 10 | S > 3) = 0 (the only sample above 3 is 12):
    G = 0 — it cannot finish inside the queue. Δ = 10 would give P(S <= 13 | S > 3) = 1 over
    E[min(S - 3, 10)] = 9: G = 1/9."""
    d = ServiceDistribution([2.0, 12.0])
    assert d.index(3.0, 10.0) == 0.0
    assert d.index(3.0, 13.0) == pytest.approx(1 / 9)  # the other reading's value: Δ = 10 means hi = 13


def test_lower_queue_order_is_entry_into_the_queue(mk):
    """FIFO in a lower queue by entry into it (chosen) or by first start ever? 3 GPUs, K = 2, threshold
    4 GPU-s. A (1 GPU) starts at 0, B (2 GPUs) at 1. B reaches 4 GPU-s at 1 + 2 = 3, A at 4: B enters Q2
    first. C (1 GPU, 5 s) arrives at 10 in Q1 with no GPU free and preempts the lowest-priority Q2 job:
    A, the later entry (1 GPU suffices; C runs 10-15, A resumes at 15 and ends at 100 + 5 = 105). By
    first start B (started later) would be the victim."""
    c = mk.cluster(1, 3)
    jobs = [mk.job("A", 1, 100), mk.job("B", 2, 100, arrival=1), mk.job("C", 1, 5, arrival=10)]
    res = simulate(c, jobs, POLICIES.build("2d-las", {"threshold": 4}), semantics="tiresias")
    assert {r.job_id: r.preemptions for r in res.jobs} == {"A": 1, "B": 0, "C": 0}
    assert _ends(res) == {"A": 105, "B": 101, "C": 15}


def test_promoteknob_waiting_excludes_queueing_before_the_first_run(mk):
    """Does PROMOTEKNOB's waiting time count the queueing before the job first ran? One GPU, K = 2,
    threshold 10 GPU-s, knob 1. B (8 s) and A (20 s) arrive at 0: A queues 0-8, runs 8-19 (demoted at
    18, keeps the GPU until S1 arrives at 19: t_J = 11 s). S_k (2 s) arrive at 17 + 2k, k = 1..15, and
    keep Q1 busy back to back 19-49. Chosen (from A's first run): A has waited 11 s at 30, returns to
    Q1 behind S6 (arrived 29), runs 31-40. Counting the 8 s before its first run it would be promoted at
    22 and end at 32; without the knob it ends at 58."""
    c = mk.cluster(1, 1)
    jobs = [mk.job("B", 1, 8), mk.job("A", 1, 20)] + [mk.job(f"S{k}", 1, 2, arrival=17 + 2 * k)
                                                     for k in range(1, 16)]
    pol = POLICIES.build("2d-las", {"threshold": 10, "knob": 1})
    ends = _ends(simulate(c, jobs, pol, semantics="tiresias"))
    assert ends["A"] == 40 and pol.promotions == 1
    assert _ends(simulate(c, jobs, POLICIES.build("2d-las", {"threshold": 10}), semantics="tiresias"))["A"] == 58
