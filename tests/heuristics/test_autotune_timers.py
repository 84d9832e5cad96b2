"""``AutoTuner.timers`` and ``record`` skip ``WaitList.expire`` when the oldest entry is inside the window:
the same timers and the same lists (entries and running sums) as expiring every list they touch, on
random record/query sequences (Hypothesis)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.heuristics.dally.autotune import AutoTuner, WaitList, skip_levels


class _Always(AutoTuner):
    """The timers and records as they were: every list touched is expired first."""

    def timers(self, g, now):
        out = []
        for k in range(len(self.capacities)):
            lst = self.lists.get((k, g))
            if lst is not None:
                lst.expire(now, self.window)
            if lst is None or len(lst) < self.min_samples:
                out.append(self.cold[k])
            else:
                out.append(lst.mean_plus(self.sigmas))
        return skip_levels(out, self.capacities, g)

    def record(self, level, g, wait, now):
        lst = self.lists.get((level, g))
        if lst is None:
            lst = self.lists[(level, g)] = WaitList()
        lst.expire(now, self.window)
        lst.add(now, max(0.0, float(wait)))


def _state(t: AutoTuner):
    return {k: (list(v.entries), v.total, v.total_sq) for k, v in t.lists.items()}


ops = st.lists(st.tuples(st.booleans(), st.integers(0, 1), st.sampled_from([1, 2, 4, 8, 16]),
                         st.floats(0, 5000), st.floats(0, 800)), max_size=80)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(ops=ops, min_samples=st.integers(1, 3))
def test_timers_as_expiring_every_list(ops, min_samples):
    kw = dict(window=1000.0, capacities=(8, 32), cold=(60.0, 120.0), min_samples=min_samples, sigmas=2.0)
    fast, ref = AutoTuner(**kw), _Always(**kw)
    now = 0.0
    for is_record, level, g, wait, dt in ops:
        now += dt
        if is_record:
            fast.record(level, g, wait, now)
            ref.record(level, g, wait, now)
        else:
            assert fast.timers(g, now) == ref.timers(g, now)
        assert _state(fast) == _state(ref)
        assert fast.next_change(now) == ref.next_change(now)


# ``AutoTuner.skip`` (a query the caller did not need: the job fit level 0) leaves the lists as they are;
# ``next_change`` expires what it reads at its ``now``: the same wake-up times and, once ``next_change``
# ran, the same lists as answering every query (the policy's timer expiry does not depend on which
# queries it answered)
skip_ops = st.lists(st.tuples(st.sampled_from(["record", "query", "skip", "next"]), st.integers(0, 1),
                              st.sampled_from([1, 2, 4, 8, 16]), st.floats(0, 5000), st.floats(0, 800)),
                    max_size=80)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(ops=skip_ops, min_samples=st.integers(1, 3))
def test_skipped_queries_give_the_same_next_change(ops, min_samples):
    kw = dict(window=1000.0, capacities=(8, 32), cold=(60.0, 120.0), min_samples=min_samples, sigmas=2.0)
    fast, ref = AutoTuner(**kw), _Always(**kw)
    now = 0.0
    for op, level, g, wait, dt in ops:
        now += dt
        if op == "record":
            fast.record(level, g, wait, now)
            ref.record(level, g, wait, now)
        elif op == "query":
            assert fast.timers(g, now) == ref.timers(g, now)
        elif op == "skip":
            fast.skip(g, now)
            ref.timers(g, now)
        else:
            assert fast.next_change(now) == ref.next_change(now)
            assert _state(fast) == _state(ref)
    assert fast.next_change(now) == ref.next_change(now)
    assert _state(fast) == _state(ref)


def test_next_change_never_reads_a_stale_head():
    """A list whose oldest wait left the window is expired by ``next_change`` itself, whether its demand
    was queried, skipped or neither since (the stale head of round 7: ``plain`` once answered 100)."""
    kw = dict(window=100.0, capacities=(8, 32), cold=(60.0, 120.0), min_samples=2, sigmas=2.0)
    fast, plain, ref = AutoTuner(**kw), AutoTuner(**kw), _Always(**kw)
    for t in (fast, plain, ref):
        t.record(1, 4, 10.0, 0.0)      # rack list of 4-GPU jobs: leaves the window at 100
        t.record(1, 4, 20.0, 90.0)     # ... and this one at 190
        t.record(0, 2, 5.0, 120.0)     # machine list of 2-GPU jobs: at 220
    # at t = 150: a 4-GPU job's query expires the first entry; skipping it or not asking does the same
    ref.timers(4, 150.0)
    fast.skip(4, 150.0)
    assert ref.next_change(150.0) == fast.next_change(150.0) == plain.next_change(150.0) == 190.0
    assert _state(fast) == _state(ref) == _state(plain)


def test_an_entry_is_gone_at_the_wake_up_it_asked_for():
    """The window is half-open, ``[recorded_at, recorded_at + window)``: at the wake-up ``next_change``
    asked for, the entry has left (so that pass sees the changed timer and the next change is later)."""
    t = AutoTuner(window=100.0, capacities=(8, 32), cold=(60.0, 120.0), min_samples=1)
    t.record(0, 2, 5.0, 20.0)
    t.record(0, 2, 7.0, 50.0)
    assert t.next_change(30.0) == 120.0
    assert t.timers(2, 119.0)[0] == 6.0 + 2 * math.sqrt(2.0)
    assert t.timers(2, 120.0)[0] == 7.0
    assert t.next_change(120.0) == 150.0
    assert t.next_change(150.0) == math.inf


@settings(max_examples=300, deadline=None, derandomize=True)
@given(ops=skip_ops, min_samples=st.integers(1, 3))
def test_next_change_is_strictly_after_now(ops, min_samples):
    """Whatever was recorded, queried or skipped before: the next window change is after ``now``, and it
    is the earliest ``recorded_at + window`` among the entries still in their window."""
    t = AutoTuner(window=1000.0, capacities=(8, 32), cold=(60.0, 120.0), min_samples=min_samples)
    log: list[float] = []
    now = 0.0
    for op, level, g, wait, dt in ops:
        now += dt
        if op == "record":
            t.record(level, g, wait, now)
            log.append(now)
        elif op == "query":
            t.timers(g, now)
        elif op == "skip":
            t.skip(g, now)
        else:
            nc = t.next_change(now)
            assert nc > now
            assert nc == min((r + 1000.0 for r in log if r + 1000.0 > now), default=math.inf)
