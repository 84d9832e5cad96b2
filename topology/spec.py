"""Immutable cluster specifications (what a cluster *is*, before it becomes a graph).

Units: bandwidth in GB/s (gigabytes per second, per direction, per link), latency in microseconds,
memory in GB. Link specs are per tier: ``MACHINE`` links join GPUs inside one machine (NVLink,
NVSwitch or PCIe), ``RACK`` links join a machine to its rack switch (InfiniBand/RDMA), ``NETWORK``
links join a rack switch to the spine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from schedlab.topology.errors import SpecError
from schedlab.topology.tiers import Tier


def gbit_to_gbyte(gbps: float) -> float:
    """Convert a link rate in Gb/s (as switch datasheets state it) to GB/s."""
    return gbps / 8.0


@dataclass(frozen=True, slots=True)
class LinkSpec:
    """One link class: bandwidth in GB/s and one-way latency in microseconds."""

    bandwidth_gbps: float
    latency_us: float = 0.0

    def __post_init__(self) -> None:
        if not self.bandwidth_gbps > 0:
            raise SpecError(f"bandwidth must be > 0 GB/s, got {self.bandwidth_gbps!r}",
                            source="<LinkSpec>", field="bandwidth_gbps")
        if self.latency_us < 0:
            raise SpecError(f"latency must be >= 0 us, got {self.latency_us!r}",
                            source="<LinkSpec>", field="latency_us")


@dataclass(frozen=True, slots=True)
class MachineSpec:
    """One machine (server): its GPUs, CPU cores, host memory and links.

    ``intra`` is the GPU-to-GPU fabric inside the machine, ``uplink`` the machine's link to its
    rack switch, ``pcie_gbps`` the host<->GPU bandwidth (used by ZeRO-Offload).
    """

    name: str
    rack: str
    gpus: int
    gpu_model: str
    gpu_memory_gb: float
    cpus: int
    host_memory_gb: float
    intra: LinkSpec
    uplink: LinkSpec
    pcie_gbps: float = 32.0


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """A whole cluster: machines (each naming its rack) and each rack's uplink to the spine.

    ``rack_uplinks`` may be empty only when the cluster has a single rack.
    """

    name: str
    machines: tuple[MachineSpec, ...]
    rack_uplinks: Mapping[str, LinkSpec] = field(default_factory=dict)
    source: str = "<spec>"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rack_uplinks", MappingProxyType(dict(self.rack_uplinks)))
        validate_spec(self)

    @property
    def racks(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for m in self.machines:
            seen.setdefault(m.rack, None)
        return tuple(seen)


def validate_spec(spec: ClusterSpec) -> None:
    """Raise :class:`SpecError` naming the source and field of the first problem found."""
    src = spec.source
    if not spec.name:
        raise SpecError("cluster name must not be empty", source=src, field="name")
    if not spec.machines:
        raise SpecError("cluster has no machines", source=src, field="machines")
    names: set[str] = set()
    for i, m in enumerate(spec.machines):
        f = f"machines[{i}]"
        if not m.name:
            raise SpecError("machine name must not be empty", source=src, field=f"{f}.name")
        if m.name in names:
            raise SpecError(f"duplicate machine name {m.name!r}", source=src, field=f"{f}.name")
        names.add(m.name)
        if not m.rack:
            raise SpecError(f"machine {m.name!r} has no rack", source=src, field=f"{f}.rack")
        for attr in ("gpus", "cpus"):
            v = getattr(m, attr)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise SpecError(f"machine {m.name!r}: {attr} must be a non-negative integer, got {v!r}",
                                source=src, field=f"{f}.{attr}")
        for attr in ("gpu_memory_gb", "host_memory_gb", "pcie_gbps"):
            v = getattr(m, attr)
            if not isinstance(v, (int, float)) or v < 0:
                raise SpecError(f"machine {m.name!r}: {attr} must be >= 0, got {v!r}",
                                source=src, field=f"{f}.{attr}")
        if m.gpus > 0 and m.gpu_memory_gb <= 0:
            raise SpecError(f"machine {m.name!r} has GPUs but gpu_memory_gb <= 0",
                            source=src, field=f"{f}.gpu_memory_gb")
    racks = spec.racks
    overlap = names.intersection(racks)
    if overlap:
        raise SpecError(f"name used for both a machine and a rack: {sorted(overlap)[0]!r}",
                        source=src, field="racks")
    if len(racks) > 1:
        for r in racks:
            if r not in spec.rack_uplinks:
                raise SpecError(f"rack {r!r} has no network (spine) link bandwidth",
                                source=src, field=f"links.network (rack {r})")
    for r in spec.rack_uplinks:
        if r not in racks:
            raise SpecError(f"network link given for rack {r!r}, which has no machines",
                            source=src, field=f"racks.{r}")
    if sum(m.gpus for m in spec.machines) == 0:
        raise SpecError("cluster has no GPUs", source=src, field="machines")


TIER_FIELDS: dict[Tier, str] = {Tier.MACHINE: "intra", Tier.RACK: "uplink", Tier.NETWORK: "rack_uplinks"}
