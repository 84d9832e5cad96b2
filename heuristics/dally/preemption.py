"""Dally's network-sensitive preemption (§4.3.1, §5.2.3): which running jobs a slowed job may
preempt, and the claim it then holds on the freed domain.

The paper states the rule only as "preemption uses the same priority" and its effect as "prioritizes
providing better-consolidated placements to jobs suffering from sub-optimal placements". Ours
(:mod:`.policy`, step 3): a claimant (queued, or running below its best level) with ``Nw_sens = x``
may preempt RUNNING jobs past their lease with ``Nw_sens > x + margin``, inside one domain of its
best level, the fewest GPUs (then the fewest jobs) that make ``free + own + preempted >= g``;
lowest priority (highest ``Nw_sens``) first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedlab.heuristics.dally.delay import Levels, Offer
from schedlab.heuristics.dally.priority import job_nw_sens
from schedlab.scheduling.policy import ClusterView, JobStatus


@dataclass
class Claim:
    """Running jobs preempted for ``job``: it gets ``machines`` (one domain of ``level``) once they left."""

    job: str
    level: int
    domain: str
    machines: tuple[str, ...]
    victims: set[str] = field(default_factory=set)



class VictimIndex:
    """Running jobs that may be preempted (RUNNING, past their lease), by domain of each level,
    lowest priority (highest ``Nw_sens``) first. Built once per pass, only when some job looks for victims."""

    def __init__(self, view: ClusterView, levels: Levels, *, exclude: set[str], lease: float = 0.0) -> None:
        self.levels = levels
        since = view.now - lease
        self.by_domain: list[dict[str, list[tuple[float, str, int]]]] = [{} for _ in range(len(levels) + 1)]
        self.removed: set[str] = set()
        for jv in view.running():
            if jv.status is not JobStatus.RUNNING or jv.id in exclude or jv.allocation is None:
                continue
            changed = jv.last_change if jv.last_change is not None else jv.last_start
            if lease > 0 and changed is not None and changed > since:
                continue   # inside its lease
            nw = job_nw_sens(jv)
            counts = jv.allocation.gpu_counts
            for k, lv in enumerate(levels.levels):
                per: dict[str, int] = {}
                for m, g in counts.items():
                    d = lv.domain_of[m]
                    per[d] = per.get(d, 0) + g
                for d, g in per.items():
                    self.by_domain[k].setdefault(d, []).append((-nw, jv.id, g))
            self.by_domain[levels.top].setdefault("", []).append((-nw, jv.id, sum(counts.values())))
        for per in self.by_domain:
            for lst in per.values():
                lst.sort()

    def remove(self, jid: str) -> None:
        self.removed.add(jid)

    def choose(self, offer: Offer, k: int, g: int, threshold: float, own: dict[str, int],
               who: str) -> tuple[str, list[str]] | None:
        """The domain of level ``k`` where preempting the fewest GPUs of jobs with ``Nw_sens >
        threshold`` (lowest priority first) gives ``g`` GPUs with the free ones (and the claimant's
        own GPUs there); ``None`` if no domain can."""
        levels = self.levels
        best: tuple[int, int, str, list[str]] | None = None
        blocked = offer.blocked
        for d, lst in self.by_domain[k].items():
            if blocked and (k == levels.top or any(m in blocked for m in levels[k].members[d])):
                continue   # another claim holds (part of) this domain
            if k < levels.top:
                free = offer.domain_free(levels[k], d)
                mine = sum(n for m, n in own.items() if levels[k].domain_of[m] == d)
            else:
                free = offer.free_gpus
                mine = sum(own.values())
            have = free + mine
            if have >= g:
                continue   # would have been served by the offer: not a preemption case
            chosen: list[str] = []
            took = 0
            for neg, jid, n in lst:
                if -neg <= threshold:
                    break
                if jid in self.removed or jid == who:
                    continue
                chosen.append(jid)
                took += n
                if have + took >= g:
                    break
            if have + took >= g and (best is None or (took, len(chosen)) < (best[0], best[1])):
                best = (took, len(chosen), d, chosen)
        if best is None:
            return None
        return best[2], best[3]


__all__ = ["Claim", "VictimIndex"]
