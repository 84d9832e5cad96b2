"""The per-row half of a trace conversion (:mod:`~schedlab.benchmarks.workloads.convert`).

A trace of many rows has few job *shapes*: rows of the same model, GPU request, plan code, batch, CPUs,
memory, class and rate kind (and the same presence of a duration and of iterations) get the same final
GPU count, plan, request, batch, iteration time at the request and assumption notes; only the id, line,
arrival, tenant, attributes, duration and iterations differ. :class:`Shape` is what a shape decides
(computed once by the converter); :func:`row_job` builds one row's job from it, replaying the shape's
notes (then the row's own) in the order the unshared conversion makes them. :class:`NoteSink` counts
notes whose examples are already full without touching the log per row, and adds those counts at
:meth:`NoteSink.flush`: the report is the one every note sent to the log one by one gives.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedlab.benchmarks.workloads.assumptions import AssumptionLog
from schedlab.benchmarks.workloads.trace import TraceJob
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.resources import Resources

#: one note of a shape: (kind, what, field, detail, assumption); the job and line are the row's
ShapeNote = tuple[str, str, str | None, str, bool]


class NoteSink:
    """Sends notes to ``log``; a note the log already holds with all its examples is only counted here
    (``log.tally`` says so once, exactly as :meth:`AssumptionLog.add` would then only count) and those
    counts go to the log at :meth:`flush` (call it before reading the log's report). ``defer=False``: every note goes to the log one by one
    (the reference the deferred counts are tested against)."""

    __slots__ = ("_full", "_rows", "defer", "log")

    def __init__(self, log: AssumptionLog, *, defer: bool = True) -> None:
        self.log = log
        self.defer = defer  # False: every note goes to the log as it is made
        self._full: dict[tuple[str, str], int] = {}
        self._rows: dict[tuple[ShapeNote, ...], int] = {}  # a shape's notes, all full: rows counted

    def add_notes(self, notes: tuple[ShapeNote, ...], job: str | None, line: int | None) -> None:
        """A shape's notes for one row, in order (once all of them are full, one count per row)."""
        if not notes:
            return
        if not self.defer:
            for kind, what, field, detail, assumption in notes:
                self.log.add(kind, what, job=job, line=line, field=field, detail=detail, assumption=assumption)
            return
        rows = self._rows
        n = rows.get(notes)
        if n is not None:
            rows[notes] = n + 1
            return
        for kind, what, field, detail, assumption in notes:
            self.add(kind, what, job, line, field, detail, assumption)
        full = self._full
        if all((kind, what) in full for kind, what, *_ in notes):
            rows[notes] = 0

    def add(self, kind: str, what: str, job: str | None, line: int | None, field: str | None, detail: str = "",
            assumption: bool = True) -> None:
        if not self.defer:
            self.log.add(kind, what, job=job, line=line, field=field, detail=detail, assumption=assumption)
            return
        key = (kind, what)
        n = self._full.get(key)
        if n is not None:
            self._full[key] = n + 1
        elif self.log.tally(kind, what):  # counted there; never under strict
            self._full[key] = 0
        else:
            self.log.add(kind, what, job=job, line=line, field=field, detail=detail, assumption=assumption)

    def flush(self) -> None:
        full = self._full
        for notes, n in self._rows.items():
            for kind, what, *_ in notes:
                full[kind, what] += n
        for (kind, what), n in full.items():
            if n:
                self.log.add(kind, what, count=n)  # the note holds all its examples: only counted
        full.clear()
        self._rows.clear()


@dataclass(frozen=True, slots=True)
class Shape:
    """What a job shape decides. ``resized``: the final GPU count ``g`` is not the row's request
    (duration scaled by ``gpus / g``); ``extra``: attributes set after ``rates``, in order; ``t_model``:
    the iteration time at the request used for missing iterations or duration; ``t_perf``: the perf
    model's, when the recorded duration is checked against iterations; ``overhead``: the tier overhead
    at the request (tier rates), else ``None``."""

    g: int
    resized: bool
    plan: ExecutionPlan | None
    req: Resources
    batch: int | None
    t_model: float
    t_perf: float | None
    overhead: float | None
    min_res: Resources | None
    extra: tuple[tuple[str, object], ...]
    notes: tuple[ShapeNote, ...]
    job_class: JobClass


_DURATION_PM = ("duration from the perf model: iterations x its iteration time at the request (the trace gives "
                "none)")


def implausible(sink: NoteSink, tj: TraceJob, duration: float, derived: float, ratio_max: float) -> None:
    """The recorded duration is ground truth; iterations x the perf model's iteration time at the
    request should be near it. A ratio beyond ``ratio_max`` either way (ElasticFlow: 2-217x) says a
    column is mapped wrongly or the trace ran elsewhere: noted, never silently used."""
    lo, hi = sorted((duration, derived))
    ratio = hi / lo if lo > 0 else float("inf")
    if ratio > ratio_max:
        sink.add("implausible", f"implausible: the trace's duration and iterations x the perf model's iteration "
                 f"time differ by more than {ratio_max:g}x (the recorded duration is kept; are the iterations, "
                 "model or GPU columns right?)", tj.id, tj.line, "duration",
                 f"{duration:,.0f} s in the trace vs {derived:,.0f} s, x{ratio:,.1f}")


def row_job(tj: TraceJob, model: str, kind: str, s: Shape, sink: NoteSink, *, reconfigurable: bool,
            ratio_max: float, template: Job | None = None) -> Job:
    """One row's job from its shape ``s``: the shape's notes, then the row's, in the conversion's order.
    ``template``: a job built from ``s`` before (same model and ``reconfigurable``), whose
    :meth:`~schedlab.scheduling.job.Job.sibling` builds this one (the same job as ``Job(...)``)."""
    sink.add_notes(s.notes, tj.id, tj.line)
    duration = tj.duration
    if s.resized and duration is not None:
        duration = duration * tj.gpus / s.g
    attrs: dict = dict(tj.attrs)
    attrs["rates"] = kind
    for k, v in s.extra:
        attrs[k] = v
    if s.t_perf is not None and duration is not None and tj.iterations is not None:
        implausible(sink, tj, duration, float(tj.iterations) * s.t_perf, ratio_max)
    if duration is None:
        iterations = float(tj.iterations)
        duration = iterations * s.t_model
        sink.add("duration-perfmodel", _DURATION_PM, tj.id, tj.line, "duration",
                 f"{iterations:g} x {s.t_model:.4g} s")
    elif tj.iterations is not None:
        iterations = float(tj.iterations)
    else:
        # a job shorter than one iteration is one iteration of its duration (and a tiny duration's
        # quotient cannot underflow to 0 iterations)
        iterations = max(1.0, duration / s.t_model)
    iter_time = duration / iterations
    attrs["iter_time"] = iter_time
    if s.overhead is not None:
        # the simulator's bounded overhead (rates.MAX_COMM_OVERHEAD), so compute x (1 + o) = iter_time there
        attrs["compute_time"] = iter_time / (1.0 + s.overhead)
    if template is not None:
        return template.sibling(tj.id, iterations, tj.submit, tj.tenant, duration, attrs)
    return Job(tj.id, s.req, iterations=iterations, arrival=tj.submit, model=model, tenant=tj.tenant, plan=s.plan,
               job_class=s.job_class, reconfigurable=reconfigurable, global_batch=s.batch, duration=duration,
               attrs=attrs, min_resources=s.min_res)


__all__ = ["NoteSink", "Shape", "implausible", "row_job"]
