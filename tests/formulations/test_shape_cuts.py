"""joint-2stage's shape cuts (formulations/joint_cuts.py): a class choice proven unpackable (the place-all
check) is reduced to a smaller unpackable core and every choice with the core's tied jobs and at least
its option shapes is cut at once. Known optima, checked against the full per-machine model; and the
repair (stage 2b) under the holding rule."""

from __future__ import annotations

import pytest

from schedlab.formulations import (
    JobOption,
    JointFormulation,
    JointInstance,
    JointTwoStage,
    SolveParams,
    Status,
    solve,
)
from schedlab.formulations.joint import pooled_ok
from schedlab.formulations.joint_cuts import core, harder, place_all, shape
from schedlab.formulations.joint_pack import pack_greedy
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources

P = SolveParams(threads=1, seed=0)  # no time limit: a limit never decides these results


def opt(g, c, t):
    return JobOption(g, c, 1, t, ExecutionPlan(dp=g), mem_gb=float(g))


def three_of_a_kind(cl) -> JointInstance:
    """2 machines x 4 GPUs. A, B, C: 3 GPUs on one machine (value 3) or 2 GPUs (2.40 / 2.41 / 2.42).
    Pooled, 3 + 3 + 2 fits (8 GPUs, three symmetric choices worth 8.40-8.42), but no machine holds
    3 + 2: the optimum is 3 + 2 + 2 with A on 3 GPUs, 3 + 2.41 + 2.42 = 7.83."""
    two = {"A": 2.40, "B": 2.41, "C": 2.42}
    jobs = tuple(Job(j, Resources(2, 2, 0.0), reconfigurable=True) for j in two)
    options = {j: (opt(3, 3, 3.0), opt(2, 2, v)) for j, v in two.items()}
    return JointInstance(Instance(cl, jobs), options, {j: 1.0 for j in two})


def test_one_shape_cut_excludes_every_symmetric_choice(make_cluster):
    inst = three_of_a_kind(make_cluster())
    assert not pooled_ok(inst)[0]
    r = JointTwoStage().solve(inst, "highs", P)
    assert r.status is Status.OPTIMAL and r.verified and r.objective == pytest.approx(7.83)
    assert r.bounds.dual == pytest.approx(7.83, abs=1e-6)
    # the three choices 3 + 3 + 2 share their shapes: one cut, then 3 + 2 + 2 packs (no stage 3)
    assert sum("shape cut" in n for n in r.notes) == 1
    assert not any("stage 3" in n for n in r.notes)
    full = solve(JointFormulation(aggregate=False), inst, "highs", P)
    assert full.status is Status.OPTIMAL and full.objective == pytest.approx(r.objective, abs=1e-6)


def test_no_good_cuts_alone_need_one_cut_per_symmetric_choice(make_cluster):
    inst = three_of_a_kind(make_cluster())
    two = JointTwoStage()
    two.max_cuts, two.max_shape_cuts = 4, 0  # round 7b's exact no-good cuts only
    r = two.solve(inst, "highs", P)
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(7.83)
    assert sum("stage 1, cut" in n for n in r.notes) >= 3 and not any("shape cut" in n for n in r.notes)


def test_place_all_and_its_core(make_cluster):
    inst = three_of_a_kind(make_cluster())
    a3, a2 = inst.options["A"]
    b3, _ = inst.options["B"]
    c3, c2 = inst.options["C"]
    chosen = {"A": a3, "B": b3, "C": c2}
    opts = {j: (o,) for j, o in chosen.items()}
    r, form = place_all(inst, opts, chosen, "highs", P)
    assert r.status is Status.INFEASIBLE and form.exact
    ok, _ = place_all(inst, {"A": (a3,), "B": (a2,), "C": (c2,)}, {"A": a3, "B": a2, "C": c2}, "highs", P)
    assert ok.status is Status.OPTIMAL and ok.verified and len(ok.allocation) == 3
    # the core keeps all three (any two pack)
    small, flags, checks = core(inst, opts, chosen, "highs", P, (False, False))
    assert set(small) == {"A", "B", "C"} and checks == 3


def test_core_leaves_out_a_job_that_does_not_matter(make_cluster):
    cl = make_cluster(machines=3)
    # 3 machines x 4 GPUs: A-D take 3 GPUs on one machine, E 2 GPUs. All five do not pack; nor do A-D
    # without E (one 3-GPU job per machine), so E, tried first (fewest GPUs), leaves the core; any
    # three of A-D pack, so they stay.
    jobs = tuple(Job(j, Resources(3, 3, 0.0), reconfigurable=True) for j in "ABCD") + (
        Job("E", Resources(2, 2, 0.0), reconfigurable=True),)
    options = {j: (opt(3, 3, 3.0),) for j in "ABCD"} | {"E": (opt(2, 2, 2.0),)}
    inst = JointInstance(Instance(cl, jobs), options, {j: 1.0 for j in "ABCDE"})
    chosen = {j: inst.options[j][0] for j in "ABCDE"}
    opts = {j: (o,) for j, o in chosen.items()}
    r, _ = place_all(inst, opts, chosen, "highs", P)
    assert r.status is Status.INFEASIBLE
    small, _, _ = core(inst, opts, chosen, "highs", P, (False, False))
    assert set(small) == {"A", "B", "C", "D"}
    # the solve: A-D (12) is cut, then 3 + 3 + 3 + 2 (11; core: three 3s and the 2) is cut, then three
    # 3-GPU jobs pack: 9.0
    res = JointTwoStage().solve(inst, "highs", P)
    full = solve(JointFormulation(aggregate=False), inst, "highs", P)
    assert res.status is full.status is Status.OPTIMAL
    assert res.objective == pytest.approx(full.objective, abs=1e-6) == pytest.approx(9.0)


def test_harder_shapes():
    s = shape(JobOption(8, 16, 2, 1.0, ExecutionPlan(dp=8), mem_gb=8.0, divisor=2), True, True)
    assert harder(s, s)
    # a larger divisor (pieces of 4 are pieces of 2), one machine, more CPUs: harder
    assert harder(shape(JobOption(8, 16, 2, 1.0, ExecutionPlan(dp=8), mem_gb=8.0, divisor=4), True, True), s)
    assert harder(shape(JobOption(8, 24, 1, 1.0, ExecutionPlan(dp=8), mem_gb=8.0), True, True), s)
    # fewer CPUs, a smaller divisor, other GPUs: not harder
    assert not harder(shape(JobOption(8, 8, 2, 1.0, ExecutionPlan(dp=8), mem_gb=8.0, divisor=2), True, True), s)
    assert not harder(shape(JobOption(8, 16, 2, 1.0, ExecutionPlan(dp=8), mem_gb=8.0, divisor=1), True, True), s)
    assert not harder(shape(JobOption(4, 16, 2, 1.0, ExecutionPlan(dp=4), mem_gb=8.0, divisor=2), True, True), s)
    # CPUs not read (no per-machine CPU rows): any CPUs
    assert harder(shape(JobOption(8, 8, 2, 1.0, ExecutionPlan(dp=8), mem_gb=8.0, divisor=2), False, True),
                  shape(JobOption(8, 16, 2, 1.0, ExecutionPlan(dp=8), mem_gb=8.0, divisor=2), False, True))


def held_instance(cl) -> tuple[JointInstance, dict]:
    """2 machines x 4 GPUs, the holding rule. Z runs 2 GPUs on m0; X and Y take 4 GPUs on one machine or
    2. The choice "all three on 4 GPUs" (more than fits: one the packer must repair): the greedy packer
    puts X on m0 and Y on m1, Z misses: left out, it holds its 2 GPUs on m0, where X now is, so that
    allocation does not verify."""
    m0 = cl.machines[0]
    jobs = tuple(Job(j, Resources(2, 2, 0.0), reconfigurable=True) for j in "XYZ")
    options = {j: (opt(4, 4, 4.0), opt(2, 2, 2.5)) for j in "XYZ"}
    cur = Allocation.of([JobAllocation("Z", ExecutionPlan(dp=2), {m0: Resources(2, 2, 2.0)})])
    inst = JointInstance(Instance(cl, jobs, current=cur), options, {j: 1.0 for j in "XYZ"},
                         reconfig_penalty=0.05, hold_preempted=True)
    return inst, {j: inst.options[j][0] for j in "XYZ"}


def test_repair_ties_a_held_job_that_missed(make_cluster):
    inst, chosen = held_instance(make_cluster())
    form = JointFormulation()
    greedy = pack_greedy(inst, chosen)
    assert len(greedy) == 2 and any("[hold]" in v for v in form.verify(inst, greedy))
    fixed = pack_greedy(inst, chosen, repair=True)
    assert form.verify(inst, fixed) == []
    assert fixed.get("Z") == inst.base.current["Z"]  # kept on its running resources
    assert {ja.job_id for ja in fixed} == {"X", "Y", "Z"}  # Y moved to a 2-GPU option beside Z


def test_held_instance_optimum_matches_the_full_model(make_cluster):
    inst, _ = held_instance(make_cluster())
    r = JointTwoStage().solve(inst, "highs", P)
    full = solve(JointFormulation(aggregate=False), inst, "highs", P)
    assert r.status is full.status is Status.OPTIMAL and r.verified
    assert r.objective == pytest.approx(full.objective, abs=1e-6)
