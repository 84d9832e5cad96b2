"""Containment: is a (heuristic's) allocation a feasible point of the exact model, with the same value?

A gap ``(optimum - heuristic) / optimum`` is only meaningful when the exact model ranges over every
allocation the heuristic can produce. :func:`check` proves it for one allocation: it builds the
kind's model, maps the allocation onto the model's variables (the formulation's ``point``; the
allocation is first permuted by the symmetries the model breaks, which keep its value), and
confirms that

1. every variable bound and constraint row of the model holds at that point (feasibility in the
   model itself, not only through the objective function), and
2. the model's objective there equals the kind's objective at the allocation (relative 1e-6).

The model, the objective and the completion rule come from the instance's
:class:`~formulations.kinds.Kind` (``containment``, ``objective``, ``complete``): e.g. a Tiresias
allocation places workers only; it is completed with parameter servers by
:func:`formulations.tiresias.complete` (the rule is stated there) before it is mapped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedlab.formulations.builtin_kinds import KINDS
from schedlab.formulations.kinds import KindRegistry
from schedlab.scheduling.allocation import Allocation
from schedlab.topology.errors import SchedlabError, SpecError


@dataclass(frozen=True)
class ContainmentReport:
    kind: str
    ok: bool
    objective: float | None
    model_value: float | None
    problems: tuple[str, ...]

    def __str__(self) -> str:
        head = f"{self.kind}: {'contained' if self.ok else 'NOT contained'} (objective {self.objective}, " \
               f"model {self.model_value})"
        return head + "".join(f"\n  - {p}" for p in self.problems[:10])


def check(inst: Any, allocation: Allocation, formulation: Any = None, *, rel_tol: float = 1e-6,
          kinds: KindRegistry = KINDS) -> ContainmentReport:
    """Containment of ``allocation`` in the exact model of ``inst`` (module docstring): the model is
    the kind's ``containment`` formulation (or ``formulation``), the value its ``objective``, the
    allocation completed by its ``complete`` rule."""
    k = kinds.of(inst)
    kind = k.name
    if formulation is None and k.containment is None:
        raise SpecError(f"instance kind {kind!r} declares no containment formulation", source="<containment>",
                        field="kind")
    form = formulation if formulation is not None else k.containment()
    broken = k.violations(inst, allocation)
    if broken:  # not a point of the problem at all (e.g. a guaranteed job below its SLO)
        return ContainmentReport(kind, False, None, None, tuple(f"breaks a rule of the kind: {b}" for b in broken))
    try:
        obj = k.objective(inst, allocation)
        solution = k.complete(inst, allocation)
    except SchedlabError as e:
        return ContainmentReport(kind, False, None, None, (f"cannot evaluate the allocation: {e}",))
    built = form.build(inst)
    vals, problems = form.point(inst, built, solution)
    full = built.model.point(vals)
    problems = list(problems) + built.model.violated(full, tol=1e-6)
    value = built.model.objective_value(full)
    if abs(value - obj) > rel_tol * max(1.0, abs(obj)):
        problems.append(f"model objective {value} != objective {obj} at the allocation")
    return ContainmentReport(kind, not problems, obj, value, tuple(problems))


__all__ = ["ContainmentReport", "check"]
