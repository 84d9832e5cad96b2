"""gandiva-like's quick test of a migration pass (:meth:`GandivaLike._none_movable`) against the pass
itself (Hypothesis): whenever the test says no candidate can move, the full pass tries none, and a
replay that always runs the full pass gives the same records."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import Recorder, simulate
from schedlab.benchmarks.simulator.digest import records_digest
from schedlab.heuristics.baselines import gandiva as gandiva_mod
from schedlab.heuristics.baselines.gandiva import GandivaLike


class AlwaysScan(GandivaLike):
    """Runs the full pass every time; checks that the pass tries nothing where the quick test said so."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.said_none = 0
        self.tries = 0

    def _none_movable(self, view, ps, other) -> bool:
        self._said = super()._none_movable(view, ps, other)
        self.said_none += self._said
        return False

    def _migrations(self, view, ps):
        tried = self.tries
        out = super()._migrations(view, ps)
        if self._said:
            assert out == {} and self.tries == tried, "the quick test skipped a pass that would try a move"
        return out


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(machines=st.integers(2, 4), gpus=st.sampled_from([2, 4]), racks=st.integers(1, 2),
       specs=st.lists(st.tuples(st.integers(1, 6), st.integers(5, 400), st.integers(0, 300)), min_size=2, max_size=24),
       semantics=st.sampled_from(["reference", "realistic"]))
def test_quick_test_never_skips_a_pass_that_moves(machines, gpus, racks, specs, semantics, mk):
    c = mk.cluster(machines, gpus, racks)
    jobs = [mk.job(f"j{i}", g, d, arrival=a) for i, (g, d, a) in enumerate(specs) if g <= machines * racks * gpus]
    if not jobs:
        return
    fast, slow = Recorder(keep_segments=True), Recorder(keep_segments=True)
    simulate(c, jobs, GandivaLike(), semantics=semantics, recorder=fast)
    pol = AlwaysScan()
    real = gandiva_mod.place_consolidated

    def counted(*a, **k):
        pol.tries += 1
        return real(*a, **k)

    gandiva_mod.place_consolidated = counted
    try:
        simulate(c, jobs, pol, semantics=semantics, recorder=slow)
    finally:
        gandiva_mod.place_consolidated = real
    assert records_digest(fast) == records_digest(slow)


def test_the_quick_test_skips_hopeless_passes(mk):
    """test_baselines' migration case: X (2 GPUs) is spread over m0 + m1 at 5; at a completion where no
    machine has X's GPUs free the quick test skips the pass; at 49 c ends and X moves (one migration)."""
    jobs = [mk.job("a", 1, 5), mk.job("b", 1, 100), mk.job("c", 1, 49), mk.job("X", 2, 100, arrival=1)]
    pol = AlwaysScan()
    simulate(mk.cluster(2, 2), jobs, pol, semantics="reference")
    assert pol.said_none > 0 and pol.migrations == 1
