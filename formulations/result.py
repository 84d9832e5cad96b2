"""Solve parameters and results (modelled on OR-Tools MathOpt ``parameters.py`` / ``result.py``).

Termination is separate from bounds: ``termination`` says why the solve stopped, ``primal_bound``
is the objective of the best solution the solver found (``None`` if none), ``dual_bound`` the best
proven bound (``None`` when the backend does not report one), ``gap`` = :func:`relative_gap`.
``objective`` is *recomputed* from the extracted allocation/schedule by the formulation's one
objective function (the one the harness also applies to heuristics).

A :class:`Termination` keeps the backend's ``reason`` (:class:`Reason`), the :class:`Limit` that
stopped it (time, work, node, solution, interrupted; ``None`` when none did) and a ``detail`` string,
as MathOpt does; its :attr:`~Termination.status` (:class:`Status`) folds the two into the one word a
record publishes. A :class:`SolveResult` groups its :class:`Bounds`, :class:`Timing` and
:class:`Provenance`.

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
from schedlab.topology.errors import SolveParamsError

__all__ = ["ABS_GAP_EPS", "Bounds", "Limit", "Provenance", "RawResult", "Reason", "SolutionStatus", "SolveParams",
           "SolveResult", "Status", "Termination", "Timing", "machine_cores", "relative_gap",
           "signed_gap", "termination_of"]

#: differences between objective and bound below this (absolute) are rounding, not a gap
ABS_GAP_EPS = 1e-9


class Status(Enum):
    """The published status of a solve (the harness's ``status`` column): the :class:`Termination`
    reason with whether a limit stopped it folded in."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"  # a solution, optimality not proven to the tolerance, no limit hit
    FEASIBLE_AT_LIMIT = "feasible-at-limit"
    NO_SOLUTION_AT_LIMIT = "no-solution-at-limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        return self in (Status.OPTIMAL, Status.FEASIBLE, Status.FEASIBLE_AT_LIMIT)

    @property
    def severity(self) -> int:
        """Order used to combine parts (POP): the worst part decides."""
        return _SEVERITY[self]


_SEVERITY = {Status.OPTIMAL: 0, Status.FEASIBLE: 1, Status.FEASIBLE_AT_LIMIT: 2,
             Status.NO_SOLUTION_AT_LIMIT: 3, Status.UNBOUNDED: 4, Status.ERROR: 5,
             Status.INFEASIBLE: 6}


class Reason(Enum):
    """Why a solve stopped (MathOpt's ``TerminationReason``, reduced to what schedlab tells apart)."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"  # a solution without a proof of optimality
    NO_SOLUTION_FOUND = "no-solution-found"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"


class Limit(Enum):
    """Which limit stopped a solve (MathOpt's ``Limit``). ``WORK`` is the deterministic budget
    (:attr:`SolveParams.work_limit`); ``UNDETERMINED``: a limit, the backend does not say which."""

    TIME = "time"
    WORK = "work"
    NODE = "node"
    SOLUTION = "solution"
    INTERRUPTED = "interrupted"
    UNDETERMINED = "undetermined"


_STATUS_OF_REASON = {Reason.OPTIMAL: Status.OPTIMAL, Reason.INFEASIBLE: Status.INFEASIBLE,
                     Reason.UNBOUNDED: Status.UNBOUNDED, Reason.ERROR: Status.ERROR,
                     Reason.NO_SOLUTION_FOUND: Status.NO_SOLUTION_AT_LIMIT}
_REASON_OF_STATUS = {Status.OPTIMAL: Reason.OPTIMAL, Status.FEASIBLE: Reason.FEASIBLE,
                     Status.FEASIBLE_AT_LIMIT: Reason.FEASIBLE, Status.NO_SOLUTION_AT_LIMIT: Reason.NO_SOLUTION_FOUND,
                     Status.INFEASIBLE: Reason.INFEASIBLE, Status.UNBOUNDED: Reason.UNBOUNDED,
                     Status.ERROR: Reason.ERROR}


@dataclass(frozen=True, slots=True)
class Termination:
    """Why a solve stopped: the ``reason``, the ``limit`` that stopped it (``None``: none did) and the
    backend's own words (``detail``), as MathOpt's ``Termination``."""

    reason: Reason
    limit: Limit | None = None
    detail: str = ""

    @classmethod
    def of(cls, status: Status, detail: str = "", limit: Limit | None = None) -> Termination:
        """The termination a :class:`Status` stands for (a limit, ``UNDETERMINED`` unless given, where
        the status says one was hit)."""
        if status in (Status.FEASIBLE_AT_LIMIT, Status.NO_SOLUTION_AT_LIMIT):
            limit = limit or Limit.UNDETERMINED
        elif status in (Status.OPTIMAL, Status.FEASIBLE):
            limit = None
        return cls(_REASON_OF_STATUS[status], limit, detail)

    @property
    def status(self) -> Status:
        if self.reason is Reason.FEASIBLE:
            return Status.FEASIBLE if self.limit is None else Status.FEASIBLE_AT_LIMIT
        return _STATUS_OF_REASON[self.reason]


class SolutionStatus(Enum):
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNDETERMINED = "undetermined"

    @classmethod
    def of(cls, status: Status) -> SolutionStatus:
        if status is Status.OPTIMAL:
            return cls.OPTIMAL
        if status.has_solution:
            return cls.FEASIBLE
        return cls.INFEASIBLE if status is Status.INFEASIBLE else cls.UNDETERMINED


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


def termination_of(raw: Termination, objective: float | None, dual: float | None, tolerance: float
                   ) -> Termination:
    """The one status rule (see the module docstring): ``raw`` is what the backend said, ``objective``
    the recomputed one, ``dual`` the backend's bound. The backend's limit and detail are kept."""
    if raw.reason in (Reason.INFEASIBLE, Reason.UNBOUNDED, Reason.ERROR):
        return raw
    if objective is None:
        if raw.limit is not None or raw.reason is Reason.NO_SOLUTION_FOUND:
            return Termination(Reason.NO_SOLUTION_FOUND, raw.limit or Limit.UNDETERMINED, raw.detail)
        return Termination(Reason.ERROR, None, raw.detail)
    gap = relative_gap(objective, dual)
    if gap is not None and gap <= tolerance:
        return Termination(Reason.OPTIMAL, None, raw.detail)
    return Termination(Reason.FEASIBLE, raw.limit, raw.detail)


def machine_cores() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class SolveParams:
    """``time_limit_s`` (wall-clock budget of the whole solve, see the module docstring),
    ``work_limit`` (a deterministic budget, in CP-SAT's deterministic seconds: the same work on every
    machine and load, so a limited result is reproducible; backends without one ignore it), ``node_limit`` (branch-and-bound nodes:
    HiGHS, SCIP, CBC, scipy), ``rel_gap`` (the tolerance of the status rule; backends are asked for
    half of it so that the recomputed objective meets it), ``threads`` (``None`` = every core of the
    machine, as CP-SAT wants; an explicit number is clamped to the cores, never more), ``seed``,
    ``warm_start`` (an allocation, e.g. from a heuristic, given to backends that take hints),
    ``backend_options`` (``(name, value)`` pairs handed to the solver under its own option names; only
    a backend with the ``options`` capability takes them (``highs``: HiGHS options), any other refuses
    the solve; e.g. ``("mip_heuristic_run_feasibility_jump", False)``: primal heuristics change which
    solution is found first, never the proof, so an optimal status keeps its meaning)."""

    time_limit_s: float | None = None
    work_limit: float | None = None
    node_limit: int | None = None
    rel_gap: float = 1e-6
    threads: int | None = None
    seed: int = 0
    warm_start: Allocation | None = None
    verbose: bool = False
    backend_options: tuple[tuple[str, bool | int | float | str], ...] = ()

    def __post_init__(self) -> None:
        if self.threads is not None and (isinstance(self.threads, bool) or self.threads < 1):
            raise SolveParamsError(f"threads must be >= 1, got {self.threads}")
        for name in ("time_limit_s", "work_limit"):
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
        for opt in self.backend_options:
            if (not isinstance(opt, tuple) or len(opt) != 2 or not isinstance(opt[0], str)
                    or not isinstance(opt[1], bool | int | float | str)):
                raise SolveParamsError(f"backend_options are (name, bool/int/float/str) pairs, got {opt!r}")

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
        return (self.time_limit_s is not None or self.work_limit is not None
                or self.node_limit is not None)

    def with_(self, **kw) -> SolveParams:
        return replace(self, **kw)


@dataclass(frozen=True, slots=True)
class RawResult:
    """What a backend returns: its :class:`Termination` (the reason, the limit hit, its own words),
    values indexed like the model's variables (``None`` without a solution), bounds in the model's
    objective units (a dual bound only where it is valid for the model as given), ``precision``
    (absolute error the backend's scaling may add to the objective, CP-SAT), ``solve_s`` (the solve
    and reading its answer) and ``translate_s`` (building the backend's own model)."""

    termination: Termination
    values: list[float] | None = None
    primal_bound: float | None = None
    dual_bound: float | None = None
    threads: int | None = None
    notes: tuple[str, ...] = ()
    precision: float | None = None
    solve_s: float = 0.0
    translate_s: float = 0.0

    @property
    def status(self) -> Status:
        """What the backend claims (before :func:`termination_of` checks it)."""
        return self.termination.status


@dataclass(frozen=True, slots=True)
class Bounds:
    """The objective's ``sense`` (``"max"``/``"min"``), the backend's best solution value
    (``primal``) and proven bound (``dual``, ``None`` when it reports none), the tolerance of the status
    rule (``rel_gap_tolerance``) and the absolute ``precision`` a backend's scaling may add (CP-SAT)."""

    sense: str
    primal: float | None = None
    dual: float | None = None
    rel_gap_tolerance: float | None = None
    precision: float | None = None


@dataclass(frozen=True, slots=True)
class Timing:
    """Seconds per phase of a solve and the budget it had (``time_limit_s``, the whole solve)."""

    build_s: float = 0.0
    translate_s: float = 0.0
    solve_s: float = 0.0
    extract_s: float = 0.0
    verify_s: float = 0.0
    wall_s: float | None = None
    time_limit_s: float | None = None

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


@dataclass(frozen=True)
class Provenance:
    """Where a result comes from: the formulation, the backend and its version, the threads it used
    (``None``: the backend's own default), the seed, the model's size and whether a warm start was
    used (``None``: none given; ``True``: given to the backend as a feasible point of the model;
    ``False``: the backend takes none, or it is not a feasible point)."""

    formulation: str
    backend: str
    backend_version: str
    threads: int | None = None
    seed: int = 0
    model_stats: dict[str, int] = field(default_factory=dict)
    warm_start_used: bool | None = None


@dataclass(frozen=True)
class SolveResult:
    """A verified solve: why it stopped (``termination``), what it found (``objective`` recomputed
    from the extracted ``solution``, its ``allocation``, the verifier's ``violations``, ``None`` when
    not verified), the ``bounds``, the ``timing``, the ``provenance`` and ``notes`` for the reader."""

    termination: Termination
    provenance: Provenance
    bounds: Bounds
    timing: Timing = Timing()
    objective: float | None = None
    allocation: Allocation | None = None
    solution: Any = None
    violations: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()

    @property
    def status(self) -> Status:
        return self.termination.status

    @property
    def solution_status(self) -> SolutionStatus:
        return SolutionStatus.of(self.status)

    @property
    def gap(self) -> float | None:
        """Gap of the recomputed objective to the dual bound (:func:`relative_gap`)."""
        return relative_gap(self.objective, self.bounds.dual)

    @property
    def verified(self) -> bool | None:
        return None if self.violations is None else not self.violations

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the CLI's ``--format json`` keys)."""
        ph = {k: round(v, 4) for k, v in self.timing.phases.items()}
        pv, b = self.provenance, self.bounds
        return {
            "formulation": pv.formulation, "backend": pv.backend, "backend_version": pv.backend_version,
            "status": self.status.value, "solution_status": self.solution_status.value,
            "sense": b.sense, "objective": self.objective, "primal_bound": b.primal,
            "bound": b.dual, "gap": self.gap, "rel_gap_tolerance": b.rel_gap_tolerance,
            "objective_precision": b.precision, **ph, "time_limit_s": self.timing.time_limit_s,
            "threads": pv.threads, "seed": pv.seed,
            "placed_jobs": None if self.allocation is None else len(self.allocation),
            "verified": self.verified, "violations": list(self.violations or ()),
            "message": self.termination.detail, "notes": list(self.notes), "model": dict(pv.model_stats),
            "warm_start_used": pv.warm_start_used,
        }
