"""The backend interface: capabilities, availability (with a reason) and ``solve(model, params)``."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import dataclass
from typing import Protocol

from schedlab.formulations.model import Model
from schedlab.formulations.result import RawResult, SolveParams, Termination
from schedlab.topology.errors import SolverError

#: Capability names a backend may declare (see :meth:`Model.requirements` for what models need).
CAPABILITIES = ("mip", "continuous", "intervals", "warm_start", "dual_bound", "deterministic")


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
    """For translation loops: every 1,024 rows, whether the budget (``params.time_limit_s`` from
    ``t0``) is already spent, so a backend stops translating instead of overrunning."""
    return (params.time_limit_s is not None and row % 1024 == 0
            and time.perf_counter() - t0 > params.time_limit_s)


def out_of_time(t0: float, threads: int | None) -> RawResult:
    return RawResult(Termination.NO_SOLUTION_AT_LIMIT, None, None, None, 0.0, threads,
                     "the time limit was spent translating the model", translate_s=time.perf_counter() - t0,
                     limit_hit=True)


class Unsupported(SolverError):
    """This backend cannot run this model: it is not installed or lacks a capability the model needs
    (a method that cannot run an instance raises it too). The harness records ``unsupported``."""


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
