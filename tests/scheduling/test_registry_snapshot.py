"""Policy registry (documented, validated parameters) and the snapshot form (one decision on an Instance)."""

import pytest
from pydantic import Field

from schedlab.heuristics import POLICIES
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, JobAllocation, Resources, validate_allocation
from schedlab.scheduling.instance import JobProgress
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import Decision
from schedlab.scheduling.registry import (
    PolicyParams,
    PolicyRegistry,
    PolicySpec,
    parse_assignments,
)
from schedlab.scheduling.snapshot import PolicyBase, apply_decision, snapshot_view
from schedlab.topology.errors import AllocationError, CapacityError, SpecError
from schedlab.topology.presets import preset


class _Params(PolicyParams):
    queues: int = Field(2, ge=1, description="number of queues")
    threshold: float = Field(3600.0, gt=0, description="seconds")


class _Echo(PolicyBase):
    name = "echo"

    def __init__(self, *, queues: int, threshold: float, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.queues, self.threshold = queues, threshold

    def schedule(self, view):
        return Decision()


def test_parse_assignments():
    got = parse_assignments(["2d-las.queues=3", "2d-las.name=abc", "dally.window=1e3", "x.flag=true"])
    assert got == {"2d-las": {"queues": 3, "name": "abc"}, "dally": {"window": 1000.0}, "x": {"flag": True}}
    for bad in ("queues=3", "2d-las.queues", ".q=1", "p.=1"):
        with pytest.raises(SpecError):
            parse_assignments([bad])


def test_spec_validates_documents_and_builds_with_seed():
    spec = PolicySpec("echo", _Echo, "an echo", params=_Params)
    p = spec.build({"queues": 3}, seed=7)
    assert (p.queues, p.threshold, p.seed) == (3, 3600.0, 7)
    info = {i.name: i for i in spec.param_info()}
    assert info["queues"].constraints == ">= 1" and info["threshold"].constraints == "> 0"
    with pytest.raises(SpecError) as ei:
        spec.build({"queues": 0})
    assert ei.value.field == "echo.queues"
    with pytest.raises(SpecError):
        spec.build(seed=-1)
    preset_spec = PolicySpec("echo-3", _Echo, "three queues", params=_Params, preset={"queues": 3})
    assert preset_spec.build().queues == 3
    assert [i.name for i in preset_spec.param_info()] == ["threshold"]
    with pytest.raises(SpecError, match="fixed by this preset"):
        preset_spec.build({"queues": 4})
    with pytest.raises(SpecError):
        PolicySpec("bad", _Echo, "x", params=_Params, preset={"nope": 1})


def test_registry_refuses_duplicates_and_names_known_policies():
    reg = PolicyRegistry()
    reg.register(PolicySpec("echo", _Echo, "an echo", params=_Params))
    with pytest.raises(SpecError):
        reg.register(PolicySpec("echo", _Echo, "again", params=_Params))
    with pytest.raises(SpecError):
        PolicyRegistry.merged(reg, reg)
    with pytest.raises(SpecError, match="known: echo"):
        reg.spec("nope")


def _jobs(n, gpus=2):
    return tuple(Job(f"j{i}", Resources(gpus), iterations=100, arrival=float(i)) for i in range(n))


def test_snapshot_view_free_resources_statuses_and_progress():
    c = preset("rubick-64")
    jobs = _jobs(3, gpus=4)
    m0, m1 = c.machines[0], c.machines[1]
    current = Allocation.of([JobAllocation("j0", ExecutionPlan(dp=4), {m0: Resources(4)})])
    inst = Instance(c, jobs, current=current, reserved={m1: Resources(6)}, time=50.0,
                    progress={"j0": JobProgress(progress=10, attained=400, executed=100)})
    view = snapshot_view(inst)
    assert view.now == 50.0
    assert [j.id for j in view.queue()] == ["j1", "j2"] and [j.id for j in view.running()] == ["j0"]
    assert view.free(m0).gpus == 4 and view.free(m1).gpus == 2 and view.index.total == 64 - 4 - 6
    j0 = view.job("j0")
    assert (j0.progress, j0.attained_service, j0.executed_time) == (10, 400, 100)
    assert j0.iteration_time > 0


def test_snapshot_rejects_overused_current_and_bad_decisions():
    c = preset("rubick-64")
    jobs = _jobs(2, gpus=8)
    m0 = c.machines[0]
    over = Allocation.of([JobAllocation(j.id, ExecutionPlan(dp=8), {m0: Resources(8)}) for j in jobs])
    with pytest.raises(CapacityError):
        snapshot_view(Instance(c, jobs, current=over))
    inst = Instance(c, jobs)
    with pytest.raises(AllocationError):
        apply_decision(inst, Decision(preempt=("j0",)))
    with pytest.raises(AllocationError):
        apply_decision(inst, Decision(start={"zz": JobAllocation("zz", ExecutionPlan(dp=8), {m0: Resources(8)})}))


def test_fifo_snapshot_known_answer():
    """Free GPUs 8, 2, 8, ... (machine 0 has 6 reserved): FIFO best-fits the 2-GPU head job on the
    2-free machine and the 8-GPU job on the first whole machine; a 16-GPU job takes two machines."""
    c = preset("rubick-64")
    m = c.machines
    jobs = (Job("a", Resources(2), arrival=0), Job("b", Resources(8), arrival=1), Job("c", Resources(16), arrival=2))
    inst = Instance(c, jobs, reserved={m[0]: Resources(6)})
    alloc = POLICIES["fifo"].decide(inst, seed=0)
    assert alloc["a"].gpu_counts == {m[0]: 2}
    assert alloc["b"].gpu_counts == {m[1]: 8}
    assert sum(alloc["c"].gpu_counts.values()) == 16 and len(alloc["c"].gpu_counts) == 2
    assert not validate_allocation(inst, alloc)
