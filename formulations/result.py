"""Solve parameters and results (modelled on OR-Tools MathOpt ``parameters.py`` / ``result.py``).

Termination is separate from bounds: ``termination`` says why the solver stopped, ``primal_bound``
is the objective of the best solution the solver found (``None`` if none), ``dual_bound`` the best
proven bound (``None`` when the backend does not report one), ``gap`` = :func:`relative_gap`.
``objective`` is *recomputed* from the extracted allocation/schedule by the formulation's one
objective function (the one the harness also applies to heuristics).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from schedlab.scheduling.allocation import Allocation


class Termination(Enum):
    OPTIMAL = "optimal"
    FEASIBLE_AT_LIMIT = "feasible-at-limit"
    NO_SOLUTION_AT_LIMIT = "no-solution-at-limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        return self in (Termination.OPTIMAL, Termination.FEASIBLE_AT_LIMIT)


class SolutionStatus(Enum):
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNDETERMINED = "undetermined"


def relative_gap(primal: float | None, dual: float | None) -> float | None:
    """``|primal - dual| / max(|primal|, |dual|)`` (0 when both are 0); ``None`` without both."""
    if primal is None or dual is None or not (math.isfinite(primal) and math.isfinite(dual)):
        return None
    den = max(abs(primal), abs(dual))
    return 0.0 if den < 1e-12 else abs(primal - dual) / den


def machine_cores() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class SolveParams:
    """``time_limit_s`` (wall clock), ``deterministic_limit`` (CP-SAT deterministic seconds),
    ``node_limit`` (branch-and-bound nodes: HiGHS, SCIP, CBC, scipy), ``rel_gap`` (stop when the
    relative gap is at most this), ``threads`` (``None`` = every core of the machine, as CP-SAT wants;
    an explicit number is clamped to the cores, never more), ``seed``,
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
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {self.threads}")
        if self.time_limit_s is not None and self.time_limit_s <= 0:
            raise ValueError(f"time_limit_s must be > 0, got {self.time_limit_s}")
        if not 0 <= self.rel_gap < 1:
            raise ValueError(f"rel_gap must be in [0, 1), got {self.rel_gap}")

    @property
    def effective_threads(self) -> int:
        cores = machine_cores()
        return cores if self.threads is None else min(self.threads, cores)

    @property
    def limited(self) -> bool:
        return (self.time_limit_s is not None or self.deterministic_limit is not None
                or self.node_limit is not None)

    def with_(self, **kw) -> SolveParams:
        return replace(self, **kw)


@dataclass(frozen=True, slots=True)
class RawResult:
    """What a backend returns: values indexed like the model's variables (``None`` without a
    solution), bounds in the model's objective units."""

    termination: Termination
    values: list[float] | None
    primal_bound: float | None
    dual_bound: float | None
    solve_s: float
    threads: int | None
    message: str = ""
    notes: tuple[str, ...] = ()


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

    @property
    def gap(self) -> float | None:
        """Gap of the recomputed objective to the dual bound (:func:`relative_gap`)."""
        return relative_gap(self.objective, self.dual_bound)

    @property
    def verified(self) -> bool | None:
        return None if self.violations is None else not self.violations

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the CLI's ``--format json`` keys)."""
        return {
            "formulation": self.formulation, "backend": self.backend, "backend_version": self.backend_version,
            "status": self.termination.value, "solution_status": self.solution_status.value,
            "sense": self.sense, "objective": self.objective, "primal_bound": self.primal_bound,
            "bound": self.dual_bound, "gap": self.gap, "build_s": round(self.build_s, 4),
            "solve_s": round(self.solve_s, 4), "threads": self.threads, "seed": self.seed,
            "placed_jobs": None if self.allocation is None else len(self.allocation),
            "verified": self.verified, "violations": list(self.violations or ()),
            "message": self.message, "notes": list(self.notes), "model": dict(self.model_stats),
        }
