"""Issue 21 item 5: the strengthened time-indexed offline models (:mod:`formulations.offline_slots`):
per-job horizons, completion indicators, identical jobs ordered, the greedy schedule as MIP start. Hand
values first, then the property that the strong and the plain models have the same optimum."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.formulations import SolveParams, Status, solve
from schedlab.formulations.offline_resizable import ResizableInstance, ResizableJob, ResizableTIFormulation
from schedlab.formulations.offline_slots import (
    SlotJob,
    completion_of,
    efficient_counts,
    greedy_schedule,
    horizons,
)
from schedlab.formulations.offline_ti import PreemptiveTIFormulation, PreemptiveTIInstance
from schedlab.scheduling import Instance, Job, Resources

from .conftest import tiny_cluster

P = SolveParams(threads=1, time_limit_s=60, seed=0, work_limit=60)


def test_greedy_and_horizons_by_hand():
    """One GPU; A (0, 10 slots), B (1, 1 slot). The greedy (shortest remaining first) runs A in slot 0, B in
    slot 1 (1 < 9 left), A in 2-10: completions A 11, B 2 (the optimum: average (11 + 1) / 2 = 6).
    Horizons: serial 1 + 11 = 12. A: greedy-maximal 10 + floor(1 / (1 - 1 + 1)) = 11; from the greedy
    value 13 - e_B 2 = 11 -> 11. B: greedy-maximal 2 + floor(10 / 1) = 12; from the value 13 - e_A 10 = 3
    -> 3. Makespan: both <= the greedy makespan 11 (B: 11, A: 11)."""
    jobs = [SlotJob("A", 0, 10.0, {1: 1.0}), SlotJob("B", 1, 1.0, {1: 1.0})]
    g = greedy_schedule(jobs, 1, 12)
    assert sorted(g["A"]) == [0, *range(2, 11)] and sorted(g["B"]) == [1]
    assert completion_of(g) == {"A": 11, "B": 2}
    assert horizons(jobs, 1, 12, "avg-jct", True, completion_of(g)) == {"A": 11, "B": 3}
    assert horizons(jobs, 1, 12, "makespan", True, completion_of(g)) == {"A": 11, "B": 11}
    assert horizons(jobs, 1, 12, "avg-jct", True, None) == {"A": 11, "B": 12}


def test_greedy_maximal_horizon_with_gangs_by_hand():
    """4 GPUs; a 4-GPU job X (0, 2 slots) and two 1-GPU jobs Y, Z (0, 3 slots). For Y, the slots it waits in
    have >= 4 - 1 + 1 = 4 GPUs busy, i.e. X runs: at most 2 of them, so c_Y <= 3 + floor((8 + 3) / 4) = 5.
    For X: >= 1 GPU busy whenever it waits: c_X <= 2 + floor(6 / 1) = 8 (the serial horizon is 8 too)."""
    jobs = [SlotJob("X", 0, 2.0, {4: 1.0}), SlotJob("Y", 0, 3.0, {1: 1.0}), SlotJob("Z", 0, 3.0, {1: 1.0})]
    h = horizons(jobs, 4, 8, "avg-jct", True, None)
    assert h == {"X": 8, "Y": 5, "Z": 5}


def test_dominated_counts_are_dropped():
    assert efficient_counts({1: 1.0, 2: 1.5, 3: 1.4, 4: 2.0, 8: 2.0}) == {1: 1.0, 2: 1.5, 4: 2.0}


def test_identical_jobs_hand_optimum_with_ordering():
    """One GPU, three identical jobs of 2 slots at 0: any order completes at 2, 4, 6: average 4; the
    symmetry rows keep that optimum (and order the completions by id)."""
    cl = tiny_cluster(machines=1, gpus=1)
    base = Instance(cl, tuple(Job(f"j{i}", Resources(1), arrival=0.0, duration=2.0) for i in range(3)))
    for strong in (True, False):
        r = solve(PreemptiveTIFormulation(strong=strong), PreemptiveTIInstance(base, 1.0), "highs", P)
        assert r.status is Status.OPTIMAL and r.objective == pytest.approx(4.0)
    r = solve(PreemptiveTIFormulation(), PreemptiveTIInstance(base, 1.0), "highs", P)
    ends = [max(r.solution.slots[f"j{i}"]) + 1 for i in range(3)]
    assert ends == sorted(ends) == [2, 4, 6]


def test_the_greedy_schedule_is_the_mip_start():
    cl = tiny_cluster(machines=1, gpus=1)
    base = Instance(cl, (Job("A", Resources(1), arrival=0.0, duration=10.0),
                         Job("B", Resources(1), arrival=1.0, duration=1.0)))
    built = PreemptiveTIFormulation().build(PreemptiveTIInstance(base, 1.0))
    full = built.model.point(built.model.hints)
    assert built.model.violated(full, tol=1e-6) == [] and built.model.objective_value(full) == pytest.approx(6.0)
    rz = ResizableInstance(2, (ResizableJob("a", 0.0, 2.0, {1: 1.0, 2: 1.5}),
                               ResizableJob("b", 0.0, 2.0, {1: 1.0, 2: 1.5})), 1.0)
    built = ResizableTIFormulation().build(rz)
    full = built.model.point(built.model.hints)
    assert built.model.violated(full, tol=1e-6) == []


JOB = st.tuples(st.integers(0, 3), st.integers(1, 3), st.sampled_from([1, 2, 3]))


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(JOB, min_size=1, max_size=5), st.sampled_from(["avg-jct", "makespan"]),
       st.sampled_from(["linear", "concave", "flat"]))
def test_strong_and_plain_models_have_the_same_optimum(jobs, obj, curve):
    """The horizons, symmetry rows and indicators cut no optimum: on random tiny traces (4 GPUs in two
    machines, slot 1) the strong and the plain models agree, rigid (both capacities) and resizable."""
    cl = tiny_cluster(machines=2, gpus=2)
    js = tuple(Job(f"j{i}", Resources(g), arrival=float(r), duration=float(d)) for i, (r, d, g) in enumerate(jobs))
    base = Instance(cl, js)
    for mode in ("total", "machine"):
        inst = PreemptiveTIInstance(base, 1.0, obj, mode)
        a = solve(PreemptiveTIFormulation(strong=True), inst, "highs", P)
        b = solve(PreemptiveTIFormulation(strong=False), inst, "highs", P)
        assert a.status is Status.OPTIMAL and b.status is Status.OPTIMAL and a.verified
        assert a.objective == pytest.approx(b.objective)

    def speed(k: int) -> float:
        return {"linear": float(k), "concave": k ** 0.5, "flat": min(k, 2) * 1.0}[curve]

    rz = ResizableInstance(4, tuple(ResizableJob(j.id, j.arrival, speed(j.requested.gpus) * j.duration,
                                                 {k: speed(k) for k in range(1, 5)}) for j in js), 1.0, obj)
    a = solve(ResizableTIFormulation(strong=True), rz, "highs", P)
    b = solve(ResizableTIFormulation(strong=False), rz, "highs", P)
    assert a.status is Status.OPTIMAL and b.status is Status.OPTIMAL and a.verified
    assert a.objective == pytest.approx(b.objective)


def test_the_models_own_start_is_the_incumbent_when_the_backend_returns_none():
    """A solve whose backend returned no solution (it ran out of time before reading the start) reports the
    greedy schedule, feasible at the limit, not 'no solution'."""
    from schedlab.formulations.base import _own_start
    from schedlab.formulations.result import Limit, RawResult, Reason, Termination

    cl = tiny_cluster(machines=1, gpus=1)
    base = Instance(cl, (Job("A", Resources(1), arrival=0.0, duration=10.0),
                         Job("B", Resources(1), arrival=1.0, duration=1.0)))
    built = PreemptiveTIFormulation().build(PreemptiveTIInstance(base, 1.0))
    notes: list[str] = []
    raw = _own_start(built.model, RawResult(Termination(Reason.NO_SOLUTION_FOUND, Limit.TIME)), notes)
    assert raw.termination.reason is Reason.FEASIBLE and raw.termination.limit is Limit.TIME
    assert raw.primal_bound == pytest.approx(6.0) and "own start" in notes[0]
