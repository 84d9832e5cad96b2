"""joint-2stage's class-choice cuts: a class choice that no allocation packs is cut from the class MIP
(its restricted per-machine model's proven bound stays in the bound), the class MIP is solved again,
and the next choice may pack and prove the optimum without the full per-machine model (stage 3). A
choice that the greedy packer misses but that packs must not be cut. Known answers, checked against
the full per-machine model."""

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
from schedlab.formulations.backends import get_backend
from schedlab.formulations.joint import pooled_ok
from schedlab.formulations.joint_pack import pack_greedy
from schedlab.formulations.joint_pooled import class_model
from schedlab.formulations.joint_twostage import _choices, _cut_bound, _no_good
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Instance, Job, Resources

P = SolveParams(threads=1, seed=0)  # no time limit: a limit never decides these results


def opt(g, c, n, t):
    return JobOption(g, c, n, t, ExecutionPlan(dp=g), mem_gb=float(g))


def fragmented(cl) -> JointInstance:
    """2 machines x 4 GPUs. A, B: 3 GPUs on one machine (value 3 each); C: 2 GPUs (2.5). Pooled, all three
    fit (8 GPUs, 8.5), but no machine holds 3 + 2: the optimum is A + B = 6.0, a second class choice."""
    jobs = tuple(Job(j, Resources(g, g, 0.0), reconfigurable=True) for j, g in (("A", 3), ("B", 3), ("C", 2)))
    options = {"A": (opt(3, 3, 1, 3.0),), "B": (opt(3, 3, 1, 3.0),), "C": (opt(2, 2, 1, 2.5),)}
    return JointInstance(Instance(cl, jobs), options, {"A": 1.0, "B": 1.0, "C": 1.0})


@pytest.mark.parametrize("backend", ["highs", "cpsat"])
def test_cut_proves_the_optimum_without_stage_3(backend, make_cluster, need_backend):
    need_backend(backend)
    inst = fragmented(make_cluster())
    assert not pooled_ok(inst)[0]
    r = JointTwoStage().solve(inst, backend, P)
    assert r.status is Status.OPTIMAL and r.verified and r.objective == pytest.approx(6.0)
    assert r.bounds.dual == pytest.approx(6.0, abs=1e-6)
    assert any("cut 1" in n for n in r.notes) and not any("stage 3" in n for n in r.notes)
    full = solve(JointFormulation(aggregate=False), inst, "highs", P)
    assert full.status is Status.OPTIMAL and full.objective == pytest.approx(r.objective, abs=1e-6)


def test_without_cuts_stage_3_proves_the_same_optimum(make_cluster):
    inst = fragmented(make_cluster())
    two = JointTwoStage()
    two.max_cuts = 0
    r = two.solve(inst, "highs", P)
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(6.0)
    assert any("stage 3" in n for n in r.notes) and not any("cut 1" in n for n in r.notes)


def test_greedy_miss_that_packs_is_not_cut(make_cluster):
    # 3 machines x 4 GPUs. X spreads 6 GPUs (pieces of 1), Y and Z take 3 GPUs on one machine. The greedy
    # packer puts X as 4 + 2 and then has no machine with 3 free for Z; X = 4 + 1 + 1 packs all three
    # (12 GPUs, value 10), which the restricted model finds: optimal on the first class choice, no cut.
    cl = make_cluster(machines=3)
    jobs = (Job("X", Resources(6, 6, 0.0), reconfigurable=True),
            Job("Y", Resources(3, 3, 0.0), reconfigurable=True), Job("Z", Resources(3, 3, 0.0), reconfigurable=True))
    options = {"X": (JobOption(6, 6, 2, 4.0, ExecutionPlan(dp=6), mem_gb=6.0, divisor=1),),
               "Y": (opt(3, 3, 1, 3.0),), "Z": (opt(3, 3, 1, 3.0),)}
    inst = JointInstance(Instance(cl, jobs), options, {"X": 1.0, "Y": 1.0, "Z": 1.0})
    assert not pooled_ok(inst)[0]
    mdl, rows = class_model(inst, integral=True)
    raw = get_backend("highs").solve(mdl, P)
    _, chosen = _choices(inst, rows, raw.values)
    assert set(chosen) == {"X", "Y", "Z"} and len(pack_greedy(inst, chosen)) == 2  # the greedy miss
    r = JointTwoStage().solve(inst, "highs", P)
    assert r.status is Status.OPTIMAL and r.verified and r.objective == pytest.approx(10.0)
    assert r.bounds.dual == pytest.approx(10.0, abs=1e-6) and len(r.allocation) == 3
    assert not any("cut" in n for n in r.notes) and not any("stage 3" in n for n in r.notes)


def test_no_good_cuts_exactly_one_integer_point():
    from itertools import product

    from schedlab.formulations.model import LinExpr, Model

    mdl = Model("t", sense="max")
    x = [mdl.integer("a", 0, 3), mdl.binary("b"), mdl.integer("c", 0, 2)]
    mdl.maximize(LinExpr({v.index: 1.0 for v in x}))
    star = [1.0, 1.0, 2.0]
    _no_good(mdl, x, star, "ng")
    be = get_backend("highs")
    feasible = set()
    for pt in product(range(4), range(2), range(3)):  # fix each point and ask whether it stays feasible
        m2 = Model("t", sense="max", vars=list(mdl.vars), constraints=list(mdl.constraints), objective=mdl.objective)
        for v, val in zip(x, pt, strict=True):
            m2.add(LinExpr({v.index: 1.0}) == val, f"fix[{v.name}]")
        if be.solve(m2, P).values is not None:
            feasible.add(pt)
    assert feasible == set(product(range(4), range(2), range(3))) - {(1, 1, 2)}


def test_cut_bound_is_the_larger_of_the_cut_mip_and_the_excluded_choices():
    assert _cut_bound(8.5, 6.0, [6.0]) == 6.0
    assert _cut_bound(8.5, 5.5, [6.0]) == 6.0   # an excluded choice may still be worth more
    assert _cut_bound(8.5, None, [6.0]) == 8.5  # no bound from the cut MIP: only the first holds
    assert _cut_bound(8.5, None, [6.0], everything_cut=True) == 6.0
    assert _cut_bound(8.5, 9.0, []) == 8.5


def test_kept_job_stays_keepable_in_the_restricted_model(make_cluster):
    # a kept job in the restricted model (table pricing: it keeps without its table; the perf-model
    # case is the replay round below). 2 machines x 4 GPUs; R runs 2 GPUs on m0 (value 2 kept); X spreads 3 GPUs (pieces of 1, value 4),
    # Y takes 3 on one machine (3). Keep R + X + Y (9, all 8 GPUs) packs only as X = 2 (m0) + 1 (m1)
    # and Y on m1, which the greedy packer misses (it puts X on m1): the optimum is 9.
    from schedlab.scheduling import Allocation, JobAllocation

    cl = make_cluster()
    m0 = cl.machines[0]
    jobs = (Job("R", Resources(2, 2, 0.0), reconfigurable=True), Job("X", Resources(3, 3, 0.0), reconfigurable=True),
            Job("Y", Resources(3, 3, 0.0), reconfigurable=True))
    options = {"R": (opt(2, 2, 1, 2.0),),
               "X": (JobOption(3, 3, 2, 4.0, ExecutionPlan(dp=3), mem_gb=3.0, divisor=1),),
               "Y": (opt(3, 3, 1, 3.0),)}
    cur = Allocation.of([JobAllocation("R", ExecutionPlan(dp=2), {m0: Resources(2, 2, 2.0)})])
    inst = JointInstance(Instance(cl, jobs, current=cur), options, {"R": 1.0, "X": 1.0, "Y": 1.0})
    full = solve(JointFormulation(aggregate=False), inst, "highs", P)
    assert full.status is Status.OPTIMAL and full.objective == pytest.approx(9.0)
    r = JointTwoStage().solve(inst, "highs", P)
    assert r.status is Status.OPTIMAL and r.verified and r.objective == pytest.approx(9.0)
    assert r.bounds.dual == pytest.approx(9.0, abs=1e-6)


def test_replay_round_where_a_kept_job_needs_its_table():
    # regression (rubick-base seed 0, 150-job replay, t = 10740.1): the restricted model gave the kept
    # job no option, so the perf-model pricer could not price its running allocation and the restricted
    # bound (3.02) undercut the choice (4.2564, packable); two symmetric choices were cut and the round
    # was called optimal at 4.2488. The full per-machine model's optimum is 4.2564.
    from pathlib import Path

    from schedlab.formulations import load_instance

    inst = load_instance(Path(__file__).parent / "data" / "rubick_base_t10740.json")
    full = solve(JointFormulation(), inst, "highs", P)
    r = JointTwoStage().solve(inst, "highs", P)
    assert full.status is r.status is Status.OPTIMAL and r.verified
    assert r.objective == pytest.approx(full.objective, rel=1e-6) == pytest.approx(4.256418150687231, rel=1e-6)
