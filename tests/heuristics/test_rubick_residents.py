"""Rubick's running jobs kept across passes (``heuristics/rubick/resident.py``, issue 25 round 6) give
the replay of a pass built from every job: a checked policy compares the kept records, resident lists
and movable entries with ones rebuilt from scratch at every pass, and its records equal those of a
policy that rebuilds every pass."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import Recorder, Simulator
from schedlab.benchmarks.simulator.digest import records_digest
from schedlab.heuristics.rubick import RubickPolicy


class _Checked(RubickPolicy):
    check_residents = True


class _Rebuilt(RubickPolicy):
    incremental = False


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


@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.integers(20, 60), st.integers(0, 50), st.sampled_from([0.5, 1.0, 2.0]), st.booleans(),
       st.sampled_from(["full", "plans", "none"]))
def test_kept_residents_give_the_rebuilt_replay(n, seed, hours, rigid, mode):
    """Elastic jobs (re-planned, shrunk and grown: kept as movers) or rigid ones (kept lazily), under
    Rubick and its variants: the checked replay (kept == rebuilt at every pass) has the rebuilt one's
    records, counters and passes."""
    cluster, jobs, quotas = _mix(n, seed, hours)
    if rigid:
        jobs = [replace(j, reconfigurable=False) for j in jobs]
    got = _replay(_Checked(mode=mode), cluster, jobs, quotas)
    want = _replay(_Rebuilt(mode=mode), cluster, jobs, quotas)
    assert got == want and got[2] > n


def test_kept_residents_on_a_loaded_philly_window():
    """The first 1,500 jobs of the Philly table at 5x arrivals (Rubick's bench row, rigid jobs whose
    preemptions checkpoint): checked at every pass, and the rebuilt replay's records."""
    import pytest

    from schedlab.benchmarks.bench_simulator import find_trace, philly_workload

    if find_trace(None) is None:
        pytest.skip("Philly trace not found")
    w, cl = philly_workload(load=5.0)
    jobs = w.jobs[:1500]
    got = _replay(_Checked(), cl, jobs, w.quotas)
    want = _replay(_Rebuilt(), cl, jobs, w.quotas)
    assert got == want


class _SmallCache(RubickPolicy):
    """Job-model cache replaced by ``job_model`` at almost every new job (its size bound is hit)."""

    def job_model(self, job, view):
        if len(self._models) >= 2:
            self._models = {}
        return super().job_model(job, view)


def test_a_job_model_cache_replaced_mid_sync_is_read_again():
    """``job_model`` may replace its cache while the kept running jobs are brought up to date (the
    cache's size bound); the sync keeps what it returned instead of reading the dropped cache (this
    raised KeyError), and the replay is the rebuilt one's."""
    cluster, jobs, quotas = _mix(40, 3, 1.0)
    got = _replay(type("C", (_SmallCache,), {"check_residents": True})(), cluster, jobs, quotas)
    want = _replay(_Rebuilt(), cluster, jobs, quotas)
    assert got == want
