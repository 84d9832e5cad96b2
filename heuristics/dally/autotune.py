r"""Dally's delay timers: the auto-tuner (Algorithm 2) and the fixed timers of Dally-manual.

Both answer ``timers(g, now) -> (T_0, T_1, ...)``, one **absolute** starvation threshold per delay
level (level 0 = machine, level 1 = rack; :mod:`.delay`). Algorithm 1 compares the job's whole
starvation with each (lines 10 and 18), so the rack timer is a total, not an increment: Dally-manual's
"12 h machine, another 12 h rack" is ``(12 h, 24 h)``.

**Algorithm 2 (get_tuned_timers), line by line** — :class:`AutoTuner`:

* lines 1, 7 ``get_delay_list(level, G_d)``: one list per (delay level, GPU demand), filled by
  Algorithm 1's ``update_demand_delay`` (lines 7 and 15) with the job's starvation when it accepted an
  offer at that level (:meth:`AutoTuner.record`). Offers accepted at the top level ("network",
  line 21) record nothing, as in the paper.
* lines 2-6, 8-12 (drop entries beyond ``HISTORY_TIME_LIMIT``): the paper calls the limit "the size of
  the wait-time list ... (sliding window size)" and advises a *smaller* limit for larger clusters
  "because more jobs get placed over time". We read it as a **sliding time window**: an entry
  recorded ``history_window`` seconds before ``now`` or earlier is removed (it counts during
  ``[recorded_at, recorded_at + window)``: a wake-up at the end of its window sees it gone). (The pseudo-code's literal
  test, ``time > HISTORY_TIME_LIMIT`` on the wait itself, would instead discard long waits — a cap on
  the timer, not a window over history; the text and the issue ask for the window.)
* lines 13-14: ``T = mean(list) + k * stdev(list)`` with ``k = 2`` (parameter ``sigmas``) and the
  **sample** standard deviation (``n - 1`` in the denominator).

**Cold start** (the paper does not say): while a list holds fewer than ``min_samples`` waits (default
2, the fewest for a sample standard deviation), that level's timer is the cold-start value — by
default Dally-manual's timers (12 h machine, 24 h rack in total). With ``min_samples = 1`` a single
wait ``w`` gives ``T = w`` (its standard deviation is taken as 0).

**Skipped levels**: a job larger than every domain of a level (a 16-GPU job on 8-GPU machines) has
timer 0 at that level and every level below it (Dally §4.3.2); no list is kept for it.

Mean and variance are kept as running sums per list, so a query is O(1) amortised (each entry is
added once and dropped once); the variance is clamped at 0 against rounding.

**Expiry is lazy and compositional.** A list is expired (its old entries dropped, their waits subtracted
from the sums, oldest first) before every read and every add, at that instant; expiring at ``t1`` and
later at ``t2`` (nothing added between) subtracts the same waits in the same order as expiring at ``t2``
alone, so when a list is expired does not change its sums. :meth:`AutoTuner.next_change` expires each
list it reads at its own ``now`` before reading the list's oldest entry, so the next window change it
gives is always after ``now``, whichever queries were answered or skipped (:meth:`AutoTuner.skip`, a
query Algorithm 1 did not need, has nothing left to do). Until round 7b a list nobody had queried since
its head left the window gave a time at or before ``now``, and the policy then asked for no timer.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Sequence
from itertools import accumulate

from schedlab.topology.errors import SpecError


class WaitList:
    """The waits of one (level, GPU demand) pair, oldest first: ``(recorded_at, wait)``."""

    __slots__ = ("entries", "total", "total_sq")

    def __init__(self) -> None:
        self.entries: deque[tuple[float, float]] = deque()
        self.total = 0.0
        self.total_sq = 0.0

    def add(self, now: float, wait: float) -> None:
        self.entries.append((now, wait))
        self.total += wait
        self.total_sq += wait * wait

    def expire(self, now: float, window: float) -> None:
        """Algorithm 2 lines 2-6 / 8-12: drop the entries whose window has ended by ``now``
        (``recorded_at + window <= now``: an entry counts during ``[recorded_at, recorded_at + window)``)."""
        e = self.entries
        while e and e[0][0] + window <= now:
            _, w = e.popleft()
            self.total -= w
            self.total_sq -= w * w
        if not e:
            self.total = self.total_sq = 0.0

    def __len__(self) -> int:
        return len(self.entries)

    def mean_plus(self, sigmas: float) -> float:
        """Algorithm 2 lines 13-14: ``average + sigmas x standard_deviation`` (sample std, ddof = 1)."""
        n = len(self.entries)
        mean = self.total / n
        if n < 2:
            return mean
        var = max(0.0, (self.total_sq - n * mean * mean) / (n - 1))
        return mean + sigmas * math.sqrt(var)


class FixedTimers:
    """Dally-manual: ``T_machine = machine_timer``, ``T_rack = machine_timer + rack_timer`` (absolute),
    further levels (none on our topologies) add ``rack_timer`` each. Skipped levels get 0."""

    def __init__(self, steps: Sequence[float], capacities: Sequence[int]) -> None:
        if len(steps) < len(capacities):
            steps = list(steps) + [steps[-1]] * (len(capacities) - len(steps))
        self.absolute = tuple(accumulate(float(s) for s in steps[: len(capacities)]))
        self.capacities = tuple(capacities)

    def timers(self, g: int, now: float) -> tuple[float, ...]:
        return skip_levels(self.absolute, self.capacities, g)

    def record(self, level: int, g: int, wait: float, now: float) -> None:
        """Dally-manual keeps no history (its timers are fixed)."""

    def skip(self, g: int, now: float) -> None:
        """(Nothing expires: fixed timers.)"""

    def next_change(self, now: float, demands: Iterable[int] | None = None) -> float:
        return math.inf


class AutoTuner:
    """Algorithm 2 over per-(level, demand) wait lists (see the module docstring).

    ``cold``: the absolute timer per level while a list has fewer than ``min_samples`` waits.
    ``capacities[k]``: the largest GPU count one domain of level ``k`` holds (skip rule).
    """

    def __init__(self, *, window: float, capacities: Sequence[int], cold: Sequence[float],
                 min_samples: int = 2, sigmas: float = 2.0) -> None:
        if not window > 0:
            raise SpecError(f"history window must be > 0 s, got {window!r}", source="<dally>", field="history_window")
        if min_samples < 1:
            raise SpecError(f"min_samples must be >= 1, got {min_samples!r}", source="<dally>", field="min_samples")
        self.window = float(window)
        self.capacities = tuple(capacities)
        self.cold = tuple(cold)
        self.min_samples = int(min_samples)
        self.sigmas = float(sigmas)
        self.lists: dict[tuple[int, int], WaitList] = {}

    def skip(self, g: int, now: float) -> None:
        """A ``timers(g, now)`` query the caller did not need. Nothing to do: every read and add expires
        a list itself first, and :meth:`next_change` expires every list at its own ``now``."""

    def record(self, level: int, g: int, wait: float, now: float) -> None:
        """Algorithm 1 lines 7 and 15, ``update_demand_delay(level, t_starvation, g_d)``."""
        lst = self.lists.get((level, g))
        if lst is None:
            lst = self.lists[(level, g)] = WaitList()
        e = lst.entries
        window = self.window
        if e and e[0][0] + window <= now:  # (else ``expire`` drops nothing: see ``timers``)
            lst.expire(now, window)
        w = max(0.0, float(wait))   # (``lst.add``, inline)
        e.append((now, w))
        lst.total += w
        lst.total_sq += w * w

    def waits(self, level: int, g: int, now: float) -> list[float]:
        """The waits of the (level, g) list still inside the window at ``now`` (oldest first)."""
        lst = self.lists.get((level, g))
        if lst is None:
            return []
        lst.expire(now, self.window)
        return [w for _, w in lst.entries]

    def timers(self, g: int, now: float) -> tuple[float, ...]:
        """Algorithm 2, ``get_tuned_timers(G_d)``: one absolute timer per level."""
        out = []
        window = self.window
        lists = self.lists
        for k in range(len(self.capacities)):
            lst = lists.get((k, g))
            if lst is None:
                out.append(self.cold[k])                 # cold start (ours; module docstring)
                continue
            e = lst.entries
            if e and e[0][0] + window <= now:            # (else ``expire`` drops nothing: an empty list's
                lst.expire(now, window)                  # sums are already 0) lines 2-6 (k = 0), 8-12 (k = 1)
            if len(e) < self.min_samples:
                out.append(self.cold[k])
            else:
                out.append(lst.mean_plus(self.sigmas))   # lines 13-14
        return skip_levels(out, self.capacities, g)

    def next_change(self, now: float, demands: Iterable[int] | None = None) -> float:
        """The next time an entry leaves its window (timers may change then even without records),
        always strictly after ``now``; with ``demands``, only the lists of those GPU demands (the timers
        of other demands do not depend on them). Each list read is first expired at ``now`` (what any
        query at ``now`` would do; expiry is compositional, so this changes no later timer): an entry
        whose window already ended (a list nobody queried since, or one only skipped) never gives a
        stale time."""
        window = self.window
        if demands is None:
            lists = self.lists.values()
        else:
            got = self.lists.get
            lists = [lst for g in demands for k in range(len(self.capacities))
                     if (lst := got((k, g))) is not None]
        t = math.inf
        for lst in lists:
            e = lst.entries
            if e:
                if e[0][0] + window <= now:
                    lst.expire(now, window)
                    if not e:
                        continue
                head = e[0][0] + window
                if head < t:
                    t = head
        return t


def skip_levels(timers: Sequence[float], capacities: Sequence[int], g: int) -> tuple[float, ...]:
    """Dally §4.3.2: a job that cannot fit in one domain of level ``k`` (``g > capacities[k]``) has
    timer 0 there, and so at every level below ``k`` too (a job larger than a rack is larger than a
    machine)."""
    out = list(timers)
    for k in range(len(capacities) - 1, -1, -1):
        if g > capacities[k]:
            for j in range(k + 1):
                out[j] = 0.0
            break
    return tuple(out)


__all__ = ["AutoTuner", "FixedTimers", "WaitList", "skip_levels"]
