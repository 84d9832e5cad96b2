"""Jobs, resources, plans and instances validate their input and name what is wrong."""

import pytest

from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode, parse_plan
from schedlab.scheduling import (
    Allocation,
    Instance,
    Job,
    JobAllocation,
    Resources,
)
from schedlab.topology import preset
from schedlab.topology.errors import AllocationError, PlanError, SpecError


def test_resources_arithmetic_and_order():
    a, b = Resources(2, 4, 8.0), Resources(1, 1, 1.0)
    assert a + b == Resources(3, 5, 9.0) and a - b == Resources(1, 3, 7.0)
    assert b <= a and not a <= b and Resources(2, 5, 0.0).exceeded(a) == ["cpus"]
    with pytest.raises(SpecError, match="gpus must be an integer"):
        Resources(1.5, 1, 0.0)


def test_job_validation_names_field():
    with pytest.raises(SpecError, match="requested.gpus"):
        Job("j", Resources(0, 1, 0.0))
    with pytest.raises(SpecError, match="iterations"):
        Job("j", Resources(1, 1, 0.0), iterations=0)
    with pytest.raises(SpecError, match="plan"):
        Job("j", Resources(4, 1, 0.0), plan=ExecutionPlan(dp=2))
    with pytest.raises(SpecError, match="min_resources"):
        Job("j", Resources(2, 1, 0.0), min_resources=Resources(4, 1, 0.0))
    j = Job("j", Resources(4, 1, 0.0))
    assert j.requested_plan == ExecutionPlan(dp=4) and j.quota_usage == Resources(4, 1, 0.0)


def test_instance_rejects_duplicates_and_strangers():
    c = preset("rubick-64")
    j = Job("a", Resources(1, 1, 0.0))
    with pytest.raises(SpecError, match="duplicate job id 'a'"):
        Instance(c, (j, j))
    alien = Allocation.of([JobAllocation("b", ExecutionPlan(), {c.machines[0]: Resources(1, 0, 0.0)})])
    with pytest.raises(AllocationError, match="'b'"):
        Instance(c, (j,), current=alien)
    with pytest.raises(AllocationError, match="twice"):
        Allocation.of([JobAllocation("a", ExecutionPlan(), {}), JobAllocation("a", ExecutionPlan(), {})])


@pytest.mark.parametrize(
    ("name", "gpus", "expect"),
    [("248", None, ExecutionPlan(dp=8, tp=4, pp=2, micro_batches=4)),
     ("141", 4, ExecutionPlan(tp=4)),
     ("ga", 4, ExecutionPlan(dp=4, ga_steps=2)),
     ("zero-offload+gc", 1, ExecutionPlan(gc=True, zero=ZeroMode.OFFLOAD)),
     ("zero-dp", 8, ExecutionPlan(dp=8, zero=ZeroMode.DP)),
     ("tp+ga", 8, ExecutionPlan(tp=8, ga_steps=2))],
)
def test_parse_artifact_plan_names(name, gpus, expect):
    p = parse_plan(name, gpus)
    assert p == expect
    assert parse_plan(p.canonical()) == p


def test_plan_names_print_like_the_artifact():
    assert ExecutionPlan(dp=8, tp=4, pp=2, micro_batches=4).name == "248"
    assert ExecutionPlan(dp=2, zero=ZeroMode.OFFLOAD, gc=True).name == "zero-offload+gc"
    assert ExecutionPlan(dp=2).name == "dp"


@pytest.mark.parametrize(("name", "gpus", "match"),
                         [("zz", 2, "unknown execution plan component"), ("ga", None, "give gpus"),
                          ("248", 32, "uses 64 GPUs"), ("zero-dp+zero-offload", 2, "two ZeRO")])
def test_parse_errors(name, gpus, match):
    with pytest.raises(PlanError, match=match):
        parse_plan(name, gpus)


def test_plan_field_validation():
    with pytest.raises(PlanError, match="dp"):
        ExecutionPlan(dp=0)
    with pytest.raises(PlanError, match="micro_batches"):
        ExecutionPlan(dp=2, micro_batches=4)
