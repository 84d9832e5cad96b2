"""The one-claim fast path of the 2D-LAS / 2D-Gittins pass (``PassMixin._place_one``: a pass with one
reserved job and no victims) decides as the general ``_place`` loop at every event of a replay."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.simulator import Recorder, Simulator
from schedlab.heuristics import POLICIES
from schedlab.heuristics.tiresias.las import TiresiasPolicy


def _decisions(pol: TiresiasPolicy, fast: bool, cluster, w) -> tuple[list[tuple], int]:
    """Every decision of the replay as plain data (time, starts with placements, preemptions, timers),
    and how many passes took the fast path."""
    pol.one_claim_fast = fast
    out: list[tuple] = []
    used = [0]
    schedule, place_one = pol.schedule, pol._place_one

    def counted(view):
        used[0] += 1
        return place_one(view)

    def recorded(view):
        d = schedule(view)
        out.append((view.now, tuple((jid, a.plan, tuple(sorted(a.placement.items())))
                                    for jid, a in d.start.items()),
                    tuple(d.preempt), tuple((t.at, t.tag) for t in d.timers)))
        return d

    pol.schedule, pol._place_one = recorded, counted
    Simulator(cluster, w.jobs, pol, semantics="realistic", recorder=Recorder(keep_segments=False),
              **w.simulator_args()).run()
    return out, used[0]


@pytest.mark.parametrize("name,load", [("2d-las", 1.0), ("2d-las", 50.0), ("2d-gittins", 50.0)])
def test_one_claim_fast_path_decides_as_the_general_pass(name, load, traces_dir):
    # (``traces_dir``: the philly workload is drawn from the Philly table, skipped where it is absent)
    from schedlab.benchmarks.workloads import get_workload
    from schedlab.topology.presets import preset

    cluster = preset("philly")
    w = get_workload("philly").build(cluster, seed=0, load=load, n=1500)
    fast, used = _decisions(POLICIES.build(name), True, cluster, w)
    general, unused = _decisions(POLICIES.build(name), False, cluster, w)
    assert used > 100 and unused == 0  # the fast path ran (and only where enabled)
    assert len(fast) == len(general)
    for a, b in zip(fast, general, strict=True):
        assert a == b
