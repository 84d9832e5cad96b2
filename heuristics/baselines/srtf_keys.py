"""SRTF/SRSF's keys on an integer clock: whole microseconds, so keys that are tied stay exactly tied.

A running job's remaining time (seconds at its requested resources) falls linearly between the events
that change its motion: with progress ``p`` iterations at time ``m`` and rate ``r`` iterations/s,
``remaining(t) = (I_it - p - r (t - m)) x D / I_it`` (``D`` the duration, ``I_it`` the iterations), a
line of slope ``s = r x D / I_it`` (1 at the requested placement, below 1 on a slower spread one).
Computed in floats from each job's own ``(p, m)``, two jobs with the same remaining time differ by a
rounding error that flips from event to event (session 7: 68-70 % of the pairs out of order between
decisions were such swaps). Here instead, with ``T = round(t x 10^6)`` (the clock in whole µs):

* at each change of motion (start, restore done, checkpoint, preemption: whenever ``(p, r, m)`` is
  re-read) the job is *anchored*: ``K0 = round(remaining(m) x 10^6)`` whole µs,
  ``s_q = round(s x 2^40) / 2^40`` (the slope on a grid of 2^-40, so the float noise of
  ``r x D / I_it`` — a few ulps around the same true slope — gives one value), and the intercept
  ``A = K0 + round(s_q x M)`` with ``M = round(m x 10^6)``; a job not moving has ``s_q = 0``, ``A = K0``;
* its key at ``T`` is ``max(A - round(s_q x T), 0)`` whole µs (SRTF), times its GPUs for SRSF (GPU-µs).

``round(s_q x T)`` is one integer for every job of the slope class ``s_q`` at a given ``T``, so within
a class the order of the keys is the order of the intercepts, fixed between anchors, and two jobs with
the same intercept (e.g. the same duration started together, or a 100 s job at 0 and a 50 s job at 50)
are tied *exactly* at every event: the tie rule (the stable sort's previous order, new jobs last)
decides, not the rounding. The key at the anchor is ``K0`` exactly, and between anchors it differs from
the float ``remaining(t)`` by less than 1 µs plus ``|s - s_q| x (T - M)`` (< 10^-12 relative): the
semantics change only where jobs' remaining times are within about 1 µs of each other (the
artifact's own times are whole seconds). Keys never increase between anchors (``round(s_q x T)`` is
non-decreasing in ``T``).
"""

from __future__ import annotations

US = 1_000_000
SLOPE_GRID = float(2 ** 40)


def clock(t: float) -> int:
    """``t`` seconds on the integer clock (whole µs)."""
    return round(t * US)


def anchor(p: float, r: float, m: float, moving: bool, iterations: float, duration: float) -> tuple[int, float]:
    """``(A, s_q)`` of a job with progress ``p`` at ``m`` and rate ``r`` (module docstring)."""
    k0 = round(max(iterations - p, 0.0) * duration / iterations * US)
    if not moving:
        return k0, 0.0
    s = round(r * duration / iterations * SLOPE_GRID) / SLOPE_GRID
    return k0 + round(s * clock(m)), s


def key_at(a: int, s: float, t_us: int, gpus: int, weighted: bool) -> int:
    """The key at ``t_us``: remaining whole µs (SRTF), times the GPUs for SRSF."""
    k = a - round(s * t_us) if s else a
    k = k if k > 0 else 0
    return k * gpus if weighted else k


__all__ = ["SLOPE_GRID", "US", "anchor", "clock", "key_at"]
