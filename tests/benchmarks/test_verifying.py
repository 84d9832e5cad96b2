"""The incremental verification gives the same verdict as the full verifier on the whole allocation."""

from __future__ import annotations

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator.verifying import DecisionVerifier, verify_decision
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import (
    Allocation,
    ClusterState,
    Instance,
    Job,
    JobAllocation,
    JobClass,
    Resources,
    validate_allocation,
)
from schedlab.scheduling.policy import JobRuntime, JobStatus
from schedlab.topology import preset
from schedlab.topology.errors import PolicyError

CLUSTER = preset("tiresias-60")
MACHINES = CLUSTER.machines[:4]  # a small corner, so that collisions are frequent


def placement_strategy():
    return st.dictionaries(st.sampled_from(MACHINES), st.integers(1, 4), min_size=1, max_size=2)


@settings(max_examples=150, deadline=None)
@given(running=st.lists(st.tuples(placement_strategy(), st.booleans(), st.booleans()), max_size=5),
       new=st.lists(st.tuples(placement_strategy(), st.integers(0, 5), st.booleans()), min_size=1, max_size=3),
       preempt_mask=st.lists(st.booleans(), min_size=5, max_size=5),
       quota=st.integers(4, 12),
       moves=st.lists(st.tuples(st.integers(0, 4), placement_strategy()), max_size=2))
@example(running=[({"rack0-m0": 4}, True, True)], new=[({"rack0-m1": 1}, 0, True)], preempt_mask=[False] * 5,
         quota=4, moves=[])  # quota: the running peer of tenant A counts
@example(running=[({"rack0-m0": 4}, False, False)], new=[({"rack0-m0": 2}, 0, False)], preempt_mask=[False] * 5,
         quota=4, moves=[(0, {"rack0-m0": 2})])  # a job shrinks on m0 and another takes the freed GPUs
def test_incremental_equals_full(running, new, preempt_mask, quota, moves):
    state = ClusterState(CLUSTER)
    runtimes: dict[str, JobRuntime] = {}
    holding: dict[str, JobRuntime] = {}
    current: dict[str, JobAllocation] = {}
    for i, (pl, guar, tenant_a) in enumerate(running):
        g = sum(pl.values())
        job = Job(f"r{i}", Resources(g), reconfigurable=True, job_class=JobClass.GUARANTEED if guar else JobClass.BEST_EFFORT,
                  tenant="A" if tenant_a else "B")
        placement = {m: Resources(k) for m, k in pl.items()}
        if not state.can_allocate(placement):
            continue
        state.allocate(job.id, placement)
        rt = JobRuntime(job, i)
        rt.status = JobStatus.RUNNING
        rt.alloc = JobAllocation(job.id, ExecutionPlan(dp=g), placement)
        runtimes[job.id] = holding[job.id] = rt
        current[job.id] = rt.alloc
    changes: dict[str, JobAllocation] = {}
    for k, (pl, req, guar) in enumerate(new):
        req = req or sum(pl.values())  # 0: the request matches the placement (a valid gang)
        job = Job(f"n{k}", Resources(req), job_class=JobClass.GUARANTEED if guar else JobClass.BEST_EFFORT,
                  tenant="A")
        runtimes[job.id] = JobRuntime(job, 100 + k)
        g = sum(pl.values())
        changes[job.id] = JobAllocation(job.id, ExecutionPlan(dp=g), {m: Resources(x) for m, x in pl.items()})
    preempted = [jid for jid, p in zip(list(holding), preempt_mask, strict=False) if p]
    ids = list(holding)
    for i, pl in moves:  # reconfigure running jobs (they are reconfigurable: any GPU count is a valid gang)
        if i < len(ids) and ids[i] not in preempted:
            g = sum(pl.values())
            changes[ids[i]] = JobAllocation(ids[i], ExecutionPlan(dp=g), {m: Resources(x) for m, x in pl.items()})
    for quotas in ({"A": Resources(quota)}, {}):
        inst = Instance(CLUSTER, tuple(rt.job for rt in runtimes.values()), quotas=quotas)
        assume(validate_allocation(inst, Allocation(current)) == [])  # the simulator only reaches valid states
        full = {jid: ja for jid, ja in current.items() if jid not in preempted}
        full.update(changes)
        expected_ok = validate_allocation(inst, Allocation(full)) == []
        # the one-shot check and the incremental verifier (its clean verdicts skip the instance)
        for verify in (verify_decision, DecisionVerifier(CLUSTER).verify):
            try:
                verify(state, changes, runtimes, released=preempted, quotas=quotas, holding=holding,
                       policy="p", now=0.0)
                ok = True
            except PolicyError:
                ok = False
            assert ok == expected_ok
