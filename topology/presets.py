"""Named clusters from the papers. ``PRESETS`` maps name -> factory (a dict registry).

Values the papers give are used as given; the rest are marked *(ours)* in the docstrings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError


def _homogeneous(name: str, *, racks: int, machines_per_rack: int, gpus: int, gpu_model: str,
                 gpu_memory_gb: float, cpus: int, host_memory_gb: float, pcie_gbps: float,
                 machine: dict, rack: dict, network: dict | None) -> Cluster:
    from schedlab.topology.loaders import spec_from_dict

    links = {"machine": machine, "rack": rack}
    if network is not None:
        links["network"] = network
    return Cluster(spec_from_dict({
        "name": name,
        "defaults": {"gpus": gpus, "gpu_model": gpu_model, "gpu_memory_gb": gpu_memory_gb, "cpus": cpus,
                     "host_memory_gb": host_memory_gb, "pcie_gbps": pcie_gbps},
        "links": links, "racks": racks, "machines_per_rack": machines_per_rack,
    }, source=f"<preset {name}>"))


def rubick_64() -> Cluster:
    """Rubick testbed: 8 servers x 8 A800-80GB, 96 vCPUs, 1,600 GB, NVLink 400 GB/s, RDMA 100 GB/s,
    one rack. PCIe 4.0 x16 = 32 GB/s host<->GPU (ours)."""
    return _homogeneous("rubick-64", racks=1, machines_per_rack=8, gpus=8, gpu_model="A800-80GB",
                        gpu_memory_gb=80, cpus=96, host_memory_gb=1600, pcie_gbps=32,
                        machine={"bandwidth_gbps": 400, "latency_us": 1},
                        rack={"bandwidth_gbps": 100, "latency_us": 2}, network=None)


def dally(racks: int) -> Cluster:
    """Dally's three-tier cluster: ``racks`` racks x 8 machines x 8 GPUs. NVSwitch inside a machine
    (900 Gb/s as the paper states it), NVIDIA Quantum InfiniBand rack switch 400 Gb/s per port, Spectrum
    Ethernet spine 800 Gb/s per port. GPU type, CPUs, memory and latencies are not given (ours:
    A100-80GB, 96 cores, 1 TB, 1/2/10 us)."""
    return _homogeneous(f"dally-{racks}", racks=racks, machines_per_rack=8, gpus=8, gpu_model="A100-80GB",
                        gpu_memory_gb=80, cpus=96, host_memory_gb=1024, pcie_gbps=32,
                        machine={"bandwidth_gbit": 900, "latency_us": 1},
                        rack={"bandwidth_gbit": 400, "latency_us": 2},
                        network={"bandwidth_gbit": 800, "latency_us": 10})


def tiresias_60() -> Cluster:
    """Tiresias testbed (Michigan ConFlux): 15 machines x 4 P100-16GB with NVLink, two 10-core POWER8
    (20 cores), 256 GB, 100 Gbps EDR InfiniBand; one switch. NVLink 1.0 40 GB/s between GPU pairs
    and PCIe 3.0 16 GB/s (ours)."""
    return _homogeneous("tiresias-60", racks=1, machines_per_rack=15, gpus=4, gpu_model="P100-16GB",
                        gpu_memory_gb=16, cpus=20, host_memory_gb=256, pcie_gbps=16,
                        machine={"bandwidth_gbps": 40, "latency_us": 1},
                        rack={"bandwidth_gbit": 100, "latency_us": 2}, network=None)


def philly() -> Cluster:
    """The 2017 Microsoft Philly cluster as Tiresias simulates it: 100 machines x 4 GPUs plus 250 x
    8 GPUs (2,400 GPUs), 100 Gbps InfiniBand. Rack layout (ours): 4-GPU machines in 5 racks of 20,
    8-GPU machines in 10 racks of 25; GPU types P100-16GB (4-GPU) and P40-24GB (8-GPU) (ours)."""
    from schedlab.topology.loaders import spec_from_dict

    ib = {"bandwidth_gbit": 100, "latency_us": 2}
    racks = [{"name": f"r4-{i}", "defaults": {"gpus": 4, "gpu_model": "P100-16GB", "gpu_memory_gb": 16},
              "machine_count": 20} for i in range(5)]
    racks += [{"name": f"r8-{i}", "defaults": {"gpus": 8, "gpu_model": "P40-24GB", "gpu_memory_gb": 24},
               "machine_count": 25} for i in range(10)]
    return Cluster(spec_from_dict({
        "name": "philly",
        "defaults": {"cpus": 48, "host_memory_gb": 256, "pcie_gbps": 16},
        "links": {"machine": {"bandwidth_gbps": 16, "latency_us": 2}, "rack": ib,
                  "network": {"bandwidth_gbit": 100, "latency_us": 5}},
        "racks": racks,
    }, source="<preset philly>"))


def pai_2020(path: str | Path | None = None) -> Cluster:
    """Alibaba PAI 2020: built from the machine list file (``pai_machine_spec.csv``), which is not
    shipped with schedlab. Pass its path (CLI: ``pai-2020:PATH``)."""
    if path is None:
        raise SpecError("pai-2020 is built from the PAI machine list; give its path as 'pai-2020:PATH'",
                        source="<preset pai-2020>", field="path")
    from schedlab.topology.loaders import spec_from_pai_machines

    return Cluster(spec_from_pai_machines(path))


PRESETS: dict[str, Callable[..., Cluster]] = {
    "rubick-64": rubick_64,
    "dally-2": lambda: dally(2),
    "dally-4": lambda: dally(4),
    "dally-8": lambda: dally(8),
    "dally-16": lambda: dally(16),
    "tiresias-60": tiresias_60,
    "philly": philly,
    "pai-2020": pai_2020,
}


def preset(name: str, *args, **kwargs) -> Cluster:
    """Build a preset by name (``PRESETS`` lists them)."""
    try:
        factory = PRESETS[name]
    except KeyError:
        raise SpecError(f"unknown cluster preset {name!r}; known: {', '.join(PRESETS)}",
                        source="<preset>", field="name") from None
    return factory(*args, **kwargs)


def load_cluster(ref: str | Path, *, progress=None) -> Cluster:
    """A preset name, ``pai-2020:PATH``, or a spec file (YAML/JSON/Tiresias CSV). ``progress`` (see
    :data:`schedlab.topology.loaders.Progress`) hears how building a large spec file goes."""
    from schedlab.topology.loaders import load_spec_file

    s = str(ref)
    if s in PRESETS:
        return preset(s)
    if s.startswith("pai-2020:"):
        return pai_2020(s.split(":", 1)[1])
    p = Path(s)
    if p.suffix.lower() in (".yaml", ".yml", ".json", ".csv") or p.exists():
        return Cluster(load_spec_file(p, progress=progress))
    raise SpecError(f"not a preset ({', '.join(PRESETS)}) nor a spec file", source=s)


__all__ = ["PRESETS", "dally", "load_cluster", "pai_2020", "philly", "preset", "rubick_64", "tiresias_60"]
