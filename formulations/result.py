"""Solve parameters and results (modelled on OR-Tools MathOpt ``parameters.py`` / ``result.py``).

Termination is separate from bounds: ``termination`` says why the solve stopped, ``primal_bound``
is the objective of the best solution the solver found (``None`` if none), ``dual_bound`` the best
proven bound (``None`` when the backend does not report one), ``gap`` = :func:`relative_gap`.
``objective`` is *recomputed* from the extracted allocation/schedule by the formulation's one
objective function (the one the harness also applies to heuristics).

**One status rule for every backend** (:func:`termination_of`): a result is ``OPTIMAL`` only when
the relative gap between the recomputed objective and the reported dual bound is at most the stated
tolerance ``rel_gap``; a solution without that proof is ``FEASIBLE_AT_LIMIT`` when a limit (time,
deterministic time, nodes) was hit and ``FEASIBLE`` otherwise. A backend's own "optimal" is never
taken on trust.

**Time budget.** ``time_limit_s`` is a wall-clock budget for the whole solve: build + translate
(to the backend's API) + solve + extract + verify. Each phase is timed and reported
(``build_s``, ``translate_s``, ``solve_s``, ``extract_s``, ``verify_s``, ``wall_s``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from schedlab.scheduling.allocation import Allocation
from schedlab.topology.errors import SolverError

#: differences between objective and bound below this (absolute) are rounding, not a gap
ABS_GAP_EPS = 1e-9


class SolveParamsError(SolverError, ValueError):
    """An invalid solve parameter (a :class:`SolverError`, and a ``ValueError`` for old callers)."""


class Termination(Enum):
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"  # a solution, optimality not proven to the tolerance, no limit hit
    FEASIBLE_AT_LIMIT = "feasible-at-limit"
    NO_SOLUTION_AT_LIMIT = "no-solution-at-limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        return self in (Termination.OPTIMAL, Termination.FEASIBLE, Termination.FEASIBLE_AT_LIMIT)

    @property
    def severity(self) -> int:
        """Order used to combine parts (POP): the worst part decides."""
        return _SEVERITY[self]


_SEVERITY = {Termination.OPTIMAL: 0, Termination.FEASIBLE: 1, Termination.FEASIBLE_AT_LIMIT: 2,
             Termination.NO_SOLUTION_AT_LIMIT: 3, Termination.UNBOUNDED: 4, Termination.ERROR: 5,
             Termination.INFEASIBLE: 6}


class SolutionStatus(Enum):
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNDETERMINED = "undetermined"

    @classmethod
    def of(cls, term: Termination) -> SolutionStatus:
        if term is Termination.OPTIMAL:
            return cls.OPTIMAL
        if term.has_solution:
            return cls.FEASIBLE
        return cls.INFEASIBLE if term is Termination.INFEASIBLE else cls.UNDETERMINED


def relative_gap(primal: float | None, dual: float | None) -> float | None:
    """``|primal - dual| / max(|primal|, |dual|)`` (0 when they differ by at most
    :data:`ABS_GAP_EPS`); ``None`` without both."""
    if primal is None or dual is None or not (math.isfinite(primal) and math.isfinite(dual)):
        return None
    diff = abs(primal - dual)
    if diff <= ABS_GAP_EPS:
        return 0.0
    return diff / max(abs(primal), abs(dual))


def signed_gap(value: float | None, bound: float | None, sense: str) -> float | None:
    """How much worse ``value`` is than ``bound``, on the scale of the larger magnitude:
    ``g = (B - v) / max(|B|, |v|)`` for a maximisation, ``(v - B) / max(|B|, |v|)`` for a minimisation:

    positive when the value is worse than the bound, negative when it is better (which, against a
    proven bound, is a bug: a ``bound-violated`` record). Negative objectives (a reconfiguration
    penalty) keep the sign right; a gap above 100 % means a value of the opposite sign to the bound
    (worse than a zero-valued decision); with a bound of 0 a worse value reads 100 %. 0 when they
    differ by at most :data:`ABS_GAP_EPS`; ``None`` without both or with an unknown ``sense``."""
    if value is None or bound is None or sense not in ("min", "max") or \
            not (math.isfinite(value) and math.isfinite(bound)):
        return None
    diff = (bound - value) if sense == "max" else (value - bound)
    if abs(diff) <= ABS_GAP_EPS:
        return 0.0
    return diff / max(abs(bound), abs(value))


def termination_of(raw: Termination, objective: float | None, dual: float | None, tolerance: float,
                   limit_hit: bool) -> Termination:
    """The one status rule (see the module docstring)."""
    if raw in (Termination.INFEASIBLE, Termination.UNBOUNDED, Termination.ERROR):
        return raw
    if objective is None:
        return Termination.NO_SOLUTION_AT_LIMIT if limit_hit or raw is Termination.NO_SOLUTION_AT_LIMIT \
            else Termination.ERROR
    gap = relative_gap(objective, dual)
    if gap is not None and gap <= tolerance:
        return Termination.OPTIMAL
    return Termination.FEASIBLE_AT_LIMIT if limit_hit else Termination.FEASIBLE


def machine_cores() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class SolveParams:
    """``time_limit_s`` (wall-clock budget of the whole solve, see the module docstring),
    ``deterministic_limit`` (CP-SAT deterministic seconds), ``node_limit`` (branch-and-bound nodes:
    HiGHS, SCIP, CBC, scipy), ``rel_gap`` (the tolerance of the status rule; backends are asked for
    half of it so that the recomputed objective meets it), ``threads`` (``None`` = every core of the
    machine, as CP-SAT wants; an explicit number is clamped to the cores, never more), ``seed``,
    ``warm_start`` (an allocation, e.g. from a heuristic, given to backends that take hints)."""

    time_limit_s: float | None = None
    deterministic_limit: float | None = None
    node_limit: int | None = None
    rel_gap: float = 1e-6
    threads: int | None = None
    seed: int = 0
    warm_start: Allocation | None = None
    verbose: bool = False

    def __post_init__(self) -> None:
        if self.threads is not None and (isinstance(self.threads, bool) or self.threads < 1):
            raise SolveParamsError(f"threads must be >= 1, got {self.threads}")
        for name in ("time_limit_s", "deterministic_limit"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v)
                                  or v <= 0):
                raise SolveParamsError(f"{name} must be a finite number > 0, got {v!r}")
        if self.node_limit is not None and (isinstance(self.node_limit, bool) or self.node_limit < 1):
            raise SolveParamsError(f"node_limit must be >= 1, got {self.node_limit!r}")
        if not 0 <= self.rel_gap < 1:
            raise SolveParamsError(f"rel_gap must be in [0, 1), got {self.rel_gap}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise SolveParamsError(f"seed must be an integer >= 0, got {self.seed!r}")

    @property
    def effective_threads(self) -> int:
        cores = machine_cores()
        return cores if self.threads is None else min(self.threads, cores)

    @property
    def backend_rel_gap(self) -> float:
        """The tolerance asked of a backend: half the stated one (margin for the recomputation)."""
        return self.rel_gap / 2

    @property
    def limited(self) -> bool:
        return (self.time_limit_s is not None or self.deterministic_limit is not None
                or self.node_limit is not None)

    def with_(self, **kw) -> SolveParams:
        return replace(self, **kw)


@dataclass(frozen=True, slots=True)
class RawResult:
    """What a backend returns: values indexed like the model's variables (``None`` without a
    solution), bounds in the model's objective units (a dual bound only where it is valid for the
    model as given), ``limit_hit`` (``None`` = unknown: treated as hit when a limit was set),
    ``precision`` (absolute error the backend's scaling may add to the objective, CP-SAT),
    ``translate_s`` (building the backend's own model)."""

    termination: Termination
    values: list[float] | None
    primal_bound: float | None
    dual_bound: float | None
    solve_s: float
    threads: int | None
    message: str = ""
    notes: tuple[str, ...] = ()
    translate_s: float = 0.0
    limit_hit: bool | None = None
    precision: float | None = None


@dataclass(frozen=True)
class SolveResult:
    formulation: str
    backend: str
    backend_version: str
    termination: Termination
    solution_status: SolutionStatus
    sense: str
    objective: float | None
    primal_bound: float | None
    dual_bound: float | None
    build_s: float
    solve_s: float
    threads: int | None
    seed: int
    allocation: Allocation | None = None
    solution: Any = None
    message: str = ""
    notes: tuple[str, ...] = ()
    model_stats: dict[str, int] = field(default_factory=dict)
    violations: tuple[str, ...] | None = None
    translate_s: float = 0.0
    extract_s: float = 0.0
    verify_s: float = 0.0
    wall_s: float | None = None
    time_limit_s: float | None = None
    rel_gap_tolerance: float | None = None
    objective_precision: float | None = None
    #: ``None``: no warm start given; ``True``: given to the backend as a feasible point of the model
    #: (the solve starts from it); ``False``: the backend takes none, or it is not a feasible point
    warm_start_used: bool | None = None

    @property
    def gap(self) -> float | None:
        """Gap of the recomputed objective to the dual bound (:func:`relative_gap`)."""
        return relative_gap(self.objective, self.dual_bound)

    @property
    def verified(self) -> bool | None:
        return None if self.violations is None else not self.violations

    @property
    def phases(self) -> dict[str, float]:
        """Seconds per phase (build, translate, solve, extract, verify), ``other_s`` (the rest of the
        wall clock: backend availability checks, imports, combining stages) and the wall clock."""
        out = {"build_s": self.build_s, "translate_s": self.translate_s, "solve_s": self.solve_s,
               "extract_s": self.extract_s, "verify_s": self.verify_s}
        known = sum(out.values())
        wall = self.wall_s if self.wall_s is not None else known
        out["other_s"] = max(0.0, wall - known)
        out["wall_s"] = wall
        return out

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the CLI's ``--format json`` keys)."""
        ph = {k: round(v, 4) for k, v in self.phases.items()}
        return {
            "formulation": self.formulation, "backend": self.backend, "backend_version": self.backend_version,
            "status": self.termination.value, "solution_status": self.solution_status.value,
            "sense": self.sense, "objective": self.objective, "primal_bound": self.primal_bound,
            "bound": self.dual_bound, "gap": self.gap, "rel_gap_tolerance": self.rel_gap_tolerance,
            "objective_precision": self.objective_precision, **ph, "time_limit_s": self.time_limit_s,
            "threads": self.threads, "seed": self.seed,
            "placed_jobs": None if self.allocation is None else len(self.allocation),
            "verified": self.verified, "violations": list(self.violations or ()),
            "message": self.message, "notes": list(self.notes), "model": dict(self.model_stats),
            "warm_start_used": self.warm_start_used,
        }
