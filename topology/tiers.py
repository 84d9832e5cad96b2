"""Network tiers of a hierarchical GPU cluster."""

from __future__ import annotations

from enum import IntEnum

from schedlab.topology.errors import SpecError


class Tier(IntEnum):
    """The smallest part of the network that contains all GPUs of a placement.

    Ordered: ``MACHINE < RACK < NETWORK`` (higher tier = slower, more contended links).
    """

    MACHINE = 1
    RACK = 2
    NETWORK = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str | int | Tier, *, source: str = "<input>", field: str = "tier") -> Tier:
        if isinstance(value, Tier):
            return value
        if isinstance(value, int):
            try:
                return cls(value)
            except ValueError:
                pass
        elif isinstance(value, str) and value.strip().upper() in cls.__members__:
            return cls[value.strip().upper()]
        raise SpecError(f"unknown tier {value!r}; expected one of machine, rack, network",
                        source=source, field=field)


__all__ = ["Tier"]
