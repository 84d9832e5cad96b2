"""Conformance suite run against every backend (skipped with the backend's reason when unavailable)."""

from __future__ import annotations

import math

import pytest

from schedlab.formulations.backends import BACKENDS
from schedlab.formulations.backends.cpsat import integerise
from schedlab.formulations.model import Model, lsum
from schedlab.formulations.result import SolveParams, Status, relative_gap

P = SolveParams(threads=1, time_limit_s=30, seed=1)


def knapsack() -> Model:
    # max 5a + 4b + 3c  s.t. 2a + 3b + c <= 5, a + b + c <= 2 (binary): pairs a+b=9 (weight 5), a+c=8, b+c=7 -> 9
    m = Model("knap")
    a, b, c = (m.binary(n) for n in "abc")
    m.add(2 * a + 3 * b + c <= 5)
    m.add(a + b + c <= 2)
    m.maximize(5 * a + 4 * b + 3 * c)
    return m


@pytest.mark.parametrize("name", list(BACKENDS))
def test_knapsack_optimum_by_hand(name, need_backend):
    be = need_backend(name, frozenset({"mip"}))
    r = be.solve(knapsack(), P)
    assert r.status is Status.OPTIMAL
    assert r.primal_bound == pytest.approx(9.0)
    assert [round(v) for v in r.values] == [1, 1, 0]
    if "dual_bound" in be.capabilities:
        assert r.dual_bound == pytest.approx(9.0, abs=1e-6)


@pytest.mark.parametrize("name", list(BACKENDS))
def test_minimisation_with_equality_and_offset(name, need_backend):
    be = need_backend(name, frozenset({"mip"}))
    m = Model("min", sense="min")
    x = m.integer("x", 0, 10)
    y = m.integer("y", 0, 10)
    m.add(x + 2 * y == 7)
    m.minimize(3 * x + 4 * y + 1)  # y=3,x=1 -> 16; y=2,x=3 -> 18; y=1,x=5 -> 20; y=0,x=7 -> 22
    r = be.solve(m, P)
    assert r.status is Status.OPTIMAL
    assert r.primal_bound == pytest.approx(16.0)


@pytest.mark.parametrize("name", list(BACKENDS))
def test_infeasible_reported(name, need_backend):
    be = need_backend(name, frozenset({"mip"}))
    m = Model("inf")
    a, b = m.binary("a"), m.binary("b")
    m.add(a + b >= 3)
    m.maximize(a + b)
    r = be.solve(m, P)
    assert r.status is Status.INFEASIBLE
    assert r.values is None and r.dual_bound is None


@pytest.mark.parametrize("name", list(BACKENDS))
def test_fractional_coefficients(name, need_backend):
    # 0.5 a + 0.25 b + 0.75 c <= 1 (binaries), max a + b + c -> a + b (0.75) or b + c (1.0): 2
    be = need_backend(name, frozenset({"mip"}))
    m = Model("frac")
    a, b, c = (m.binary(n) for n in "abc")
    m.add(0.5 * a + 0.25 * b + 0.75 * c <= 1)
    m.maximize(lsum([a, b, c]))
    r = be.solve(m, P)
    assert r.status is Status.OPTIMAL and r.primal_bound == pytest.approx(2.0)


@pytest.mark.parametrize("name", list(BACKENDS))
def test_continuous_lp(name, need_backend):
    be = need_backend(name, frozenset({"continuous"}))
    m = Model("lp")
    x = m.var("x", 0, 10)
    y = m.var("y", 0, 10)
    m.add(x + y <= 4)
    m.add(x + 3 * y <= 6)
    m.maximize(x + 2 * y)  # vertex (3, 1): 5
    r = be.solve(m, P)
    assert r.status is Status.OPTIMAL and r.primal_bound == pytest.approx(5.0)


def test_cpsat_states_its_integer_scaling_and_keeps_the_bound_valid(need_backend):
    # max-min over real coefficients: t <= 0.1234567891 a, t <= 0.3 b (binaries): both on,
    # t = min(0.1234567891, 0.3) = 0.1234567891. t bounds two rows, so CP-SAT keeps it on a fixed-point
    # grid (1e-6); the precision is stated and the dual bound is never below the true optimum.
    be = need_backend("cpsat")
    m = Model("maxmin")
    a, b = m.binary("a"), m.binary("b")
    t = m.var("t", 0.0, 1.0)
    m.add(t - 0.1234567891 * a <= 0)
    m.add(t - 0.3 * b <= 0)
    m.add(a + b <= 2)
    m.maximize(t)
    r = be.solve(m, SolveParams(threads=1, seed=0))
    assert r.status is Status.OPTIMAL
    assert r.precision is not None and 0 < r.precision < 1e-5
    assert r.primal_bound == pytest.approx(0.1234567891, abs=2e-6)
    assert r.dual_bound >= 0.1234567891 - 1e-12


@pytest.mark.parametrize("name", list(BACKENDS))
def test_limited_run_never_claims_a_wrong_optimum(name, need_backend):
    # a 40-item two-constraint knapsack; with a 1-node limit a backend may stop early, but whatever
    # it calls OPTIMAL must equal the true optimum, and its solution is always feasible
    import random

    be = need_backend(name, frozenset({"mip"}))
    rng = random.Random(3)

    def build() -> Model:
        m = Model("k40")
        xs = [m.binary(f"x{i}") for i in range(40)]
        w1 = [rng.randint(5, 40) for _ in xs]
        w2 = [rng.randint(5, 40) for _ in xs]
        v = [rng.randint(10, 60) for _ in xs]
        m.add(lsum(zip(w1, xs, strict=True)) <= 300)
        m.add(lsum(zip(w2, xs, strict=True)) <= 280)
        m.maximize(lsum(zip(v, xs, strict=True)))
        return m

    m = build()
    exact = need_backend("highs").solve(m, P)
    params = SolveParams(threads=1, node_limit=1, work_limit=0.01, seed=1)
    r = be.solve(m, params)
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE_AT_LIMIT, Status.NO_SOLUTION_AT_LIMIT)
    assert (r.termination.limit is None) == (r.status is Status.OPTIMAL), r.termination  # which limit, if any
    if r.values is not None:
        assert not m.violated(r.values)
        assert r.primal_bound <= exact.primal_bound + 1e-6
    if r.status is Status.OPTIMAL:
        assert r.primal_bound == pytest.approx(exact.primal_bound, rel=1e-6)
    if r.dual_bound is not None:
        assert r.dual_bound >= exact.primal_bound - 1e-6


def test_cpsat_intervals_cumulative(need_backend):
    # two 1-unit-capacity jobs of length 3 and 2 on one resource: min sum of ends = 2 + 5 = 7
    be = need_backend("cpsat")
    m = Model("sched", sense="min")
    s1, e1 = m.integer("s1", 0, 10), m.integer("e1", 0, 10)
    s2, e2 = m.integer("s2", 0, 10), m.integer("e2", 0, 10)
    m.add(e1 - s1 == 3)
    m.add(e2 - s2 == 2)
    i1, i2 = m.interval(s1, e1, 3), m.interval(s2, e2, 2)
    m.cumulative([i1, i2], [1, 1], 1)
    m.minimize(e1 + e2)
    r = be.solve(m, SolveParams(threads=1, work_limit=5, seed=0))
    assert r.status is Status.OPTIMAL and r.primal_bound == pytest.approx(7.0)


def test_integerise_scales_exactly_and_rounds_bounds_inwards():
    ic, lo, hi, exact = integerise({0: 0.5, 1: 0.25}, -math.inf, 1.1)
    assert ic == {0: 50, 1: 25} and hi == 110 and lo == -math.inf and exact
    ic, lo, hi, exact = integerise({0: 3.0}, 1.5, 7.5)  # integral left side: 3x in [2, 7]
    assert ic == {0: 3} and lo == 2 and hi == 7 and exact
    ic, lo, hi, exact = integerise({0: 1 / 3}, -math.inf, 1.0)
    assert not exact


def test_relative_gap_hand_values():
    assert relative_gap(90.0, 100.0) == pytest.approx(0.1)
    assert relative_gap(100.0, 100.0) == 0.0
    assert relative_gap(0.0, 0.0) == 0.0
    assert relative_gap(None, 3.0) is None and relative_gap(1.0, None) is None
    assert relative_gap(-5.0, -4.0) == pytest.approx(0.2)


def test_params_validate_and_clamp_threads():
    import os

    assert SolveParams(threads=10_000).effective_threads == (os.cpu_count() or 1)
    with pytest.raises(ValueError):
        SolveParams(threads=0)
    with pytest.raises(ValueError):
        SolveParams(time_limit_s=0)
