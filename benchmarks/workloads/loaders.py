"""Trace loaders, one a format. ``LOADERS`` maps a format name to ``load(path, *, lenient=False, **options) -> Trace``.

Every loader reads its file through :func:`~schedlab.benchmarks.workloads.csvio.read_table` and checks
every value (:class:`~schedlab.benchmarks.workloads.csvio.Rows`): a bad row raises
:class:`~schedlab.topology.errors.TraceError` naming the file, line and column, or, with ``lenient=True``,
is dropped and reported by reason. Rows a selection leaves out (``vc``, dates, CPU-only jobs) are counted
in ``Trace.filtered`` and reported as selections. A load that leaves no job is an error naming the
selection. Times: numbers in ``time_unit`` (``s``, ``ms``, ``min``, ``h``) or ISO date-times; submit
times are made relative to ``time_origin`` (default ``"first"``: the first selected job arrives at 0).
Rows are sorted by submit time (stable).

What the loaders share (rows -> :class:`Trace`, time parsing, selection) is in
:mod:`schedlab.benchmarks.workloads.loadcore`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from schedlab.benchmarks.workloads.csvio import MAX_GPUS, MAX_SECONDS, Rows, read_table
from schedlab.benchmarks.workloads.loadcore import (
    Cols,
    finish,
    load_context,
    select_vc_window,
    time_window,
)
from schedlab.benchmarks.workloads.trace import Trace
from schedlab.topology.errors import SpecError, TraceError
from schedlab.topology.files import read_text

# ------------------------------------------------------------------ Philly
PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus", "cluster")


def load_philly(path: str | Path, *, lenient: bool = False, strict: bool = False, vc: str | None = None,
                start: str | None = None, end: str | None = None, time_unit: str | float = "s",
                time_origin=None) -> Trace:
    """The Philly job table (``timestamp,duration,num_gpus,gpu_time,cluster``): select a virtual
    cluster ``vc`` and a submit window ``[start, end)`` (ISO dates, UTC). Tenant = virtual cluster."""
    ctx = load_context(path, lenient, strict, time_unit, time_origin)
    lo, hi = time_window(start, end, ctx.path)
    rows = Rows(read_table(path, lenient=lenient), lenient=lenient, log=ctx.log)
    rows.require(PHILLY_COLUMNS)
    cluster = rows.str("cluster")
    submit = rows.time("timestamp", unit=ctx.unit, unit_name=ctx.unit_name)
    duration = rows.float("duration", positive=True, max_value=MAX_SECONDS, unit=ctx.unit, unit_name=ctx.unit_name)
    gpus = rows.int("num_gpus", min_value=1, max_value=MAX_GPUS)
    cols = Cols(submit, gpus, duration, tenant=cluster)
    return select_vc_window("philly", ctx, rows, cols, cluster, vc, start, end, lo, hi, id_prefix="philly")


# ---------------------------------------------------------------- Tiresias
TIRESIAS_COLUMNS = ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration")


def load_tiresias(path: str | Path, *, lenient: bool = False, strict: bool = False, time_unit: str | float = "s",
                  time_origin=None) -> Trace:
    """Tiresias simulator trace: ``job_id,num_gpu,submit_time,iterations,model_name,duration,interval``."""
    ctx = load_context(path, lenient, strict, time_unit, time_origin)
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

    ctx = load_context(path, lenient, strict, time_unit, time_origin)
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
    ctx = load_context(path, lenient, strict, time_unit, time_origin)
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
    ctx = load_context(path, lenient, strict, time_unit, time_origin)
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
    return select_vc_window("helios", ctx, rows, cols, cluster, vc, None, None, -np.inf, np.inf)


# ------------------------------------------------------------- Alibaba PAI
PAI_JOB_COLUMNS = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
PAI_TASK_COLUMNS = ("job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu",
                    "plan_mem", "plan_gpu", "gpu_type")


def _pai_table(path: str | Path, columns: tuple[str, ...], lenient: bool):
    """PAI tables ship without a header row; one that has it (the ``.header`` file pasted on top) is
    read by its header."""
    text = read_text(path, what="trace")
    first = text.lstrip("\ufeff\n").split("\n", 1)[0]
    has_header = [c.strip() for c in first.split(",")] == list(columns)
    return read_table(path, header=None if has_header else columns, lenient=lenient, text=text)


def load_pai(path: str | Path, *, lenient: bool = False, strict: bool = False, tasks: str | Path | None = None,
             statuses: tuple[str, ...] | None = ("Terminated",), time_unit: str | float = "s",
             time_origin=None) -> Trace:
    """Alibaba PAI 2020: ``path`` = ``pai_job_table`` (``job_name,inst_id,user,status,start_time,
    end_time``), ``tasks`` = ``pai_task_table`` (default: ``pai_task_table.csv`` beside it;
    ``job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type``).

    A job's GPUs = ``ceil(sum over tasks of inst_num * plan_gpu / 100)`` (``plan_gpu`` is percent of one
    GPU), CPUs = ``ceil(sum inst_num * plan_cpu / 100)``, memory = ``sum inst_num * plan_mem`` GB
    (rounding up is reported); submit = the job's ``start_time``, duration = ``end_time - start_time``.
    Jobs without GPU tasks or with a status outside ``statuses`` (``None`` = all) are left out.
    """
    ctx = load_context(path, lenient, strict, time_unit, time_origin)
    p = Path(path)
    task_path = Path(tasks) if tasks is not None else p.with_name("pai_task_table.csv")
    t = Rows(_pai_table(task_path, PAI_TASK_COLUMNS, lenient), lenient=lenient, log=ctx.log, tag=f" from {task_path.name}")
    tname = t.str("job_name")
    n = t.float("inst_num", min_value=0)
    cpu = t.float("plan_cpu", optional=True, min_value=0)
    mem = t.float("plan_mem", optional=True, min_value=0)
    gpu = t.float("plan_gpu", optional=True, min_value=0)
    gtype = t.str("gpu_type", optional=True)
    tkeep = t.finish()
    import pandas as pd

    df = pd.DataFrame({"job": tname[tkeep], "g": np.nan_to_num(n * gpu)[tkeep] / 100.0,
                       "c": np.nan_to_num(n * cpu)[tkeep] / 100.0, "m": np.nan_to_num(n * mem)[tkeep]})
    demand = df.groupby("job", sort=False).sum()
    gt = pd.Series(gtype[tkeep], index=tname[tkeep])
    gt = gt[(gt != "") & (gt != "MISC")]
    first_type = gt.groupby(level=0, sort=False).first().to_dict()

    rows = Rows(_pai_table(p, PAI_JOB_COLUMNS, lenient), lenient=lenient, log=ctx.log)
    name = rows.str("job_name")
    user = rows.str("user")
    status = rows.str("status")
    start = rows.time("start_time", unit=ctx.unit, min_value=0, unit_name=ctx.unit_name)
    end = rows.time("end_time", unit=ctx.unit, min_value=0, unit_name=ctx.unit_name)
    rows.fail(~(end > start), "end_time", "end_time is not after start_time",
              lambda i: f"end_time {end[i]:g} is not after start_time {start[i]:g}")
    d = demand.reindex(name)
    g = d["g"].to_numpy(dtype=float, na_value=0.0)
    c = d["c"].to_numpy(dtype=float, na_value=0.0)
    gpus = np.ceil(g - 1e-9)
    cpus = np.ceil(c - 1e-9)
    too_big = gpus > MAX_GPUS
    rows.fail(too_big, None, "too many GPUs", lambda i: f"job needs {gpus[i]:g} GPUs (at most {MAX_GPUS:,})")
    ok = ~rows.bad & (g > 0)
    frac = ok & (gpus - g > 1e-9)
    ctx.log.add_rows("gpus-rounded", "GPU request rounded up to whole GPUs (PAI plan_gpu is percent of a GPU)",
                     frac, lines=rows.lines, ids=name, field="plan_gpu",
                     details=[f"{g[i]:.2f} -> {gpus[i]:g}" for i in np.flatnonzero(frac)[:5]])
    cfrac = ok & (cpus - c > 1e-9)
    ctx.log.add_rows("cpus-rounded", "CPU request rounded up to whole cores (PAI plan_cpu is percent of a core)",
                     cfrac, lines=rows.lines, ids=name, field="plan_cpu",
                     details=[f"{c[i]:.2f} -> {cpus[i]:g}" for i in np.flatnonzero(cfrac)[:5]])
    attrs = [{"gpu_type": first_type[j]} if j in first_type else {} for j in name]
    cols = Cols(start, np.maximum(gpus, 1.0), end - start, ids=name, tenant=user, cpus=cpus,
                mem_gb=d["m"].to_numpy(dtype=float, na_value=0.0), attrs=attrs)
    cols.drop(~(g > 0), "jobs without GPU tasks left out")
    if statuses is not None:
        cols.drop(~np.isin(status, list(statuses)), f"jobs with a status other than {', '.join(statuses)}")
    return finish("pai", ctx, rows, cols)


# ------------------------------------------------------- Alibaba GPU 2023
ALIBABA_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time", "deletion_time",
                   "scheduled_time")


def load_alibaba(path: str | Path, *, lenient: bool = False, strict: bool = False, time_unit: str | float = "s",
                 time_origin=None) -> Trace:
    """Alibaba GPU cluster trace 2023 (``openb_pod_list_*.csv``: ``name,cpu_milli,memory_mib,num_gpu,
    gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time``, times in s).

    Submit = ``creation_time``, duration = ``deletion_time - scheduled_time``; CPUs =
    ``ceil(cpu_milli / 1000)``, memory = ``memory_mib / 1024`` GB. A pod sharing a GPU (``gpu_milli`` <
    1000) is rounded up to one whole GPU, a pod still ``Running`` has its duration cut at the trace's end
    (both reported). CPU-only pods and pods never scheduled are left out.
    """
    ctx = load_context(path, lenient, strict, time_unit, time_origin)
    rows = Rows(read_table(path, lenient=lenient), lenient=lenient, log=ctx.log)
    rows.require(ALIBABA_COLUMNS)
    name = rows.str("name")
    cpu = rows.float("cpu_milli", min_value=0)
    mem = rows.float("memory_mib", min_value=0)
    gpus = rows.int("num_gpu", min_value=0, max_value=MAX_GPUS)
    milli = rows.float("gpu_milli", min_value=0, max_value=1000)
    created = rows.time("creation_time", unit=ctx.unit, unit_name=ctx.unit_name)
    sched = rows.time("scheduled_time", optional=True, unit=ctx.unit, unit_name=ctx.unit_name)
    deleted = rows.time("deletion_time", optional=True, unit=ctx.unit, unit_name=ctx.unit_name)
    phase = rows.str("pod_phase", optional=True) if rows.has("pod_phase") else np.full(rows.n, "", dtype=object)
    ran = ~np.isnan(sched) & ~np.isnan(deleted)
    rows.fail(ran & (gpus > 0) & ~(deleted - sched > 0), "deletion_time", "not after scheduled_time",
              lambda i: f"deletion_time {deleted[i]:g} is not after scheduled_time {sched[i]:g}")
    ok = ~rows.bad & (gpus > 0) & ran
    shared = ok & (milli < 1000)
    ctx.log.add_rows("gpus-rounded", "GPU share (gpu_milli < 1000) rounded up to one whole GPU", shared,
                     lines=rows.lines, ids=name, field="gpu_milli",
                     details=[f"gpu_milli {milli[i]:g}" for i in np.flatnonzero(shared)[:5]])
    running = ok & (phase == "Running")
    ctx.log.add_rows("jobs-cut", "duration cut at the end of the trace (pod still Running)", running,
                     lines=rows.lines, ids=name, field="deletion_time")
    cpus = np.ceil(cpu / 1000.0 - 1e-9)
    cfrac = ok & (cpus - cpu / 1000.0 > 1e-9)
    ctx.log.add_rows("cpus-rounded", "CPU request rounded up to whole cores (cpu_milli)", cfrac, lines=rows.lines,
                     ids=name, field="cpu_milli")
    qos = rows.raw("qos") if rows.has("qos") else None
    spec = rows.raw("gpu_spec") if rows.has("gpu_spec") else None
    attrs = [{k: v for k, v in (("qos", qos[i] if qos is not None else ""),
                                ("gpu_spec", spec[i] if spec is not None else "")) if v} for i in range(rows.n)]
    cols = Cols(created, gpus, deleted - sched, ids=name, cpus=cpus, mem_gb=mem / 1024.0, attrs=attrs)
    cols.drop(~(gpus > 0) & ~rows.bad, "CPU-only pods (num_gpu = 0) left out")
    cols.drop(~ran & ~rows.bad, "pods never scheduled (no scheduled_time or deletion_time) left out")
    return finish("alibaba", ctx, rows, cols)


# ------------------------------------------------------------------ generic
GENERIC_FIELDS = ("submit", "duration", "gpus", "id", "model", "tenant", "cpus", "mem_gb", "iterations", "plan",
                  "guaranteed", "batch", "deadline")
GENERIC_REQUIRED = ("submit", "gpus")


def parse_mapping(text: str | Mapping[str, str]) -> dict[str, str]:
    """``"submit=ts,duration=dur,gpus=n_gpu"`` (or a dict) -> ``{field: column}``, validated: known
    fields, each once, ``submit`` and ``gpus`` given, and ``duration`` or ``iterations``."""
    src = "<column mapping>"
    if isinstance(text, Mapping):
        items = {str(k).strip(): str(v).strip() for k, v in text.items()}
    else:
        items = {}
        for part in (p for p in str(text).split(",") if p.strip()):
            if "=" not in part:
                raise TraceError(f"mapping entry {part.strip()!r} is not FIELD=COLUMN", source=src)
            k, v = (x.strip() for x in part.split("=", 1))
            if k in items:
                raise TraceError(f"field {k!r} is mapped twice", source=src, field=k)
            items[k] = v
    unknown = sorted(set(items) - set(GENERIC_FIELDS))
    if unknown:
        raise TraceError(f"unknown field(s) {unknown}; known: {', '.join(GENERIC_FIELDS)}", source=src,
                         field=unknown[0])
    empty = [k for k, v in items.items() if not v]
    if empty:
        raise TraceError(f"field {empty[0]!r} is mapped to no column", source=src, field=empty[0])
    missing = [f for f in GENERIC_REQUIRED if f not in items]
    if missing:
        raise TraceError(f"the mapping must give {', '.join(missing)} (e.g. submit=COL,gpus=COL,duration=COL)",
                         source=src, field=missing[0])
    if "duration" not in items and "iterations" not in items:
        raise TraceError("the mapping must give duration, or iterations and model (the perf model then times "
                         "the jobs)", source=src, field="duration")
    return items


def load_generic(path: str | Path, *, lenient: bool = False, strict: bool = False,
                 mapping: str | Mapping[str, str] | None = None, time_unit: str | float = "s",
                 time_origin=None) -> Trace:
    """Any CSV with a header row, given ``mapping`` = {field: column}: ``submit`` (a number in
    ``time_unit`` or a date-time), ``gpus``, ``duration`` (in ``time_unit``) or ``iterations``, and
    optionally ``id``, ``model``, ``tenant``, ``cpus``, ``mem_gb``, ``iterations``, ``plan``,
    ``guaranteed``, ``batch`` (global batch size), ``deadline`` (a time like ``submit``)."""
    if mapping is None:
        raise TraceError("the generic format needs a column mapping (--columns submit=COL,gpus=COL,duration=COL)",
                         source=str(path), field="columns")
    m = parse_mapping(mapping)
    ctx = load_context(path, lenient, strict, time_unit, time_origin)
    rows = Rows(read_table(path, lenient=lenient), lenient=lenient, log=ctx.log)
    missing = [(f, c) for f, c in m.items() if not rows.has(c)]
    if missing:
        f, c = missing[0]
        raise TraceError(f"--columns maps {f} to column {c!r}, which the file does not have; columns found: "
                         f"{', '.join(rows.table.columns)}", source=ctx.path, line=int(rows.lines[0]) - 1
                         if rows.n else 1, column=c)
    u, un = ctx.unit, ctx.unit_name

    def get(f: str, fn, **kw):
        return fn(m[f], **kw) if f in m else None

    ids = get("id", rows.str)
    submit = rows.time(m["submit"], unit=u, unit_name=un)
    gpus = rows.int(m["gpus"], min_value=1, max_value=MAX_GPUS)
    dur = get("duration", rows.float, positive=True, max_value=MAX_SECONDS, unit=u, unit_name=un,
              optional="iterations" in m)
    iters = get("iterations", rows.float, optional="duration" in m, positive=True)
    if dur is not None and iters is not None:
        rows.fail(np.isnan(dur) & np.isnan(iters), m["duration"], "missing value",
                  lambda i: "missing value (and no iterations)")
    cols = Cols(submit, gpus, dur, ids=ids, model=get("model", rows.str, optional=True),
                tenant=get("tenant", rows.str, optional=True), cpus=get("cpus", rows.int, optional=True, min_value=0),
                mem_gb=get("mem_gb", rows.float, optional=True, min_value=0), iterations=iters,
                plan=get("plan", rows.str, optional=True), guaranteed=get("guaranteed", rows.bool, optional=True),
                batch=get("batch", rows.int, optional=True, min_value=1),
                deadline=get("deadline", rows.time, optional=True, unit=u, unit_name=un))
    return finish("generic", ctx, rows, cols)


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


__all__ = ["ALIBABA_COLUMNS", "GENERIC_FIELDS", "GENERIC_REQUIRED", "HELIOS_COLUMNS", "LOADERS", "PAI_JOB_COLUMNS",
           "PAI_TASK_COLUMNS", "PHILLY_COLUMNS", "POLLUX_COLUMNS", "RUBICK_COLUMNS", "TIRESIAS_COLUMNS",
           "load_alibaba", "load_generic", "load_helios", "load_pai", "load_philly", "load_pollux", "load_rubick",
           "load_tiresias", "parse_mapping"]
