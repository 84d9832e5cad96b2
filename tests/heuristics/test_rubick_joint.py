"""Rubick's snapshot decision scored by the joint formulation's objective against its proven optimum.

The joint model's option table holds, per job, the best plan for every GPU count (1 .. the cluster's
GPUs) and every per-machine split, uneven ones included, so any allocation Rubick makes is priced.
The objective is the sum of normalised throughputs (throughput / throughput at the job's request), so
a job scaled far beyond its request is worth many "jobs": on these instances (2 x 8 A800, six jobs
with the perf model's option tables) the optimum gives one small-request job all 16 GPUs (14.6-15.1),
and Rubick, which scales jobs along their curves, finds it (gap 0 % on seeds 0, 1, 3, 5; 9 % on
seed 2, where it gives two jobs 8 GPUs each). Policies that never scale a job (Rubick-N, AntMan-like,
Synergy-like, Rubick-E's plans only) score about one per job they run: gaps of 53-93 %.
"""

from __future__ import annotations

import pytest

from schedlab.formulations import GENERATORS, METHODS, OBJECTIVES, SolveParams, Status
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
    solver = METHODS["joint"].solve
    res = solver(inst, "highs", SolveParams(time_limit_s=60.0, threads=1))
    assert res.status is Status.OPTIMAL
    assert ours <= res.objective + 1e-6           # the optimum bounds the heuristic
    # and the greedy lands close (0 % on both seeds today; a sanity bar, not a claim of a guarantee)
    assert ours >= 0.85 * res.objective


@pytest.mark.parametrize("policy", ["rubick-n", "antman"])
def test_policies_that_do_not_scale_score_one_per_job(cluster, policy):
    # each job runs at its requested GPUs and plan, so its normalised throughput is exactly 1: the
    # objective is the number of jobs placed (seed 3: four jobs of 1, 4, 1, 4 or 1, 4, 8, 1 GPUs), while
    # the optimum gives one job all 16 GPUs for 14.67 -- the ~73 % gap of the non-scaling policies
    inst = GENERATORS["joint"](cluster, 6, seed=3, source="perfmodel", max_gpus=16)
    alloc = POLICIES[policy].decide(inst.base, seed=0)
    assert validate_allocation(inst.base, alloc) == []
    assert all(ja.gpus == inst.base.job(ja.job_id).requested.gpus for ja in alloc)
    assert OBJECTIVES["joint"](inst, alloc) == pytest.approx(len(alloc)) and len(alloc) == 4
