"""What every trace loader shares: the columnar rows a format yields (:class:`Cols`), the options
each is given (:class:`LoadContext`, made by :func:`load_context`), time parsing (:func:`instant`,
:func:`parse_origin`), the ``--vc``/``--start``/``--end`` selection of cluster traces
(:func:`select_vc_window`) and :func:`finish`, which validates, selects, sorts and builds the
:class:`~schedlab.benchmarks.workloads.trace.Trace`. The formats themselves are in
:mod:`schedlab.benchmarks.workloads.loaders` (its docstring states the rules every loader keeps)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from schedlab.benchmarks.workloads import plausibility
from schedlab.benchmarks.workloads.assumptions import AssumptionLog
from schedlab.benchmarks.workloads.csvio import MAX_SECONDS, Rows, time_unit
from schedlab.benchmarks.workloads.trace import Trace, TraceJob, plain_trace_job
from schedlab.topology.errors import SpecError, TraceError


@dataclass
class Cols:
    """Columnar trace rows (one entry per table row; ``None`` = the format lacks the field; NaN /
    ``""`` = missing in this row)."""

    submit: np.ndarray
    gpus: np.ndarray
    duration: np.ndarray | None = None
    ids: np.ndarray | None = None
    model: np.ndarray | None = None
    tenant: np.ndarray | None = None
    cpus: np.ndarray | None = None
    mem_gb: np.ndarray | None = None
    iterations: np.ndarray | None = None
    plan: np.ndarray | None = None
    guaranteed: np.ndarray | None = None
    batch: np.ndarray | None = None
    deadline: np.ndarray | None = None
    attrs: Sequence[dict] | None = None
    drops: list[tuple[np.ndarray, str]] = field(default_factory=list)  # (mask, selection described)

    def drop(self, mask: np.ndarray, what: str) -> None:
        """Leave out rows in ``mask`` (a selection, reported as such)."""
        self.drops.append((np.asarray(mask, dtype=bool), what))


@dataclass(frozen=True)
class LoadContext:
    """What every loader is given besides its own options."""

    path: str
    lenient: bool = False
    log: AssumptionLog = field(default_factory=AssumptionLog)
    unit: float = 1.0
    unit_name: str = ""
    origin: str | float | None = None


def load_context(path: str | Path, lenient: bool, strict: bool, unit: str | float, origin) -> LoadContext:
    if lenient and strict:
        raise SpecError("--lenient (drop bad rows) and --strict (reject every assumption) exclude each other",
                        source=str(path), field="strict")
    u = time_unit(unit)
    parse_origin(origin, u)  # a bad origin fails before the file is read
    return LoadContext(str(path), lenient, AssumptionLog(strict=strict, source=str(path)), u,
                       "" if u == 1.0 else f" {unit}" if isinstance(unit, str) else f" x {u:g} s", origin)


def _opt(x: np.ndarray | None, i: int, conv: Callable = float):
    if x is None:
        return None
    v = x[i]
    if v is None or v == "" or (isinstance(v, float) and v != v):
        return None
    return conv(v)


def instant(value: str | float, *, unit: float = 1.0, field: str = "time_origin") -> float:
    """Seconds of a number (in ``unit``) or an ISO date-time (UTC unless it says); errors name ``field``."""
    if isinstance(value, bool):
        raise SpecError(f"{field} must be a number or an ISO date-time, got {value!r}", source="<trace>", field=field)
    try:
        x = float(value) * unit
    except (TypeError, ValueError):
        import pandas as pd

        ts = pd.to_datetime(str(value), format="ISO8601", utc=True, errors="coerce")
        if ts is pd.NaT:
            raise SpecError(f"{field} {value!r} is neither a number nor an ISO date-time (YYYY-MM-DD[ HH:MM:SS])",
                            source="<trace>", field=field) from None
        x = (ts - pd.Timestamp(0, tz="UTC")).total_seconds()
    if not (np.isfinite(x) and abs(x) <= MAX_SECONDS):
        raise SpecError(f"{field} {value!r} is not a finite time within {MAX_SECONDS:g} s", source="<trace>",
                        field=field)
    return float(x)


def parse_origin(origin: str | float | None, unit: float = 1.0) -> float | None:
    """``None``/``"first"``: the first selected job; ``"file"``: 0 of the file's time base; a number (in
    the trace's time unit) or an ISO date-time: that instant."""
    if origin is None or origin == "first":
        return None
    if origin == "file":
        return 0.0
    return instant(origin, unit=unit, field="time_origin")


def finish(name: str, ctx: LoadContext, rows: Rows, cols: Cols, *, id_prefix: str = "job",
           selection: str = "") -> Trace:
    """Validate, select, sort and build the :class:`Trace` (see the module docstring)."""
    keep = rows.finish()
    n_rows = len(keep)
    lines = rows.lines
    ids = cols.ids if cols.ids is not None else np.array([f"{id_prefix}-{ln}" for ln in lines.tolist()], dtype=object)
    sel = keep.copy()
    filtered = 0
    for mask, what in cols.drops:
        d = sel & mask
        k = int(d.sum())
        if k:
            ctx.log.add_rows("selection", what, d, lines=lines, ids=ids, assumption=False)
            filtered += k
            sel &= ~d
    if cols.ids is not None and sel.any():
        import pandas as pd

        dup = pd.Series(ids[sel]).duplicated().to_numpy()
        if dup.any():
            i = int(np.flatnonzero(sel)[np.flatnonzero(dup)[0]])
            raise TraceError(f"duplicate job id {ids[i]!r}", source=ctx.path, line=int(lines[i]))
    if cols.deadline is not None:
        late = sel & (cols.deadline < cols.submit)
        if late.any():
            i = int(np.flatnonzero(late)[0])
            raise TraceError(f"deadline {cols.deadline[i]:g} s is before the submit time {cols.submit[i]:g} s",
                             source=ctx.path, line=int(lines[i]), column="deadline")
    idx = np.flatnonzero(sel)
    if not idx.size:
        raise TraceError(_empty_message(n_rows, rows.skipped, filtered, selection), source=ctx.path)
    sub = cols.submit[idx]
    order = idx[np.argsort(sub, kind="stable")]
    origin = parse_origin(ctx.origin, ctx.unit)
    t0 = float(cols.submit[order[0]]) if origin is None else origin
    early = cols.submit[order] < t0
    if early.any():
        i = int(order[np.flatnonzero(early)[0]])
        raise TraceError(f"submit time {cols.submit[i]:g} s is before the time origin {t0:g} s", source=ctx.path,
                         line=int(lines[i]))
    submit = (cols.submit[order] - t0).tolist()
    gpus = cols.gpus[order].astype(np.int64).tolist()
    dur = cols.duration
    plausibility.check(ctx.log, ids[order], lines[order], cols.submit[order], cols.gpus[order],
                       None if dur is None else np.asarray(dur[order], dtype=float), ctx.unit_name)
    jobs = []
    has_extra = any(x is not None for x in (cols.model, cols.cpus, cols.mem_gb, cols.iterations, cols.plan,
                                            cols.guaranteed, cols.batch, cols.deadline, cols.attrs))
    # the columns in job order as Python objects, read once (not an indexed numpy scalar per row)
    durs = None if dur is None else dur[order].tolist()
    tenants = None if cols.tenant is None else cols.tenant[order].tolist()
    job_ids = ids[order].tolist()
    ln = lines.tolist()
    for k, i in enumerate(order.tolist()):
        d = None if durs is None or durs[k] != durs[k] else float(durs[k])
        tenant = "default" if tenants is None or not tenants[k] else str(tenants[k])
        if not has_extra:
            jobs.append(plain_trace_job(str(job_ids[k]), submit[k], gpus[k], d, tenant, ln[i]))
            continue
        attrs = dict(cols.attrs[i]) if cols.attrs is not None else {}
        if cols.deadline is not None and cols.deadline[i] == cols.deadline[i]:
            attrs["deadline"] = float(cols.deadline[i] - t0)
        jobs.append(TraceJob(
            str(job_ids[k]), submit[k], gpus[k], d, model=_opt(cols.model, i, str), tenant=tenant,
            cpus=_opt(cols.cpus, i, int), mem_gb=_opt(cols.mem_gb, i), iterations=_opt(cols.iterations, i),
            plan=_opt(cols.plan, i, str), guaranteed=bool(cols.guaranteed[i]) if cols.guaranteed is not None
            else False, batch_size=_opt(cols.batch, i, int), line=ln[i], attrs=attrs))
    return Trace(name, ctx.path, tuple(jobs), rows.skipped, filtered, tuple(getattr(rows, "errors", ())),
                 ctx.log.report().notes, t0)


def _empty_message(n_rows: int, skipped: int, filtered: int, selection: str) -> str:
    if n_rows == 0 and not skipped:
        return "no jobs: the file has a header but no rows"
    if filtered and selection:
        return f"no job matches the selection {selection} ({filtered:,} rows left out, {skipped:,} bad)"
    if filtered:
        return f"no job left: all {filtered:,} valid rows were left out (CPU-only or outside the selection)"
    return f"no jobs: every one of the {skipped:,} rows was bad and dropped (--lenient)"


def _values(name: str, rows: Rows, column: str, keep: np.ndarray) -> str:
    vals = sorted({str(v) for v in rows.raw(column)[keep & ~rows.bad] if v})
    return ", ".join(vals[:10]) + (f", ... ({len(vals)} in all)" if len(vals) > 10 else "")


def time_window(start: str | None, end: str | None, source: str) -> tuple[float, float]:
    lo = -np.inf if start is None else instant(start, field="start")
    hi = np.inf if end is None else instant(end, field="end")
    if not lo < hi:
        raise SpecError(f"--start {start} is not before --end {end}: the window selects nothing", source=source,
                        field="start")
    return lo, hi


def select_vc_window(name, ctx, rows, cols, cluster, vc, start, end, lo, hi, *, id_prefix="job") -> Trace:
    sel = []
    if vc is not None:
        out = cluster != vc
        if (out | rows.bad).all():
            raise TraceError(f"no job matches --vc {vc}; virtual clusters in the trace: "
                             f"{_values(name, rows, 'vc' if name == 'helios' else 'cluster', ~rows.bad)}",
                             source=ctx.path, field="vc")
        cols.drop(out, f"jobs outside --vc {vc}")
        sel.append(f"--vc {vc}")
    if start is not None or end is not None:
        with np.errstate(invalid="ignore"):
            out = ~((cols.submit >= lo) & (cols.submit < hi))
        cols.drop(out & ~rows.bad, f"jobs submitted outside [{start or '-inf'}, {end or 'inf'})")
        sel.append(f"--start {start}" if start else "")
        sel.append(f"--end {end}" if end else "")
    return finish(name, ctx, rows, cols, id_prefix=id_prefix, selection=" ".join(s for s in sel if s))


__all__ = ["Cols", "LoadContext", "finish", "instant", "load_context", "parse_origin", "select_vc_window",
           "time_window"]
