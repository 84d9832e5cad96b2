"""Seeds of a paper suite: every case of a reproduction runs over several seeds (the workload's, the
placement's and the policy's seed move together), so that a ratio is a mean over seeds with an interval.

The first seed's cases keep their plain labels (``testbed/realistic/2d-las``: what each suite's own
``reproduce`` reads); seed ``s`` of the others is ``<label>@seed=<s>``. :func:`split_seed` undoes it
(the reproduction report groups a label's seeds and pairs numerator and denominator by seed)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

from schedlab.benchmarks.harness.cases import ReplayCase
from schedlab.topology.errors import SpecError

SEED_TAG = "@seed="


def seed_values(seeds: int | Sequence[int], base: int, *, suite: str) -> tuple[int, ...]:
    """``seeds``: a count n (seeds ``base .. base + n - 1``) or the seeds themselves."""
    if isinstance(seeds, bool):
        raise SpecError(f"seeds must be a count >= 1 or a list of seeds >= 0, got {seeds!r}",
                        source=f"<suite {suite}>", field="seeds")
    if isinstance(seeds, int):
        if seeds < 1:
            raise SpecError(f"seeds must be >= 1, got {seeds}", source=f"<suite {suite}>", field="seeds")
        return tuple(range(base, base + seeds))
    out = tuple(seeds)
    if not out or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in out) or len(set(out)) != len(out):
        raise SpecError(f"seeds must be distinct integers >= 0, got {seeds!r}", source=f"<suite {suite}>",
                        field="seeds")
    return out


def seed_label(label: str, seed: int, first: int) -> str:
    return label if seed == first else f"{label}{SEED_TAG}{seed}"


def split_seed(label: str) -> tuple[str, int | None]:
    """``(plain label, seed)``; the seed is None for the first seed's (unsuffixed) label."""
    base, sep, s = label.rpartition(SEED_TAG)
    if sep and s.isdigit():
        return base, int(s)
    return label, None


def over_seeds(cases_for: Callable[[int], Iterable[ReplayCase]], seeds: Sequence[int]) -> list[ReplayCase]:
    """``cases_for(seed)`` for every seed, relabelled (the first seed's labels unchanged)."""
    out: list[ReplayCase] = []
    for s in seeds:
        out += [c if s == seeds[0] else dataclasses.replace(c, label=seed_label(c.label, s, seeds[0]))
                for c in cases_for(s)]
    return out


__all__ = ["SEED_TAG", "over_seeds", "seed_label", "seed_values", "split_seed"]
