"""The seeded probe policy shared by the pass-state property tests (``test_spread_cursors.py``,
``test_pass_free_bound.py``): it drives a real replay on ``tiresias-60`` and, at each decision, takes
random shares in one or more pass states (gives back running jobs' GPUs, takes most placements of the
queued jobs), then starts only what fits on the real free resources and sets a tick timer while jobs
wait. A subclass writes ``schedule`` from the steps below and its own checks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import simulate
from schedlab.heuristics.fifo import PassState
from schedlab.scheduling import Job, JobAllocation, Resources
from schedlab.scheduling.policy import ClusterView, Decision, JobStatus, JobView, Timer
from schedlab.topology import preset

CLUSTER = preset("tiresias-60")


def jobs_strategy(gpu_choices: Sequence[int]) -> st.SearchStrategy:
    """Up to 40 jobs as ``(gpus, iterations, arrival)``, the GPUs drawn from ``gpu_choices``."""
    return st.lists(st.tuples(st.sampled_from(list(gpu_choices)), st.floats(1, 100), st.floats(0, 200)),
                    min_size=1, max_size=40)


class SeededProbe:
    """The probe's random steps; ``checked`` counts the placements a subclass has checked."""

    name = "probe"
    oracle = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.checked = 0
        self.timer_at = -1.0

    def after_take(self, view: ClusterView) -> None:
        """Called after each group of takes (a subclass checks its invariants here)."""

    def give_back(self, view: ClusterView, states: Sequence[PassState]) -> None:
        """Gives back about 30 % of the running jobs' GPUs in every state, as if preempted with instant
        release (checkpointing jobs are left alone)."""
        for jv in view.running():
            if jv.status is not JobStatus.CHECKPOINTING and self.rng.random() < 0.3:
                for m, r in jv.allocation.placement.items():
                    for ps in states:
                        ps.take(m, r.scale(-1))
                self.after_take(view)

    def take(self, view: ClusterView, jv: JobView, p: dict | None, states: Sequence[PassState],
             start: dict[str, JobAllocation]) -> None:
        """Takes placement ``p`` in every state with probability 0.8, and keeps it in ``start`` when it
        fits the real free resources and shares no machine with a placement kept before."""
        if p is not None and self.rng.random() < 0.8:
            for m, r in p.items():
                for ps in states:
                    ps.take(m, r)
            self.after_take(view)
            if all(r <= view.free(m) for m, r in p.items()) and not any(m in start for m in p):
                start[jv.id] = JobAllocation(jv.id, jv.job.requested_plan, p)

    def decide(self, view: ClusterView, start: dict[str, JobAllocation]) -> Decision:
        """Starts only what fits on the real free resources (the takes were a probe), then a tick timer
        while jobs wait."""
        ok, used = {}, {}
        for jid, ja in start.items():
            if all(used.get(m, Resources()) + r <= view.free(m) for m, r in ja.placement.items()):
                ok[jid] = ja
                for m, r in ja.placement.items():
                    used[m] = used.get(m, Resources()) + r
        timers = ()
        if view.queue_length and self.timer_at <= view.now:
            self.timer_at = view.now + float(self.rng.uniform(1, 30))
            timers = (Timer(self.timer_at, "tick"),)
        return Decision(start=ok, timers=timers)


def replay(probe: SeededProbe, spec: Sequence[tuple[int, float, float]]) -> None:
    """Replays ``spec``'s jobs under ``probe`` (reference semantics); all must finish, and the probe
    must have checked at least one placement per job."""
    jobs = [Job(f"j{i}", Resources(g), iterations=it, arrival=arr, attrs={"iter_time": 1.0})
            for i, (g, it, arr) in enumerate(spec)]
    res = simulate(CLUSTER, jobs, probe, semantics="reference")
    assert not res.unfinished
    assert probe.checked >= len(jobs)
