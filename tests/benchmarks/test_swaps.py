"""The swap path (``benchmarks/simulator/swaps.py``): the artifact Gandiva's rotations on the one-machine pool
give the records of the general ``_apply`` path, and a swap the verifier would reject is left to it."""

import pytest

from schedlab.benchmarks.simulator import Recorder, Simulator
from schedlab.benchmarks.simulator.digest import records_digest
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.heuristics import POLICIES
from schedlab.scheduling.policy import Decision
from schedlab.topology.errors import PolicyError


def _sim(policy="gandiva", semantics="tiresias", *, swaps=True, segments=True):
    w, c = WorkloadSource(workload="tiresias-480").build()
    sim = Simulator(c, w.jobs, POLICIES.build(policy), semantics=semantics, small_gpus=w.small_gpus,
                    short_s=w.short_s, recorder=Recorder(keep_segments=segments))
    if not swaps:
        sim._swap_pool = None  # the general path for every decision
    return sim


@pytest.mark.parametrize("segments", [True, False])
def test_swaps_give_the_general_paths_records(segments):
    fast, slow = _sim(segments=segments), _sim(swaps=False, segments=segments)
    rf, rs = fast.run(), slow.run()
    assert fast.swaps > 1000 and slow.swaps == 0
    assert records_digest(fast.recorder) == records_digest(slow.recorder)
    assert (rf.events, rf.passes) == (rs.events, rs.passes)
    assert fast.verifier.fast == slow.verifier.fast
    fast.state.check_invariants()


def test_state_mid_run_is_the_general_paths():
    fast, slow = _sim(segments=False), _sim(swaps=False, segments=False)
    for until in (30_000.0, 60_000.0, 90_000.0):
        fast.run(until=until)
        slow.run(until=until)
        fast.state.check_invariants()
        assert dict(fast.state.free_map) == dict(slow.state.free_map)
        assert {j: dict(fast.state.placement(j)) for j in fast.state.jobs} == \
            {j: dict(slow.state.placement(j)) for j in slow.state.jobs}
        assert list(fast._holding) == list(slow._holding) and list(fast._queue) == list(slow._queue)
        idx, ref = fast.index, slow.index
        assert (idx.total, idx.largest_machine_block(), idx.largest_rack_block()) == \
            (ref.total, ref.largest_machine_block(), ref.largest_rack_block())
    assert fast.swaps > 0


def test_not_eligible_off_the_pool():
    sim = _sim("2d-las", "realistic")
    sim.run()
    assert sim._swap_pool is None and sim.swaps == 0  # (the hook asked once, then stays off)


def _mid_run():
    sim = _sim()
    while sim.step():  # to a pass after which jobs run and jobs wait with an allocation held before (rotated out)
        running = list(sim._holding)
        back = [j for j, rt in sim._queue.items() if rt.alloc is not None]
        if running and sum(sim._rt[j].gpus for j in back) > sim.index.total + sim._rt[running[0]].gpus:
            return sim, running, back
    raise AssertionError("no rotation in the workload")


def test_over_capacity_swap_is_left_to_the_verifier():
    sim, running, back = _mid_run()
    rts = sim._rt
    free = sim.index.total + rts[running[0]].gpus
    start, need = {}, 0
    for j in back:  # more GPUs than the preemption frees
        start[j] = rts[j].alloc
        need += rts[j].gpus
        if need > free:
            break
    assert need > free
    d = Decision(start=start, preempt=(running[0],))
    holding, queue = dict(sim._holding), dict(sim._queue)
    assert not sim._apply_swap(d, sim._now)
    assert sim._holding == holding and sim._queue == queue  # nothing changed
    with pytest.raises(PolicyError, match="invalid decision"):
        sim._apply(d, sim._now)


def test_bad_preempt_or_timer_is_left_to_the_general_path():
    sim, running, back = _mid_run()
    now = sim._now
    j = back[0]
    ja = sim._rt[j].alloc
    assert not sim._apply_swap(Decision(start={j: ja}, preempt=(j,)), now)  # (a queued job preempted)
    from schedlab.scheduling.policy import Timer
    assert not sim._apply_swap(Decision(preempt=(running[0],), timers=(Timer(now, "x"),)), now)
    with pytest.raises(PolicyError, match="not in the future"):
        sim._apply(Decision(preempt=(running[0],), timers=(Timer(now, "x"),)), now)
