"""Issue 21 regression: 2D-LAS / 2D-Gittins in snapshot form on an instance with capacity ``reserved`` outside
the decision (a replay state converted for the ``tiresias-placement`` kind keeps its running jobs' GPUs
reserved). The pass counted every GPU of the cluster as claimable, so large queued jobs claimed GPUs that
were not there, could not be placed, and starved the one-GPU job that fits: no job was placed."""

from __future__ import annotations

import pytest

from schedlab.heuristics import POLICIES
from schedlab.scheduling import Instance, Job, Resources, validate_allocation

from ..formulations.conftest import tiny_cluster


@pytest.mark.parametrize("name", ["2d-las", "2d-gittins"])
def test_reserved_gpus_are_not_claimable(name):
    """Four machines of 4 GPUs, 15 reserved (m3 keeps one free). Queued in order: A 4, B 8, C 4, D 1 GPUs,
    none run yet (all in Q1, FIFO). Only D fits. By hand, the old pass: free = 16, A (4), B (8) and C (4) are
    claimed, free 0, D skipped; A, B, C cannot be placed: nothing runs. With the reserved GPUs subtracted:
    free = 1, A, B, C skipped, D claimed and placed on m3."""
    cl = tiny_cluster(machines=4, gpus=4)
    m0, m1, m2, m3 = cl.machines
    jobs = tuple(Job(j, Resources(g, 1), iterations=10.0, model="resnet50", duration=100.0)
                 for j, g in (("A", 4), ("B", 8), ("C", 4), ("D", 1)))
    reserved = {m0: Resources(4, 0), m1: Resources(4, 0), m2: Resources(4, 0), m3: Resources(3, 0)}
    inst = Instance(cl, jobs, reserved=reserved)
    alloc = POLICIES[name].decide(inst)
    assert validate_allocation(inst, alloc) == []
    assert {j: ja.gpus for j, ja in alloc.assignments.items()} == {"D": 1}
    assert set(alloc["D"].placement) == {m3}
    # without the reservation every job that fits in order is placed: A, B and C (16 GPUs), D waits
    free = POLICIES[name].decide(Instance(cl, jobs))
    assert set(free.assignments) == {"A", "B", "C"}


def test_on_a_replay_state_2d_las_starts_what_the_replay_started():
    """The gap suite's first Tiresias replay state (smoke x4 under 2D-LAS on 16 GPUs, seed 0): 13 GPUs run,
    queued jobs of 8, 16, 8 and 1 GPUs. The replay's own decision there started the 1-GPU job smoke-11; the
    snapshot 2D-LAS on the converted instance (running jobs reserved) starts the same job."""
    from schedlab.benchmarks.harness.states import sample
    from schedlab.benchmarks.harness.suites.builtin import BUSY_CLUSTER, QUICK_STATES
    from schedlab.formulations.from_state import tiresias_from_state

    s, snap, _ = sample(BUSY_CLUSTER, {**QUICK_STATES["tiresias-placement"], "index": 0}, 0)
    started = set(s.decided.assignments) - set(snap.instance.current.assignments)
    assert started == {"smoke-11"}
    inst = tiresias_from_state(snap.instance).base
    alloc = POLICIES["2d-las"].decide(inst)
    assert validate_allocation(inst, alloc) == [] and set(alloc.assignments) == started
