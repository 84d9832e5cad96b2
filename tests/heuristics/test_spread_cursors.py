"""``PassCursors.untouched`` (round 7: the spread placements' cursor) lists, after any sequence of takes in a
pass, exactly the index's machines of a free-GPU count that the pass has not touched, in the index's order;
and ``place_spread`` with the cursors places every job as the plain scan does. A seeded probe policy drives
a real replay: at each decision it gives back running jobs' GPUs, then places the queued jobs one by one
(taking most placements), checking both after every step."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import simulate
from schedlab.heuristics.fifo import PassState
from schedlab.heuristics.tiresias.placement import PassCursors, place_spread
from schedlab.scheduling import Job, JobAllocation, Resources
from schedlab.scheduling.policy import ClusterView, Decision, JobStatus, Timer
from schedlab.topology import preset

CLUSTER = preset("tiresias-60")


def _untouched(view: ClusterView, ps: PassState, k: int) -> list[str]:
    return [m for m in view.index.machines_with(k) if m not in ps.eff]


class _Probe:
    name = "probe"
    oracle = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.checked = 0
        self.timer_at = -1.0

    def _check(self, view: ClusterView, ps: PassState, cur: PassCursors) -> None:
        if ps.eff:  # (the cursors serve a pass that has touched a machine)
            for k in range(1, view.cluster.max_gpus_per_machine + 1):
                assert list(cur.untouched(view, k)) == _untouched(view, ps, k)

    def schedule(self, view: ClusterView) -> Decision:
        rng = self.rng
        ps = PassState(view)
        cur = PassCursors(ps)
        for jv in view.running():
            if jv.status is not JobStatus.CHECKPOINTING and rng.random() < 0.3:
                for m, r in jv.allocation.placement.items():  # as if preempted with instant release
                    ps.take(m, r.scale(-1))
                self._check(view, ps, cur)
        start = {}
        for jv in view.queue():
            # a partial read of one count's cursor (as a placement that stops early) must not lose machines
            if ps.eff and rng.random() < 0.5:
                k = int(rng.integers(1, view.cluster.max_gpus_per_machine + 1))
                next(iter(cur.untouched(view, k)), None)
            p = place_spread(view, jv.job, ps, cursors=cur)
            assert p == place_spread(view, jv.job, ps)
            self.checked += 1
            if p is not None and rng.random() < 0.8:
                for m, r in p.items():
                    ps.take(m, r)
                self._check(view, ps, cur)
                if all(r <= view.free(m) for m, r in p.items()) and not any(m in start for m in p):
                    start[jv.id] = JobAllocation(jv.id, jv.job.requested_plan, p)
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


jobs_strategy = st.lists(st.tuples(st.sampled_from([1, 1, 2, 3, 4, 8, 12, 16, 24]), st.floats(1, 100),
                                   st.floats(0, 200)), min_size=1, max_size=40)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(spec=jobs_strategy, seed=st.integers(0, 1000))
def test_spread_cursor_lists_the_untouched_machines_and_places_as_the_scan(spec, seed):
    jobs = [Job(f"j{i}", Resources(g), iterations=it, arrival=arr, attrs={"iter_time": 1.0})
            for i, (g, it, arr) in enumerate(spec)]
    probe = _Probe(seed)
    res = simulate(CLUSTER, jobs, probe, semantics="reference")
    assert not res.unfinished
    assert probe.checked >= len(jobs)
