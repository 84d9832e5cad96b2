"""Pause Python's cyclic garbage collector while a replay (or a trace load) builds millions of
long-lived objects.

A Philly replay keeps ~1.2 M tracked objects alive (jobs, runtimes, views, records) and frees almost
none through the cycle collector (a full table frees 5 cyclic objects); yet with the collector on, the
interpreter traverses the young objects every 700 allocations and the whole heap at every full
collection: about a third of a replay's CPU time (issue 25's profile). :class:`PausedGC` turns the
automatic collector off for the duration of a ``with`` block and restores the state it found; a
long-running caller calls :meth:`PausedGC.tick` now and then, which collects the young generations
once ``young_limit`` tracked objects have accumulated since the last collection, so a policy that
does create cyclic garbage (a solver model per decision) still has it collected, in large batches.
Reference counting, which frees almost everything, is not affected; nor are results (nothing in a
replay depends on when a cycle is freed).
"""

from __future__ import annotations

import gc

YOUNG_LIMIT = 1_000_000


class PausedGC:
    """``with PausedGC(): ...``: the automatic cyclic collector off inside, as it was after (nested
    pauses and a collector already off are left alone)."""

    __slots__ = ("young_limit", "_was")

    def __init__(self, young_limit: int = YOUNG_LIMIT) -> None:
        self.young_limit = young_limit
        self._was = False

    def __enter__(self) -> PausedGC:
        self._was = gc.isenabled()
        gc.disable()
        return self

    def tick(self) -> None:
        """Collect the young generations (0 and 1) once ``young_limit`` objects are pending."""
        if gc.get_count()[0] >= self.young_limit:
            gc.collect(1)

    def __exit__(self, *exc: object) -> None:
        if self._was:
            gc.enable()


__all__ = ["PausedGC", "YOUNG_LIMIT"]
