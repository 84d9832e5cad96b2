"""Multi-resource amounts: GPUs, CPU cores, host memory (GB)."""

from __future__ import annotations

from dataclasses import dataclass

from schedlab.topology.errors import SpecError

_EPS = 1e-9


@dataclass(frozen=True, slots=True, order=False)
class Resources:
    """An amount of resources. ``gpus`` and ``cpus`` are whole units, ``mem_gb`` is host memory in GB.

    ``a <= b`` is component-wise (fits), ``a + b`` / ``a - b`` are component-wise.
    """

    gpus: int = 0
    cpus: int = 0
    mem_gb: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.gpus, int) or not isinstance(self.cpus, int):
            raise SpecError(f"gpus and cpus must be integers, got {self.gpus!r}, {self.cpus!r}",
                            source="<Resources>", field="gpus/cpus")

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.gpus + other.gpus, self.cpus + other.cpus, self.mem_gb + other.mem_gb)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.gpus - other.gpus, self.cpus - other.cpus, self.mem_gb - other.mem_gb)

    def __le__(self, other: Resources) -> bool:  # type: ignore[override]
        return (self.gpus <= other.gpus and self.cpus <= other.cpus
                and self.mem_gb <= other.mem_gb + _EPS)

    def __ge__(self, other: Resources) -> bool:  # type: ignore[override]
        return other <= self

    def scale(self, k: int) -> Resources:
        return Resources(self.gpus * k, self.cpus * k, self.mem_gb * k)

    def is_nonnegative(self) -> bool:
        return self.gpus >= 0 and self.cpus >= 0 and self.mem_gb >= -_EPS

    def is_zero(self) -> bool:
        return self.gpus == 0 and self.cpus == 0 and abs(self.mem_gb) <= _EPS

    def exceeded(self, capacity: Resources) -> list[str]:
        """Names of the resources in which ``self`` exceeds ``capacity``."""
        out = []
        if self.gpus > capacity.gpus:
            out.append("gpus")
        if self.cpus > capacity.cpus:
            out.append("cpus")
        if self.mem_gb > capacity.mem_gb + _EPS:
            out.append("mem_gb")
        return out

    def as_dict(self) -> dict[str, float]:
        return {"gpus": self.gpus, "cpus": self.cpus, "mem_gb": self.mem_gb}

    @classmethod
    def total(cls, items) -> Resources:
        g = c = 0
        m = 0.0
        for r in items:
            g += r.gpus
            c += r.cpus
            m += r.mem_gb
        return cls(g, c, m)


ZERO = Resources()
