"""The canonical placements of the joint option classes (``joint_layout.layout``): exact gcds, and found
whenever the cluster has such a placement (brute force over every placement of small clusters)."""

from __future__ import annotations

import itertools
import math
from functools import reduce

import pytest

from schedlab.formulations.joint_layout import layout
from schedlab.topology.tiers import Tier


def racks_of(shape: tuple[int, ...]) -> list[list[str]]:
    return [[f"r{i}-m{k}" for k in range(n)] for i, n in enumerate(shape)]


def exact(pl: dict[str, int], g: int, q: int, r: int | None, tier: Tier) -> bool:
    per_rack: dict[str, int] = {}
    for m, k in pl.items():
        per_rack[m.split("-")[0]] = per_rack.get(m.split("-")[0], 0) + k
    ok = sum(pl.values()) == g and reduce(math.gcd, pl.values()) == q and len(pl) >= 2
    if tier is Tier.RACK:
        return ok and len(per_rack) == 1
    return ok and len(per_rack) >= 2 and (r is None or reduce(math.gcd, per_rack.values()) == r)


@pytest.mark.parametrize("shape,per", [((2, 2), 4), ((1, 1, 1), 4), ((3, 1), 2), ((2, 2, 2), 2), ((1, 2), 8)])
def test_layout_is_exact_and_complete(shape, per):
    racks = racks_of(shape)
    machines = [m for ms in racks for m in ms]
    seen: set[tuple] = set()  # (tier, g, q, r) realised by some placement
    for vec in itertools.product(range(per + 1), repeat=len(machines)):
        pl = {m: k for m, k in zip(machines, vec, strict=True) if k}
        if len(pl) < 2:
            continue
        g = sum(pl.values())
        q = reduce(math.gcd, pl.values())
        per_rack: dict[str, int] = {}
        for m, k in pl.items():
            per_rack[m.split("-")[0]] = per_rack.get(m.split("-")[0], 0) + k
        if len(per_rack) == 1:
            seen.add((Tier.RACK, g, q, None))
        else:
            seen.add((Tier.NETWORK, g, q, reduce(math.gcd, per_rack.values())))
            seen.add((Tier.NETWORK, g, q, None))
    total = per * len(machines)
    for tier in (Tier.RACK, Tier.NETWORK):
        for g in range(2, total + 1):
            for q in range(1, per + 1):
                for r in [None] + list(range(q, g + 1, q)):
                    if tier is Tier.RACK and r is not None:
                        continue
                    pl = layout(racks, per, g, q, r, tier)
                    assert (pl is not None) == ((tier, g, q, r) in seen), (tier, g, q, r, pl)
                    if pl is not None:
                        assert exact(pl, g, q, r, tier) and all(k <= per for k in pl.values())
