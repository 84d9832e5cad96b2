"""The model layer's expressions: comparisons are constraints, never truth values (issue 20.7)."""

from __future__ import annotations

import math

import pytest

from schedlab.formulations import SolveParams, Status
from schedlab.formulations.backends import get_backend
from schedlab.formulations.model import Constraint, Model, bounded, lsum


def _xy():
    m = Model("t")
    return m, m.var("x", 0, 10), m.var("y", 0, 10)


def test_chained_comparison_raises_with_the_hint():
    # regression: `1 <= x <= 5` is `(1 <= x) and (x <= 5)`; the truthy first constraint made Python
    # return the second alone, so the model silently lost `x >= 1`
    m, x, _ = _xy()
    with pytest.raises(TypeError, match=r"bounded\(lo, expr, hi\)"):
        m.add(1 <= x <= 5)
    with pytest.raises(TypeError, match="not a truth value"):
        m.add(0 <= x + 1 <= 5)
    assert m.constraints == []


def test_var_equals_var_is_a_constraint_not_true():
    # regression: `x == y` was truthy for two different variables
    m, x, y = _xy()
    c = x == y
    assert isinstance(c, Constraint)
    assert (c.terms, c.lb, c.ub) == ({x.index: 1.0, y.index: -1.0}, 0.0, 0.0)
    for e in (c, x == x, x + 1 == y, x <= 3, 2 >= y):
        with pytest.raises(TypeError, match="`x is y`"):
            bool(e)
    with pytest.raises(TypeError, match="`x is y`"):
        if x == y:  # the bug's shape: an `if` on a comparison
            pass
    with pytest.raises(TypeError, match="is not"):
        _ = x != y
    with pytest.raises(TypeError, match="`x is y`"):
        _ = x in [y]  # list membership calls ==: use a set (identity hash) instead
    assert m.add(c, "eq") is c and m.constraints == [c] and c.name == "eq"


def test_variables_hash_by_identity():
    m, x, y = _xy()
    other = Model("u").var("x", 0, 10)  # the same index in another model: a different variable
    d = {x: "x", y: "y", other: "other"}
    assert d[x] == "x" and d[y] == "y" and d[other] == "other" and len(d) == 3
    assert x in {x, y} and other not in {x, y}
    assert len({x, x, y}) == 2
    assert hash(x) == hash(x) and hash(x) != hash(other)
    assert (x == None) is False  # noqa: E711 - no linear meaning: Python's identity fallback
    with pytest.raises(TypeError):
        _ = x <= "a"
    with pytest.raises(TypeError):
        hash(x + 0)  # an expression is mutable and unhashable


def test_bounded_is_the_two_sided_range():
    m, x, y = _xy()
    c = bounded(1, x + 2 * y + 3, 5)  # 1 <= x + 2y + 3 <= 5  ->  -2 <= x + 2y <= 2
    assert (c.terms, c.lb, c.ub) == ({x.index: 1.0, y.index: 2.0}, -2.0, 2.0)
    assert bounded(-math.inf, x, 4).lb == -math.inf
    with pytest.raises(ValueError, match="lo 5 > hi 1"):
        bounded(5, x, 1)
    with pytest.raises(TypeError):
        bounded(1, 3, 5)
    # solved: max x + y with 1 <= x - y <= 3, y <= 4 (x <= 10) -> x = 7, y = 4 (x - y = 3): 11
    m.add(bounded(1, x - y, 3), "range")
    m.add(y <= 4)
    m.maximize(lsum([x, y]))
    r = get_backend("highs").solve(m, SolveParams(threads=1, time_limit_s=10, seed=0))
    assert r.status is Status.OPTIMAL and r.primal_bound == pytest.approx(11.0)
    assert m.violated([7.0, 4.0]) == [] and m.violated([4.0, 4.0]) != []  # x - y = 0 < 1
