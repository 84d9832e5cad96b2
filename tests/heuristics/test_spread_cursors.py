"""``PassCursors.untouched`` (round 7: the spread placements' cursor) lists, after any sequence of takes in a
pass, exactly the index's machines of a free-GPU count that the pass has not touched, in the index's order;
and ``place_spread`` with the cursors places every job as the plain scan does. A seeded probe policy drives
a real replay: at each decision it gives back running jobs' GPUs, then places the queued jobs one by one
(taking most placements), checking both after every step."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.heuristics.fifo import PassState
from schedlab.heuristics.tiresias.placement import PassCursors, place_spread
from schedlab.scheduling.policy import ClusterView, Decision

from ._probes import SeededProbe, jobs_strategy, replay


def _untouched(view: ClusterView, ps: PassState, k: int) -> list[str]:
    return [m for m in view.index.machines_with(k) if m not in ps.eff]


class _Probe(SeededProbe):
    def after_take(self, view: ClusterView) -> None:
        ps, cur = self.ps, self.cur
        if ps.eff:  # (the cursors serve a pass that has touched a machine)
            for k in range(1, view.cluster.max_gpus_per_machine + 1):
                assert list(cur.untouched(view, k)) == _untouched(view, ps, k)

    def schedule(self, view: ClusterView) -> Decision:
        rng = self.rng
        ps = self.ps = PassState(view)
        cur = self.cur = PassCursors(ps)
        self.give_back(view, (ps,))
        start = {}
        for jv in view.queue():
            # a partial read of one count's cursor (as a placement that stops early) must not lose machines
            if ps.eff and rng.random() < 0.5:
                k = int(rng.integers(1, view.cluster.max_gpus_per_machine + 1))
                next(iter(cur.untouched(view, k)), None)
            p = place_spread(view, jv.job, ps, cursors=cur)
            assert p == place_spread(view, jv.job, ps)
            self.checked += 1
            self.take(view, jv, p, (ps,), start)
        return self.decide(view, start)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(spec=jobs_strategy([1, 1, 2, 3, 4, 8, 12, 16, 24]), seed=st.integers(0, 1000))
def test_spread_cursor_lists_the_untouched_machines_and_places_as_the_scan(spec, seed):
    replay(_Probe(seed), spec)
