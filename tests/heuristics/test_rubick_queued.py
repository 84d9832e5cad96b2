"""Rubick's queued jobs read once per pass without an entry each (``heuristics/rubick/queued.py``, issue 25
round 8) give the replay of the plain pass (an entry for every queued job, sorted, each through
``ScheduleJob``), and ``ScheduleJob``'s call-free skip of passed-over machines changes nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import Recorder, Simulator
from schedlab.benchmarks.simulator.digest import records_digest
from schedlab.heuristics.rubick import RubickPolicy


class _Plain(RubickPolicy):
    """Every pass built from every job, with the plain pass's loops (an entry per queued job)."""

    incremental = False


class _Counting(RubickPolicy):
    """Counts the queued entries the passes build and the queued jobs they see."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.built = 0
        self.seen = 0

    def _queued_entry(self, record):
        self.built += 1
        return super()._queued_entry(record)

    def schedule(self, view):
        self.seen += view.queue_length
        return super().schedule(view)


def _replay(policy, cluster, jobs, quotas):
    sim = Simulator(cluster, jobs, policy, quotas=quotas, recorder=Recorder(keep_segments=True))
    res = sim.run()
    return records_digest(sim.recorder), res.metrics.get("policy_counters"), res.passes


def _mix(n, seed, hours):
    from schedlab.benchmarks.workloads.convert import trace_to_jobs
    from schedlab.benchmarks.workloads.named import rubick_trace
    from schedlab.topology import preset

    cluster = preset("rubick-64")
    trace, quotas = rubick_trace("base", cluster, seed=seed, n=n, hours=hours)
    return cluster, trace_to_jobs(trace, cluster, seed=seed, reconfigurable=True), quotas


@settings(max_examples=5, deadline=None, derandomize=True)
@given(st.integers(20, 50), st.integers(0, 50), st.sampled_from([0.5, 1.0, 2.0]), st.booleans(),
       st.sampled_from(["full", "plans", "none"]), st.sampled_from([None, 600.0, 4 * 3600.0]))
def test_queued_pass_gives_the_plain_replay(n, seed, hours, rigid, mode, starvation):
    """The Rubick mix (guaranteed jobs within quotas, best-effort ones, elastic or rigid), under Rubick and
    its variants, with and without the starvation guard (600 s: many starving jobs): records, counters
    and passes of the plain pass."""
    cluster, jobs, quotas = _mix(n, seed, hours)
    if rigid:
        jobs = [replace(j, reconfigurable=False) for j in jobs]
    got = _replay(RubickPolicy(mode=mode, starvation_s=starvation), cluster, jobs, quotas)
    want = _replay(_Plain(mode=mode, starvation_s=starvation), cluster, jobs, quotas)
    assert got == want and got[2] > n


def test_queued_pass_on_a_loaded_philly_window():
    """Philly jobs at 5x arrivals (rigid, long queues of alike jobs, preemptions that checkpoint) on a
    64-GPU cluster, so that queues form at once (the first 120 jobs of up to 8 GPUs; starving after 30 min): the plain pass's
    records; and most queued jobs are passed over without an entry (the failure memo or the whole-cluster
    shortcut answers them), so the test fails if every queued job is built again."""
    from schedlab.benchmarks.bench_simulator import find_trace, philly_workload
    from schedlab.topology import preset

    if find_trace(None) is None:
        pytest.skip("Philly trace not found")
    w, _ = philly_workload(load=5.0)
    cluster = preset("rubick-64")
    jobs = [j for j in w.jobs[:3000] if j.requested.gpus <= 8][:120]
    starvation = 1800.0  # (many starving jobs: both of the pass's lists)
    counting = _Counting(starvation_s=starvation)
    got = _replay(counting, cluster, jobs, w.quotas)
    want = _replay(_Plain(starvation_s=starvation), cluster, jobs, w.quotas)
    assert got == want
    assert 0 < counting.built < counting.seen / 2
