"""The formulation protocol and the one solve driver.

A formulation ``build``s a solver-neutral :class:`~formulations.model.Model` from its instance,
``extract``s a solution (an :class:`~scheduling.Allocation` or a schedule) from variable values,
evaluates it with its ONE ``objective`` function (the same function the harness applies to
heuristic allocations) and ``verify``s it through :func:`scheduling.validate_allocation`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

from schedlab.formulations.backends import Backend, get_backend, incompatibility
from schedlab.formulations.model import Model
from schedlab.formulations.result import RawResult, SolutionStatus, SolveParams, SolveResult, Termination
from schedlab.scheduling.allocation import Allocation
from schedlab.topology.errors import SolverError


@dataclass(frozen=True)
class Built:
    """A built model and the formulation's own map from decisions to variables."""

    model: Model
    data: Any


class Formulation(Protocol):
    name: str

    def build(self, inst: Any) -> Built: ...

    def extract(self, inst: Any, built: Built, values: list[float]) -> Any: ...

    def objective(self, inst: Any, solution: Any) -> float: ...

    def verify(self, inst: Any, solution: Any) -> list[str]: ...

    def allocation_of(self, solution: Any) -> Allocation | None: ...

    def hints(self, inst: Any, built: Built, allocation: Allocation) -> dict[int, float]: ...


def solve_built(form: Formulation, inst: Any, built: Built, backend: Backend | str, params: SolveParams,
                build_s: float = 0.0) -> SolveResult:
    be = get_backend(backend) if isinstance(backend, str) else backend
    why = incompatibility(be, built.model)
    if why:
        raise SolverError(why)
    model = built.model
    model.hints = {}
    if params.warm_start is not None and "warm_start" in be.capabilities:
        model.hints = form.hints(inst, built, params.warm_start)
    raw = _trivial(model) if not model.vars else be.solve(model, params)
    solution = allocation = None
    objective = None
    violations = None
    notes = list(raw.notes)
    if raw.values is not None and raw.termination.has_solution:
        solution = form.extract(inst, built, raw.values)
        allocation = form.allocation_of(solution)
        objective = form.objective(inst, solution)
        violations = tuple(form.verify(inst, solution))
        bad = model.violated(raw.values, tol=1e-5)
        if bad:
            notes.append(f"solver values violate {len(bad)} model rows, e.g. {bad[0]}")
    status = {Termination.OPTIMAL: SolutionStatus.OPTIMAL, Termination.FEASIBLE_AT_LIMIT: SolutionStatus.FEASIBLE,
              Termination.INFEASIBLE: SolutionStatus.INFEASIBLE}.get(raw.termination, SolutionStatus.UNDETERMINED)
    return SolveResult(
        formulation=form.name, backend=be.name, backend_version=be.version(), termination=raw.termination,
        solution_status=status, sense=model.sense, objective=objective, primal_bound=raw.primal_bound,
        dual_bound=raw.dual_bound, build_s=build_s, solve_s=raw.solve_s, threads=raw.threads, seed=params.seed,
        allocation=allocation, solution=solution, message=raw.message, notes=tuple(notes),
        model_stats=model.stats(), violations=violations)


def _trivial(model: Model) -> RawResult:
    """A model without variables (e.g. an empty POP part): feasible iff its constant rows hold."""
    if any(not (c.lb - 1e-9 <= 0.0 <= c.ub + 1e-9) for c in model.constraints):
        return RawResult(Termination.INFEASIBLE, None, None, None, 0.0, 0, "empty model with a violated row")
    v = model.objective.const
    return RawResult(Termination.OPTIMAL, [], v, v, 0.0, 0, "empty model (nothing to decide)")


def solve(form: Formulation, inst: Any, backend: Backend | str = "cpsat",
          params: SolveParams | None = None) -> SolveResult:
    """Build ``form`` on ``inst``, solve it with ``backend`` and return the verified result."""
    params = params or SolveParams()
    t0 = time.perf_counter()
    built = form.build(inst)
    return solve_built(form, inst, built, backend, params, time.perf_counter() - t0)
