"""Rubick's snapshot decision scored by the joint formulation's objective against its proven optimum.

The joint model's option table holds, per job, the best plan for each resource shape that splits
*evenly* over its machines (engineer form is adding uneven placements): an allocation is priced only
if every job's (plan, GPUs, machines) is in it. These instances (2 x 8 A800 GPUs, six jobs with the
perf model's option tables) were chosen because Rubick's allocations on them are: a job alone on
one machine, or 8 + 8 GPUs.
"""

from __future__ import annotations

import pytest

from schedlab.formulations import GENERATORS, METHODS, OBJECTIVES, SolveParams, Termination
from schedlab.heuristics import POLICIES
from schedlab.scheduling import validate_allocation
from schedlab.topology.cluster import Cluster
from schedlab.topology.loaders import spec_from_dict


@pytest.fixture(scope="module")
def cluster():
    return Cluster(spec_from_dict({
        "name": "a800-2x8", "defaults": {"gpus": 8, "gpu_model": "A800-80GB", "gpu_memory_gb": 80, "cpus": 96,
                                         "host_memory_gb": 1600, "pcie_gbps": 32},
        "links": {"machine": {"bandwidth_gbps": 400, "latency_us": 1}, "rack": {"bandwidth_gbps": 100, "latency_us": 2}},
        "racks": 1, "machines_per_rack": 2}))


@pytest.mark.parametrize("seed", [3, 5])
def test_rubick_snapshot_against_the_joint_optimum(cluster, seed):
    inst = GENERATORS["joint"](cluster, 6, seed=seed, source="perfmodel", max_gpus=16)
    alloc = POLICIES["rubick"].decide(inst.base, seed=0)
    assert alloc and validate_allocation(inst.base, alloc) == []
    ours = OBJECTIVES["joint"](inst, alloc)
    _, solver = METHODS["joint"]
    res = solver(inst, "highs", SolveParams(time_limit_s=60.0, threads=1))
    assert res.termination is Termination.OPTIMAL
    assert ours <= res.objective + 1e-6           # the optimum bounds the heuristic
    # and the greedy lands close: gaps 0 % / 0.9 % with the artifact's perf-model fits, 0 % / 7.1 % with
    # the refitted bandwidths of issue 12 (a sanity bar, not a claim of a guarantee)
    assert ours >= 0.85 * res.objective
