"""Trace loaders. ``LOADERS`` maps a format name to ``load(path, *, lenient=False, **options) -> Trace``.

Every loader reads its file through :func:`~schedlab.benchmarks.workloads.csvio.read_table` and checks
every value (:class:`~schedlab.benchmarks.workloads.csvio.Rows`): a bad row raises
:class:`~schedlab.topology.errors.TraceError` naming the file, line and column, or, with ``lenient=True``,
is dropped and reported by reason. Rows a selection leaves out (``vc``, dates, CPU-only jobs) are counted
in ``Trace.filtered`` and reported as selections. A load that leaves no job is an error naming the
selection. Times: numbers in ``time_unit`` (``s``, ``ms``, ``min``, ``h``) or ISO date-times; submit
times are made relative to ``time_origin`` (default ``"first"``: the first selected job arrives at 0).
Rows are sorted by submit time (stable).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from schedlab.benchmarks.workloads import plausibility
from schedlab.benchmarks.workloads.assumptions import AssumptionLog
from schedlab.benchmarks.workloads.csvio import MAX_GPUS, MAX_SECONDS, Rows, read_table, time_unit
from schedlab.benchmarks.workloads.trace import Trace, TraceJob
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


def _context(path: str | Path, lenient: bool, strict: bool, unit: str | float, origin) -> LoadContext:
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
    tenants = cols.tenant
    ln = lines.tolist()
    for k, i in enumerate(order.tolist()):
        d = None if dur is None or dur[i] != dur[i] else float(dur[i])
        tenant = "default" if tenants is None or not tenants[i] else str(tenants[i])
        if not has_extra:
            jobs.append(TraceJob(str(ids[i]), submit[k], gpus[k], d, tenant=tenant, line=ln[i]))
            continue
        attrs = dict(cols.attrs[i]) if cols.attrs is not None else {}
        if cols.deadline is not None and cols.deadline[i] == cols.deadline[i]:
            attrs["deadline"] = float(cols.deadline[i] - t0)
        jobs.append(TraceJob(
            str(ids[i]), submit[k], gpus[k], d, model=_opt(cols.model, i, str), tenant=tenant,
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


def _time_window(start: str | None, end: str | None, source: str) -> tuple[float, float]:
    lo = -np.inf if start is None else instant(start, field="start")
    hi = np.inf if end is None else instant(end, field="end")
    if not lo < hi:
        raise SpecError(f"--start {start} is not before --end {end}: the window selects nothing", source=source,
                        field="start")
    return lo, hi


# ------------------------------------------------------------------ Philly
PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus", "cluster")


def load_philly(path: str | Path, *, lenient: bool = False, strict: bool = False, vc: str | None = None,
                start: str | None = None, end: str | None = None, time_unit: str | float = "s",
                time_origin=None) -> Trace:
    """The Philly job table (``timestamp,duration,num_gpus,gpu_time,cluster``): select a virtual
    cluster ``vc`` and a submit window ``[start, end)`` (ISO dates, UTC). Tenant = virtual cluster."""
    ctx = _context(path, lenient, strict, time_unit, time_origin)
    lo, hi = _time_window(start, end, ctx.path)
    rows = Rows(read_table(path, lenient=lenient), lenient=lenient, log=ctx.log)
    rows.require(PHILLY_COLUMNS)
    cluster = rows.str("cluster")
    submit = rows.time("timestamp", unit=ctx.unit, unit_name=ctx.unit_name)
    duration = rows.float("duration", positive=True, max_value=MAX_SECONDS, unit=ctx.unit, unit_name=ctx.unit_name)
    gpus = rows.int("num_gpus", min_value=1, max_value=MAX_GPUS)
    cols = Cols(submit, gpus, duration, tenant=cluster)
    return _select_vc_window("philly", ctx, rows, cols, cluster, vc, start, end, lo, hi, id_prefix="philly")


def _select_vc_window(name, ctx, rows, cols, cluster, vc, start, end, lo, hi, *, id_prefix="job") -> Trace:
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


# ---------------------------------------------------------------- Tiresias
TIRESIAS_COLUMNS = ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration")


def load_tiresias(path: str | Path, *, lenient: bool = False, strict: bool = False, time_unit: str | float = "s",
                  time_origin=None) -> Trace:
    """Tiresias simulator trace: ``job_id,num_gpu,submit_time,iterations,model_name,duration,interval``."""
    ctx = _context(path, lenient, strict, time_unit, time_origin)
    rows = Rows(read_table(path, lenient=lenient), lenient=lenient, log=ctx.log)
    rows.require(TIRESIAS_COLUMNS)
    ids = rows.str("job_id")
    gpus = rows.int("num_gpu", min_value=1, max_value=MAX_GPUS)
    submit = rows.time("submit_time", unit=ctx.unit, min_value=0, unit_name=ctx.unit_name)
    iters = rows.float("iterations", positive=True)
    model = rows.str("model_name")
    dur = rows.float("duration", positive=True, max_value=MAX_SECONDS, unit=ctx.unit, unit_name=ctx.unit_name)
    return finish("tiresias", ctx, rows, Cols(submit, gpus, dur, ids=ids, model=model, iterations=iters))


# ------------------------------------------------------------------ Rubick
RUBICK_COLUMNS = ("name", "submission_time", "duration", "application", "num_gpus", "num_cpus", "exec_plan",
                  "steps", "is_sla")


def load_rubick(path: str | Path, *, lenient: bool = False, strict: bool = False, time_unit: str | float = "s",
                time_origin=None) -> Trace:
    """Rubick artifact workload: ``name,submission_time,duration,application,num_gpus,num_cpus,
    bandwidth,exec_plan,steps,is_sla``; ``duration`` is under ``exec_plan`` at ``num_gpus``; ``is_sla``
    = guaranteed (tenant ``A``; best-effort jobs are tenant ``B``, as in Rubick's MT variant)."""
    from schedlab.perfmodel.plans import parse_plan
    from schedlab.topology.errors import PlanError

    ctx = _context(path, lenient, strict, time_unit, time_origin)
    rows = Rows(read_table(path, lenient=lenient), lenient=lenient, log=ctx.log)
    rows.require(RUBICK_COLUMNS)
    ids = rows.str("name")
    submit = rows.time("submission_time", unit=ctx.unit, min_value=0, unit_name=ctx.unit_name)
    dur = rows.float("duration", positive=True, max_value=MAX_SECONDS, unit=ctx.unit, unit_name=ctx.unit_name)
    model = rows.str("application")
    gpus = rows.int("num_gpus", min_value=1, max_value=MAX_GPUS)
    cpus = rows.int("num_cpus", min_value=0)
    plan = rows.str("exec_plan")
    steps = rows.float("steps", positive=True)
    sla = rows.bool("is_sla")
    bw = rows.float("bandwidth", optional=True, min_value=0) if rows.has("bandwidth") else None
    bad_plan = np.zeros(rows.n, dtype=bool)
    why: dict[int, str] = {}
    cache: dict[tuple[str, int], str | None] = {}
    for i in np.flatnonzero(~rows.bad):
        key = (plan[i], int(gpus[i]))
        if key not in cache:
            try:
                parse_plan(key[0], key[1])
                cache[key] = None
            except PlanError as e:
                cache[key] = str(e)
        if cache[key] is not None:
            bad_plan[i] = True
            why[int(i)] = cache[key]
    rows.fail(bad_plan, "exec_plan", "plan does not match num_gpus", lambda i: why[i])
    attrs = [{"bandwidth": float(b)} if b == b and b else {} for b in bw] if bw is not None else None
    tenant = np.where(sla, "A", "B").astype(object)
    return finish("rubick", ctx, rows, Cols(submit, gpus, dur, ids=ids, model=model, tenant=tenant, cpus=cpus,
                                            iterations=steps, plan=plan, guaranteed=sla, attrs=attrs))


# ----------------------------------------------------------- Pollux / Sia
POLLUX_COLUMNS = ("name", "time", "application", "num_replicas", "batch_size")


def load_pollux(path: str | Path, *, lenient: bool = False, strict: bool = False,
                default_duration: float | None = None, time_unit: str | float = "s", time_origin=None) -> Trace:
    """Pollux/Sia workload: ``name,time,application,num_replicas,batch_size``. The format has no
    duration (jobs run to a target accuracy); ``default_duration`` (s) fills it in when given (reported)."""
    ctx = _context(path, lenient, strict, time_unit, time_origin)
    if default_duration is not None and not (0 < default_duration <= MAX_SECONDS):
        raise SpecError(f"default duration must be in (0, {MAX_SECONDS:g}] s, got {default_duration!r}",
                        source=ctx.path, field="default_duration")
    rows = Rows(read_table(path, lenient=lenient), lenient=lenient, log=ctx.log)
    rows.require(POLLUX_COLUMNS)
    ids = rows.str("name")
    submit = rows.time("time", unit=ctx.unit, min_value=0, unit_name=ctx.unit_name)
    model = rows.str("application")
    gpus = rows.int("num_replicas", min_value=1, max_value=MAX_GPUS)
    batch = rows.int("batch_size", min_value=1)
    dur = None
    if default_duration is not None:
        dur = np.full(rows.n, float(default_duration))
        ctx.log.add_rows("duration-given", f"duration set to --default-duration {default_duration:g} s (the "
                         "format has none)", ~rows.bad, lines=rows.lines, ids=ids, field="duration", assumption=False)
    return finish("pollux", ctx, rows, Cols(submit, gpus, dur, ids=ids, model=model, batch=batch))


# ------------------------------------------------------------------ Helios
HELIOS_COLUMNS = ("job_id", "user", "vc", "gpu_num", "cpu_num", "node_num", "state", "submit_time",
                  "duration")


def load_helios(path: str | Path, *, lenient: bool = False, strict: bool = False, vc: str | None = None,
                states: tuple[str, ...] | None = None, time_unit: str | float = "s", time_origin=None) -> Trace:
    """Helios ``cluster_log.csv``: ``job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,
    start_time,end_time,duration,queue``. CPU-only jobs (``gpu_num = 0``) and jobs outside ``vc`` /
    ``states`` are left out; tenant = virtual cluster. ``submit_time`` is seconds or a date-time."""
    ctx = _context(path, lenient, strict, time_unit, time_origin)
    rows = Rows(read_table(path, lenient=lenient), lenient=lenient, log=ctx.log)
    rows.require(HELIOS_COLUMNS)
    ids = rows.str("job_id")
    user = rows.str("user")
    cluster = rows.str("vc")
    gpus = rows.int("gpu_num", min_value=0, max_value=MAX_GPUS)
    cpus = rows.int("cpu_num", min_value=0)
    state = rows.str("state")
    submit = rows.time("submit_time", unit=ctx.unit, unit_name=ctx.unit_name)
    dur = rows.float("duration", min_value=0, max_value=MAX_SECONDS, unit=ctx.unit, unit_name=ctx.unit_name)
    gpu_job = gpus > 0
    rows.fail(gpu_job & ~(dur > 0), "duration", "must be > 0 for a GPU job",
              lambda i: f"must be > 0 for a GPU job, got {dur[i]:g}")
    attrs = [{"user": u, "state": s} for u, s in zip(user, state, strict=True)]
    cols = Cols(submit, gpus, dur, ids=ids, tenant=cluster, cpus=cpus, attrs=attrs)
    cols.drop(~gpu_job & ~rows.bad, "CPU-only jobs (0 GPUs) left out")
    if states is not None:
        cols.drop(~np.isin(state, list(states)), f"jobs in states other than {', '.join(states)}")
    return _select_vc_window("helios", ctx, rows, cols, cluster, vc, None, None, -np.inf, np.inf)


from schedlab.benchmarks.workloads.loaders_more import (  # noqa: E402 (they build on the helpers above)
    ALIBABA_COLUMNS,
    GENERIC_FIELDS,
    GENERIC_REQUIRED,
    PAI_JOB_COLUMNS,
    PAI_TASK_COLUMNS,
    load_alibaba,
    load_generic,
    load_pai,
    parse_mapping,
)

LOADERS: dict[str, Callable[..., Trace]] = {
    "philly": load_philly,
    "tiresias": load_tiresias,
    "rubick": load_rubick,
    "pollux": load_pollux,
    "sia": load_pollux,
    "helios": load_helios,
    "pai": load_pai,
    "alibaba": load_alibaba,
    "generic": load_generic,
}


def load_trace(path: str | Path, fmt: str | None = None, **options) -> Trace:
    """Load ``path`` as ``fmt`` (``None``: detected from the header,
    :func:`~schedlab.benchmarks.workloads.detect.detect_format`)."""
    if fmt is None:
        from schedlab.benchmarks.workloads.detect import detect_format

        fmt = detect_format(path, mapping=options.get("mapping"))
    try:
        loader = LOADERS[fmt]
    except KeyError:
        raise TraceError(f"unknown trace format {fmt!r}; known: {', '.join(LOADERS)}", source=str(path),
                         field="format") from None
    return loader(path, **options)


__all__ = ["ALIBABA_COLUMNS", "GENERIC_FIELDS", "GENERIC_REQUIRED", "HELIOS_COLUMNS", "LOADERS", "PAI_JOB_COLUMNS",
           "PAI_TASK_COLUMNS", "PHILLY_COLUMNS", "POLLUX_COLUMNS", "RUBICK_COLUMNS", "TIRESIAS_COLUMNS", "Cols",
           "LoadContext", "finish", "load_trace", "parse_mapping", "parse_origin"]
