"""``AssumptionLog.tally`` (count a note whose examples are full, without building the example) gives
the same report as calling ``add`` every time, strict logs included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.workloads.assumptions import AssumptionLog
from schedlab.topology.errors import TraceError

_calls = st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["x", "y", "z"]),
                            st.integers(0, 50)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(_calls)
def test_tally_then_add_equals_add(calls):
    ref, fast = AssumptionLog(source="t"), AssumptionLog(source="t")
    for kind, what, i in calls:
        ref.add(kind, what, job=f"j{i}", line=i, field="f", detail=str(i))
        if not fast.tally(kind, what):
            fast.add(kind, what, job=f"j{i}", line=i, field="f", detail=str(i))
    assert fast.report() == ref.report()


def test_tally_counts_nothing_new_or_strict():
    log = AssumptionLog(source="t")
    assert not log.tally("k", "w")  # no note yet
    for i in range(5):
        log.add("k", "w", job=str(i))
    assert log.tally("k", "w")
    assert log.report().count("k") == 6
    strict = AssumptionLog(source="t", strict=True)
    assert not strict.tally("k", "w")
    with pytest.raises(TraceError):
        strict.add("k", "w")
