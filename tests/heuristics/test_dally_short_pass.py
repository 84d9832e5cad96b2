"""Dally's short pass (``DallyPolicy._lone_event``: completions and at most one arrival with nothing queued,
claimed or preempting) gives the decisions of the full pass: replays with it and with every pass taken in
full make the same decisions at every event (and see the same next wait-list change), the same records to
the bit and leave the same wait lists.
Each replay takes both paths (counted), on workloads with light and heavy load, quotas, the fixed
timers of Dally-manual and the upgrade option."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.simulator import Recorder, Simulator
from schedlab.benchmarks.simulator.digest import records_digest
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.heuristics.dally.policy import DallyPolicy


class _Logged(DallyPolicy):
    """Dally, logging every decision and which path gave it; ``short=False``: every pass in full."""

    def __init__(self, *, short: bool, **kw) -> None:
        super().__init__(**kw)
        self.short = short
        self.log: list = []
        self.paths = {"short": 0, "full": 0}

    def _lone_event(self, view):
        d = super()._lone_event(view) if self.short else None
        self._took_short = d is not None
        return d

    def schedule(self, view):
        self._took_short = False
        d = super().schedule(view)
        self.paths["short" if self._took_short else "full"] += 1
        self.log.append((view.now, tuple((j, a.plan, tuple(a.placement.items())) for j, a in d.start.items()),
                         d.preempt, tuple((t.at, t.tag) for t in d.timers),
                         self.tuner.next_change(view.now)))   # (the wait lists' state: skipped queries change nothing)
        return d


def _replay(w, c, **kw):
    pol = _Logged(**kw)
    sim = Simulator(c, w.jobs, pol, semantics="realistic", quotas=w.quotas, recorder=Recorder(keep_segments=True),
                    small_gpus=w.small_gpus, short_s=w.short_s)
    sim.run()
    lists = {k: (list(v.entries), v.total, v.total_sq) for k, v in getattr(pol.tuner, "lists", {}).items()}
    return pol, records_digest(sim.recorder), lists


@pytest.mark.parametrize(("workload", "params"), [
    ("dally-poisson", {}),
    ("dally-poisson", {"autotune": False}),
    ("dally-poisson", {"upgrade": True, "lease": 600.0}),
    ("dally-poisson", {"history_window": 3600.0}),   # (waits leave the window between passes)
    ("tiresias-480", {"history_window": 600.0}),
    ("dally-batch", {}),
    ("smoke", {}),
    ("smoke-mt", {}),
    ("tiresias-480", {}),
])
def test_short_pass_decides_as_the_full_pass(workload, params):
    w, c = WorkloadSource(workload=workload).build()
    short, d_short, l_short = _replay(w, c, short=True, **params)
    full, d_full, l_full = _replay(w, c, short=False, **params)
    assert full.paths["short"] == 0
    assert len(short.log) == len(full.log)
    for a, b in zip(short.log, full.log, strict=True):
        assert a == b
    assert d_short == d_full
    assert l_short == l_full
    assert short._entry == full._entry   # the same queue entries numbered
    if workload != "smoke-mt":   # (quotas: never short)
        assert short.paths["short"] > 0
    assert short.paths["full"] > 0
