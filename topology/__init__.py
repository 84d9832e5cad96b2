"""Cluster topology: a networkx graph of GPU -> machine -> rack -> network tiers.

The names below are imported on first use (PEP 562), so ``import schedlab.topology.errors`` (which every
layer does) costs no networkx, pydantic or YAML import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedlab.topology.errors import SchedlabError, SpecError, TopologyError
from schedlab.topology.lazy import lazy_exports
from schedlab.topology.tiers import Tier

_LAZY = {
    "NETWORK_NODE": "cluster", "Cluster": "cluster", "Placement": "cluster", "build_cluster": "cluster",
    "gpu_node": "cluster",
    "load_spec_file": "loaders", "spec_from_dict": "loaders", "spec_from_pai_machines": "loaders",
    "spec_from_tiresias_csv": "loaders",
    "PRESETS": "presets", "load_cluster": "presets", "preset": "presets",
    "ClusterSpec": "spec", "LinkSpec": "spec", "MachineSpec": "spec", "gbit_to_gbyte": "spec",
    "MAX_GPUS_PER_MACHINE": "spec", "MAX_MACHINES": "spec", "MAX_RACKS": "spec", "MAX_TOTAL_GPUS": "spec",
}

if TYPE_CHECKING:
    from schedlab.topology.cluster import NETWORK_NODE, Cluster, Placement, build_cluster, gpu_node
    from schedlab.topology.loaders import (
        load_spec_file,
        spec_from_dict,
        spec_from_pai_machines,
        spec_from_tiresias_csv,
    )
    from schedlab.topology.presets import PRESETS, load_cluster, preset
    from schedlab.topology.spec import (
        MAX_GPUS_PER_MACHINE,
        MAX_MACHINES,
        MAX_RACKS,
        MAX_TOTAL_GPUS,
        ClusterSpec,
        LinkSpec,
        MachineSpec,
        gbit_to_gbyte,
    )


__getattr__ = lazy_exports(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "MAX_GPUS_PER_MACHINE", "MAX_MACHINES", "MAX_RACKS", "MAX_TOTAL_GPUS", "NETWORK_NODE", "PRESETS", "Cluster",
    "ClusterSpec", "LinkSpec", "MachineSpec", "Placement", "SchedlabError", "SpecError", "Tier", "TopologyError",
    "build_cluster", "gbit_to_gbyte", "gpu_node", "load_cluster", "load_spec_file", "preset", "spec_from_dict",
    "spec_from_pai_machines", "spec_from_tiresias_csv",
]
