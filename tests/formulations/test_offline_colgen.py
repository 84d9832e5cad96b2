"""The column-generation bound of the rigid preemptive offline model (formulations.offline_colgen) on
hand-worked instances, and its place below the optimum of the time-indexed model."""

from __future__ import annotations

import pytest

from schedlab.formulations.offline_colgen import colgen_bound
from schedlab.formulations.offline_slots import SlotJob


def _job(name: str, g: int, d: int, r: int = 0) -> SlotJob:
    return SlotJob(name, r, float(d), {g: 1.0})


def test_two_gangs_that_cannot_share_a_slot():
    """G = 2, A (2 GPUs, 1 slot) and B (1 GPU, 1 slot), both released at 0. Optimum: one runs in slot 0,
    the other in slot 1: sum C = 1 + 2 = 3. Master LP by hand: min (2 - a0) + (2 - b0) s.t. 2 a0 + b0 <= 2
    (slot 0), a0, b0 <= 1: b0 = 1, a0 = 1/2, value 2.5; ceil(2.5) = 3 proves the optimum."""
    jobs = [_job("A", 2, 1), _job("B", 1, 1)]
    b = colgen_bound(jobs, 2, {"A": 2, "B": 2}, {"A": [0], "B": [1]})
    assert b.converged and b.bound == pytest.approx(2.5) and b.lp == pytest.approx(2.5)
    assert b.proves(3) and not b.proves(4)


def test_identical_full_gangs_are_exact():
    """G = 2, three jobs of 2 GPUs x 1 slot: they run one per slot, sum C = 1 + 2 + 3 = 6, and the LP
    (sum over jobs of 1 + the slots it waits, one job's worth of GPUs per slot) is 6 as well."""
    jobs = [_job(n, 2, 1) for n in "XYZ"]
    b = colgen_bound(jobs, 2, {n: 3 for n in "XYZ"}, {"X": [0], "Y": [1], "Z": [2]})
    assert b.converged and b.bound == pytest.approx(6.0) and b.proves(6)


def test_below_the_time_indexed_optimum():
    """On a seeded 8-job trace the bound never exceeds the proven optimum of the strong time-indexed model."""
    from schedlab.benchmarks.bench_horizon import rounded_trace
    from schedlab.formulations import SolveParams, Status, solve
    from schedlab.formulations.offline_slots import completion_of, greedy_schedule, horizons
    from schedlab.formulations.offline_ti import PreemptiveTIFormulation, PreemptiveTIInstance

    base = rounded_trace(8, 600.0, 0, 2)
    inst = PreemptiveTIInstance(base, 600.0)
    G, T = inst.total_gpus(), inst.horizon()
    sj = [SlotJob(j.id, inst.release(j.id), float(inst.length(j.id)), {j.requested.gpus: 1.0}) for j in base.jobs]
    greedy = greedy_schedule(sj, G, T)
    b = colgen_bound(sj, G, horizons(sj, G, T, "avg-jct", True, completion_of(greedy)),
                     {j: sorted(s) for j, s in greedy.items()})
    res = solve(PreemptiveTIFormulation(), inst, "highs", SolveParams(threads=1, node_limit=100000, seed=0))
    assert res.status is Status.OPTIMAL
    opt_slots = sum(max(s) + 1 for s in res.solution.slots.values())
    assert b.bound <= opt_slots + 1e-6
