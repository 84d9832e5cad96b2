"""The conformance suite every registered policy passes (heuristics and formulation-side policies alike).

For each policy of ``schedlab.benchmarks.registry.all_policies()``:

* it is documented: a summary, a description for every parameter, defaults that validate, unknown
  parameters rejected with the field named;
* online, on a rigid-job workload (``smoke`` on ``tiresias-60``) and a multi-tenant reconfigurable one
  (``smoke-mt`` on ``rubick-64``): every decision passes the verifier (the simulator refuses any other),
  every job finishes (none waits forever), and the same seed gives the same records;
* in snapshot form (``decide(instance, *, seed)``): a cold start and a half-busy instance give
  allocations the verifier accepts, the same for the same seed, that keep every running job the policy
  did not preempt or reconfigure.

A new policy joins by being registered; it needs no test of its own here. A policy that reproduces an
artifact under one semantics only says so with a class attribute ``semantics_only`` (e.g. ``gandiva``:
``"tiresias"``); it runs the online checks under that semantics and has no snapshot form.
"""

from __future__ import annotations

import dataclasses

import pytest

from schedlab.benchmarks.registry import all_policies
from schedlab.benchmarks.simulator import simulate
from schedlab.benchmarks.workloads import get_workload
from schedlab.scheduling import Instance, validate_allocation
from schedlab.scheduling.policy import Policy
from schedlab.scheduling.registry import PolicyParams
from schedlab.topology.errors import SpecError
from schedlab.topology.presets import preset

REGISTRY = all_policies()
NAMES = sorted(REGISTRY)
WORKLOADS = {"smoke": "tiresias-60", "smoke-mt": "rubick-64"}


@pytest.fixture(scope="module")
def workloads():
    out = {}
    for name, cluster_name in WORKLOADS.items():
        cluster = preset(cluster_name)
        out[name] = (cluster, get_workload(name).build(cluster, seed=3))
    return out


def _only(name):
    return getattr(REGISTRY[name].factory, "semantics_only", None)


def _run(name, cluster, w, seed=0):
    policy = REGISTRY.build(name, seed=seed)
    sem = {"semantics": _only(name)} if _only(name) else {}
    return simulate(cluster, w.jobs, policy, **w.simulator_args(), **sem)


@pytest.mark.parametrize("name", NAMES)
def test_documented_and_validated(name):
    spec = REGISTRY[name]
    assert spec.summary.strip(), f"{name}: no summary"
    assert issubclass(spec.params, PolicyParams)
    for p in spec.param_info():
        assert p.description.strip(), f"{name}.{p.name}: no description"
    spec.validate({})  # the defaults validate
    with pytest.raises(SpecError) as ei:
        spec.validate({"no_such_parameter": 1})
    assert ei.value.field == f"{name}.no_such_parameter"
    policy = spec.build(seed=0)
    assert isinstance(policy, Policy)
    assert isinstance(policy.name, str) and policy.name
    assert bool(policy.oracle) == spec.oracle, f"{name}: oracle flag differs between spec and policy"


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
@pytest.mark.parametrize("name", NAMES)
def test_online_every_job_finishes_and_same_seed_same_records(name, workload, workloads):
    cluster, w = workloads[workload]
    if _only(name):
        try:
            a = _run(name, cluster, w)
        except SpecError as e:  # an artifact that crashes on this workload refuses it, naming why
            assert e.field, f"{name} on {workload}: refused without naming the field: {e}"
            pytest.skip(f"{name} refuses {workload}: {e}")
    else:
        a = _run(name, cluster, w)
    assert a.unfinished == (), f"{name} on {workload}: jobs never finished: {a.unfinished[:5]}"
    assert len(a.jobs) == len(w.jobs)
    for r in a.jobs:
        assert r.first_start >= r.arrival - 1e-9 and r.end >= r.first_start
    b = _run(name, cluster, w)
    assert [dataclasses.asdict(r) for r in a.jobs] == [dataclasses.asdict(r) for r in b.jobs]


def _instances(cluster, w):
    """A cold start (the first 16 jobs, nothing running) and a half-busy one (FIFO's decision on the
    first 8 running, 8 more queued), with the workload's quotas."""
    jobs = tuple(j for j in w.jobs[:16])
    cold = Instance(cluster, jobs, quotas=w.quotas)
    first = Instance(cluster, jobs[:8], quotas=w.quotas)
    running = REGISTRY["fifo-backfill"].decide(first, seed=0)
    busy = Instance(cluster, jobs, current=running, quotas=w.quotas, time=600.0)
    return {"cold": cold, "busy": busy}


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
@pytest.mark.parametrize("name", NAMES)
def test_snapshot_decision_is_verified_and_deterministic(name, workload, workloads):
    cluster, w = workloads[workload]
    spec = REGISTRY[name]
    if _only(name):
        pytest.skip(f"{name} runs under --semantics {_only(name)} only: no snapshot form")
    for label, inst in _instances(cluster, w).items():
        alloc = spec.decide(inst, seed=1)
        bad = validate_allocation(inst, alloc)
        assert not bad, f"{name} snapshot ({label}, {workload}) rejected: {bad[:3]}"
        again = spec.decide(inst, seed=1)
        assert dict(alloc.assignments) == dict(again.assignments), f"{name}: same seed, other decision"
        assert set(alloc.assignments) <= {j.id for j in inst.jobs}
