"""SRTF/SRSF's integer keys (:mod:`heuristics.baselines.srtf_keys`): jobs whose remaining times are
really equal stay exactly tied, so the tie rule decides where float keys swapped by an ulp."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import simulate
from schedlab.heuristics.baselines.srtf import ShortestRemaining
from schedlab.heuristics.baselines.srtf_keys import US, anchor, clock, key_at
from schedlab.scheduling.policy import EventKind

from .conftest import cluster, job


class _Probe(ShortestRemaining):
    """SRTF that notes, at C's arrival, the float keys the code before session 8 computed
    (``remaining x duration / iterations`` from the engine's progress) and its own integer keys."""

    seen: dict[str, tuple[float, int]]

    def schedule(self, view):
        d = super().schedule(view)
        if any(e.kind is EventKind.ARRIVAL and e.job_id == "C" for e in view.events):
            self.seen = {j: (view.job(j).remaining * view.job(j).job.duration / view.job(j).job.iterations,
                             self.key[j]) for j in ("A", "B")}
        return d


def test_ulp_swapped_float_keys_are_an_exact_tie_the_tie_rule_decides():
    """Two GPUs. A (1 GPU, 10.3 s) at 0, B (1 GPU, 10.2 s) at 0.1: both would end at 10.3, so their remaining
    times are equal at every later instant. C (1 GPU, 1 s) arrives at 4.1 and takes a GPU from one of them.

    Float keys at 4.1: A 10.3 - 4.1 = 6.200000000000001, B 10.2 - (4.1 - 0.1) = 6.199999999999999 (each from
    its own progress and mark): B would sort first and A be preempted, by an ulp. Integer keys: A's intercept
    10,300,000 + round(1 x 0) = 10,300,000 µs, B's 10,200,000 + round(1 x 100,000) = 10,300,000 µs: tied, so the
    stable sort keeps the list's order (A arrived first, ahead of B) and B is preempted. A ends at 10.3; B
    runs again when C ends at 5.1 and ends at 10.3 + 1 = 11.3."""
    c = cluster(1, 2)
    jobs = [job("A", 1, 10.3), job("B", 1, 10.2, arrival=0.1), job("C", 1, 1.0, arrival=4.1)]
    pol = _Probe()
    res = simulate(c, jobs, pol, semantics="reference")  # free preemption, no whole-second clock
    (fa, ka), (fb, kb) = pol.seen["A"], pol.seen["B"]
    assert fb < fa and fa - fb < 1e-9           # the float keys: B ahead, by rounding alone
    assert ka == kb == 6_200_000                 # the integer keys: tied, 6.2 s in whole µs
    pre = {r.job_id: r.preemptions for r in res.jobs}
    assert pre == {"A": 0, "B": 1, "C": 0}
    ends = {r.job_id: r.end for r in res.jobs}
    assert ends["A"] == 10.3 and ends["C"] == 5.1 and abs(ends["B"] - 11.3) < 1e-9


def test_hand_worked_keys():
    # at its anchor a job's key is its remaining time in whole µs; then it falls by round(s x T)
    a, s = anchor(2.0, 1.0, 3.0, True, 10.0, 10.0)    # 8 s left at t = 3, at the request's rate
    assert (a, s) == (8 * US + 3 * US, 1.0)
    assert key_at(a, s, clock(5.0), 4, False) == 6 * US and key_at(a, s, clock(5.0), 4, True) == 24 * US
    assert key_at(a, s, clock(20.0), 1, False) == 0  # never negative
    b, z = anchor(2.0, 1.0, 3.0, False, 10.0, 10.0)  # not moving: constant
    assert z == 0.0 and key_at(b, z, clock(99.0), 1, False) == 8 * US
    # float noise of the same true slope lands on one grid value: one slope class
    assert anchor(0.0, 1 / 3, 0.0, True, 1.0, 3.0)[1] == anchor(0.0, 1 / 7, 0.0, True, 1.0, 7.0)[1] == 1.0


@settings(max_examples=200, deadline=None, derandomize=True)
@given(d=st.integers(1, 10**6), m1=st.integers(0, 10**6), m2=st.integers(0, 10**6), t=st.integers(0, 10**7),
       rate=st.sampled_from((1.0, 0.5, 0.75, 1 / 3)))
def test_equal_remaining_times_stay_tied(d, m1, m2, t, rate):
    """Two jobs of one slope class whose remaining times are equal in whole µs at some instant (different
    progress and marks) have equal keys at every later instant."""
    dur = d / 1000.0  # seconds, a whole number of ms
    m1s, m2s = m1 / 1000.0, m2 / 1000.0
    # job 1 anchored at m1 with dur seconds left; job 2 anchored at m2 with what job 1 has left then
    a1, s1 = anchor(0.0, rate, m1s, True, dur, dur)
    left2 = key_at(a1, s1, clock(m2s), 1, False) if m2 >= m1 else None
    if left2 is None or left2 <= 0 or s1 != 1.0:
        return
    a2, s2 = anchor(0.0, rate, m2s, True, left2 / US, left2 / US)
    assert s1 == s2
    later = clock(max(m1s, m2s)) + t
    assert key_at(a1, s1, later, 3, True) == key_at(a2, s2, later, 3, True)
