"""Shared fixtures of the perfmodel tests: small hand-made clusters and a toy model."""

import pytest

from schedlab.perfmodel.zoo import ModelSpec
from schedlab.topology import preset
from schedlab.topology.cluster import Cluster
from schedlab.topology.loaders import spec_from_dict


@pytest.fixture(scope="session")
def rubick():
    return preset("rubick-64")


@pytest.fixture(scope="session")
def tiny_cluster() -> Cluster:
    """2 racks x 2 machines x 4 GPUs (80 GB), 16 CPUs; intra 100 GB/s, rack 10 GB/s, spine 1 GB/s."""
    return Cluster(spec_from_dict({
        "name": "tiny",
        "defaults": {"gpus": 4, "gpu_model": "X", "gpu_memory_gb": 80, "cpus": 16, "host_memory_gb": 256,
                     "pcie_gbps": 32},
        "links": {"machine": {"bandwidth_gbps": 100}, "rack": {"bandwidth_gbps": 10},
                  "network": {"bandwidth_gbps": 1}},
        "racks": 2, "machines_per_rack": 2,
    }, source="<test tiny>"))


@pytest.fixture(scope="session")
def toy() -> ModelSpec:
    """P = 10^9, h = 1000, s = 100, l = 10, b = 8, forward 0.2 s per sample, fp16."""
    return ModelSpec(name="toy", family="transformer", params=1_000_000_000, hidden=1000, heads=10, layers=10,
                     seq_len=100, global_batch=8, profile_batch=8, fwd_time_s=1.6, bytes_per_element=2,
                     tensors=(600_000_000, 400_000_000), allow_3d=True, allow_zero=True)
