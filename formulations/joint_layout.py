"""Canonical placements of the joint option classes (:mod:`formulations.joint_options`): a placement of
``g`` GPUs on the cluster's racks and machines whose per-machine counts have gcd exactly ``q`` and whose
per-rack counts have gcd exactly ``r`` (units of ``q`` per machine, of ``r`` per rack; a memoised
search over GPUs per rack, then per machine)."""

from __future__ import annotations

import math
from functools import cache, lru_cache

from schedlab.topology.tiers import Tier


def chunks(rest: int, q: int, per: int) -> list[int]:
    k = (per // q) * q
    return [k] * (rest // k) + ([rest % k] if rest % k else [])


@lru_cache(maxsize=256)
def _rack_splits(machines: int, cap: int, units: int) -> dict[int, tuple[int, ...]]:
    """Splits of ``units`` over at most ``machines`` machines of ``cap`` units each: gcd of the parts ->
    one split with that gcd (parts descending)."""
    out: dict[int, tuple[int, ...]] = {}

    def rec(left: int, top: int, slots: int, parts: tuple[int, ...]) -> None:
        if left == 0:
            out.setdefault(math.gcd(*parts), parts)
            return
        if slots == 0 or top * slots < left:
            return
        for k in range(min(top, left), 0, -1):
            rec(left - k, k, slots - 1, parts + (k,))

    if units > 0:
        rec(units, cap, machines, ())
    return out


@cache
def _shape(machines: tuple[int, ...]) -> tuple[int, ...]:
    """One tuple object per cluster shape (the search's memo keys share it)."""
    return machines


@cache
def _room(machines: tuple[int, ...], cap: int, ru: int) -> tuple[int, ...]:
    """Granules racks ``i..`` can hold at most, per ``i``."""
    out = [0]
    for m in reversed(machines):
        out.append(out[-1] + m * cap // ru)
    return tuple(reversed(out))


@cache
def _search(machines: tuple[int, ...], cap: int, ru: int, exact: bool, i: int, left: int, ga: int, gp: int,
            used: int) -> tuple[tuple[int, int], ...] | None:
    """Racks ``i..`` (``machines`` per rack, ``cap`` units of q per machine) take ``left`` units of the
    granule (``ru`` units of q each): per rack ``(granules, gcd of its machine split)``, so that >= 2 racks
    are used, the machine parts have gcd 1 and (``exact``) the rack totals too; ``None`` if impossible.
    Memoised across calls (the same cluster shape serves every GPU count and class)."""
    if left == 0:
        return () if used >= 2 and gp == 1 and (not exact or ga == 1) else None
    if i == len(machines) or left > _room(machines, cap, ru)[i]:
        return None
    for a in range(min(left, machines[i] * cap // ru), -1, -1):
        splits = _rack_splits(machines[i], cap, a * ru) if a else {0: ()}
        for h in splits:
            got = _search(machines, cap, ru, exact, i + 1, left - a, math.gcd(ga, a) if exact else 0,
                          math.gcd(gp, h), min(2, used + (a > 0)))
            if got is not None:
                return ((a, h),) + got
    return None


def layout(racks: list[list[str]], per: int, g: int, q: int, r: int | None, tier: Tier) -> dict[str, int] | None:
    """A placement of ``g`` GPUs at ``tier`` (rack: inside one rack, on >= 2 machines; network: on >= 2
    racks) whose per-machine counts have gcd exactly ``q`` and, with ``r``, whose per-rack counts have gcd
    exactly ``r`` (``None``: any multiple of ``q``); ``None`` when the cluster has none (a small
    memoised search over GPUs per rack, then per machine)."""
    cap = per // q
    if g % q or cap == 0:
        return None
    n = g // q  # units of q
    if tier is Tier.RACK:
        for ms in sorted(racks, key=len, reverse=True):
            parts = _rack_splits(len(ms), cap, n).get(1)
            if parts is not None and len(parts) >= 2:
                return {m: k * q for m, k in zip(ms, parts, strict=False)}
        return None
    ru = (r or q) // q  # rack granule in units of q
    if (r or q) % q or n % ru:
        return None
    picks = _search(_shape(tuple(len(ms) for ms in racks)), cap, ru, r is not None, 0, n // ru, 0, 0, 0)
    if picks is None:
        return None
    out: dict[str, int] = {}
    for ms, (a, h) in zip(racks, picks, strict=False):
        if a:
            out.update({m: k * q for m, k in zip(ms, _rack_splits(len(ms), cap, a * ru)[h], strict=False)})
    return out


__all__ = ["chunks", "layout"]
