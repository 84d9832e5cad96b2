"""SRTF/SRSF's block walk of the ranked running rows (:meth:`BlockFill.walk`: binary search on cumulative
GPUs, one vector comparison for the rows that do not fit) equals the row-by-row walk it replaces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.heuristics.baselines.srtf_arrays import BlockFill, RunningArrays


def literal_walk(gpus: list[int], ckpt: list[bool], pos: int, idx: int, free: int) -> tuple[int, int, list[int]]:
    """Rows ``pos..idx-1`` one by one: stop when no GPU is left, skip checkpointing rows, take a row whose
    GPUs fit, else record its position."""
    out = []
    for q in range(pos, idx):
        if free <= 0:
            return q, free, out
        if ckpt[q]:
            continue
        if gpus[q] <= free:
            free -= gpus[q]
        else:
            out.append(q)
    return idx, free, out


rows = st.lists(st.tuples(st.sampled_from([1, 1, 1, 2, 4, 8, 16]), st.booleans()), min_size=0, max_size=40)


@settings(max_examples=300, deadline=None)
@given(rows=rows, data=st.data())
def test_walk_equals_row_by_row(rows, data):
    arr = RunningArrays(4)
    for i, (g, _) in enumerate(rows):
        arr.add(f"j{i}", 100.0, 10.0, g, float(i), i)  # keys in row order: the ranking is the row order
    for i, (_, ck) in enumerate(rows):
        arr.ck[i] = ck
    order = arr.ranked()
    assert order.tolist() == list(range(len(rows)))
    bf = BlockFill(arr, order)
    pos = data.draw(st.integers(0, len(rows)))
    idx = data.draw(st.integers(pos, len(rows)))
    free = data.draw(st.integers(-2, 3 + sum(g for g, _ in rows)))
    out: list[int] = []
    stop, left = bf.walk(pos, idx, free, out)
    gpus, ckpt = [g for g, _ in rows], [c for _, c in rows]
    assert (stop, left, out) == literal_walk(gpus, ckpt, pos, idx, free)
    assert bf.ckpt_gpus == sum(g for g, c in rows if c)
    assert bf.rest(pos) == [q for q in range(pos, len(rows)) if not ckpt[q]]
