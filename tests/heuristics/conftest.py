"""Small clusters and jobs for the Tiresias tests (hand-computable), as the ``mk`` fixture."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from schedlab.scheduling import Job, Resources
from schedlab.topology import Cluster, spec_from_dict


def cluster(machines: int, gpus: int, racks: int = 1, name: str = "t") -> Cluster:
    """``racks`` x ``machines`` machines of ``gpus`` GPUs (P100-16GB, plenty of CPUs and memory)."""
    return Cluster(spec_from_dict({
        "name": name,
        "defaults": {"gpus": gpus, "gpu_model": "P100-16GB", "gpu_memory_gb": 16, "cpus": 64,
                     "host_memory_gb": 256, "pcie_gbps": 16},
        "links": {"machine": {"bandwidth_gbps": 40, "latency_us": 1}, "rack": {"bandwidth_gbit": 100, "latency_us": 2},
                  "network": {"bandwidth_gbit": 100, "latency_us": 5}},
        "racks": racks, "machines_per_rack": machines,
    }, source="<test>"))


def job(jid: str, gpus: int, seconds: float, arrival: float = 0.0, model: str = "unknown", **kw) -> Job:
    """A rigid job running ``seconds`` at its request (1 iteration per second)."""
    return Job(jid, Resources(gpus), iterations=float(seconds), arrival=arrival, model=model,
               duration=float(seconds), attrs={"iter_time": 1.0, "rates": "reference"}, **kw)


@pytest.fixture
def mk():
    """``mk.cluster(machines, gpus, racks)`` and ``mk.job(id, gpus, seconds, arrival, ...)``."""
    return SimpleNamespace(cluster=cluster, job=job)
