"""What a load assumed or changed for the user, counted, with examples.

Every choice a trace load makes that the trace itself did not state (a model drawn from a pool, an
unknown model name run at the reference rate, a GPU request resized, CPUs or a batch size filled in,
a row dropped by ``--lenient``, a job cut by a selection, a duration computed by the perf model) is a
:class:`Note`: one kind of assumption, how many jobs or rows it touched and the first few of them
(job id, line, field). :class:`AssumptionLog` collects them during a load; with ``strict=True`` the
first *assumption* raises a :class:`~schedlab.topology.errors.TraceError` naming the job, the line and
the field instead. *Selections* the user asked for (``--vc``, ``--start``, ``--window``, ``--sample``)
are reported the same way but never rejected.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from schedlab.topology.errors import TraceError

EXAMPLES_KEPT = 5


@dataclass(frozen=True, slots=True)
class Example:
    """One job or row a note touched: its id (if it became a job), its 1-based line, the field."""

    job: str | None = None
    line: int | None = None
    field: str | None = None
    detail: str = ""

    def to_dict(self) -> dict:
        return {k: v for k, v in (("job", self.job), ("line", self.line), ("field", self.field),
                                  ("detail", self.detail)) if v not in (None, "")}

    def where(self) -> str:
        parts = []
        if self.job is not None:
            parts.append(f"job {self.job}")
        if self.line:
            parts.append(f"line {self.line}")
        return " ".join(parts) + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True, slots=True)
class Note:
    """``kind``: a stable key (``model-pool``, ``gpus-resized``, ...); ``what``: one line saying what was
    assumed; ``assumption``: ``False`` for a selection the user asked for (never rejected by strict)."""

    kind: str
    what: str
    count: int
    examples: tuple[Example, ...] = ()
    assumption: bool = True

    def to_dict(self) -> dict:
        return {"kind": self.kind, "what": self.what, "count": self.count, "assumption": self.assumption,
                "examples": [e.to_dict() for e in self.examples]}

    def line(self) -> str:
        ex = ", ".join(e.where() for e in self.examples[:3])
        more = f"; e.g. {ex}" if ex else ""
        return f"{self.count:,} x {self.what}{more}"


@dataclass(frozen=True, slots=True)
class AssumptionReport:
    """The notes of one load, in the order they were first made."""

    notes: tuple[Note, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.notes)

    def __iter__(self):
        return iter(self.notes)

    def count(self, kind: str) -> int:
        return sum(n.count for n in self.notes if n.kind == kind)

    def get(self, kind: str) -> list[Note]:
        return [n for n in self.notes if n.kind == kind]

    def to_dict(self) -> dict:
        return {"assumptions": [n.to_dict() for n in self.notes if n.assumption],
                "selections": [n.to_dict() for n in self.notes if not n.assumption]}

    def lines(self) -> list[str]:
        a = [n.line() for n in self.notes if n.assumption]
        s = [n.line() for n in self.notes if not n.assumption]
        out = []
        if a:
            out += ["assumed (--strict rejects these):", *(f"  {x}" for x in a)]
        if s:
            out += ["noted (selections and documented name mappings; --strict accepts these):", *(f"  {x}" for x in s)]
        return out

    def merged(self, other: AssumptionReport) -> AssumptionReport:
        log = AssumptionLog()
        for n in (*self.notes, *other.notes):
            log._merge(n)
        return log.report()


@dataclass
class _Acc:
    kind: str
    what: str
    assumption: bool
    count: int = 0
    examples: list[Example] = field(default_factory=list)


class AssumptionLog:
    """Collects notes during a load. ``source`` names the trace file in strict-mode errors."""

    def __init__(self, *, strict: bool = False, source: str = "<workload>") -> None:
        self.strict = strict
        self.source = source
        self._acc: dict[tuple[str, str], _Acc] = {}

    def _slot(self, kind: str, what: str, assumption: bool) -> _Acc:
        key = (kind, what)
        acc = self._acc.get(key)
        if acc is None:
            acc = self._acc[key] = _Acc(kind, what, assumption)
        return acc

    def _reject(self, what: str, ex: Example) -> TraceError:
        who = f"job {ex.job!r}: " if ex.job is not None else ""
        detail = f" ({ex.detail})" if ex.detail else ""
        return TraceError(f"{who}{what}{detail}; --strict rejects assumptions (drop --strict to accept and "
                          f"report them)", source=self.source, line=ex.line, column=ex.field)

    def add(self, kind: str, what: str, *, job: str | None = None, line: int | None = None,
            field: str | None = None, detail: str = "", assumption: bool = True, count: int = 1) -> None:
        """One job/row (or ``count`` of them, with this one as the example)."""
        if count <= 0:
            return
        if assumption and self.strict:
            raise self._reject(what, Example(job, line or None, field, detail))
        acc = self._acc.get((kind, what))
        if acc is None:
            acc = self._slot(kind, what, assumption)
        acc.count += count
        if len(acc.examples) < EXAMPLES_KEPT:  # only the first few are kept (a load may note every job)
            acc.examples.append(Example(job, line or None, field, detail))

    def tally(self, kind: str, what: str) -> bool:
        """Count one more job/row of the note ``(kind, what)`` if it exists and keeps no more examples
        (what :meth:`add` would do then, without building the example's fields); ``False``: nothing was
        counted, call :meth:`add` (under ``strict`` always ``False``)."""
        acc = self._acc.get((kind, what))
        if acc is None or self.strict or len(acc.examples) < EXAMPLES_KEPT:
            return False
        acc.count += 1
        return True

    def add_rows(self, kind: str, what: str, mask: np.ndarray, *, lines: np.ndarray,
                 ids: Sequence[str] | np.ndarray | None = None, field: str | None = None,
                 details: Iterable[str] | None = None, assumption: bool = True) -> None:
        """Every row where ``mask`` holds (vectorised form of :meth:`add`)."""
        idx = np.flatnonzero(mask)
        if not idx.size:
            return
        det = list(details) if details is not None else None
        first = idx[:EXAMPLES_KEPT]
        exs = [Example(None if ids is None else str(ids[i]), int(lines[i]) or None, field,
                       det[k] if det is not None else "") for k, i in enumerate(first)]
        if assumption and self.strict:
            raise self._reject(what, exs[0])
        acc = self._slot(kind, what, assumption)
        acc.count += int(idx.size)
        acc.examples.extend(exs[:EXAMPLES_KEPT - len(acc.examples)])

    def _merge(self, note: Note) -> None:
        acc = self._slot(note.kind, note.what, note.assumption)
        acc.count += note.count
        acc.examples.extend(note.examples[:EXAMPLES_KEPT - len(acc.examples)])

    def extend(self, notes: Iterable[Note]) -> None:
        for n in notes:
            if n.assumption and self.strict and n.count:
                raise self._reject(n.what, n.examples[0] if n.examples else Example())
            self._merge(n)

    def report(self) -> AssumptionReport:
        return AssumptionReport(tuple(Note(a.kind, a.what, a.count, tuple(a.examples), a.assumption)
                                      for a in self._acc.values() if a.count))


__all__ = ["AssumptionLog", "AssumptionReport", "Example", "Note"]
