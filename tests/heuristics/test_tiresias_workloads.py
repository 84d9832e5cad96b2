"""Every Tiresias-issue policy and preset runs on every named workload (``schedlab list workloads``),
under ``realistic`` and ``tiresias`` semantics, and every job finishes (every decision verified by the
simulator). The first 25 jobs by arrival of each workload keep this fast (about 1 s per workload).

Also the regression for tenants' quotas: the artifact loop (``dlas-gpu``), SRTF/SRSF and Gandiva-like
reassign GPUs without the quota ledger used to start guaranteed jobs beyond their tenant's quota on
``smoke-mt`` (seed 0: "[quota] tenant 'A': guaranteed jobs use 64 gpus, quota 48").
"""

from __future__ import annotations

import pytest

from schedlab.benchmarks.simulator import simulate
from schedlab.benchmarks.workloads import WORKLOADS, get_workload
from schedlab.heuristics import POLICIES
from schedlab.topology.errors import SpecError
from schedlab.topology.presets import preset

NAMES = ("2d-las", "2d-gittins", "dlas-gpu", "dlas-gpu-gittins", "yarn-cs", "fifo", "best-effort", "srtf",
         "shortest", "srsf", "shortest-gpu", "gandiva-like")
FIRST = 25


def _run(cluster, w, jobs, name, semantics):
    return simulate(cluster, jobs, POLICIES.build(name), semantics=semantics, **w.simulator_args())


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_every_policy_and_preset_on_every_named_workload(workload):
    spec = get_workload(workload)
    cluster = preset(spec.cluster)
    try:  # a named workload drawn from a public trace (the Philly table) needs ../shared/traces
        w = spec.build(cluster, seed=0)
    except SpecError as e:
        if e.field == "table" and "not found" in str(e):
            pytest.skip(f"{workload}: {e}")
        raise
    jobs = sorted(w.jobs, key=lambda j: (j.arrival, j.id))[:FIRST]
    for semantics in ("realistic", "tiresias"):
        for name in NAMES:
            res = _run(cluster, w, jobs, name, semantics)
            assert sorted(r.job_id for r in res.jobs if r.end is not None) == sorted(j.id for j in jobs), \
                (workload, semantics, name)


@pytest.mark.parametrize("name", ["dlas-gpu", "srtf", "srsf", "gandiva-like"])
@pytest.mark.parametrize("semantics", ["realistic", "tiresias"])
def test_reassigning_policies_respect_tenant_quotas(name, semantics):
    spec = get_workload("smoke-mt")
    cluster = preset(spec.cluster)
    w = spec.build(cluster, seed=0)
    res = _run(cluster, w, w.jobs, name, semantics)  # the simulator verifies quotas at every decision
    assert len([r for r in res.jobs if r.end is not None]) == len(w.jobs)
