"""``PassState.free_gpus`` (kept incrementally by ``take``) equals the sum over every machine of its
effective free GPUs in the pass (negatives as 0), and ``place_spread``'s early "cannot fit" answer from
it is the answer its full scan gives. A seeded policy drives a real replay: at each decision it takes
random shares (gives back running jobs' GPUs, takes what queued jobs would use) and checks both."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import simulate
from schedlab.heuristics.fifo import PassState
from schedlab.heuristics.tiresias.placement import place_spread
from schedlab.scheduling import Job, JobAllocation, Resources
from schedlab.scheduling.policy import ClusterView, Decision, JobStatus, Timer
from schedlab.topology import preset

CLUSTER = preset("tiresias-60")


class _Unbounded(PassState):
    """The same pass state without the bound: ``place_spread`` always scans."""

    __slots__ = ()

    @property
    def free_gpus(self) -> int:
        return 1 << 30


def _brute(view: ClusterView, ps: PassState) -> int:
    return sum(max(ps.free(m).gpus, 0) for m in view.cluster.machines)


class _Probe:
    name = "probe"
    oracle = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.checked = 0
        self.timer_at = -1.0

    def schedule(self, view: ClusterView) -> Decision:
        rng = self.rng
        ps, ref = PassState(view), _Unbounded(view)
        for jv in view.running():
            if jv.status is not JobStatus.CHECKPOINTING and rng.random() < 0.3:
                for m, r in jv.allocation.placement.items():  # as if preempted with instant release
                    ps.take(m, r.scale(-1))
                    ref.take(m, r.scale(-1))
        start = {}
        for jv in view.queue():
            assert ps.free_gpus == _brute(view, ps)
            p = place_spread(view, jv.job, ps)
            assert p == place_spread(view, jv.job, ref)
            self.checked += 1
            if p is not None and rng.random() < 0.8:
                for m, r in p.items():
                    ps.take(m, r)
                    ref.take(m, r)
                if all(r <= view.free(m) for m, r in p.items()) and not any(m in start for m in p):
                    start[jv.id] = JobAllocation(jv.id, jv.job.requested_plan, p)
        # start only what fits on the real free resources (the takes above were a probe)
        ok, used = {}, {}
        for jid, ja in start.items():
            if all(used.get(m, Resources()) + r <= view.free(m) for m, r in ja.placement.items()):
                ok[jid] = ja
                for m, r in ja.placement.items():
                    used[m] = used.get(m, Resources()) + r
        timers = ()
        if view.queue_length and self.timer_at <= view.now:
            self.timer_at = view.now + float(rng.uniform(1, 30))
            timers = (Timer(self.timer_at, "tick"),)
        return Decision(start=ok, timers=timers)


jobs_strategy = st.lists(st.tuples(st.sampled_from([1, 2, 3, 4, 8, 12, 16, 24]), st.floats(1, 100),
                                   st.floats(0, 200)), min_size=1, max_size=40)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(spec=jobs_strategy, seed=st.integers(0, 1000))
def test_free_bound_is_the_sum_and_early_none_is_the_scan_s_answer(spec, seed):
    jobs = [Job(f"j{i}", Resources(g), iterations=it, arrival=arr, attrs={"iter_time": 1.0})
            for i, (g, it, arr) in enumerate(spec)]
    probe = _Probe(seed)
    res = simulate(CLUSTER, jobs, probe, semantics="reference")
    assert not res.unfinished
    assert probe.checked >= len(jobs)
