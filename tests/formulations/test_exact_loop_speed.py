"""The mechanisms that make exact-in-the-loop cheaper (issue 25): the model's numpy arrays (violated
rows, full points), MathOpt solved from its protos, HiGHS options (feasibility jump off), the fastest
plan of a footprint memoised across rounds, and the start of a preemption re-solve. Each gives the
same round optimum as the path it replaces."""

from __future__ import annotations

import dataclasses

import pytest

from schedlab.formulations import SolveParams, Status
from schedlab.formulations.backends import get_backend
from schedlab.formulations.backends.mathopt import _model_proto
from schedlab.formulations.base import solve
from schedlab.formulations.joint import JointFormulation
from schedlab.formulations.joint_instance import footprint
from schedlab.formulations.joint_options import PRICERS, generate_joint
from schedlab.formulations.model import INF, Model, bounded
from schedlab.formulations.policies import exact_joint
from schedlab.formulations.policies.exact_joint import _fitting_part
from schedlab.formulations.result import SolveParamsError
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Job, JobAllocation, Resources
from schedlab.topology.errors import Unsupported

FJ_OFF = (("mip_heuristic_run_feasibility_jump", False),)


def _model() -> Model:
    m = Model("t")
    x, y, z = m.var("x", 0, 4, integer=True), m.var("y", -1, 3), m.var("z", 1, INF)
    m.add(x + y <= 5, "le")
    m.add(bounded(1, x - 2 * y, 2), "range")
    m.add(x + 0 * z == 2, "eq0")  # a zero coefficient: dropped from the arrays, value unchanged
    m.maximize(x + y + z)
    return m


def _violated_by_hand(m: Model, values: list[float], tol: float = 1e-6) -> list[str]:
    """The loop ``Model.violated`` replaced (kept here as the reference)."""
    out = []
    for v in m.vars:
        x = values[v.index]
        if x < v.lb - tol or x > v.ub + tol or (v.integer and abs(x - round(x)) > tol):
            out.append(f"var {v.name}={x}")
    for c in m.constraints:
        s = sum(k * values[i] for i, k in c.terms.items())
        if s < c.lb - tol * max(1.0, abs(c.lb)) or s > c.ub + tol * max(1.0, abs(c.ub)):
            out.append(f"constraint {c.name}: {c.lb} <= {s} <= {c.ub}")
    return out


@pytest.mark.parametrize("values", [[2.0, 0.5, 1.0], [2.5, 0.5, 1.0], [4.0, 3.0, 0.0], [0.0, -1.0, 7.0],
                                    [2.0, 1.0, 1.0]])
def test_violated_matches_the_row_by_row_loop(values):
    m = _model()
    assert m.violated(values) == _violated_by_hand(m, values)


def test_arrays_follow_rows_added_after_a_first_use():
    m = _model()
    assert m.violated([2.0, 0.5, 1.0]) == []
    a = m.arrays()
    assert list(a.rows) == [0, 0, 1, 1, 2] and list(a.cols) == [0, 1, 0, 1, 0]  # zero coefficient dropped
    m.add(m.vars[2] <= 0.5, "late")
    assert m.arrays() is not a and m.violated([2.0, 0.5, 1.0]) == ["constraint late: -inf <= 1.0 <= 0.5"]


def test_point_fills_and_clamps_as_before():
    m = _model()
    assert m.point({0: 3.0, 7: 9.0}) == [3.0, 0.0, 1.0]  # y: 0 is inside; z: 0 clamped to 1; index 7: no var


def test_model_proto_is_what_mathopt_would_export(make_cluster):
    """The proto handed to the solver equals MathOpt's own export of it (the solve sees the model the
    MathOpt Python model gave it before)."""
    from ortools.math_opt.python import mathopt

    inst = generate_joint(make_cluster(machines=2, gpus=4, cpus=64, mem=512.0), 4, seed=2, source="perfmodel")
    built = JointFormulation().build(inst)
    p = _model_proto(built.model, SolveParams(), 0.0)
    assert mathopt.Model.from_model_proto(p).export_model() == p


def test_backend_options_reach_highs_and_no_other_backend(make_cluster):
    inst = generate_joint(make_cluster(machines=2, gpus=4, cpus=64, mem=512.0), 4, seed=2, source="perfmodel")
    base = solve(JointFormulation(), inst, "highs", SolveParams(threads=1, seed=0))
    off = solve(JointFormulation(), inst, "highs", SolveParams(threads=1, seed=0, backend_options=FJ_OFF))
    assert base.status is off.status is Status.OPTIMAL
    assert off.objective == pytest.approx(base.objective, rel=1e-9)
    assert "options" in get_backend("highs").capabilities and "options" not in get_backend("cpsat").capabilities
    with pytest.raises(Unsupported, match="backend_options"):
        solve(JointFormulation(), inst, "cpsat", SolveParams(threads=1, backend_options=FJ_OFF))
    with pytest.raises(SolveParamsError):
        SolveParams(backend_options=(("x",),))
    # an unknown HiGHS option is an error of the solve, never a silent default
    bad = solve(JointFormulation(), inst, "highs", SolveParams(threads=1, backend_options=(("no_such", True),)))
    assert bad.status is not Status.OPTIMAL


RESTART_OFF = (("mip_allow_restart", False),)


def test_exact_joint_turns_feasibility_jump_and_restarts_off_on_highs_only():
    spec = exact_joint.EXACT_POLICIES["exact-joint"]
    assert spec.build({}, seed=0).backend_options == FJ_OFF + RESTART_OFF
    assert spec.build({"feasibility_jump": True}, seed=0).backend_options == RESTART_OFF
    assert spec.build({"feasibility_jump": True, "mip_restart": True}, seed=0).backend_options == ()
    assert spec.build({"mip_restart": True}, seed=0).backend_options == FJ_OFF
    assert spec.build({"backend": "cpsat"}, seed=0).backend_options == ()


def test_restarts_off_keep_the_optimum(make_cluster):
    """Without HiGHS's restart a joint instance is still solved to proven optimality, same objective."""
    inst = generate_joint(make_cluster(machines=2, gpus=4, cpus=64, mem=512.0), 6, seed=3, source="perfmodel")
    on = solve(JointFormulation(), inst, "highs", SolveParams(threads=1, seed=0, backend_options=FJ_OFF))
    off = solve(JointFormulation(), inst, "highs",
                SolveParams(threads=1, seed=0, backend_options=FJ_OFF + RESTART_OFF))
    assert on.status is Status.OPTIMAL and off.status is Status.OPTIMAL
    assert off.objective == pytest.approx(on.objective, rel=1e-6)


def test_fastest_plan_memo_gives_the_unmemoised_answer(make_cluster):
    inst = generate_joint(make_cluster(machines=2, gpus=4, cpus=64, mem=512.0), 4, seed=5, source="perfmodel")
    res = solve(JointFormulation(), inst, "highs", SolveParams(threads=1, seed=0))
    assert res.status is Status.OPTIMAL and len(res.allocation)
    memo: dict = {}
    shared = dataclasses.replace(inst, memo=memo)
    fresh, cached = PRICERS["perfmodel"](inst), PRICERS["perfmodel"](shared)
    for ja in res.allocation:
        job, fp = inst.base.job(ja.job_id), footprint(inst, ja)
        first = cached.best(job, fp)
        assert first == fresh.best(job, fp) == cached.best(job, fp)
    assert len(memo) >= 1
    # a round's instance with the memo extracts the same allocation as without it
    again = solve(JointFormulation(), shared, "highs", SolveParams(threads=1, seed=0))
    assert again.allocation == res.allocation and again.objective == pytest.approx(res.objective, rel=1e-12)


def test_fitting_part_keeps_what_fits_beside_held_resources():
    """P ran on m0 beside K (kept); the optimum preempts P, starts S on m0 and N on m1, moves M from m1
    to m0: the start of the re-solve keeps K and N (m1 only), drops S and M (on P's machine)."""
    def ja(jid, **pl):
        return JobAllocation(jid, ExecutionPlan(dp=sum(pl.values())), {m: Resources(g, g) for m, g in pl.items()})

    current = Allocation.of([ja("p", m0=4), ja("k", m0=2), ja("m", m1=2)])
    target = Allocation.of([ja("k", m0=2), ja("s", m0=4), ja("n", m1=2), ja("m", m0=2)])
    assert sorted(_fitting_part(target, current, {"p"}).assignments) == ["k", "n"]


def _rigid(jid: str, gpus: int, arrival: float = 0.0, iterations: float = 1000.0) -> Job:
    """A job outside the perf model's zoo: only its requested option, valued 1."""
    return Job(jid, Resources(gpus, gpus), iterations=iterations, arrival=arrival, model="no-such-model",
               attrs={"iter_time": 1.0, "rates": "reference"})


def test_preemption_re_solve_gives_the_same_optimum_with_its_start(make_cluster, monkeypatch):
    """Two 4-GPU machines; A (4 GPUs) and X (2) run from 0; B, C, E (2 each) arrive at 10. Placing all
    four small jobs (4 - pi) beats keeping A (3): the optimum preempts A. Under ``preemption=re-solve``, A holds its machine until its
    checkpoint, so the round is solved again, started from the part that fits beside A (X and the new
    job beside it): that re-solve reaches the optimum the re-solve without the start reaches."""
    from schedlab.benchmarks.simulator import simulate
    from schedlab.formulations.joint_rules import joint_objective

    cl = make_cluster(machines=2)
    jobs = (_rigid("a", 4), _rigid("x", 2, iterations=5000.0), _rigid("b", 2, arrival=10.0),
            _rigid("c", 2, arrival=10.0), _rigid("e", 2, arrival=10.0))
    seen: list[tuple[int, float, float]] = []
    real = exact_joint.ExactJointPolicy._solve

    def spy(self, jinst, left, hint=None, first=None):
        res = real(self, jinst, left, hint, first)
        if first is not None:
            plain = real(self, jinst, left, hint, None)
            assert res.status is plain.status is Status.OPTIMAL
            assert res.provenance.warm_start_used
            seen.append((len(first), joint_objective(jinst, res.allocation), joint_objective(jinst, plain.allocation)))
        return res

    monkeypatch.setattr(exact_joint.ExactJointPolicy, "_solve", spy)
    pol = exact_joint.EXACT_POLICIES["exact-joint"].build({"threads": 1, "node_limit": 10_000,
                                                         "preemption": "re-solve"}, seed=0)
    res = simulate(cl, jobs, pol)
    assert not res.unfinished and pol.counters["re-solved:preemption"] == len(seen) >= 1
    assert seen[0][0] == 2  # X and the new job beside it
    for _n, a, b in seen:
        assert a == pytest.approx(b, rel=1e-9)
