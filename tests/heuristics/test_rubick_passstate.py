"""Rubick's pass state bookkeeping (issue 25 round 7): the set of machines with a free GPU, the machine
versions undone from a log on rollback, and the machines whose version changed (``mdirty``), against a
recomputation after every step of random moves, marks and rollbacks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.heuristics.rubick.state import CPU, GPU, Entry, PassState
from schedlab.scheduling import Instance
from schedlab.scheduling.snapshot import snapshot_view
from schedlab.topology import preset

CLUSTER = preset("rubick-64")


def _entry(i: int) -> Entry:
    return Entry(f"e{i}", None, None, i)  # (moves read neither the view nor the model)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10**6), st.integers(1, 8), st.booleans()),
                max_size=60))
def test_free_gpu_set_versions_and_dirty_machines(ops):
    state = PassState(snapshot_view(Instance(CLUSTER, ())))
    machines = state.machines
    entries = [_entry(i) for i in range(3)]
    marks: list[tuple[int, int, dict[str, int]]] = []
    seen = dict(state.mversion)  # versions when mdirty was last cleared
    for op, pick, k, quiet in ops:
        m = machines[pick % len(machines)]
        e = entries[pick % len(entries)]
        if op == 0:
            marks.append((state.mark(), state.version, dict(state.mversion)))
        elif op == 1 and state.free[GPU][m] >= k:
            state.quiet = quiet
            state.move(GPU, m, None, e, k)
            state.quiet = False
        elif op == 2 and e.on(GPU, m):
            state.move(GPU, m, e, None, min(k, e.on(GPU, m)))
        elif op == 2 and state.free[CPU][m]:
            state.move(CPU, m, None, e, 1)
        elif op == 3 and marks:
            n, version, versions = marks.pop()
            state.rollback(n)
            if len(state.log) == n:
                assert state.version == version and state.mversion == versions
        if pick % 7 == 0:
            state.mdirty.clear()
            seen = dict(state.mversion)
        assert state.free_gpu == {x for x in machines if state.free[GPU][x] > 0}
        assert {x for x in machines if state.mversion[x] != seen[x]} <= state.mdirty
