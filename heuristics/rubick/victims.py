"""Where a Rubick pass finds units to take: the lowest GPU loss of the jobs any job may shrink, per
machine and over the cluster, and ``GetLowestSlopeOverMinJob`` (the victim on a machine).

:class:`VictimSearch` is a mix-in of :class:`~schedlab.heuristics.rubick.policy.RubickPolicy` (it reads
the policy's ``mode`` and penalty rule). Its caches live in the pass state (``st.memo``), so nothing
outlives a pass:

* the two lowest losses over the cluster come from a heap kept across the pass and fed only the entries
  the pass changed (``st.dirty``), not from a scan of every job per state;
* each machine's lowest loss is cached per machine version, and a table of them lets ``ScheduleJob``
  pass over machines where nothing can be taken (:meth:`VictimSearch._active`).

Both give the plain scans' answers exactly (``tests/heuristics/test_rubick.py`` compares them at every
state of a pass).
"""

from __future__ import annotations

import heapq
import math

from schedlab.heuristics.rubick.commit import EPS
from schedlab.heuristics.rubick.state import CPU, GPU, Entry, PassState
from schedlab.perfmodel.curves import MIN_CPUS_PER_GPU
from schedlab.scheduling.policy import JobStatus


class VictimSearch:
    """Lowest-loss queries of a Rubick pass (a mix-in: ``mode`` and ``reconfigurable`` are the policy's)."""

    def _machine_order(self, st: PassState, e: Entry) -> list[str]:
        """Machines ``e`` holds (largest share first), then best fit for the rest of its request, then
        the most free, then the full ones (cluster order breaks ties)."""
        idx = st.index
        own = e.units[GPU]
        need = max(e.jm.job.requested.gpus - e.g, 1)
        free = st.free[GPU]
        if not own:  # (a queued job's: a function of the state and its need, kept per state version)
            key = ("order", need)
            hit = st.memo.get(key)
            if hit is not None and hit[0] == st.version:
                return hit[1]
            fit = sorted((m for m in st.free_gpu if free[m] >= need), key=lambda m: (free[m], idx[m]))
            part = sorted((m for m in st.free_gpu if free[m] < need), key=lambda m: (-free[m], idx[m]))
            order = fit + part + [m for m in st.machines if free[m] <= 0]
            st.memo[key] = (st.version, order)
            return order
        mine = sorted(own, key=lambda m: (-own[m], idx[m]))
        rest = [m for m in st.machines if m not in own]
        fit = sorted((m for m in rest if free[m] >= need), key=lambda m: (free[m], idx[m]))
        part = sorted((m for m in rest if 0 < free[m] < need), key=lambda m: (-free[m], idx[m]))
        return mine + fit + part + [m for m in rest if free[m] <= 0]

    def _min_loss(self, st: PassState, e: Entry) -> float:
        """The lowest GPU loss of any other job ``e`` could shrink (inf if none). The two lowest are
        cached per state version (:meth:`_two_lowest`)."""
        cached = st.memo.get("min_loss")
        if cached is None or cached[0] != st.version:
            cached = st.memo["min_loss"] = (st.version, self._two_lowest(st))
        first, second = cached[1]
        return second[0] if first[1] == e.jid else first[0]

    def _min_loss_of(self, st: PassState, jid: str) -> float:
        """:meth:`_min_loss` of job ``jid`` (whose entry need not be built)."""
        cached = st.memo.get("min_loss")
        if cached is None or cached[0] != st.version:
            cached = st.memo["min_loss"] = (st.version, self._two_lowest(st))
        first, second = cached[1]
        return second[0] if first[1] == jid else first[0]

    def _two_lowest(self, st: PassState) -> list[tuple[float, str]]:
        """The two lowest ``(GPU loss, job id)`` of the jobs any job may shrink (padded with ``(inf, "")``),
        from a heap kept across the pass: built once, then fed the entries the pass changed since
        (``st.dirty``); an item is dropped when its job's loss or shrinkability is no longer what it says
        (a job changed back, e.g. by a rollback, is dirty again and pushed anew). Same answer as a scan of
        every entry (:meth:`_scan_two_lowest`), in O(changes log jobs) per state instead of O(jobs)."""
        entries = st.entries
        got = st.memo.get("loss_heap")
        kept = st.kept
        if got is None:
            heap = [(v.jm.loss_g(v.g), v.jid) for v in entries.values() if _shrinkable(v)]
            if kept is None:
                for loss, jid, shrinkable, jv, *_ in st.pending():  # entries not built yet: as they would be
                    if shrinkable and jv.status is JobStatus.RUNNING and self.reconfigurable(jv):
                        heap.append((loss, jid))
            heap = [item for item in heap if item[0] < math.inf]
            heapq.heapify(heap)
            got = st.memo["loss_heap"] = (heap, [0])
        else:
            heap = got[0]
            for v in st.dirty:
                if _shrinkable(v):
                    loss = v.jm.loss_g(v.g)
                    if loss < math.inf:
                        heapq.heappush(heap, (loss, v.jid))
        st.dirty.clear()
        # with the running jobs kept across passes, the lazily kept ones are not in the heap: they are read
        # from their sorted list (kept.shrink) from the lowest, merged with the heap; one read is checked
        # as the heap's build would have (running, past the penalty rule) and, if it holds, goes to the heap
        order = kept.shrink if kept is not None else ()
        pos = got[1]
        low: list[tuple[float, str]] = []
        while len(low) < 2:
            i = pos[0]
            if i < len(order) and (not heap or order[i] < heap[0]):
                pos[0] = i + 1
                loss, jid = item = order[i]
                v = dict.get(entries, jid)
                if v is None:
                    jv = st.lazy[jid][3]
                    ok = jv.status is JobStatus.RUNNING and self.reconfigurable(jv)
                else:
                    ok = _shrinkable(v) and v.jm.loss_g(v.g) == loss
            elif heap:
                loss, jid = item = heapq.heappop(heap)
                v = dict.get(entries, jid)  # (not built: its record is as it was pushed)
                ok = v is None or (_shrinkable(v) and v.jm.loss_g(v.g) == loss)
            else:
                break
            if ok and (not low or low[0][1] != jid):
                low.append(item)
        for item in low:
            heapq.heappush(heap, item)
        got = low + [(math.inf, "")] * (2 - len(low))
        if self.check_residents:
            assert got == self._scan_two_lowest(st), "two lowest"
        return got

    def _scan_two_lowest(self, st: PassState) -> list[tuple[float, str]]:
        """:meth:`_two_lowest` by a scan of every entry (the reference the equivalence tests compare with)."""
        low: list[tuple[float, str]] = [(math.inf, ""), (math.inf, "")]
        for v in st.entries.values():
            if not _shrinkable(v):
                continue
            item = (v.jm.loss_g(v.g), v.jid)
            if item < low[1]:
                low = sorted([low[0], item])
        for loss, jid, shrinkable, jv, *_ in st.pending():  # entries not built yet: as they would be
            item = (loss, jid)
            if shrinkable and item < low[1] and jv.status is JobStatus.RUNNING and self.reconfigurable(jv):
                low = sorted([low[0], item])
        return low

    def _active(self, st: PassState, e: Entry, sat: int) -> set[str] | None:
        """The machines where :meth:`_take_gpus` may change something for ``e`` (not below its GPU floor)
        in the current state, or ``None`` for "any machine". Elsewhere ``_take_gpus`` returns at once:
        nothing free is taken (its want or the machine's free GPUs are below a granule) and the machine's
        lowest loss is not below ``e``'s gain (or ``e`` is at its cap or gains nothing).

        A machine ``e`` holds no GPUs on has a lowest loss (:meth:`_machine_low`) of at least the lowest
        loss of the jobs but ``e`` (:meth:`_min_loss`), so while ``e``'s gain is not above that, the
        machines are those ``e`` holds GPUs on and those with a free granule it would take. Otherwise
        the machines whose lowest loss is below the gain are added from a table of every machine's
        (:meth:`_lows`). ``None`` when the pass keeps entries unbuilt (``st.lazy``: most of a large
        cluster's running jobs) and ``e`` could gain from a loss, unless the running jobs are kept across
        passes (``st.kept``): then most machines' lowest losses come from the last passes (no entry is
        built to read them) and the table costs less than the visits it saves."""
        jm = e.jm
        gran = jm.granule
        gain = jm.gain_g(e.g) if e.g < jm.cap else 0.0
        if gain > EPS and st.lazy and st.kept is None:
            return None
        wants_free = min(max(e.floor[GPU], sat), jm.cap) - e.g >= gran
        bar = gain - EPS if gain > EPS and gain - EPS > self._min_loss(st, e) else None
        # the machines but e's own are a function of the state and of (granule, wants_free, bar): kept per
        # state version (a ScheduleJob that failed restores the version, so the next job reads them)
        key = ("act", gran, wants_free, bar)
        hit = st.memo.get(key)
        if hit is not None and hit[0] == st.version:
            base = hit[1]
        else:
            base = set()
            if wants_free:
                free = st.free[GPU]
                base.update(m for m in st.free_gpu if free[m] >= gran)
            if bar is not None:
                base.update(m for m, low in self._lows(st).items() if low < bar)
            st.memo[key] = (st.version, base)
        own = e.units[GPU]
        if not own:
            return base
        return base.union(own)

    def _lows(self, st: PassState) -> dict[str, float]:
        """The lowest loss of every machine (:meth:`_machine_low`) in the current state: a table kept
        across the pass, each machine's row refreshed when its version is not the one the row was read at
        (a machine's version names its state, rollbacks included)."""
        got = st.memo.get("lows")
        dirty = st.mdirty
        if got is None:
            # from the lowest losses kept across passes (st.kept): valid for every machine nothing changed
            # on since the pass began (not in st.mdirty, which nobody cleared before); the rest read now
            kept = st.kept
            got = st.memo["lows"] = {} if kept is None else dict(kept.lows_at(st.now))
            low = self._machine_low
            for m in st.machines:
                if m not in got:
                    got[m] = low(st, m)[0]
            for m in dirty:
                got[m] = low(st, m)[0]
            dirty.clear()
            if self.check_residents:
                assert got == {m: self._scan_machine_low(st, m)[0] for m in st.machines}, "lows"
            return got
        if dirty:  # (st.mdirty: the machines whose version changed since, rollbacks included)
            for m in dirty:
                got[m] = self._machine_low(st, m)[0]
            dirty.clear()
        return got

    def _machine_low(self, st: PassState, m: str) -> tuple[float, str | None]:
        """The lowest GPU loss among the jobs on ``m`` any job may shrink (and whose it is), cached until
        something on ``m`` (or of a job on ``m``) changes. A job whose entry is not built yet is read from
        its record, as the entry would be (reading it builds nothing). While nothing on ``m`` changed in
        the pass, the answer is also kept across passes (``st.kept.lows``): until a job on ``m``
        comes, goes or changes status, or one of them passes the penalty rule (:meth:`_low_until`)."""
        memo = st.lowmemo
        hit = memo.get(m)
        mv = st.mversion[m]
        if hit is not None and hit[0] == mv:
            return hit[1]
        res = st.kept if mv == 0 else None
        if res is not None:
            kept = res.lows.get(m)
            if kept is not None and st.now < kept[1]:
                if self.check_residents:
                    assert kept[0] == self._scan_machine_low(st, m), m
                memo[m] = (mv, kept[0])
                return kept[0]
        best = self._scan_machine_low(st, m)
        if res is not None:
            res.keep_low(m, best, self._low_until(st, m))
        memo[m] = (mv, best)
        return best

    def _low_until(self, st: PassState, m: str) -> float:
        """Until when :meth:`_machine_low` of ``m`` stays what it is if nothing on ``m`` changes: the
        earliest time a running job there that the penalty rule locks now passes it (its training
        seconds grow with the clock), less a second's margin; ``inf`` if none will."""
        until = math.inf
        entries, lazy, movers = st.entries, st.lazy, st.kept.movers
        now = st.now
        for jid in st.on_machine[m]:
            record = lazy.get(jid) or movers.get(jid)
            if record is None:
                v = dict.get(entries, jid)
                if v is None:
                    return now
                jv = v.jv
            else:
                jv = record[3]
            if jv.status is not JobStatus.RUNNING or self.reconfigurable(jv):
                continue
            n = jv.reconfigurations + (jv.preemptions if self.count_preemptions else 0)
            due = n * self.delta_s / (1 - self.threshold) - jv.executed_time
            until = min(until, now + due - 1.0)
        return until

    def _scan_machine_low(self, st: PassState, m: str) -> tuple[float, str | None]:
        """:meth:`_machine_low` by a scan of the jobs on ``m``."""
        best: tuple[float, str | None] = (math.inf, None)
        if self.mode.elastic:
            entries, lazy = st.entries, st.lazy
            for jid in st.on_machine[m]:
                v = dict.get(entries, jid)
                if v is None:  # (loss, jid, shrinkable, view, seq, floor, slo, template): _running_entry's
                    loss, _, shrinkable, jv, _, _, _, tpl = lazy[jid]
                    if (shrinkable and loss < best[0] and tpl[2].get(m, 0) >= tpl[1].granule
                            and jv.status is JobStatus.RUNNING and self.reconfigurable(jv)):
                        best = (loss, jid)
                    continue
                if v.frozen or v.locked or v.preempted or v.on(GPU, m) < v.jm.granule \
                        or v.g - v.jm.granule < v.floor[GPU]:
                    continue
                loss = v.jm.loss_g(v.g)
                if loss < best[0]:
                    best = (loss, v.jid)
        return best

    def _victim(self, st: PassState, e: Entry, r: int, m: str, need: bool,
                skip: set[str]) -> tuple[Entry | None, bool, float]:
        """GetLowestSlopeOverMinJob: the job on ``m`` with the lowest loss of a unit of ``r`` that is above
        its own minRes. Penalty-locked best-effort jobs qualify only for a guaranteed job below its
        minRes (they are then preempted whole), after every other job."""
        best: Entry | None = None
        best_key: tuple = ()
        for v in st.residents(m):
            if v is e or v.frozen or v.preempted or v.jid in skip:
                continue
            if r == GPU:
                k = v.jm.granule
                if v.on(GPU, m) < k or v.g - k < v.floor[GPU]:
                    continue
                loss = v.jm.loss_g(v.g)
            else:
                if not v.jm.elastic or v.on(CPU, m) <= v.on(GPU, m) * MIN_CPUS_PER_GPU or v.c <= v.floor[CPU]:
                    continue
                loss = v.jm.loss_c(v.g, v.c)
            enforce = need and e.slo and not v.guaranteed and r == GPU  # a guarantee may preempt best-effort
            if not self.mode.elastic and not enforce:
                continue  # Rubick-E/-N never reallocate a running job's resources
            penalised = v.locked
            if penalised and not enforce:
                continue
            key = (penalised, loss, v.seq)
            if best is None or key < best_key:
                best, best_key = v, key
        return (best, best_key[0], best_key[1]) if best is not None else (None, False, math.inf)


def _shrinkable(v: Entry) -> bool:
    """May a pass take a GPU granule from ``v`` at all (``_min_loss``'s test)?"""
    g = v.totals[GPU]
    return not (v.frozen or v.locked or v.preempted or g == 0 or g - v.jm.granule < v.floor[GPU])


__all__ = ["VictimSearch"]
