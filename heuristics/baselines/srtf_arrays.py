"""SRTF/SRSF's running jobs as arrays: their keys refreshed, re-tie-broken and ranked in bulk (numpy),
and the pool filled in blocks of running jobs (a block that fits is taken whole, found by binary
search on the ranked keys) instead of job by job.

Keys are whole µs (GPU-µs for SRSF) on the integer clock of :mod:`.srtf_keys`: each row keeps its
intercept ``A`` (int64) and quantized slope ``s_q`` (float64) from its last anchor, and its key at ``T`` is
``max(A - rint(s_q x T), 0)`` (x GPUs): numpy's ``rint`` of one float product is Python's ``round`` of it,
so the keys are the same integers as :func:`.srtf_keys.key_at` gives.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from schedlab.heuristics.baselines.srtf_keys import anchor, clock
from schedlab.scheduling.policy import ClusterView, JobStatus


class RunningArrays:
    """One row per job holding GPUs: its anchor ``(A, s_q)`` (from its motion, read from the view when it
    changes), its constants and its current ``(key, tie-break)``. Rows are kept dense (a
    removed row takes the last row's place)."""

    def __init__(self, capacity: int = 256) -> None:
        self.row: dict[str, int] = {}
        self.ids: list[str] = []
        #: the rows in ``(key, tie-break)`` order as of the last ranking (``None``: not known), kept across
        #: removals; rows added since wait in ``_new`` and are merged in by :meth:`previous_order`
        self.order: np.ndarray | None = None
        self._new: list[int] = []
        self._resort = False
        self._alloc(capacity)

    def _alloc(self, cap: int) -> None:
        old = getattr(self, "s", None)
        n = len(self.ids)
        for name, dt in (("s", np.float64), ("it", np.float64), ("dur", np.float64), ("a", np.int64),
                         ("key", np.int64), ("tb", np.int64), ("gi", np.int64), ("ck", bool)):
            a = np.zeros(cap, dtype=dt)
            if old is not None:
                a[:n] = getattr(self, name)[:n]
            setattr(self, name, a)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, jid: str) -> bool:
        return jid in self.row

    def add(self, jid: str, duration: float, iterations: float, gpus: int, key: int, tb: int) -> None:
        n = len(self.ids)
        if n == len(self.s):
            self._alloc(2 * n)
        self.row[jid] = n
        self.ids.append(jid)
        if self.order is not None:
            self._new.append(n)
        self.it[n], self.dur[n], self.gi[n] = iterations, duration, gpus
        self.key[n], self.tb[n] = key, tb
        self.ck[n] = False
        self.a[n], self.s[n] = 0, 0.0  # (set by read_motion before the next refresh)

    def remove(self, jid: str) -> tuple[int, int]:
        """Drop ``jid``'s row; its ``(key, tie-break)``."""
        i = self.row.pop(jid)
        out = (int(self.key[i]), int(self.tb[i]))
        last = len(self.ids) - 1
        order = self.order
        if order is not None:  # the row leaves the order; the last row takes its number
            new = self._new
            if i in new:
                new.remove(i)
            else:
                order = order[order != i]
            if i != last:
                if last in new:
                    new[new.index(last)] = i
                else:
                    order[order == last] = i
            self.order = order
        if i != last:
            moved = self.ids[last]
            self.ids[i] = moved
            self.row[moved] = i
            for a in (self.s, self.a, self.it, self.dur, self.key, self.tb, self.gi, self.ck):
                a[i] = a[last]
        self.ids.pop()
        return out

    def read_motion(self, view: ClusterView, jids: Iterable[str]) -> None:
        jids = [j for j in jids if j in self.row]
        for jid, (p, r, m, st) in zip(jids, view.motion_of(jids), strict=True):
            i = self.row[jid]
            self.a[i], self.s[i] = anchor(p, r, m, st is JobStatus.RUNNING, float(self.it[i]), float(self.dur[i]))
            self.ck[i] = st is JobStatus.CHECKPOINTING

    def keys(self, now: float, weighted: bool) -> np.ndarray:
        """Every row's key at ``now`` (:func:`.srtf_keys.key_at`, in bulk)."""
        n = len(self.ids)
        k = np.maximum(self.a[:n] - np.rint(self.s[:n] * clock(now)).astype(np.int64), 0)
        return k * self.gi[:n] if weighted else k

    def previous_order(self) -> np.ndarray:
        """Every row in ``(key, tie-break)`` order (the kept order with the rows added since merged in by
        binary search; a full sort when no order is kept)."""
        n = len(self.ids)
        order, new = self.order, self._new
        if order is None:
            order = np.lexsort((self.tb[:n], self.key[:n]))
        elif new:
            key, tb = self.key, self.tb
            ks = key[order]
            new.sort(key=lambda r: (key[r], tb[r]))
            at = []
            for r in new:
                k, t = key[r], tb[r]
                lo = int(ks.searchsorted(k, "left"))
                hi = int(ks.searchsorted(k, "right"))
                if hi > lo:
                    lo += int(np.count_nonzero(tb[order[lo:hi]] < t))
                at.append(lo)
            parts, last = [], 0  # (np.insert, without its overhead: ``at`` is non-decreasing)
            for a, r in zip(at, new, strict=True):
                parts.append(order[last:a])
                parts.append(np.array((r,), dtype=order.dtype))
                last = a
            parts.append(order[last:])
            order = np.concatenate(parts)
        new.clear()
        self.order = order
        return order

    def refresh(self, now: float, weighted: bool, next_tb: int) -> int:
        """New keys; the rows whose key changed get fresh tie-breaks from ``next_tb`` on, in their previous
        ``(key, tie-break)`` order. Returns the next free tie-break."""
        n = len(self.ids)
        if not n:
            self.order = np.zeros(0, dtype=np.intp)
            self._new.clear()
            return next_tb
        prev = self.previous_order()
        k = self.keys(now, weighted)
        old = self.key[:n]
        chm = k != old
        if (k > old).any():  # (keys only decrease; if one did not, the next ranking sorts from scratch)
            self._resort = True
        ch = prev[chm[prev]]
        if len(ch):
            self.tb[ch] = np.arange(next_tb, next_tb + len(ch))
            next_tb += len(ch)
        self.key[:n] = k
        return next_tb

    def ranked(self) -> np.ndarray:
        """Rows in ``(key, tie-break)`` order. After :meth:`refresh` this is a stable sort by key of the
        previous order: keys only decrease, so a row whose key changed now sorts behind the rows it ties
        with exactly when its fresh tie-break says so (rows whose key did not change keep their relative
        order; changed ones got tie-breaks in that order)."""
        order = self.previous_order()
        n = len(self.ids)
        if self._resort:
            self._resort = False
            order = np.lexsort((self.tb[:n], self.key[:n]))
        else:
            order = order[np.argsort(self.key[order], kind="stable")]
        self.order = order
        return order


class BlockFill:
    """The pool filled over the merge of the ranked running rows and the queued lists (the scalar
    ``_fill``), running rows taken in blocks: the longest run of rows whose GPUs fit is found by binary
    search on the cumulative GPUs, the rows that do not fit after it by one vector comparison, so a walk
    costs O(rows that do not fit x log rows), not O(rows)."""

    def __init__(self, arr: RunningArrays, order: np.ndarray) -> None:
        self.arr = arr
        self.order = order
        self.ks = arr.key[order]
        self._ts: np.ndarray | None = None  # the ranked tie-breaks, read on the first tie (:meth:`position`)
        g_all = arr.gi[order]
        n = len(order)
        self.cs = cs = np.empty(n + 1, dtype=np.int64)
        cs[0] = 0
        if arr.ck[:n].any():
            self.ckr = ck = arr.ck[order]
            self.gs = g = np.where(ck, 0, g_all)
            np.cumsum(g, out=cs[1:])
            self.ckpt_gpus = int(g_all.sum()) - int(cs[-1])  # GPUs of checkpointing rows
        else:
            self.ckr = None
            self.gs = g_all
            np.cumsum(g_all, out=cs[1:])
            self.ckpt_gpus = 0

    def position(self, key: int, tb: int) -> int:
        """How many ranked rows come before ``(key, tb)``."""
        ks = self.ks
        lo = int(ks.searchsorted(key, "left"))
        hi = int(ks.searchsorted(key, "right"))
        if hi > lo:
            ts = self._ts
            if ts is None:
                ts = self._ts = self.arr.tb[self.order]
            lo += int(np.count_nonzero(ts[lo:hi] < tb))
        return lo

    def walk(self, pos: int, idx: int, free: int, out: list[int]) -> tuple[int, int]:
        """Ranked rows ``pos..idx-1`` one by one: stop when no GPU is left, skip checkpointing rows, take
        a row whose GPUs fit, else put its position in ``out``. Returns ``(where it stopped, free)``."""
        cs, gs = self.cs, self.gs
        while pos < idx and free > 0:
            base = int(cs[pos])
            target = base + free
            j = int(cs.searchsorted(target, "right")) - 1  # rows pos..j-1 fit one after the other
            if int(cs[j]) == target:  # no GPU left from the first row reaching it: stop there, as row by row
                j = int(cs.searchsorted(target, "left"))
            if j >= idx:
                return idx, free - (int(cs[idx]) - base)
            free -= int(cs[j]) - base
            pos = j
            if free <= 0:
                break
            fits = gs[pos:idx] <= free  # row ``pos`` does not fit (nor any checkpointing row's 0)
            f = int(fits.argmax())
            if not fits[f]:
                out.extend(range(pos, idx))
                return idx, free
            out.extend(range(pos, pos + f))
            pos += f
        return pos, free

    def rest(self, pos: int) -> list[int]:
        """Positions from ``pos`` on that are not checkpointing."""
        if self.ckr is None:
            return list(range(pos, len(self.order)))
        return (np.flatnonzero(~self.ckr[pos:]) + pos).tolist()


__all__ = ["BlockFill", "RunningArrays"]
