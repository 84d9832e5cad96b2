"""The artifact's gandiva sets (:mod:`heuristics.baselines.gandiva_sets`): the fast forms against the
artifact's literal loops (Hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.heuristics.baselines.gandiva_sets import NodeSet, _drop_empty, _join_lowest, _spread_even, _util


def _literal(sets: list[NodeSet], moved: list[str]) -> None:
    """The artifact's loop: each job joins ``sets[0]``, then the list is sorted by util (stable)."""
    for jid in moved:
        sets[0].util += 1
        sets[0].jobs.append(jid)
        sets.sort(key=_util)


def _state(sets: list[NodeSet]) -> list[tuple[int, int, tuple[str, ...]]]:
    return [(id(ns), ns.util, tuple(ns.jobs)) for ns in sets]


@settings(max_examples=300, deadline=None)
@given(utils=st.lists(st.integers(0, 6), min_size=1, max_size=12), n=st.integers(0, 40))
def test_join_lowest_is_the_sort_per_job(utils: list[int], n: int) -> None:
    """Any start order (sorted or not, many ties): the same sets in the same order with the same jobs;
    it fails if the binary search puts the head before or after the sets it ties with."""
    fast = [NodeSet(1, 4, u, [f"o{i}"] if u else []) for i, u in enumerate(utils)]
    slow = [NodeSet(1, 4, u, [f"o{i}"] if u else []) for i, u in enumerate(utils)]
    ids = {id(a): id(b) for a, b in zip(fast, slow, strict=True)}
    moved = [f"j{i}" for i in range(n)]
    _join_lowest(fast, moved)
    _literal(slow, moved)
    assert [(ids[i], u, j) for i, u, j in _state(fast)] == _state(slow)


@settings(max_examples=300, deadline=None)
@given(k=st.integers(1, 12), n=st.integers(1, 60))
def test_spread_even_is_the_sort_per_job(k: int, n: int) -> None:
    """The re-spread from equal utils (all 0) in closed form: the same sets in the same order with the same
    jobs as the artifact's loop; it fails if a round does not reverse the order or the last partial round
    is put back in the wrong order."""
    fast = [NodeSet(1, 4) for _ in range(k)]
    slow = [NodeSet(1, 4) for _ in range(k)]
    ids = {id(a): id(b) for a, b in zip(fast, slow, strict=True)}
    moved = [f"j{i}" for i in range(n)]
    fast = _spread_even(fast, moved)
    _literal(slow, moved)
    assert [(ids[i], u, j) for i, u, j in _state(fast)] == _state(slow)


@settings(max_examples=300, deadline=None)
@given(spec=st.lists(st.tuples(st.integers(1, 2), st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=12))
def test_drop_empty_is_the_remove_loop(spec: list[tuple[int, int, int]]) -> None:
    """The artifact's ``for ns in gone: sets.remove(ns)`` (dataclass equality: an equal set may be another
    object) leaves the same set objects in the same order as the filter; many equal empty sets."""
    sets = [NodeSet(n, 4, u, [f"j{i}.{k}" for k in range(m)]) for i, (n, u, m) in enumerate(spec)]
    slow = list(sets)
    for ns in [ns for ns in sets if not ns.jobs]:
        slow.remove(ns)
    fast = list(sets)
    _drop_empty(fast)
    assert [id(ns) for ns in fast] == [id(ns) for ns in slow]
