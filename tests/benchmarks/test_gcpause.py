"""The replay's cycle-collector pause: off inside, restored after (nested, already off, on error),
young cyclic garbage still collected by ``tick`` once the limit is reached; the simulator's fast event
constructor builds the same ``SimEvent``."""

import dataclasses
import gc
import weakref

import pytest

from schedlab.benchmarks.simulator.events import sim_event
from schedlab.benchmarks.simulator.gcpause import PausedGC
from schedlab.scheduling.policy import EventKind, SimEvent


@pytest.fixture
def gc_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_paused_inside_restored_after(gc_on):
    with PausedGC():
        assert not gc.isenabled()
        with PausedGC():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause found it off: leaves it off
    assert gc.isenabled()
    with pytest.raises(RuntimeError), PausedGC():
        raise RuntimeError
    assert gc.isenabled()


def test_an_off_collector_stays_off(gc_on):
    gc.disable()
    with PausedGC():
        pass
    assert not gc.isenabled()


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_tick_collects_young_cycles_past_the_limit(gc_on):
    gc.collect()
    with PausedGC(young_limit=500) as p:
        probe = _Cycle()
        ref = weakref.ref(probe)
        del probe
        p.tick()  # below the limit: nothing collected yet
        assert ref() is not None
        junk = [[] for _ in range(600)]  # tracked objects past the limit
        p.tick()
        assert ref() is None
        del junk


def test_fast_event_is_the_same_event():
    for args in [(1.5, EventKind.ARRIVAL, "j1", None), (2.0, EventKind.TIMER, None, "tiresias"),
                 (0.0, EventKind.COMPLETION, "x", None)]:
        fast, ref = sim_event(*args), SimEvent(*args)
        assert fast == ref and hash(fast) == hash(ref) and dataclasses.astuple(fast) == args
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.time = 3.0  # type: ignore[misc]
