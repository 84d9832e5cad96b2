"""Shared helpers: tiny clusters built here (no files outside the tests), backend parametrisation."""

from __future__ import annotations

import pytest

from schedlab.formulations.backends import BACKENDS, get_backend
from schedlab.topology.cluster import Cluster
from schedlab.topology.loaders import spec_from_dict


def tiny_cluster(machines: int = 2, gpus: int = 4, cpus: int = 16, racks: int = 1, mem: float = 256.0,
                 name: str = "tiny") -> Cluster:
    links = {"machine": {"bandwidth_gbps": 100}, "rack": {"bandwidth_gbps": 10}}
    if racks > 1:
        links["network"] = {"bandwidth_gbps": 5}
    return Cluster(spec_from_dict({
        "name": name, "defaults": {"gpus": gpus, "gpu_model": "X-80GB", "gpu_memory_gb": 80, "cpus": cpus,
                                   "host_memory_gb": mem},
        "links": links, "racks": racks, "machines_per_rack": machines}))


def backend_or_skip(name: str, needs: frozenset[str] = frozenset()):
    be = get_backend(name)
    av = be.availability()
    if not av.ok:
        pytest.skip(f"backend {name} unavailable: {av.reason}")
    missing = needs - be.capabilities
    if missing:
        pytest.skip(f"backend {name} lacks {sorted(missing)}")
    return be


ALL_BACKENDS = list(BACKENDS)


@pytest.fixture
def make_cluster():
    return tiny_cluster


@pytest.fixture
def need_backend():
    return backend_or_skip
