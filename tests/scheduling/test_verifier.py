"""Verifier mutation tests: a valid allocation, broken one way at a time, gives the specific violation."""

from dataclasses import replace

import pytest

from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode
from schedlab.scheduling import (
    Allocation,
    Instance,
    Job,
    JobAllocation,
    JobClass,
    Resources,
    ViolationKind,
    assert_valid,
    validate_allocation,
)
from schedlab.topology import Tier, preset
from schedlab.topology.errors import PolicyError

R = Resources


@pytest.fixture(scope="module")
def cluster():
    return preset("dally-2")  # 2 racks x 8 machines x 8 GPUs, 96 CPUs, 1024 GB


@pytest.fixture(scope="module")
def base(cluster):
    ms = cluster.machines
    jobs = (
        Job("rigid", R(4, 4, 16.0), model="resnet50"),
        Job("tp", R(8, 8, 0.0), model="gpt2", reconfigurable=True, num_layers=20,
            plan=ExecutionPlan(dp=2, tp=4)),
        Job("guar", R(4, 8, 0.0), tenant="A", job_class=JobClass.GUARANTEED, min_resources=R(2, 4, 0.0),
            reconfigurable=True),
        Job("local", R(2, 2, 0.0), max_tier=Tier.MACHINE),
    )
    inst = Instance(cluster, jobs, quotas={"A": R(4, 0, 0.0)})
    alloc = Allocation.of([
        JobAllocation("rigid", ExecutionPlan(dp=4), {ms[0]: R(4, 4, 16.0)}),
        JobAllocation("tp", ExecutionPlan(dp=2, tp=4), {ms[1]: R(4, 4, 0.0), ms[2]: R(4, 4, 0.0)}),
        JobAllocation("guar", ExecutionPlan(dp=2), {ms[3]: R(2, 4, 0.0)}),
        JobAllocation("local", ExecutionPlan(dp=2), {ms[0]: R(2, 2, 0.0)}),
    ])
    return inst, alloc


def kinds(inst, alloc):
    return [v.kind for v in validate_allocation(inst, alloc)]


def test_base_is_valid(base):
    inst, alloc = base
    assert validate_allocation(inst, alloc) == []
    assert_valid(inst, alloc)


def test_over_capacity(base, cluster):
    inst, alloc = base
    m0 = cluster.machines[0]
    bad = alloc.with_job(JobAllocation("rigid", ExecutionPlan(dp=4), {m0: R(4, 95, 16.0)}))
    vs = validate_allocation(inst, bad)
    assert [v.kind for v in vs] == [ViolationKind.CAPACITY]
    assert vs[0].machine == m0 and "cpus" in vs[0].message


def test_over_gpu_capacity_with_reserved(base, cluster):
    inst, alloc = base
    inst2 = replace(inst, reserved={cluster.machines[0]: R(3, 0, 0.0)})
    assert kinds(inst2, alloc) == [ViolationKind.CAPACITY]


def test_partial_gang(base, cluster):
    inst, alloc = base
    bad = alloc.with_job(JobAllocation("rigid", ExecutionPlan(dp=2), {cluster.machines[0]: R(2, 4, 16.0)}))
    vs = validate_allocation(inst, bad)
    assert [v.kind for v in vs] == [ViolationKind.GANG] and vs[0].job_id == "rigid"


def test_plan_batch(base, cluster):
    """d * a * m must divide the global batch (the zoo's default for resnet50, 256, when the job gives none;
    the job's own when it does): a DP degree of 3 cannot split 256 samples."""
    inst, alloc = base
    ms = cluster.machines
    job = replace(inst.job_by_id["guar"], model="resnet50")
    inst3 = replace(inst, jobs=tuple(job if j.id == "guar" else j for j in inst.jobs))
    three = alloc.with_job(JobAllocation("guar", ExecutionPlan(dp=3), {ms[3]: R(3, 4, 0.0)}))
    vs = validate_allocation(inst3, three)
    assert [v.kind for v in vs] == [ViolationKind.PLAN_BATCH] and "global batch 256" in vs[0].message
    assert kinds(inst, three) == []  # no model, no batch: nothing to check against
    own = replace(inst3, jobs=tuple(replace(j, global_batch=96) if j.id == "guar" else j for j in inst3.jobs))
    assert kinds(own, three) == []  # 96 = 3 x 32


def test_plan_gpu_mismatch(base, cluster):
    inst, alloc = base
    bad = alloc.with_job(JobAllocation("guar", ExecutionPlan(dp=4), {cluster.machines[3]: R(2, 4, 0.0)}))
    assert kinds(inst, bad) == [ViolationKind.PLAN_GPUS]


def test_tp_across_machines(base, cluster):
    inst, alloc = base
    ms = cluster.machines
    bad = alloc.with_job(JobAllocation("tp", ExecutionPlan(dp=2, tp=4), {ms[1]: R(6, 4, 0.0), ms[2]: R(2, 4, 0.0)}))
    vs = validate_allocation(inst, bad)
    assert {v.kind for v in vs} == {ViolationKind.TP_SPLIT}
    assert {v.machine for v in vs} == {ms[1], ms[2]}


def test_pp_must_divide_layers(base, cluster):
    inst, alloc = base
    ms = cluster.machines
    bad = alloc.with_job(JobAllocation("tp", ExecutionPlan(dp=1, tp=1, pp=8, micro_batches=8),
                                       {ms[1]: R(4, 4, 0.0), ms[2]: R(4, 4, 0.0)}))
    assert kinds(inst, bad) == [ViolationKind.PP_LAYERS]  # 20 layers cannot split into 8 stages


def test_tier_constraint(base, cluster):
    inst, alloc = base
    ms = cluster.machines
    bad = alloc.with_job(JobAllocation("local", ExecutionPlan(dp=2), {ms[4]: R(1, 1, 0.0), ms[5]: R(1, 1, 0.0)}))
    vs = validate_allocation(inst, bad)
    assert [v.kind for v in vs] == [ViolationKind.TIER] and "rack" in vs[0].message


def test_quota_exceeded(base, cluster):
    inst, alloc = base
    # a second guaranteed job of tenant A pushes its minRes usage (2 + 4 GPUs) over the quota of 4
    jobs = inst.jobs + (Job("guar2", R(4, 4, 0.0), tenant="A", job_class=JobClass.GUARANTEED),)
    inst2 = replace(inst, jobs=jobs)
    bad = alloc.with_job(JobAllocation("guar2", ExecutionPlan(dp=4), {cluster.machines[6]: R(4, 4, 0.0)}))
    vs = validate_allocation(inst2, bad)
    assert [v.kind for v in vs] == [ViolationKind.QUOTA] and vs[0].tenant == "A"
    assert validate_allocation(inst2, alloc) == []  # queued guaranteed jobs use no quota


def test_guarantee_below_minres(base, cluster):
    inst, alloc = base
    bad = alloc.with_job(JobAllocation("guar", ExecutionPlan(dp=1), {cluster.machines[3]: R(1, 4, 0.0)}))
    assert kinds(inst, bad) == [ViolationKind.GUARANTEE]


def test_unknown_job_and_machine(base, cluster):
    inst, alloc = base
    bad = alloc.with_job(JobAllocation("ghost", ExecutionPlan(dp=1), {"nowhere": R(1, 0, 0.0)}))
    ks = kinds(inst, bad)
    assert ViolationKind.UNKNOWN_JOB in ks and ViolationKind.UNKNOWN_MACHINE in ks


def test_empty_placement_and_negative(base, cluster):
    inst, alloc = base
    bad = alloc.with_job(JobAllocation("local", ExecutionPlan(dp=2), {}))
    assert ViolationKind.EMPTY_PLACEMENT in kinds(inst, bad)
    bad = alloc.with_job(JobAllocation("local", ExecutionPlan(dp=2), {cluster.machines[0]: R(2, 0, 0.0) - R(0, 1, 0.0)}))
    assert ViolationKind.NEGATIVE in kinds(inst, bad)


def test_zero_gpu_job_is_a_gang_violation(base, cluster):
    inst, alloc = base
    bad = alloc.with_job(JobAllocation("guar", ExecutionPlan(dp=1), {cluster.machines[3]: R(0, 4, 0.0)}))
    assert ViolationKind.GANG in kinds(inst, bad)


def test_assert_valid_names_who_and_violation(base, cluster):
    inst, alloc = base
    bad = alloc.with_job(JobAllocation("rigid", ExecutionPlan(dp=3), {cluster.machines[0]: R(3, 4, 16.0)}))
    with pytest.raises(PolicyError, match=r"(?s)my-policy.*gang.*rigid"):
        assert_valid(inst, bad, who="my-policy")


def test_skip_unknown_check_is_an_error(base):
    inst, alloc = base
    with pytest.raises(ValueError, match="unknown verifier checks"):
        validate_allocation(inst, alloc, skip=["nope"])


def test_zero_plan_runs_are_checked_like_others(base, cluster):
    inst, alloc = base
    ok = alloc.with_job(JobAllocation("guar", ExecutionPlan(dp=2, zero=ZeroMode.OFFLOAD), {cluster.machines[3]: R(2, 8, 0.0)}))
    assert validate_allocation(inst, ok) == []
