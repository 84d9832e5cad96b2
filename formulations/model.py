"""A small solver-neutral model: variables, linear constraints, a linear objective, and (CP-SAT only)
fixed-size intervals with per-resource cumulative constraints.

Every formulation is written once against this layer; :mod:`formulations.backends` translate it to
each solver. Variables are referred to by index; :class:`LinExpr` supports ``+``, ``-``, scalar ``*``
and the comparisons ``<=``, ``>=``, ``==`` (which build a :class:`Constraint`).

**Comparisons are constraints, never booleans** (as in OR-Tools MathOpt): ``bool()`` of a
:class:`Constraint` raises ``TypeError`` with a hint. So the chained ``lo <= x <= hi`` (Python
evaluates ``(lo <= x) and (x <= hi)``, which silently kept ``x <= hi`` before) and ``if x == y``
fail loudly; write a two-sided range as ``bounded(lo, expr, hi)`` and test whether two variables
are the same one with ``x is y`` (``x in [y, z]`` calls ``==`` and raises too: use a set or
``any(x is v for v in vs)``; MathOpt makes ``bool(x == y)`` an identity test for two variables, here
one rule covers every comparison). ``!=`` has no linear meaning and raises. A :class:`Var` hashes by
identity (a dict key or set member; dicts and sets compare by identity first and distinct live
variables have distinct hashes, so they never call ``==``); a :class:`LinExpr` is mutable and
unhashable.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from numbers import Real

import numpy as np

INF = math.inf

#: what ``bool()`` of a comparison says (Python's chained comparisons and ``if x == y`` call it)
_NOT_A_BOOL = ("a model comparison is a Constraint, not a truth value. For a two-sided range "
               "lo <= expr <= hi write bounded(lo, expr, hi) (Python's chained comparison tests the first "
               "part with bool()); to test whether two variables are the same one use `x is y`; add constraints "
               "with model.add(...)")


def _linear(other: object) -> bool:
    return isinstance(other, LinExpr | Var | Real)


def _no_ne(self: object, other: object) -> bool:
    raise TypeError("!= is not a linear constraint; use `is not` to compare variables by identity")


class LinExpr:
    """``sum(coef * var) + const`` with ``terms: {var index: coef}``."""

    __slots__ = ("terms", "const")

    def __init__(self, terms: Mapping[int, float] | None = None, const: float = 0.0) -> None:
        self.terms: dict[int, float] = dict(terms) if terms else {}
        self.const = float(const)

    def copy(self) -> LinExpr:
        return LinExpr(self.terms, self.const)

    def add_term(self, index: int, coef: float) -> LinExpr:
        """In-place ``self += coef * var[index]`` (fast path for building big sums)."""
        if coef:
            self.terms[index] = self.terms.get(index, 0.0) + coef
        return self

    def iadd(self, other: LinExpr | Var | float, k: float = 1.0) -> LinExpr:
        """In-place ``self += k * other``."""
        if isinstance(other, Var):
            return self.add_term(other.index, k)
        if isinstance(other, LinExpr):
            for i, c in other.terms.items():
                self.terms[i] = self.terms.get(i, 0.0) + k * c
            self.const += k * other.const
            return self
        self.const += k * float(other)
        return self

    def __add__(self, other) -> LinExpr:
        return self.copy().iadd(other)

    __radd__ = __add__

    def __sub__(self, other) -> LinExpr:
        return self.copy().iadd(other, -1.0)

    def __rsub__(self, other) -> LinExpr:
        return (-self).iadd(other)

    def __neg__(self) -> LinExpr:
        return LinExpr({i: -c for i, c in self.terms.items()}, -self.const)

    def __mul__(self, k: float) -> LinExpr:
        if not isinstance(k, int | float):
            raise TypeError("a linear expression can only be multiplied by a number")
        return LinExpr({i: k * c for i, c in self.terms.items()}, k * self.const)

    __rmul__ = __mul__

    def __le__(self, other) -> Constraint:  # type: ignore[override]
        if not _linear(other):
            return NotImplemented
        e = self - other
        return Constraint(e.terms, -INF, -e.const)

    def __ge__(self, other) -> Constraint:  # type: ignore[override]
        if not _linear(other):
            return NotImplemented
        e = self - other
        return Constraint(e.terms, -e.const, INF)

    def __eq__(self, other) -> Constraint:  # type: ignore[override]
        if not _linear(other):
            return NotImplemented
        e = self - other
        return Constraint(e.terms, -e.const, -e.const)

    __ne__ = _no_ne  # type: ignore[assignment]
    __hash__ = None  # type: ignore[assignment]

    def value(self, values: list[float]) -> float:
        return self.const + sum(c * values[i] for i, c in self.terms.items())


class Var:
    """A decision variable (``integer`` or continuous) with bounds ``[lb, ub]``."""

    __slots__ = ("index", "name", "lb", "ub", "integer")

    def __init__(self, index: int, name: str, lb: float, ub: float, integer: bool) -> None:
        self.index, self.name, self.lb, self.ub, self.integer = index, name, lb, ub, integer

    def expr(self) -> LinExpr:
        return LinExpr({self.index: 1.0})

    def __add__(self, other) -> LinExpr:
        return self.expr() + other

    __radd__ = __add__

    def __sub__(self, other) -> LinExpr:
        return self.expr() - other

    def __rsub__(self, other) -> LinExpr:
        return other - self.expr()

    def __neg__(self) -> LinExpr:
        return LinExpr({self.index: -1.0})

    def __mul__(self, k: float) -> LinExpr:
        return LinExpr({self.index: float(k)})

    __rmul__ = __mul__

    def __le__(self, other) -> Constraint:  # type: ignore[override]
        return self.expr().__le__(other)

    def __ge__(self, other) -> Constraint:  # type: ignore[override]
        return self.expr().__ge__(other)

    def __eq__(self, other) -> Constraint:  # type: ignore[override]
        return self.expr().__eq__(other)

    __ne__ = _no_ne  # type: ignore[assignment]
    __hash__ = object.__hash__  # identity (defining __eq__ would otherwise make it unhashable)

    def __repr__(self) -> str:
        return f"Var({self.name}, [{self.lb}, {self.ub}]{', int' if self.integer else ''})"


def lsum(items: Iterable[LinExpr | Var | tuple[float, Var]]) -> LinExpr:
    """Sum of expressions, variables or ``(coef, var)`` pairs, built in place."""
    out = LinExpr()
    for it in items:
        if isinstance(it, tuple):
            out.add_term(it[1].index, float(it[0]))
        else:
            out.iadd(it)
    return out


@dataclass(slots=True, eq=False)
class Constraint:
    """``lb <= sum(terms) <= ub``; built by a comparison or :func:`bounded`. Not a truth value:
    ``bool()`` raises (module docstring); two constraints compare by identity."""

    terms: dict[int, float]
    lb: float
    ub: float
    name: str = ""

    def __bool__(self) -> bool:
        raise TypeError(_NOT_A_BOOL)


def bounded(lo: float, expr: LinExpr | Var, hi: float) -> Constraint:
    """The two-sided range ``lo <= expr <= hi`` as one constraint (``lo``/``hi`` may be
    ``-INF``/``INF``); ``lo > hi`` is an error rather than an infeasible row."""
    if not isinstance(expr, LinExpr | Var) or not isinstance(lo, Real) or not isinstance(hi, Real):
        raise TypeError("bounded(lo, expr, hi) takes two numbers around a variable or linear expression")
    if lo > hi:
        raise ValueError(f"bounded: lo {lo} > hi {hi}")
    e = expr.expr() if isinstance(expr, Var) else expr
    return Constraint(dict(e.terms), float(lo) - e.const, float(hi) - e.const)


@dataclass(frozen=True, slots=True)
class Interval:
    """A fixed-size interval ``[start, start + size)`` (CP-SAT only); ``end`` is linked to start."""

    start: int
    end: int
    size: int
    name: str = ""


@dataclass(frozen=True, slots=True)
class Cumulative:
    """``sum of demands of intervals overlapping any time point <= capacity``; a demand is an integer
    or a variable index given as ``("var", index)``."""

    intervals: tuple[int, ...]
    demands: tuple[int | tuple[str, int], ...]
    capacity: int
    name: str = ""


@dataclass(frozen=True, eq=False)
class Arrays:
    """A model's data as numpy arrays (:meth:`Model.arrays`): the constraint matrix in coordinate form,
    row-major with ascending columns, zero coefficients dropped (what MathOpt's ``ModelProto`` wants),
    row and variable bounds, integrality."""

    rows: np.ndarray
    cols: np.ndarray
    coefs: np.ndarray
    row_lb: np.ndarray
    row_ub: np.ndarray
    var_lb: np.ndarray
    var_ub: np.ndarray
    integer: np.ndarray

    def row_values(self, x: np.ndarray) -> np.ndarray:
        """Every row's ``sum(coef * x)``."""
        return np.bincount(self.rows, weights=self.coefs * x[self.cols], minlength=len(self.row_lb))


@dataclass
class Model:
    """The solver-neutral model. ``sense`` is ``"max"`` or ``"min"``. Variables and rows are only ever
    appended (never changed once added): :meth:`arrays` caches the model's arrays on that rule."""

    name: str = "model"
    vars: list[Var] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    objective: LinExpr = field(default_factory=LinExpr)
    sense: str = "max"
    intervals: list[Interval] = field(default_factory=list)
    cumulatives: list[Cumulative] = field(default_factory=list)
    hints: dict[int, float] = field(default_factory=dict)
    #: :meth:`arrays`' cache, ``((variables, rows), Arrays)``; a shallow copy (hints) shares it
    arrays_cache: tuple[tuple[int, int], Arrays] | None = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------ building
    def var(self, name: str, lb: float = 0.0, ub: float = INF, *, integer: bool = False) -> Var:
        if lb > ub:
            raise ValueError(f"variable {name}: lb {lb} > ub {ub}")
        v = Var(len(self.vars), name, float(lb), float(ub), integer)
        self.vars.append(v)
        return v

    def binary(self, name: str) -> Var:
        return self.var(name, 0, 1, integer=True)

    def integer(self, name: str, lb: float, ub: float) -> Var:
        return self.var(name, lb, ub, integer=True)

    def add(self, c: Constraint, name: str = "") -> Constraint:
        if not isinstance(c, Constraint):
            raise TypeError(f"expected a Constraint (built with <=, >=, == or bounded(lo, expr, hi)), "
                            f"got {type(c).__name__}")
        c.name = name
        self.constraints.append(c)
        return c

    def maximize(self, expr: LinExpr | Var) -> None:
        self.objective = expr.expr() if isinstance(expr, Var) else expr
        self.sense = "max"

    def minimize(self, expr: LinExpr | Var) -> None:
        self.objective = expr.expr() if isinstance(expr, Var) else expr
        self.sense = "min"

    def interval(self, start: Var, end: Var, size: int, name: str = "") -> int:
        """Add a fixed-size interval (CP-SAT only); returns its index."""
        self.intervals.append(Interval(start.index, end.index, int(size), name))
        return len(self.intervals) - 1

    def cumulative(self, intervals: Iterable[int], demands: Iterable[int | Var], capacity: int,
                   name: str = "") -> None:
        dem = tuple(("var", d.index) if isinstance(d, Var) else int(d) for d in demands)
        self.cumulatives.append(Cumulative(tuple(intervals), dem, int(capacity), name))

    # ------------------------------------------------------------ queries
    @property
    def maximizing(self) -> bool:
        return self.sense == "max"

    def requirements(self) -> frozenset[str]:
        """Capabilities a backend needs: ``mip`` (integer variables), ``continuous``,
        ``intervals`` (intervals + cumulative)."""
        req = set()
        if any(v.integer for v in self.vars):
            req.add("mip")
        if any(not v.integer for v in self.vars):
            req.add("continuous")
        if self.intervals or self.cumulatives:
            req.add("intervals")
        return frozenset(req)

    def objective_value(self, values: list[float]) -> float:
        return self.objective.value(values)

    def arrays(self) -> Arrays:
        """The model as numpy arrays (:class:`Arrays`), built once per size of the model (variables and
        rows are append-only)."""
        key = (len(self.vars), len(self.constraints))
        if self.arrays_cache is not None and self.arrays_cache[0] == key:
            return self.arrays_cache[1]
        cons = self.constraints
        lens = np.fromiter((len(c.terms) for c in cons), dtype=np.int64, count=len(cons))
        nnz = int(lens.sum())
        cols = np.fromiter(chain.from_iterable(c.terms for c in cons), dtype=np.int64, count=nnz)
        coefs = np.fromiter(chain.from_iterable(c.terms.values() for c in cons), dtype=np.float64, count=nnz)
        rows = np.repeat(np.arange(len(cons), dtype=np.int64), lens)
        keep = coefs != 0
        rows, cols, coefs = rows[keep], cols[keep], coefs[keep]
        order = np.lexsort((cols, rows))
        vs = self.vars
        arr = Arrays(rows[order], cols[order], coefs[order],
                     np.fromiter((c.lb for c in cons), dtype=np.float64, count=len(cons)),
                     np.fromiter((c.ub for c in cons), dtype=np.float64, count=len(cons)),
                     np.fromiter((v.lb for v in vs), dtype=np.float64, count=len(vs)),
                     np.fromiter((v.ub for v in vs), dtype=np.float64, count=len(vs)),
                     np.fromiter((v.integer for v in vs), dtype=bool, count=len(vs)))
        self.arrays_cache = (key, arr)
        return arr

    def violated(self, values: list[float], tol: float = 1e-6) -> list[str]:
        """Names of bounds/constraints that ``values`` violate (intervals not checked)."""
        a = self.arrays()
        x = np.asarray(values, dtype=np.float64)
        out = []
        if len(x):
            bad_v = (x < a.var_lb - tol) | (x > a.var_ub + tol) | (a.integer & (np.abs(x - np.round(x)) > tol))
            out += [f"var {self.vars[i].name}={values[i]}" for i in np.flatnonzero(bad_v)]
        if len(a.row_lb):
            s = a.row_values(x) if len(x) else np.zeros(len(a.row_lb))
            with np.errstate(invalid="ignore"):  # inf * 0 of an unbounded side
                lo = a.row_lb - tol * np.maximum(1.0, np.abs(a.row_lb))
                hi = a.row_ub + tol * np.maximum(1.0, np.abs(a.row_ub))
            for r in np.flatnonzero((s < lo) | (s > hi)):
                c = self.constraints[r]
                out.append(f"constraint {c.name}: {c.lb} <= {float(s[r])} <= {c.ub}")
        return out

    def relaxed(self) -> Model:
        """The LP relaxation (integrality dropped); needs no intervals."""
        if self.intervals or self.cumulatives:
            raise ValueError("a model with intervals has no LP relaxation in this layer")
        m = Model(self.name + "-lp", [Var(v.index, v.name, v.lb, v.ub, False) for v in self.vars],
                  self.constraints, self.objective, self.sense)
        return m

    def nonzeros(self) -> int:
        return sum(len(c.terms) for c in self.constraints)

    def point(self, values: Mapping[int, float]) -> list[float]:
        """A full value vector from a sparse assignment (unnamed variables at 0, clamped into
        their bounds when 0 is outside them)."""
        a = self.arrays()
        out = np.minimum(np.maximum(0.0, a.var_lb), a.var_ub)
        if values:
            idx = np.fromiter(values.keys(), dtype=np.int64, count=len(values))
            val = np.fromiter(values.values(), dtype=np.float64, count=len(values))
            ok = (idx >= 0) & (idx < len(out))  # indices of no variable are ignored
            out[idx[ok]] = val[ok]
        return out.tolist()

    def stats(self) -> dict[str, int]:
        return {"vars": len(self.vars), "int_vars": sum(v.integer for v in self.vars),
                "constraints": len(self.constraints),
                "nonzeros": sum(len(c.terms) for c in self.constraints),
                "intervals": len(self.intervals), "cumulatives": len(self.cumulatives)}


__all__ = ["Arrays", "Constraint", "Cumulative", "INF", "Interval", "LinExpr", "Model", "Var", "bounded", "lsum"]
