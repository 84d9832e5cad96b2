"""Same-metric offline optima: rigid preemptive (time-indexed), resizable (time-indexed), fluid bound.
Hand optima, then the orders that are true: fluid <= resizable <= preemptive-total <= preemptive-machine
<= non-preemptive."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.formulations import SolveParams, Status, load_instance, save_instance, solve
from schedlab.formulations.offline import OfflineFormulation, OfflineInstance, lower_bound
from schedlab.formulations.offline_fluid import FluidBoundMethod, fluid_bound
from schedlab.formulations.offline_resizable import (
    ResizableInstance,
    ResizableJob,
    ResizableTIFormulation,
    perf_speeds,
    resizable_from_instance,
)
from schedlab.formulations.offline_ti import (
    PreemptiveTIFormulation,
    PreemptiveTIInstance,
    SlotSchedule,
    ti_violations,
)
from schedlab.scheduling import Instance, Job, Resources
from schedlab.topology.errors import SpecError

from .conftest import backend_or_skip, tiny_cluster

P = SolveParams(threads=1, time_limit_s=60, seed=0, work_limit=60)


def two_jobs(cluster):
    # one GPU; A arrives at 0 and runs 10, B arrives at 1 and runs 1
    return Instance(cluster, (Job("A", Resources(1), arrival=0.0, duration=10.0),
                              Job("B", Resources(1), arrival=1.0, duration=1.0)))


@pytest.mark.parametrize("backend", ["cpsat", "highs"])
def test_preemptive_ti_hand_optimum(backend):
    backend_or_skip(backend)
    base = two_jobs(tiny_cluster(machines=1, gpus=1))
    # preemptive: A 0-1, B 1-2, A 2-11 -> (11 + 1) / 2 = 6; makespan 11
    for mode in ("total", "machine"):
        r = solve(PreemptiveTIFormulation(), PreemptiveTIInstance(base, 1.0, "avg-jct", mode), backend, P)
        assert r.status is Status.OPTIMAL and r.objective == pytest.approx(6.0) and r.verified
        assert r.solution.slots["B"] == (1,)
    r = solve(PreemptiveTIFormulation(), PreemptiveTIInstance(base, 1.0, "makespan"), backend, P)
    assert r.objective == pytest.approx(11.0)
    # the non-preemptive optimum is 6.5 (B first): preemption helps here
    r = solve(OfflineFormulation(), OfflineInstance(base), "cpsat", P)
    assert r.objective == pytest.approx(6.5)


def test_preemptive_ti_machine_mode_is_tighter_than_total():
    # 2 machines x 1 GPU: a 2-GPU gang spans both; total and machine mode agree; with 2 machines x 2 GPUs
    # and jobs of 3 + 1 GPUs the total-GPU relaxation runs both at once but machines cannot (3 > 2 per machine
    # still fits across both: 2 + 1, leaving 1 GPU for the 1-GPU job) -> equal; 3 + 2 on 2 x 2 (4 total) no.
    cl = tiny_cluster(machines=2, gpus=2)
    base = Instance(cl, (Job("a", Resources(3), duration=2.0), Job("b", Resources(1), duration=2.0)))
    t = solve(PreemptiveTIFormulation(), PreemptiveTIInstance(base, 1.0), "cpsat", P)
    m = solve(PreemptiveTIFormulation(), PreemptiveTIInstance(base, 1.0, mode="machine"), "cpsat", P)
    assert t.objective == m.objective == pytest.approx(2.0) and m.verified
    assert not ti_violations(PreemptiveTIInstance(base, 1.0, mode="machine"), m.solution)


def test_preemptive_ti_rejects_off_slot_data_and_flags_bad_schedules():
    cl = tiny_cluster(machines=1, gpus=1)
    with pytest.raises(SpecError, match="multiple of the slot"):
        PreemptiveTIInstance(Instance(cl, (Job("a", Resources(1), duration=1.5),)), 1.0)
    with pytest.raises(SpecError, match="duration"):
        PreemptiveTIInstance(Instance(cl, (Job("a", Resources(1)),)), 1.0)
    inst = PreemptiveTIInstance(two_jobs(cl), 1.0)
    bad = ti_violations(inst, SlotSchedule({"A": tuple(range(10)), "B": (0,)}))
    assert any("before its release" in v for v in bad) and any("capacity" in v for v in bad)


def test_io_roundtrip(tmp_path):
    inst = PreemptiveTIInstance(two_jobs(tiny_cluster(machines=1, gpus=1)), 1.0, "makespan", "machine")
    save_instance(inst, tmp_path / "ti.json")
    assert load_instance(tmp_path / "ti.json").to_dict() == inst.to_dict()
    rz = ResizableInstance(2, (ResizableJob("a", 0.0, 2.0, {1: 1.0, 2: 2.0}),), 1.0)
    save_instance(rz, tmp_path / "rz.json")
    assert load_instance(tmp_path / "rz.json") == rz


@pytest.mark.parametrize("backend", ["cpsat", "highs"])
def test_resizable_hand_optima(backend):
    backend_or_skip(backend)
    # 2 GPUs, two jobs of work 2 at 0. Linear speeds: run one at 2 GPUs then the other: ends 1, 2 -> 1.5
    lin = ResizableInstance(2, (ResizableJob("a", 0.0, 2.0, {1: 1.0, 2: 2.0}),
                                ResizableJob("b", 0.0, 2.0, {1: 1.0, 2: 2.0})), 1.0)
    r = solve(ResizableTIFormulation(), lin, backend, P)
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(1.5) and r.verified
    assert fluid_bound(lin).value == pytest.approx(1.5)  # tight on linear speed-ups
    # sub-linear (2 GPUs give 1.5): side by side at 1 GPU each, both end at 2 -> 2; fluid bound 1.5
    sub = ResizableInstance(2, (ResizableJob("a", 0.0, 2.0, {1: 1.0, 2: 1.5}),
                                ResizableJob("b", 0.0, 2.0, {1: 1.0, 2: 1.5})), 1.0)
    r = solve(ResizableTIFormulation(), sub, backend, P)
    assert r.objective == pytest.approx(2.0)
    assert fluid_bound(sub).value == pytest.approx(1.5)
    mk = ResizableInstance(2, sub.jobs, 1.0, "makespan")
    assert solve(ResizableTIFormulation(), mk, backend, P).objective == pytest.approx(2.0)
    assert fluid_bound(mk).value == pytest.approx(2.0)  # 4 GPU-seconds of work on 2 GPUs
    res = FluidBoundMethod().solve(sub)
    assert res.bounds.dual == pytest.approx(1.5) and res.objective is None


def test_perf_speeds_from_the_perf_model():
    from schedlab.perfmodel.facade import PerfModel
    cl = tiny_cluster(machines=2, gpus=4)
    sp = perf_speeds(PerfModel(cl), "resnet50", 8)
    assert set(sp) <= set(range(1, 9)) and 1 in sp and all(v > 0 for v in sp.values())
    inst = Instance(cl, (Job("r", Resources(2), iterations=100.0, arrival=3.0, model="resnet50"),))
    rz, notes = resizable_from_instance(inst, PerfModel(cl), slot=2.0)
    assert rz.jobs[0].arrival == 2.0 and rz.jobs[0].work == 100.0 and notes and "rounded down" in notes[0]


JOB = st.tuples(st.integers(0, 3), st.integers(1, 3), st.sampled_from([1, 2, 3]))


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(JOB, min_size=1, max_size=4), st.sampled_from(["linear", "concave"]))
def test_orders_fluid_resizable_preemptive_nonpreemptive(jobs, curve):
    """fluid <= resizable <= preemptive(total) <= preemptive(machine) <= non-preemptive, and the
    combinatorial preemptive bound <= preemptive(total); resizable speeds satisfy s(g)·d = W."""
    cl = tiny_cluster(machines=2, gpus=2)
    js = tuple(Job(f"j{i}", Resources(g), arrival=float(r), duration=float(d)) for i, (r, d, g) in enumerate(jobs))
    base = Instance(cl, js)
    for obj in ("avg-jct", "makespan"):
        nonp = solve(OfflineFormulation(), OfflineInstance(base, obj), "cpsat", P)
        tot = solve(PreemptiveTIFormulation(), PreemptiveTIInstance(base, 1.0, obj), "cpsat", P)
        mach = solve(PreemptiveTIFormulation(), PreemptiveTIInstance(base, 1.0, obj, "machine"), "cpsat", P)
        assert all(r.status is Status.OPTIMAL for r in (nonp, tot, mach))
        assert lower_bound(OfflineInstance(base, obj)).value <= tot.objective + 1e-6
        assert tot.objective <= mach.objective + 1e-6 <= nonp.objective + 2e-6

        def speed(k: int) -> float:
            return float(k) if curve == "linear" else k ** 0.5

        rz = ResizableInstance(4, tuple(ResizableJob(j.id, j.arrival, speed(j.requested.gpus) * j.duration,
                                                     {k: speed(k) for k in range(1, 5)}) for j in js), 1.0, obj)
        res = solve(ResizableTIFormulation(), rz, "cpsat", P)
        assert res.status is Status.OPTIMAL and res.verified
        assert fluid_bound(rz).value <= res.objective + 1e-6 <= tot.objective + 2e-6
