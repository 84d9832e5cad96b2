"""The free-GPU index of a decision point (:class:`FreeIndex`): free GPUs per machine and rack, kept
incrementally by the simulator, queried by policies (best fit, largest machine and rack blocks).
Re-exported by :mod:`schedlab.scheduling.policy`."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Mapping
from types import MappingProxyType

from schedlab.topology.cluster import Cluster


class FreeIndex:
    """Free GPUs per machine and rack, kept incrementally (O(1) updates; best-fit and largest-block
    queries scan free counts up to an upper bound of the largest, which updates raise and queries
    lower: O(max free GPUs on a machine), amortised O(change) for a one-pool cluster's thousands of
    GPUs on one machine). The simulator calls :meth:`_set`; policies only query.

    ``best_fit(g)``: the machine with the fewest free GPUs that still has ``>= g`` (ties: the machine
    that reached that free count first; deterministic).
    """

    __slots__ = ("_cluster", "_free", "_buckets", "_rack_of", "_rack_free", "_total", "_max_cap", "_top",
                 "_rack_max")

    def __init__(self, cluster: Cluster, free: Mapping[str, int]) -> None:
        self._cluster = cluster
        self._max_cap = cluster.max_gpus_per_machine
        self._buckets: list[dict[str, None]] = [dict() for _ in range(self._max_cap + 1)]
        self._rack_of = {m: cluster.rack_of(m) for m in cluster.machines}
        self._rack_free = {r: 0 for r in cluster.racks}
        self._free: dict[str, int] = {}
        for m in cluster.machines:
            g = free[m]
            self._free[m] = g
            self._buckets[g][m] = None
            self._rack_free[self._rack_of[m]] += g
        self._total = sum(self._free.values())
        self._top = max(self._free.values(), default=0)  # >= every machine's free GPUs (lowered lazily)
        self._rack_max: int | None = None  # the largest rack's free GPUs, None when it must be recomputed

    def _set(self, machine: str, gpus: int) -> None:
        old = self._free[machine]
        if old == gpus:
            return
        del self._buckets[old][machine]
        self._buckets[gpus][machine] = None
        if gpus > self._top:
            self._top = gpus
        self._free[machine] = gpus
        rack = self._rack_of[machine]
        was = self._rack_free[rack]
        now = self._rack_free[rack] = was + gpus - old
        top = self._rack_max
        if top is not None:
            if now > top:
                self._rack_max = now
            elif was == top and now < was:
                self._rack_max = None  # the largest may have shrunk: recomputed when asked
        self._total += gpus - old

    # ------------------------------------------------------------- queries
    @property
    def cluster(self) -> Cluster:
        return self._cluster

    @property
    def total(self) -> int:
        return self._total

    def machine(self, machine: str) -> int:
        return self._free[machine]

    def rack(self, rack: str) -> int:
        return self._rack_free[rack]

    def rack_of(self, machine: str) -> str:
        return self._rack_of[machine]

    @property
    def per_machine(self) -> Mapping[str, int]:
        return MappingProxyType(self._free)

    @property
    def per_rack(self) -> Mapping[str, int]:
        return MappingProxyType(self._rack_free)

    def largest_machine_block(self) -> int:
        """The most free GPUs on one machine; scans down from an upper bound kept by :meth:`_set`
        (amortised O(change), not O(GPUs per machine): one-pool clusters have thousands)."""
        for g in range(self._top, 0, -1):
            if self._buckets[g]:
                self._top = g
                return g
        self._top = 0
        return 0

    def largest_rack_block(self) -> int:
        """The most free GPUs in one rack (kept by :meth:`_set`; recomputed only after the largest shrank)."""
        top = self._rack_max
        if top is None:
            top = self._rack_max = max(self._rack_free.values(), default=0)
        return top

    def blocks(self) -> tuple[int, int, int]:
        """``(total, largest_machine_block(), largest_rack_block())`` in one call (the simulator's state
        sample after every pass): the bounds are read directly while they are exact."""
        mb = self._top  # (the upper bound is the answer while that bucket is not empty)
        if not (mb and self._buckets[mb]):
            mb = self.largest_machine_block()
        rb = self._rack_max
        if rb is None:
            rb = self._rack_max = max(self._rack_free.values(), default=0)
        return self._total, mb, rb

    def machines_with(self, gpus: int) -> Iterator[str]:
        """Machines with exactly ``gpus`` free GPUs."""
        if 0 <= gpus <= self._max_cap:
            yield from self._buckets[gpus]

    def best_fit(self, gpus: int, accept: Callable[[str], bool] | None = None) -> str | None:
        """Machine with the fewest free GPUs ``>= gpus`` (and ``accept(machine)`` if given)."""
        for g in range(max(gpus, 1), self._top + 1):
            for m in self._buckets[g]:
                if accept is None or accept(m):
                    return m
        return None

    def best_fit_except(self, gpus: int, skip: Container[str],
                        accept: Callable[[str], bool] | None = None) -> str | None:
        """``best_fit(gpus, accept=lambda m: m not in skip and (accept is None or accept(m)))``, without a
        call per skipped machine (``accept`` is asked only about machines not in ``skip``)."""
        buckets = self._buckets
        for g in range(max(gpus, 1), self._top + 1):
            for m in buckets[g]:
                if m not in skip and (accept is None or accept(m)):
                    return m
        return None

    def machines_by_free(self, rack: str | None = None) -> list[str]:
        """Machines with free GPUs, most free first (ties: cluster order), optionally in one rack."""
        ms = self._cluster.machines if rack is None else self._cluster.machines_in(rack)
        idx = self._cluster.machine_index
        return sorted((m for m in ms if self._free[m] > 0), key=lambda m: (-self._free[m], idx[m]))


__all__ = ["FreeIndex"]
