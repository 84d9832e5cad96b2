"""Immutable cluster specifications (what a cluster *is*, before it becomes a graph).

Units: bandwidth in GB/s (gigabytes per second, per direction, per link), latency in microseconds,
memory in GB. Link specs are per tier: ``MACHINE`` links join GPUs inside one machine (NVLink,
NVSwitch or PCIe), ``RACK`` links join a machine to its rack switch (InfiniBand/RDMA), ``NETWORK``
links join a rack switch to the spine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from schedlab.topology.checks import integer, number, of_type, text
from schedlab.topology.errors import SpecError
from schedlab.topology.tiers import Tier

#: The largest cluster schedlab accepts: GPUs in total, GPUs on one machine, machines (GPU-less
#: machines count) and racks. Specs beyond these are refused before anything is built.
MAX_TOTAL_GPUS = 1_000_000
MAX_GPUS_PER_MACHINE = 10_000
MAX_MACHINES = 1_000_000
MAX_RACKS = 100_000

_INF = math.inf
_set = object.__setattr__


def gbit_to_gbyte(gbps: float) -> float:
    """Convert a link rate in Gb/s (as switch datasheets state it) to GB/s."""
    return gbps / 8.0


@dataclass(frozen=True, slots=True)
class LinkSpec:
    """One link class: bandwidth in GB/s and one-way latency in microseconds."""

    bandwidth_gbps: float
    latency_us: float = 0.0

    def __post_init__(self) -> None:
        """Bandwidth: a finite number > 0 GB/s; latency: a finite number >= 0 us (no booleans)."""
        _set(self, "bandwidth_gbps", number(self.bandwidth_gbps, "bandwidth_gbps", source="<LinkSpec>", gt=0))
        _set(self, "latency_us", number(self.latency_us, "latency_us", source="<LinkSpec>", ge=0))


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

    def __post_init__(self) -> None:
        """Names are non-empty strings, ``gpus`` an integer in ``[0, MAX_GPUS_PER_MACHINE]``, ``cpus`` an
        integer >= 0, memories and PCIe bandwidth finite numbers >= 0 (no booleans anywhere)."""
        g, c = self.gpus, self.cpus
        if (type(self.name) is str and self.name and type(self.rack) is str and self.rack
                and type(self.gpu_model) is str and type(g) is int and 0 <= g <= MAX_GPUS_PER_MACHINE
                and type(c) is int and c >= 0 and type(self.gpu_memory_gb) is float
                and 0.0 <= self.gpu_memory_gb < _INF and type(self.host_memory_gb) is float
                and 0.0 <= self.host_memory_gb < _INF and type(self.pcie_gbps) is float
                and 0.0 <= self.pcie_gbps < _INF and type(self.intra) is LinkSpec
                and type(self.uplink) is LinkSpec):
            return  # the common case (loaders pass validated, typed values)
        src = "<MachineSpec>"
        text(self.name, "name", source=src)
        src = f"<machine {self.name!r}>"
        text(self.rack, "rack", source=src)
        text(self.gpu_model, "gpu_model", source=src, empty=True)
        gpus = integer(g, "gpus", source=src, ge=0)
        if gpus > MAX_GPUS_PER_MACHINE:
            raise SpecError(f"{gpus:,} GPUs on one machine is more than schedlab supports "
                            f"(at most {MAX_GPUS_PER_MACHINE:,})", source=src, field="gpus")
        _set(self, "gpus", gpus)
        _set(self, "cpus", integer(c, "cpus", source=src, ge=0))
        for name in ("gpu_memory_gb", "host_memory_gb", "pcie_gbps"):
            _set(self, name, number(getattr(self, name), name, source=src, ge=0))
        of_type(self.intra, LinkSpec, "intra", source=src)
        of_type(self.uplink, LinkSpec, "uplink", source=src)


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """A whole cluster: machines (each naming its rack) and each rack's uplink to the spine.

    ``rack_uplinks`` may be empty only when the cluster has a single rack.
    """

    name: str
    machines: tuple[MachineSpec, ...]
    rack_uplinks: Mapping[str, LinkSpec] = field(default_factory=dict)
    source: str = "<spec>"
    racks: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Rack names in order of first appearance (computed)."""

    def __post_init__(self) -> None:
        text(self.source, "source", source="<ClusterSpec>")
        text(self.name, "name", source=self.source)
        of_type(self.machines, (tuple, list), "machines", source=self.source)
        _set(self, "machines", tuple(self.machines))
        of_type(self.rack_uplinks, Mapping, "rack_uplinks", source=self.source)
        _set(self, "rack_uplinks", MappingProxyType(dict(self.rack_uplinks)))
        validate_spec(self)

    def __reduce__(self):  # mappingproxy does not pickle; rebuild (and re-validate) from the fields
        return (ClusterSpec, (self.name, self.machines, dict(self.rack_uplinks), self.source))


def validate_spec(spec: ClusterSpec) -> None:
    """Raise :class:`SpecError` naming the source and field of the first problem found.

    Linear in the number of machines. Beyond the limits (``MAX_TOTAL_GPUS`` GPUs, ``MAX_MACHINES``
    machines, ``MAX_RACKS`` racks; ``MachineSpec`` enforces ``MAX_GPUS_PER_MACHINE``) the spec is refused.
    """
    src = spec.source
    if not spec.name:
        raise SpecError("cluster name must not be empty", source=src, field="name")
    if not spec.machines:
        raise SpecError("cluster has no machines", source=src, field="machines")
    if len(spec.machines) > MAX_MACHINES:
        raise SpecError(f"{len(spec.machines):,} machines is more than schedlab supports (at most "
                        f"{MAX_MACHINES:,})", source=src, field="machines")
    machines = spec.machines
    if not all(type(m) is MachineSpec for m in machines):
        i = next(i for i, m in enumerate(machines) if type(m) is not MachineSpec)
        of_type(machines[i], MachineSpec, f"machines[{i}]", source=src)
    names = {m.name for m in machines}
    if len(names) != len(machines):
        seen: set[str] = set()
        for i, m in enumerate(machines):
            if m.name in seen:
                raise SpecError(f"duplicate machine name {m.name!r}", source=src, field=f"machines[{i}].name")
            seen.add(m.name)
    for i, m in enumerate(machines):
        if m.gpus > 0 and m.gpu_memory_gb <= 0:
            raise SpecError(f"machine {m.name!r} has GPUs but gpu_memory_gb <= 0",
                            source=src, field=f"machines[{i}].gpu_memory_gb")
    total_gpus = sum(m.gpus for m in machines)
    if total_gpus > MAX_TOTAL_GPUS:
        raise SpecError(f"{total_gpus:,} GPUs in total is more than schedlab supports (at most "
                        f"{MAX_TOTAL_GPUS:,})", source=src, field="machines")
    racks = tuple(dict.fromkeys(m.rack for m in machines))
    _set(spec, "racks", racks)
    if len(racks) > MAX_RACKS:
        raise SpecError(f"{len(racks):,} racks is more than schedlab supports (at most {MAX_RACKS:,})",
                        source=src, field="racks")
    overlap = names.intersection(racks)
    if overlap:
        raise SpecError(f"name used for both a machine and a rack: {sorted(overlap)[0]!r}",
                        source=src, field="racks")
    for r, link in spec.rack_uplinks.items():
        if r not in racks:
            raise SpecError(f"network link given for rack {r!r}, which has no machines",
                            source=src, field=f"racks.{r}")
        of_type(link, LinkSpec, f"rack_uplinks[{r!r}]", source=src)
    if len(racks) > 1:
        for r in racks:
            if r not in spec.rack_uplinks:
                raise SpecError(f"rack {r!r} has no network (spine) link bandwidth",
                                source=src, field=f"links.network (rack {r})")
    if total_gpus == 0:
        raise SpecError("cluster has no GPUs", source=src, field="machines")


TIER_FIELDS: dict[Tier, str] = {Tier.MACHINE: "intra", Tier.RACK: "uplink", Tier.NETWORK: "rack_uplinks"}


__all__ = ["ClusterSpec", "LinkSpec", "MAX_GPUS_PER_MACHINE", "MAX_MACHINES", "MAX_RACKS", "MAX_TOTAL_GPUS",
           "MachineSpec", "TIER_FIELDS", "gbit_to_gbyte", "validate_spec"]
