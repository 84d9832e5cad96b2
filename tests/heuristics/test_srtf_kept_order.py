"""SRTF/SRSF's running rows keep their ranking across decisions (:class:`RunningArrays`: a stable sort
by key of the previous order, rows added since merged in by binary search, removals applied to the
kept order) and give the same tie-breaks and rankings as sorting from scratch (the code before:
``lexsort`` of the changed rows by their previous ``(key, tie-break)``, then of every row)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.heuristics.baselines.srtf_arrays import RunningArrays
from schedlab.heuristics.baselines.srtf_keys import US, anchor


class Resorted(RunningArrays):
    """The reference: no kept order, everything sorted from scratch at every refresh and ranking."""

    def refresh(self, now: float, weighted: bool, next_tb: int) -> int:
        n = len(self.ids)
        if not n:
            return next_tb
        k = self.keys(now, weighted)
        old = self.key[:n]
        ch = np.nonzero(k != old)[0]
        if len(ch):
            ch = ch[np.lexsort((self.tb[ch], old[ch]))]
            self.tb[ch] = np.arange(next_tb, next_tb + len(ch))
            next_tb += len(ch)
        self.key[:n] = k
        return next_tb

    def ranked(self) -> np.ndarray:
        n = len(self.ids)
        return np.lexsort((self.tb[:n], self.key[:n]))


def set_motion(arr: RunningArrays, jid: str, p: float, r: float, m: float, moving: bool) -> None:
    i = arr.row[jid]
    arr.a[i], arr.s[i] = anchor(p, r, m, moving, float(arr.it[i]), float(arr.dur[i]))


add = st.tuples(st.just("add"), st.sampled_from([1, 2, 4, 8]), st.integers(1, 10), st.sampled_from([0.0, 0.5, 1.0]))
op = st.one_of(
    add, add, add,
    st.tuples(st.just("remove"), st.integers(0, 50)),
    st.tuples(st.just("pause"), st.integers(0, 50)),      # motion stops (checkpointing): progress kept
    st.tuples(st.just("rewind"), st.integers(0, 50)),     # progress lost: a key grows (the fallback sort)
    st.tuples(st.just("tick"), st.sampled_from([0.0, 0.5, 1.0, 3.0])),
)


@settings(max_examples=300, deadline=None)
@given(ops=st.lists(op, max_size=150), weighted=st.booleans())
def test_kept_order_equals_sorting_from_scratch(ops, weighted):
    fast, ref = RunningArrays(2), Resorted(2)
    now, tb_fast, tb_ref, serial = 0.0, 0, 0, 0
    progress: dict[str, tuple[float, float, float, bool]] = {}  # jid -> motion
    for o in ops:
        kind = o[0]
        if kind == "add":  # a queued job starts: its key and tie-break as the queued list had them
            _, g, d, rate = o  # 10 iterations of 1 s, d of them left: whole and half keys, many ties
            jid = f"j{serial}"
            serial += 1
            key = d * US * (g if weighted else 1)
            for arr in (fast, ref):
                arr.add(jid, 10.0, 10.0, g, key, -serial)  # tie-breaks below every fresh one (queued earlier)
            progress[jid] = (10.0 - d, rate, now, rate > 0)
            for arr in (fast, ref):
                set_motion(arr, jid, *progress[jid])
        elif kind in ("remove", "pause", "rewind") and progress:
            jid = sorted(progress)[o[1] % len(progress)]
            p, r, m, mov = progress[jid]
            cur = p + r * (now - m) if mov else p
            if kind == "remove":
                assert fast.remove(jid) == ref.remove(jid)
                del progress[jid]
                continue
            progress[jid] = (cur, r, now, False) if kind == "pause" else (max(cur - 3.0, 0.0), r, now, mov)
            for arr in (fast, ref):
                set_motion(arr, jid, *progress[jid])
        elif kind == "tick":
            now += o[1]
            tb_fast = fast.refresh(now, weighted, tb_fast)
            tb_ref = ref.refresh(now, weighted, tb_ref)
            assert tb_fast == tb_ref
            got, want = fast.ranked(), ref.ranked()
            assert [fast.ids[i] for i in got] == [ref.ids[i] for i in want]
            assert {j: (fast.key[fast.row[j]], fast.tb[fast.row[j]]) for j in fast.row} == \
                   {j: (ref.key[ref.row[j]], ref.tb[ref.row[j]]) for j in ref.row}
