"""2D-Gittins re-keys every waiting job in bulk when its service distribution is rebuilt: the numpy
index equals the scalar one bit for bit (random samples, attained services at and around the samples
and thresholds), and a bulk re-key leaves the queues exactly as re-inserting job by job would."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.heuristics.tiresias.gittins import ServiceDistribution

samples = st.lists(st.floats(0.0, 1e6, allow_nan=False), min_size=1, max_size=60)


@pytest.mark.filterwarnings("ignore:overflow encountered")  # subnormal denominators: inf both ways
@settings(max_examples=200, deadline=None, derandomize=True)
@given(s=samples, extra=st.lists(st.floats(0.0, 2e6, allow_nan=False), max_size=30),
       hi=st.sampled_from([1.0, 3600.0, 36000.0, 1e6, math.inf]))
def test_vector_index_is_the_scalar_index_bit_for_bit(s, extra, hi):
    d = ServiceDistribution(s)
    pts = [*s, *extra, 0.0, *(x * 0.5 for x in s)]
    vec = np.atleast_1d(d.index(np.array(pts, dtype=float), hi)).tolist()
    for a, v in zip(pts, vec, strict=True):
        sc = d.index(a, hi)
        assert v == sc and math.copysign(1.0, v) == math.copysign(1.0, sc), (a, v, sc)


def test_bulk_rekey_equals_reinsertion():
    from schedlab.benchmarks.simulator import Simulator
    from schedlab.benchmarks.workloads import get_workload
    from schedlab.heuristics import POLICIES
    from schedlab.heuristics.tiresias.las import TiresiasPolicy
    from schedlab.topology.presets import preset

    cluster = preset("philly")
    w = get_workload("philly").build(cluster, seed=0, load=2000.0, n=3000)
    checked = []

    class Checked(TiresiasPolicy):
        def _rekey(self, view):  # the bulk re-key against the job-by-job one on a copy of the queues
            ref = {q: {g: list(lst) for g, lst in self.st.wait[q].items()} for q in range(self.k)}
            jobs = [self.st.jobs[key[3]] for q in range(self.k - 1) for lst in ref[q].values() for key in lst]
            keys = {}
            for j in jobs:
                keys[j.id] = self._k0(view, j)
            super()._rekey(view)
            for j in jobs:
                assert j.k0 == keys[j.id]
            for q in range(self.k - 1):
                want: dict[int, list] = {}
                for j in (j for j in jobs if j.q == q):
                    want.setdefault(j.g, []).append((keys[j.id], j.band, j.stamp, j.id))
                assert {g: sorted(v) for g, v in want.items()} == self.st.wait[q]
            checked.append(len(jobs))

    pol = POLICIES.build("2d-gittins")
    pol.__class__ = Checked  # the registry's 2D-Gittins, its re-key checked
    Simulator(cluster, w.jobs, pol, semantics="realistic", **w.simulator_args()).run()
    assert len(checked) >= 5 and max(checked) > 100
