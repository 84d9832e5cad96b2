"""The one public error module: every exception schedlab raises on purpose, in one hierarchy (it lives
in the bottom layer so every layer can raise it; import errors from here).

Every message names what is wrong: the job, the machine, the file and field, or the line.
"""

from __future__ import annotations


class SchedlabError(Exception):
    """Base class of every error schedlab raises on purpose."""


class SpecError(SchedlabError, ValueError):
    """A cluster, workload or instance specification is invalid.

    ``source`` is the file (or ``"<preset NAME>"``/``"<dict>"``), ``field`` the offending field path
    (``"racks[1].machines"``), ``line`` a 1-based line number when the input is line oriented.
    """

    def __init__(self, message: str, *, source: str = "<input>", field: str | None = None,
                 line: int | None = None, column: str | None = None) -> None:
        self.source = source
        self.field = field
        self.line = line
        self.column = column
        where = source
        if line is not None:
            where += f", line {line}"
        if column is not None:
            where += f", column {column!r}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")
        self.message = message


def field_path(loc: tuple) -> str:
    """A :class:`SpecError` field path from a location tuple (a pydantic error's ``loc``, a walk's path):
    ``("racks", 1, "machines")`` -> ``"racks[1].machines"``; ``""`` for the root."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class TraceError(SpecError):
    """A workload trace row is invalid (names file, line and column)."""


class TopologyError(SchedlabError, KeyError):
    """A machine, rack or GPU that the cluster does not have, or a malformed placement."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else ""


class CapacityError(SchedlabError):
    """An allocation would exceed a machine's free resources."""


class AllocationError(SchedlabError):
    """An allocation is malformed or refers to an unknown job or an already placed job."""


class PlanError(SchedlabError, ValueError):
    """An execution plan is malformed or does not fit the job or the placement."""


class PolicyError(SchedlabError):
    """A policy returned a decision the verifier rejected (names the policy and the violation)."""


class SolverError(SchedlabError):
    """A solver backend failed or is unavailable."""


class SolveParamsError(SolverError, ValueError):
    """An invalid solve parameter (a :class:`SolverError`, and a ``ValueError`` for old callers)."""


class BuildTimeout(SolverError):
    """Raised by a formulation's ``build`` when its ``deadline`` (a :func:`time.perf_counter` value)
    passes: :func:`formulations.solve` turns it into a ``no-solution-at-limit`` result."""


class Unsupported(SolverError):
    """This backend cannot run this model: it is not installed or lacks a capability the model needs
    (a method that cannot run an instance raises it too). The harness records ``unsupported``."""


__all__ = ["AllocationError", "BuildTimeout", "CapacityError", "PlanError", "PolicyError", "SchedlabError",
           "SolveParamsError", "SolverError", "SpecError", "TopologyError", "TraceError", "Unsupported",
           "field_path"]
