"""The Tiresias paper's baselines: Best-effort, SRTF / SRSF (oracles), Gandiva-like (hand timelines)."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.simulator import Recorder, simulate
from schedlab.heuristics import POLICIES
from schedlab.scheduling import Job, Resources
from schedlab.topology.errors import SpecError


def _by(res, field):
    return {r.job_id: getattr(r, field) for r in res.jobs}


def test_registry_flags():
    for name in ("srtf", "srsf", "shortest", "shortest-gpu"):
        assert POLICIES[name].oracle and POLICIES[name].preemptive and POLICIES.build(name).oracle
    assert POLICIES["best-effort"].preset == {"blocking": False} and not POLICIES["best-effort"].preemptive
    assert POLICIES["yarn-cs"].preset == {"blocking": True}
    assert POLICIES["2d-las"].twins == ("tiresias-placement",) and POLICIES["2d-las"].preemptive
    assert POLICIES["gandiva-like"].preemptive and not POLICIES["gandiva-like"].oracle


def test_srtf_and_srsf_hand_timeline(mk):
    """Two GPUs; A (2 GPUs, 4 s) and B (1 GPU, 6 s) at 0, C (1 GPU, 3 s) at 1.
    SRTF by remaining time: t=0 A (4) before B (6): A runs 0-4, B waits. t=1: A 3 left, C 3, B 6:
    A (ahead on the tie: stable order) keeps both GPUs. t=4: C, then B: 4-7 and 4-10. JCTs 4, 10, 6.
    SRSF by remaining time x GPUs: t=0 A 8 vs B 6: B runs 0-6 (1 GPU), A does not fit. t=1: B 5,
    C 3, A 8: C and B run, C 1-4. t=4: A 8, B 3 -> B; A needs 2 GPUs, 1 free: waits. B ends 6, A 6-10.
    JCTs 10, 6, 3."""
    c = mk.cluster(1, 2)
    jobs = [mk.job("A", 2, 4), mk.job("B", 1, 6), mk.job("C", 1, 3, arrival=1)]
    assert _by(simulate(c, jobs, POLICIES.build("srtf"), semantics="tiresias"), "end") == {"A": 4, "B": 10, "C": 7}
    assert _by(simulate(c, jobs, POLICIES.build("srsf"), semantics="tiresias"), "end") == {"A": 10, "B": 6, "C": 4}


def test_oracles_need_durations(mk):
    c = mk.cluster(1, 1)
    with pytest.raises(SpecError, match="oracle"):
        simulate(c, [Job("j", Resources(1), iterations=5, attrs={"iter_time": 1.0})], POLICIES.build("srtf"))


def test_gandiva_time_slices_an_oversubscribed_gpu(mk):
    """One GPU, A and B (150 s each) at 0, free preemption (slice = quantum = 60 s): A 0-60, B 60-120,
    A 120-180, B 180-240, A 240-270 (done), B 270-300."""
    c = mk.cluster(1, 1)
    rec = Recorder(keep_segments=True)
    res = simulate(c, [mk.job("A", 1, 150), mk.job("B", 1, 150)], POLICIES.build("gandiva-like"), semantics="tiresias",
                   recorder=rec)
    assert _by(res, "end") == {"A": 270, "B": 300}
    assert [(s.job_id, s.start, s.end) for s in sorted(rec.segments, key=lambda s: s.start)] == [
        ("A", 0, 60), ("B", 60, 120), ("A", 120, 180), ("B", 180, 240), ("A", 240, 270), ("B", 270, 300)]


def test_gandiva_slice_grows_with_the_switch_cost(mk):
    """With a 39 s checkpoint the slice is max(60, 2 x 39 / 0.1) = 780 s: A runs 0-780 before B."""
    c = mk.cluster(1, 1)
    res = simulate(c, [mk.job("A", 1, 1000), mk.job("B", 1, 1000)], POLICIES.build("gandiva-like"), semantics="realistic")
    assert _by(res, "first_start")["B"] == pytest.approx(780 + 39)  # after A's checkpoint


def test_gandiva_migrates_toward_consolidation(mk):
    """Two machines x 2 GPUs. a (1 GPU, 5 s) and b (1 GPU, 100 s) pack m0, c (1 GPU, 49 s) goes to m1.
    X (2 GPUs, 100 s) arrives at 1 and waits; at 5 a ends: one GPU free on each machine, X is spread
    (m0 + m1). At 49 c ends: m1 has 2 GPUs with X's own: X migrates there (one reconfiguration)."""
    c = mk.cluster(2, 2)
    jobs = [mk.job("a", 1, 5), mk.job("b", 1, 100), mk.job("c", 1, 49), mk.job("X", 2, 100, arrival=1)]
    rec = Recorder(keep_segments=True)
    res = simulate(c, jobs, POLICIES.build("gandiva-like"), semantics="reference", recorder=rec)
    xs = sorted((s for s in rec.segments if s.job_id == "X"), key=lambda s: s.start)
    assert [(s.start, len(s.placement)) for s in xs] == [(5, 2), (49, 1)]
    assert _by(res, "reconfigurations")["X"] == 1 and _by(res, "end")["X"] == 105
    assert POLICIES.build("gandiva-like", {"migrate": False}).migrate is False


def test_best_effort_is_fifo_without_head_of_line_blocking(mk):
    """2 GPUs: A (1 GPU, 10 s) at 0, B (2 GPUs, 5 s) at 1 (1 GPU free: does not fit), D (1 GPU, 2 s)
    at 2. YARN-CS: D waits behind B; B runs 10-15, D 15-17. Best-effort skips B: D runs 2-4, B 10-15."""
    c = mk.cluster(1, 2)
    jobs = [mk.job("A", 1, 10), mk.job("B", 2, 5, arrival=1), mk.job("D", 1, 2, arrival=2)]
    assert _by(simulate(c, jobs, POLICIES.build("yarn-cs"), semantics="tiresias"), "first_start") == \
        {"A": 0, "B": 10, "D": 15}
    assert _by(simulate(c, jobs, POLICIES.build("best-effort"), semantics="tiresias"), "first_start") == \
        {"A": 0, "B": 10, "D": 2}


def test_srtf_tie_keeps_the_previous_order(mk):
    """Two GPUs; X (1 GPU, 8 s), Y (2 GPUs, 6 s), W (1 GPU, 2 s), all at 0, listed X, Y, W.
    t=0: sorted W (2), Y (6), X (8): W takes a GPU, Y does not fit, X takes the other.
    t=2: W done; X has 6 s left, tied with Y: the stable sort keeps Y ahead (it was ahead at t=0),
    so Y takes both GPUs and X is preempted: Y 2-8, X 8-14. (Ordering ties by arrival instead would
    keep X running to 8 and Y 8-14.)"""
    c = mk.cluster(1, 2)
    jobs = [mk.job("X", 1, 8), mk.job("Y", 2, 6), mk.job("W", 1, 2)]
    res = simulate(c, jobs, POLICIES.build("srtf"), semantics="tiresias")
    assert _by(res, "end") == {"W": 2, "Y": 8, "X": 14}
    assert _by(res, "preemptions") == {"W": 0, "Y": 0, "X": 1}
