"""Greedy packing of chosen joint options onto the real machines (stage 2a of the two-stage solve).

Given one option per job (or "keep the running allocation", or "hold": preempted, its running
resources held until its checkpoint under the holding rule), place them largest first: running
allocations that are kept go where they are, held ones stay out of the allocation but keep theirs; a one-machine option takes the machine with the fewest
free GPUs that holds it (and its CPUs and memory); a spread option takes, inside the rack with the
most free GPUs (rack tier) or anywhere (network tier), pieces that are multiples of its divisor on the
machines with the most free GPUs, CPUs and memory in proportion (with a rack granule: rack by rack,
a multiple of the granule per rack). A job that does not fit is left
queued. When every job fits, the allocation is worth exactly the class relaxation's value, so the
two-stage solve is done; otherwise the *repair* (``repair=True``) gives each job that did not fit its
fastest other admissible option that fits the leftover capacity, and that allocation warm-starts the
packing MIP. One-machine options look machines
up by free GPUs (buckets), not by a scan; spread options are O(jobs x machines).
"""

from __future__ import annotations

import bisect
from bisect import insort
from collections import defaultdict
from collections.abc import Mapping

from schedlab.formulations.joint_common import keep_value, option_value, priced_allocation
from schedlab.formulations.joint_instance import JobOption, JointInstance
from schedlab.scheduling.allocation import Allocation
from schedlab.topology.tiers import Tier


def pack_greedy(inst: JointInstance, chosen: Mapping[str, JobOption | str], *, repair: bool = False) -> Allocation:
    """Place the chosen options (module docstring). ``repair``: then give each chosen job that did not
    fit its fastest other admissible option that fits the leftover capacity (jobs by the value of
    their chosen option, highest first): a better incumbent than leaving them queued.

    Under the holding rule a running job left out still holds its running resources, which the packing
    of the other jobs may already have taken (its own reconfigured option was expected to free them):
    such an allocation does not verify. So the repair first ties every running job under the rule that
    did not fit to its running resources (kept where it may keep them, else held) and packs again,
    until no such job misses; only then do the other jobs that missed try their other options."""
    if not repair:
        return _pack(inst, chosen, False)[0]
    tie: dict[str, str] = {}
    for _ in range(len(chosen) + 1):
        _, missed = _pack(inst, {**chosen, **tie}, False)
        new = {jid: ("keep" if keep_value(inst, inst.base.job(jid)) is not None else "hold")
               for jid, _ in missed if inst.holds(inst.base.job(jid))}
        if not new:
            break
        tie.update(new)
    return _pack(inst, {**chosen, **tie}, True)[0]


def _pack(inst: JointInstance, chosen: Mapping[str, JobOption | str], repair: bool
          ) -> tuple[Allocation, list[tuple[str, JobOption]]]:
    """The greedy packing, and the chosen jobs that did not fit (before any repair)."""
    base = inst.base
    cl = base.cluster
    mach = [m for m in inst.eligible_machines if base.capacity(m).gpus > 0]
    free = {m: [base.capacity(m).gpus, base.capacity(m).cpus, base.capacity(m).mem_gb] for m in mach}
    racks: dict[str, list[str]] = defaultdict(list)
    for m in mach:
        racks[cl.rack_of(m)].append(m)
    out = []
    for jid, ch in chosen.items():  # kept allocations first: they do not move; held ones stay out
        if ch == "keep" or ch == "hold":
            cur = base.current[jid]
            if ch == "keep":
                out.append(cur)
            for m, r in cur.placement.items():
                if m in free:
                    free[m] = [free[m][0] - r.gpus, free[m][1] - r.cpus, free[m][2] - r.mem_gb]
    bucket = _ByFree({m: free[m][0] for m in mach})

    def place(jid: str, o: JobOption) -> bool:
        cpg, mpg = o.cpus / o.gpus, o.mem_gb / o.gpus
        if o.single:
            m = bucket.first_fit(o, free)
            if m is None:
                return False
            gpus = {m: o.gpus}
        else:
            groups = list(racks.values()) if o.tier is Tier.RACK and len(racks) > 1 else [mach]
            got = None
            if o.granule != o.divisor and o.tier is Tier.NETWORK:
                got = _spread_racks(o, list(racks.values()), free, cpg, mpg)
            else:
                for ms in sorted(groups, key=lambda ms: -sum(free[m][0] for m in ms)):
                    got = _spread(o, ms, free, cpg, mpg)
                    if got is not None:
                        break
            if got is None:
                return False
            gpus = got
        cpus = _integral_share(o.cpus, gpus)
        mem = {m: o.mem_gb * k / o.gpus for m, k in gpus.items()}
        for m, k in gpus.items():
            bucket.move(m, free[m][0], free[m][0] - k)
            free[m] = [free[m][0] - k, free[m][1] - cpus[m], free[m][2] - mem[m]]
        out.append(priced_allocation(inst, base.job(jid), o, gpus, cpus, mem))
        return True

    todo = sorted(((jid, o) for jid, o in chosen.items() if isinstance(o, JobOption)), key=lambda t: (-t[1].gpus, t[0]))
    missed = [(jid, o) for jid, o in todo if not place(jid, o)]
    if repair and missed:
        for jid, o in sorted(missed, key=lambda t: (-option_value(inst, base.job(t[0]), t[1]), t[0])):
            room = sum(f[0] for f in free.values())
            alts = sorted((a for _, a in inst.admissible(base.job(jid)) if a.gpus <= room and a != o),
                          key=lambda a: -a.throughput)
            for a in alts:
                if place(jid, a):
                    break
    return Allocation.of(out), missed


class _ByFree:
    """Machines bucketed by free GPUs, names sorted in each bucket: the one-machine rule "fewest free
    GPUs that hold the option, then the smallest name" without scanning every machine per job."""

    def __init__(self, free_gpus: Mapping[str, int]) -> None:
        self.buckets: dict[int, list[str]] = defaultdict(list)
        for m, g in free_gpus.items():
            self.buckets[g].append(m)
        for b in self.buckets.values():
            b.sort()

    def move(self, m: str, old: int, new: int) -> None:
        b = self.buckets[old]
        del b[bisect.bisect_left(b, m)]
        insort(self.buckets[new], m)

    def first_fit(self, o: JobOption, free: Mapping[str, list]) -> str | None:
        for g in sorted(k for k, b in self.buckets.items() if k >= o.gpus and b):
            for m in self.buckets[g]:
                if free[m][1] >= o.cpus and free[m][2] >= o.mem_gb - 1e-9:
                    return m
        return None


def _room(m: str, free: dict, cpg: float, mpg: float) -> int:
    return min(free[m][0], int(max(0, free[m][1] - 1) // cpg) if cpg else free[m][0],  # 1 CPU for rounding
               int((free[m][2] + 1e-9) // mpg) if mpg else free[m][0])


def _spread_racks(o: JobOption, racks: list[list[str]], free: dict, cpg: float, mpg: float
                  ) -> dict[str, int] | None:
    """Network tier with a rack granule: per rack (most room first) a multiple of the granule, as pieces
    (multiples of the divisor) on its machines with the most room; ``None`` if it does not fit."""
    left, gpus = o.gpus, {}
    rooms = {m: _room(m, free, cpg, mpg) // o.divisor * o.divisor for ms in racks for m in ms}
    for ms in sorted(racks, key=lambda ms: (-sum(rooms[m] for m in ms), ms[0])):
        take = min(left, sum(rooms[m] for m in ms)) // o.granule * o.granule
        left -= take
        for m in sorted(ms, key=lambda m: (-rooms[m], m)):
            k = min(take, rooms[m])
            if k > 0:
                gpus[m] = k
                take -= k
        if left == 0:
            return gpus
    return None


def _spread(o: JobOption, machines: list[str], free: dict, cpg: float, mpg: float) -> dict[str, int] | None:
    """Pieces (multiples of the divisor) on the machines with the most room, or ``None``."""
    left, gpus = o.gpus, {}
    for m in sorted(machines, key=lambda m: (-free[m][0], m)):
        room = _room(m, free, cpg, mpg)
        k = min(left, room) // o.divisor * o.divisor
        if k > 0:
            gpus[m] = k
            left -= k
        if left == 0:
            return gpus
    return None


def _integral_share(cpus: int, gpus: Mapping[str, int]) -> dict[str, float]:
    """Whole CPUs in proportion to GPUs, rounded up on every machine but the last (never below the
    proportional share, so the total still meets the option)."""
    tot = sum(gpus.values())
    out, left = {}, cpus
    items = list(gpus.items())
    for i, (m, k) in enumerate(items):
        c = left if i == len(items) - 1 else min(left, -(-cpus * k // tot))
        out[m] = float(c)
        left -= c
    return out


__all__ = ["pack_greedy"]
