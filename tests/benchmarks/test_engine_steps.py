"""The simulator engine in SimPy's shape: ``schedule``, ``step()`` and ``run(until)``; a typed result
(metrics as a dataclass, why the run stopped); optional policy hooks found through protocols."""

import pytest

from schedlab.benchmarks.simulator import RunMetrics, Simulator, StopReason
from schedlab.benchmarks.simulator.digest import records_digest
from schedlab.benchmarks.simulator.hooks import CountsFallbacks, PreparesJobs
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.heuristics import POLICIES
from schedlab.scheduling.policy import EventKind
from schedlab.topology.errors import SpecError


def _sim(policy="2d-las"):
    w, c = WorkloadSource(workload="tiresias-480").build()
    return Simulator(c, w.jobs, POLICIES.build(policy), small_gpus=w.small_gpus, short_s=w.short_s)


def test_run_in_pieces_equals_one_run():
    whole = _sim().run()
    sim = _sim()
    first = sim.run(until=20_000.0)
    assert first.stop is StopReason.UNTIL and not first.interrupted and sim.peek() > 20_000.0
    with pytest.raises(SpecError, match="already at"):
        sim.run(until=10_000.0)  # an until in the past
    rest = sim.run()
    assert rest.stop is StopReason.DRAINED and whole.stop is StopReason.DRAINED
    assert records_digest(rest.recorder) == records_digest(whole.recorder)
    assert (rest.events, rest.passes) == (whole.events, whole.passes)


def test_step_processes_one_batch_and_says_when_nothing_is_left():
    sim = _sim("fifo")
    t0 = sim.peek()
    assert sim.step() and sim.n_events >= 1 and sim.peek() >= t0
    while sim.step():
        pass
    assert sim.peek() == float("inf") and not sim.step()
    assert sim.finished == len(sim.jobs)


def test_schedule_refuses_the_past():
    sim = _sim("fifo")
    sim.run(until=5_000.0)
    with pytest.raises(SpecError, match="in the past"):
        sim.schedule(1.0, EventKind.TIMER, None, "late")
    sim.schedule(6_000.0, EventKind.TIMER, None, "mine")  # a decision point of its own
    assert sim.run().stop is StopReason.DRAINED


def test_metrics_are_typed_and_read_as_the_flat_dictionary():
    res = _sim().run()
    m = res.metrics
    assert isinstance(m, RunMetrics)
    assert m.avg_jct == m["avg_jct"] == m.summary["avg_jct"] and m.unfinished == m["unfinished"] == 0
    flat = m.as_dict()
    assert list(flat)[:2] == ["jobs", "avg_jct"] and "guarantee_checks" in flat and "policy_counters" not in flat
    assert dict(m) == flat


def test_policy_hooks_are_protocols():
    assert isinstance(POLICIES.build("rubick"), PreparesJobs)
    assert not isinstance(POLICIES.build("fifo"), PreparesJobs)
    assert not isinstance(POLICIES.build("fifo"), CountsFallbacks)
