"""Cluster topology: a networkx graph of GPU -> machine -> rack -> network tiers."""

from schedlab.topology.cluster import NETWORK_NODE, Cluster, Placement, build_cluster, gpu_node
from schedlab.topology.errors import SchedlabError, SpecError, TopologyError
from schedlab.topology.loaders import (
    load_spec_file,
    spec_from_dict,
    spec_from_pai_machines,
    spec_from_tiresias_csv,
)
from schedlab.topology.presets import PRESETS, load_cluster, preset
from schedlab.topology.spec import ClusterSpec, LinkSpec, MachineSpec, gbit_to_gbyte
from schedlab.topology.tiers import Tier

__all__ = [
    "NETWORK_NODE", "PRESETS", "Cluster", "ClusterSpec", "LinkSpec", "MachineSpec", "Placement",
    "SchedlabError", "SpecError", "Tier", "TopologyError", "build_cluster", "gbit_to_gbyte", "gpu_node",
    "load_cluster", "load_spec_file", "preset", "spec_from_dict", "spec_from_pai_machines",
    "spec_from_tiresias_csv",
]
