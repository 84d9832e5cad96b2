"""The backend interface: capabilities, availability (with a reason) and ``solve(model, params)``.

Every backend solves in three phases, run by :func:`solve_in_phases`: ``translate`` (the model into
the solver's own API, row by row through :func:`rows`, the one translation loop, which stops when the
time budget is spent), ``run`` (the solver, with what is left of the budget) and ``parse`` (its
answer into a :class:`RawResult`); the phases are timed here, once."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol

from schedlab.formulations.model import Constraint, Model
from schedlab.formulations.result import Limit, RawResult, Reason, SolveParams, Termination

__all__ = ["CAPABILITIES", "Availability", "Backend", "OutOfTime", "Phased", "importable",
           "incompatibility", "quiet_stdout", "rows", "solve_in_phases", "spent", "time_or", "versioned"]

#: Capability names a backend may declare (see :meth:`Model.requirements` for what models need).
CAPABILITIES = ("mip", "continuous", "intervals", "warm_start", "dual_bound", "deterministic", "options")


@dataclass(frozen=True, slots=True)
class Availability:
    ok: bool
    reason: str = ""


class Backend(Protocol):
    name: str
    capabilities: frozenset[str]

    def availability(self) -> Availability: ...

    def version(self) -> str: ...

    def solve(self, model: Model, params: SolveParams) -> RawResult: ...


def spent(params: SolveParams, t0: float, row: int) -> bool:
    """Every 1,024 rows, whether the budget (``params.time_limit_s`` from ``t0``) is already spent."""
    return (params.time_limit_s is not None and row % 1024 == 0
            and time.perf_counter() - t0 > params.time_limit_s)


class OutOfTime(Exception):
    """The time budget was spent translating the model (raised by :func:`rows`)."""


def rows(model: Model, params: SolveParams, t0: float) -> Iterator[tuple[int, Constraint]]:
    """The one translation loop: ``(index, row)`` of every constraint; raises :class:`OutOfTime` once
    the budget is :func:`spent`, so a backend stops translating instead of overrunning."""
    for r, c in enumerate(model.constraints):
        if spent(params, t0, r):
            raise OutOfTime
        yield r, c


class Phased(Protocol):
    """A backend in three phases (see the module docstring); ``native`` is the solver's own model,
    ``answer`` what its solve returned."""

    def threads(self, params: SolveParams) -> int | None: ...

    def translate(self, model: Model, params: SolveParams, t0: float) -> Any: ...

    def run(self, native: Any, params: SolveParams, time_left_s: float | None) -> Any: ...

    def parse(self, model: Model, native: Any, answer: Any, params: SolveParams) -> RawResult: ...


def solve_in_phases(backend: Phased, model: Model, params: SolveParams) -> RawResult:
    """Translate, run and parse with ``backend``, timing each phase; the solver gets what the
    translation left of ``params.time_limit_s`` (at least 10 ms)."""
    t0 = time.perf_counter()
    try:
        native = backend.translate(model, params, t0)
    except OutOfTime:
        return RawResult(Termination(Reason.NO_SOLUTION_FOUND, Limit.TIME,
                                     "the time limit was spent translating the model"),
                         threads=backend.threads(params), translate_s=time.perf_counter() - t0)
    translate_s = time.perf_counter() - t0
    left = None if params.time_limit_s is None else max(0.01, params.time_limit_s - translate_s)
    t1 = time.perf_counter()
    raw = backend.parse(model, native, backend.run(native, params, left), params)
    return replace(raw, solve_s=time.perf_counter() - t1, translate_s=translate_s)


def time_or(params: SolveParams, other: Limit = Limit.UNDETERMINED) -> Limit:
    """The limit a backend that does not name it most likely hit: the time limit when one was set."""
    return Limit.TIME if params.time_limit_s is not None else other


def importable(module: str, label: str, attr: str | None = None) -> Availability:
    """Available when ``module`` imports (and has ``attr``, if given); ``label`` names it otherwise."""
    import importlib

    try:
        mod = importlib.import_module(module)
        if attr is not None:
            getattr(mod, attr)
    except (ImportError, AttributeError) as e:  # pragma: no cover
        return Availability(False, f"{label} not importable: {e}")
    return Availability(True)


def versioned(prefix: str, package: str) -> str:
    """``"<prefix> <package's __version__>"``."""
    import importlib

    return f"{prefix} {importlib.import_module(package).__version__}"



def incompatibility(backend: Backend, model: Model) -> str | None:
    """Why ``backend`` cannot solve ``model`` (``None`` if it can)."""
    av = backend.availability()
    if not av.ok:
        return f"backend {backend.name} unavailable: {av.reason}"
    missing = model.requirements() - backend.capabilities
    if missing:
        return f"backend {backend.name} lacks {', '.join(sorted(missing))} needed by model {model.name}"
    return None


@contextlib.contextmanager
def quiet_stdout(enabled: bool = True):
    """Silence C-level writes to stdout (HiGHS prints diagnostics there) so JSON output stays clean."""
    if not enabled:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                yield
            finally:
                sys.stdout.flush()
                os.dup2(saved, 1)
    finally:
        os.close(saved)
