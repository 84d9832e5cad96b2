"""The formulation protocol and the one solve driver.

A formulation ``build``s a solver-neutral :class:`~formulations.model.Model` from its instance,
``extract``s a solution (an :class:`~scheduling.Allocation` or a schedule) from variable values,
evaluates it with its ONE ``objective`` function (the same function the harness applies to
heuristic allocations) and ``verify``s it through :func:`scheduling.validate_allocation`.
``point`` (optional) maps a solution back onto the model's variables: the containment check
(:mod:`formulations.containment`) fixes the model to it and checks feasibility and value.

The protocol is generic in the instance type ``I`` and the solution type ``S`` (an
:class:`~scheduling.Allocation`, a Tiresias solution, an offline schedule). ``build`` always takes
``deadline`` (a :func:`time.perf_counter` value or ``None``) and raises :class:`BuildTimeout` past it;
a formulation that is also :class:`Relaxing` says per instance whether its model's solutions are a
relaxation's (only the bound is then reported). The driver never changes the caller's model: warm-start hints go on a copy.

:func:`solve` spends ``params.time_limit_s`` as a wall-clock budget over build, translate, solve,
extract and verify, reports each phase, and applies the one status rule
(:func:`~formulations.result.termination_of`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from schedlab.formulations.backends import Backend, get_backend, incompatibility
from schedlab.formulations.model import Model
from schedlab.formulations.result import (
    Bounds,
    Limit,
    Provenance,
    RawResult,
    Reason,
    SolveParams,
    SolveResult,
    Termination,
    Timing,
    termination_of,
)
from schedlab.scheduling.allocation import Allocation
from schedlab.topology.errors import BuildTimeout, Unsupported

#: the smallest budget handed to a backend (seconds); below it the solve is not attempted
MIN_SOLVE_S = 0.01


def check_deadline(deadline: float | None) -> None:
    """For builders: raise :class:`BuildTimeout` once ``deadline`` has passed."""
    if deadline is not None and time.perf_counter() > deadline:
        raise BuildTimeout("the time limit was spent while building the model")


I = TypeVar("I")  # noqa: E741 - the instance type, as in the maths
S = TypeVar("S")


@dataclass(frozen=True)
class Built:
    """A built model and the formulation's own map from decisions to variables (its type is the
    formulation's business: only its own ``extract``/``hints``/``point`` read it)."""

    model: Model
    data: Any


class Formulation(Protocol, Generic[I, S]):
    name: str

    def build(self, inst: I, deadline: float | None = None) -> Built: ...

    def extract(self, inst: I, built: Built, values: Sequence[float]) -> S: ...

    def objective(self, inst: I, solution: S) -> float: ...

    def verify(self, inst: I, solution: S) -> list[str]: ...

    def allocation_of(self, solution: S) -> Allocation | None: ...

    def hints(self, inst: I, built: Built, allocation: Allocation) -> dict[int, float]: ...


@runtime_checkable
class Relaxing(Protocol):
    """A formulation whose model is, on some instances, a relaxation (e.g. offline ``mode="total"``)."""

    def is_relaxation(self, inst: Any) -> bool: ...


def reserve_s(model: Model, budget: float) -> float:
    """Seconds kept back from the backend for extraction and verification: a size-proportional
    estimate, at most a fifth of the budget."""
    return min(0.2 * budget, 0.02 + 2e-6 * (len(model.vars) + model.nonzeros()))


def solve_built(form: Formulation[I, S], inst: I, built: Built, backend: Backend | str, params: SolveParams,
                build_s: float = 0.0, *, started: float | None = None) -> SolveResult:
    """Solve an already built model. ``started`` (a :func:`time.perf_counter` reading) is when the
    budget began; by default now minus ``build_s``."""
    t_start = started if started is not None else time.perf_counter() - build_s
    be = get_backend(backend) if isinstance(backend, str) else backend
    why = incompatibility(be, built.model)
    if why:
        raise Unsupported(why)
    if params.backend_options and "options" not in be.capabilities:
        raise Unsupported(f"backend {be.name} takes no backend_options ({params.backend_options[0][0]!r}, ...)")
    model = built.model
    start = None  # (feasible in the model, its model objective, what to say) of a given warm start
    hints: dict[int, float] = {}
    if params.warm_start is not None:
        start, hints = warm_start_check(form, inst, built, be, params.warm_start)
    if hints or model.hints:  # the caller's model is never mutated: a shallow copy carries the hints
        model = replace_hints(model, hints)
    limit = params.time_limit_s
    left = None if limit is None else limit - (time.perf_counter() - t_start)
    notes: list[str] = []
    if not model.vars:
        raw = _trivial(model)
    elif left is not None and left - reserve_s(model, limit) < MIN_SOLVE_S:
        raw = RawResult(Termination(Reason.NO_SOLUTION_FOUND, Limit.TIME,
                                    "the time limit was spent before the solver could start"))
        notes.append(f"build took {build_s:.3f} s of the {limit:g} s budget")
    else:
        sub = params if left is None else params.with_(time_limit_s=left - reserve_s(model, limit))
        raw = be.solve(model, sub)
    notes += list(raw.notes)
    if (raw.values is None or not raw.termination.status.has_solution) and built.model.hints \
            and raw.termination.reason is not Reason.INFEASIBLE:
        raw = _own_start(built.model, raw, notes)
    used = None
    if start is not None:
        used, text = start[0], start[2]
        tol = 1e-6 * max(1.0, abs(start[1] or 0.0)) + (raw.precision or 0.0)
        p = raw.primal_bound
        if used and p is None:
            used, text = False, text + f"; {be.name} returned no solution: not kept"
        elif used and (p < start[1] - tol if model.sense == "max" else p > start[1] + tol):
            used, text = False, text + f"; {be.name} returned {p:g}, worse than the start: not kept"
        notes.append(text)
    solution = allocation = objective = violations = None
    extract_s = verify_s = 0.0
    if raw.values is not None and raw.termination.status.has_solution:
        t = time.perf_counter()
        solution = form.extract(inst, built, raw.values)
        allocation = form.allocation_of(solution)
        objective = form.objective(inst, solution)
        extract_s = time.perf_counter() - t
        t = time.perf_counter()
        violations = tuple(form.verify(inst, solution))
        bad = model.violated(raw.values, tol=1e-5)
        if bad:
            notes.append(f"solver values violate {len(bad)} model rows, e.g. {bad[0]}")
        verify_s = time.perf_counter() - t
    if objective is not None and isinstance(form, Relaxing) and form.is_relaxation(inst):
        notes.append("the solution is a relaxation's, not a schedule: only the bound is reported")
        objective = None
        status_value = raw.primal_bound
    else:
        status_value = objective
    wall = time.perf_counter() - t_start
    if limit is not None and wall > limit:
        notes.append(f"wall clock {wall:.3f} s exceeded the {limit:g} s budget by {wall - limit:.3f} s")
    term = termination_of(raw.termination, status_value, raw.dual_bound, params.rel_gap)
    if raw.termination.reason is Reason.OPTIMAL and term.reason is not Reason.OPTIMAL:
        notes.append(f"{be.name} reported optimal, but the recomputed objective is not within the "
                     f"{params.rel_gap:g} relative gap of its bound: status {term.status.value}")
    return SolveResult(
        term, Provenance(form.name, be.name, be.version(), raw.threads, params.seed, model.stats(), used),
        Bounds(model.sense, raw.primal_bound, raw.dual_bound, params.rel_gap, raw.precision),
        Timing(build_s, raw.translate_s, raw.solve_s, extract_s, verify_s, wall, limit),
        objective=objective, allocation=allocation, solution=solution, violations=violations, notes=tuple(notes))


def _own_start(model: Model, raw: RawResult, notes: list[str]) -> RawResult:
    """A formulation's own MIP start (``Model.hints`` set when it built the model: a heuristic schedule) as
    the incumbent when the backend returned none (it may run out of time before reading it): a feasible point
    of the model is a solution, reported feasible at the backend's limit."""
    full = model.point(model.hints)
    if model.violated(full, tol=1e-6):
        return raw
    value = model.objective_value(full)
    notes.append(f"{raw.termination.detail or raw.termination.reason.value}: the backend returned no solution; "
                 f"the model's own start (worth {value:g}) is the incumbent")
    limit = raw.termination.limit or Limit.UNDETERMINED
    return replace(raw, termination=Termination(Reason.FEASIBLE, limit, raw.termination.detail),
                               values=full, primal_bound=value)


def warm_start_check(form: Formulation[I, S], inst: I, built: Built, be: Backend, allocation: Allocation
                     ) -> tuple[tuple[bool, float | None, str], dict[int, float]]:
    """The hints of a warm-start allocation where ``be`` takes starts, and whether the start is *used*:
    passed to the backend as a feasible point of the model (every variable the formulation maps, the
    rest at 0, within every bound and row), so the solve starts from a solution worth at least its
    model objective. ``((used, model objective or None, note), hints)``; ``built`` is not mutated."""
    if "warm_start" not in be.capabilities:
        return (False, None, f"warm start not used: {be.name} takes no start"), {}
    model = built.model
    hints = form.hints(inst, built, allocation)
    own = getattr(form, "start_problems", None)  # what of the allocation the model cannot hold, if it can say
    problems = own(inst, built, allocation) if own is not None else []
    if problems:
        return (False, None, (f"warm start not used: {len(problems)} parts of it are outside the model, e.g. "
                              f"{problems[0]}; the rest passed as a hint only")), hints
    full = model.point(hints)
    bad = model.violated(full, tol=1e-6)
    if bad:
        return (False, None, (f"warm start not used: the allocation is not a feasible point of the model "
                              f"({len(bad)} rows, e.g. {bad[0]}); passed as a hint only")), hints
    value = model.objective_value(full)
    return (True, value, f"warm start used: a feasible point of the model worth {value:g}"), hints


def replace_hints(model: Model, hints: dict[int, float]) -> Model:
    """A shallow copy of ``model`` carrying ``hints`` (variables and rows shared, never mutated)."""
    return replace(model, hints=hints)


def _trivial(model: Model) -> RawResult:
    """A model without variables (e.g. an empty POP part): feasible iff its constant rows hold."""
    if any(not (c.lb - 1e-9 <= 0.0 <= c.ub + 1e-9) for c in model.constraints):
        return RawResult(Termination(Reason.INFEASIBLE, None, "empty model with a violated row"), threads=0)
    v = model.objective.const
    return RawResult(Termination(Reason.OPTIMAL, None, "empty model (nothing to decide)"), [], v, v, threads=0)


def solve(form: Formulation[I, S], inst: I, backend: Backend | str = "cpsat",
          params: SolveParams | None = None) -> SolveResult:
    """Build a formulation on an instance, solve it and return the verified result.

    The time limit is a wall-clock budget over every phase (build, translate, solve, extract, verify;
    see the module docstring); the status follows the one rule of
    :func:`~formulations.result.termination_of` (never ``optimal`` without a proof within
    ``params.rel_gap``).

    Parameters
    ----------
    form : Formulation
        The formulation (e.g. ``TierFormulation()``; ``KINDS[kind].methods`` lists each kind's).
    inst : instance
        An instance of the formulation's kind (``KINDS[kind].generate(...)`` or ``load_instance``).
    backend : str or Backend, default "cpsat"
        A backend name of ``formulations.BACKENDS`` (``cpsat``, ``highs``, ``scip``, ``cbc``, ``scipy``)
        or a backend object.
    params : SolveParams, optional
        Limits (``time_limit_s``, ``work_limit``, ``node_limit``), ``rel_gap``, ``threads``, ``seed``,
        ``warm_start``; default: no limit, every core, seed 0.

    Returns
    -------
    SolveResult
        ``termination`` (reason, limit, detail) and ``status``; ``objective`` recomputed by the
        kind's one objective function; ``allocation``, ``solution``, ``violations``; ``bounds``,
        ``timing`` and ``provenance``.

    Raises
    ------
    Unsupported
        The backend is not installed or lacks a capability the model needs.
    SolverError
        The instance cannot be built (e.g. a job no option covers).

    Examples
    --------
    >>> from schedlab.formulations import KINDS, SolveParams, solve
    >>> from schedlab.formulations.tier import TierFormulation
    >>> from schedlab.topology import preset
    >>> inst = KINDS["tier-placement"].generate(preset("dally-2"), 4, seed=0)
    >>> res = solve(TierFormulation(), inst, "highs", SolveParams(time_limit_s=10, seed=0))
    >>> res.status.value, res.verified, res.termination.limit is None
    ('optimal', True, True)
    >>> round(res.objective, 3) == round(res.bounds.dual, 3)
    True
    """
    params = params or SolveParams()
    t0 = time.perf_counter()
    try:
        built = form.build(inst, None if params.time_limit_s is None else t0 + params.time_limit_s)
    except BuildTimeout as e:
        be = get_backend(backend) if isinstance(backend, str) else backend
        wall = time.perf_counter() - t0
        return SolveResult(Termination(Reason.NO_SOLUTION_FOUND, Limit.TIME, str(e)),
                           Provenance(form.name, be.name, be.version(), None, params.seed),
                           Bounds("max", rel_gap_tolerance=params.rel_gap),
                           Timing(build_s=wall, wall_s=wall, time_limit_s=params.time_limit_s), notes=(str(e),))
    return solve_built(form, inst, built, backend, params, time.perf_counter() - t0, started=t0)


__all__ = ["Built", "Formulation", "MIN_SOLVE_S", "Relaxing", "check_deadline", "replace_hints", "reserve_s",
           "solve", "solve_built", "warm_start_check"]
