"""The horizon twin for waiting: hand optima (wait for a machine vs spread now), the tail charge,
backends agreeing, verification, JSON."""

from __future__ import annotations

import pytest

from schedlab.formulations import SolveParams, Status, load_instance, save_instance, solve
from schedlab.formulations.horizon import (
    HorizonFormulation,
    HorizonInstance,
    HorizonPlan,
    RunningJob,
    generate_horizon,
    horizon_objective,
    horizon_violations,
)
from schedlab.scheduling import Instance, Job, Resources
from schedlab.topology.errors import SpecError
from schedlab.topology.tiers import Tier

from .conftest import backend_or_skip, tiny_cluster

P = SolveParams(threads=1, time_limit_s=60, seed=0, work_limit=60)


def wait_instance(rack_overhead: float, *, slots: int = 4, max_tier=None) -> HorizonInstance:
    """One rack of 2 machines x 2 GPUs; m0 has 1 GPU busy for 1 more slot, m1 1 GPU busy all horizon.
    J (2 GPUs, 10 s at machine tier) can spread over m0+m1 now (rack tier: 10·(1+o_R)) or wait one
    slot for m0 (1 + 10 = 11)."""
    cl = tiny_cluster(machines=2, gpus=2)
    m0, m1 = cl.machines
    job = Job("J", Resources(2), duration=10.0, max_tier=max_tier)
    return HorizonInstance(Instance(cl, (job,)), {"J": (0.0, rack_overhead, rack_overhead)}, 1.0, slots,
                           (RunningJob("r0", {m0: 1}, 1.0), RunningJob("r1", {m1: 1}, 100.0)))


@pytest.mark.parametrize("backend", ["cpsat", "highs"])
def test_waiting_one_slot_beats_spreading_now(backend):
    backend_or_skip(backend)
    inst = wait_instance(0.5)
    r = solve(HorizonFormulation(), inst, backend, P)
    assert r.status is Status.OPTIMAL and r.verified
    assert r.objective == pytest.approx(11.0)  # spreading now: 15
    assert r.solution.start == {"J": 1} and r.solution.placement["J"] == {inst.base.cluster.machines[0]: 2}
    # a small rack overhead: spreading now (10.5) beats waiting (11)
    r = solve(HorizonFormulation(), wait_instance(0.05), backend, P)
    assert r.objective == pytest.approx(10.5) and r.solution.start == {"J": 0}


def test_tail_charge_and_max_tier():
    # a horizon of 1 slot: the machine placement comes too late; the job spreads now (15) or is charged
    # the tail H - a + d = 1 + 10 = 11: the tail wins (optimistic, stated in the docstring)
    r = solve(HorizonFormulation(), wait_instance(0.5, slots=1), "cpsat", P)
    assert r.objective == pytest.approx(11.0) and r.solution.start == {}
    # max_tier machine: spreading is not allowed at all
    r = solve(HorizonFormulation(), wait_instance(0.05, max_tier=Tier.MACHINE), "cpsat", P)
    assert r.objective == pytest.approx(11.0) and r.solution.start == {"J": 1}


def test_two_jobs_one_machine_serial_vs_spread():
    # 1 rack, 2 machines x 2 GPUs, idle; A and B (2 GPUs each, 3 s, rack overhead 1.0) queued: both on their own
    # machine now -> 3 + 3 = 6; a third job C (4 GPUs) must spread (rack: 3·2 = 6) or wait
    cl = tiny_cluster(machines=2, gpus=2)
    jobs = (Job("A", Resources(2), duration=3.0), Job("B", Resources(2), duration=3.0))
    ov = {"A": (0.0, 1.0, 1.0), "B": (0.0, 1.0, 1.0)}
    r = solve(HorizonFormulation(), HorizonInstance(Instance(cl, jobs), ov, 1.0, 6), "cpsat", P)
    assert r.objective == pytest.approx(6.0) and set(r.solution.start.values()) == {0}
    jobs += (Job("C", Resources(4), duration=3.0),)
    ov["C"] = (0.0, 1.0, 1.0)
    r = solve(HorizonFormulation(), HorizonInstance(Instance(cl, jobs), ov, 1.0, 12), "cpsat", P)
    # (a horizon of 12 s: C's tail charge 12 + 3 = 15 > 9) C first (6 s, blocks everything) then A, B at 6: 6 + 9 + 9 = 24; A, B first then C at 3: 3 + 3 + 9 = 15
    assert r.objective == pytest.approx(15.0) and r.solution.start["C"] == 3 and r.verified


def test_violations_and_validation():
    inst = wait_instance(0.5)
    m0, m1 = inst.base.cluster.machines
    bad = horizon_violations(inst, HorizonPlan({"J": 0}, {"J": {m0: 2}}))
    assert any("capacity" in v for v in bad)
    ok = HorizonPlan({"J": 0}, {"J": {m0: 1, m1: 1}})
    assert horizon_violations(inst, ok) == [] and horizon_objective(inst, ok) == pytest.approx(15.0)
    with pytest.raises(SpecError, match="non-decreasing"):
        HorizonInstance(inst.base, {"J": (0.5, 0.1, 0.2)}, 1.0, 2)


def test_generated_backends_agree_and_json(tmp_path):
    inst = generate_horizon(tiny_cluster(machines=2, gpus=4, racks=2), 5, seed=1, slot=1.0, slots=5)
    save_instance(inst, tmp_path / "h.json")
    assert load_instance(tmp_path / "h.json").to_dict() == inst.to_dict()
    vals = []
    for be in ("cpsat", "highs"):
        backend_or_skip(be)
        r = solve(HorizonFormulation(), inst, be, P)
        assert r.status is Status.OPTIMAL and r.verified
        vals.append(r.objective)
    assert vals[0] == pytest.approx(vals[1], rel=1e-6)
