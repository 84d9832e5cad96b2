"""``PassState.free_gpus`` (kept incrementally by ``take``) equals the sum over every machine of its
effective free GPUs in the pass (negatives as 0), and ``place_spread``'s early "cannot fit" answer from
it is the answer its full scan gives. A seeded policy drives a real replay: at each decision it takes
random shares (gives back running jobs' GPUs, takes what queued jobs would use) and checks both."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.heuristics.fifo import PassState
from schedlab.heuristics.tiresias.placement import place_spread
from schedlab.scheduling.policy import ClusterView, Decision

from ._probes import SeededProbe, jobs_strategy, replay


class _Unbounded(PassState):
    """The same pass state without the bound: ``place_spread`` always scans."""

    __slots__ = ()

    @property
    def free_gpus(self) -> int:
        return 1 << 30


def _brute(view: ClusterView, ps: PassState) -> int:
    return sum(max(ps.free(m).gpus, 0) for m in view.cluster.machines)


class _Probe(SeededProbe):
    def schedule(self, view: ClusterView) -> Decision:
        ps, ref = PassState(view), _Unbounded(view)
        self.give_back(view, (ps, ref))
        start = {}
        for jv in view.queue():
            assert ps.free_gpus == _brute(view, ps)
            p = place_spread(view, jv.job, ps)
            assert p == place_spread(view, jv.job, ref)
            self.checked += 1
            self.take(view, jv, p, (ps, ref), start)
        return self.decide(view, start)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(spec=jobs_strategy([1, 2, 3, 4, 8, 12, 16, 24]), seed=st.integers(0, 1000))
def test_free_bound_is_the_sum_and_early_none_is_the_scan_s_answer(spec, seed):
    replay(_Probe(seed), spec)
