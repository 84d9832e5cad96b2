"""Trace loaders. ``LOADERS`` maps a format name to ``load(path, *, lenient=False, **options) -> Trace``.

Every loader validates each row; a bad row raises :class:`~topology.errors.TraceError` naming the
file, line and column, or, with ``lenient=True``, is skipped and counted in ``Trace.skipped``.
Submit times are made relative to the first selected job; rows are sorted by submit time (stable).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from schedlab.benchmarks.workloads.csvio import Row, iter_rows, parse_datetime, read_jobs
from schedlab.benchmarks.workloads.trace import Trace, TraceJob
from schedlab.topology.errors import TraceError


def _finish(name: str, path: str | Path, jobs: list[TraceJob], skipped: int, filtered: int,
            errors: list[str], *, relative: bool = True) -> Trace:
    jobs.sort(key=lambda j: j.submit)  # stable: ties keep file order
    if relative and jobs:
        t0 = jobs[0].submit
        if t0 != 0:
            jobs = [replace(j, submit=j.submit - t0) for j in jobs]
    return Trace(name, str(path), tuple(jobs), skipped, filtered, tuple(errors))


# ------------------------------------------------------------------ Philly
PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus", "cluster")


def load_philly(path: str | Path, *, lenient: bool = False, vc: str | None = None, start: str | None = None,
                end: str | None = None) -> Trace:
    """The Philly job table (``timestamp,duration,num_gpus,gpu_time,cluster``): select a virtual
    cluster ``vc`` and a submit window ``[start, end)`` (ISO dates, UTC). Tenant = virtual cluster."""
    t_start = parse_datetime(start, column="start") if start else -math.inf
    t_end = parse_datetime(end, column="end") if end else math.inf

    def convert(row: Row) -> TraceJob | None:
        cluster = row.str("cluster")
        submit = row.time("timestamp")
        duration = row.float("duration", positive=True)
        gpus = row.int("num_gpus", min_value=1)
        if (vc is not None and cluster != vc) or not t_start <= submit < t_end:
            return None
        return TraceJob(f"philly-{row.line}", submit, gpus, duration, tenant=cluster, line=row.line)

    return _finish("philly", path, *read_jobs(path, convert, required=PHILLY_COLUMNS, lenient=lenient))


# ---------------------------------------------------------------- Tiresias
TIRESIAS_COLUMNS = ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration")


def load_tiresias(path: str | Path, *, lenient: bool = False) -> Trace:
    """Tiresias simulator trace: ``job_id,num_gpu,submit_time,iterations,model_name,duration,interval``."""

    def convert(row: Row) -> TraceJob:
        return TraceJob(row.str("job_id"), row.float("submit_time", min_value=0), row.int("num_gpu", min_value=1),
                        row.float("duration", positive=True), model=row.str("model_name"),
                        iterations=row.float("iterations", positive=True), line=row.line)

    return _finish("tiresias", path, *read_jobs(path, convert, required=TIRESIAS_COLUMNS, lenient=lenient))


# ------------------------------------------------------------------ Rubick
RUBICK_COLUMNS = ("name", "submission_time", "duration", "application", "num_gpus", "num_cpus", "exec_plan",
                  "steps", "is_sla")


def load_rubick(path: str | Path, *, lenient: bool = False) -> Trace:
    """Rubick artifact workload: ``name,submission_time,duration,application,num_gpus,num_cpus,
    bandwidth,exec_plan,steps,is_sla``; ``duration`` is under ``exec_plan`` at ``num_gpus``; ``is_sla``
    = guaranteed (tenant ``A``; best-effort jobs are tenant ``B``, as in Rubick's MT variant)."""
    from schedlab.perfmodel.plans import parse_plan
    from schedlab.topology.errors import PlanError

    def convert(row: Row) -> TraceJob:
        gpus = row.int("num_gpus", min_value=1)
        plan = row.str("exec_plan")
        try:
            parse_plan(plan, gpus)
        except PlanError as e:
            raise row.error("exec_plan", str(e)) from None
        sla = row.bool("is_sla")
        bw = row.float("bandwidth", optional=True, min_value=0)
        return TraceJob(row.str("name"), row.float("submission_time", min_value=0), gpus,
                        row.float("duration", positive=True), model=row.str("application"),
                        tenant="A" if sla else "B", cpus=row.int("num_cpus", min_value=0),
                        iterations=row.float("steps", positive=True), plan=plan, guaranteed=bool(sla),
                        line=row.line, attrs={"bandwidth": bw} if bw else {})

    return _finish("rubick", path, *read_jobs(path, convert, required=RUBICK_COLUMNS, lenient=lenient))


# ----------------------------------------------------------- Pollux / Sia
POLLUX_COLUMNS = ("name", "time", "application", "num_replicas", "batch_size")


def load_pollux(path: str | Path, *, lenient: bool = False, default_duration: float | None = None) -> Trace:
    """Pollux/Sia workload: ``name,time,application,num_replicas,batch_size``. The format has no
    duration (jobs run to a target accuracy); ``default_duration`` (s) fills it in when given."""

    def convert(row: Row) -> TraceJob:
        return TraceJob(row.str("name"), row.float("time", min_value=0), row.int("num_replicas", min_value=1),
                        default_duration, model=row.str("application"),
                        batch_size=row.int("batch_size", min_value=1), line=row.line)

    return _finish("pollux", path, *read_jobs(path, convert, required=POLLUX_COLUMNS, lenient=lenient))


# ------------------------------------------------------------------ Helios
HELIOS_COLUMNS = ("job_id", "user", "vc", "gpu_num", "cpu_num", "node_num", "state", "submit_time",
                  "duration")


def load_helios(path: str | Path, *, lenient: bool = False, vc: str | None = None,
                states: tuple[str, ...] | None = None) -> Trace:
    """Helios ``cluster_log.csv``: ``job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,
    start_time,end_time,duration,queue``. CPU-only jobs (``gpu_num = 0``) and jobs outside ``vc`` /
    ``states`` are filtered out; tenant = virtual cluster. ``submit_time`` is seconds or a date-time."""

    def convert(row: Row) -> TraceJob | None:
        gpus = row.int("gpu_num", min_value=0)
        cluster = row.str("vc")
        state = row.str("state")
        submit = row.time("submit_time")
        duration = row.float("duration", min_value=0)
        cpus = row.int("cpu_num", min_value=0)
        if gpus == 0 or (vc is not None and cluster != vc) or (states is not None and state not in states):
            return None
        if not duration > 0:
            raise row.error("duration", f"must be > 0 for a GPU job, got {duration:g}")
        return TraceJob(row.str("job_id"), submit, gpus, duration, tenant=cluster, cpus=cpus, line=row.line,
                        attrs={"user": row.str("user"), "state": state})

    return _finish("helios", path, *read_jobs(path, convert, required=HELIOS_COLUMNS, lenient=lenient))


# ------------------------------------------------------------- Alibaba PAI
PAI_JOB_COLUMNS = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
PAI_TASK_COLUMNS = ("job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu",
                    "plan_mem", "plan_gpu", "gpu_type")


def load_pai(path: str | Path, *, lenient: bool = False, tasks: str | Path | None = None,
             statuses: tuple[str, ...] | None = ("Terminated",)) -> Trace:
    """Alibaba PAI 2020 (no header rows): ``path`` = ``pai_job_table`` (``job_name,inst_id,user,status,
    start_time,end_time``), ``tasks`` = ``pai_task_table`` (default: ``pai_task_table.csv`` beside it;
    ``job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type``).

    A job's GPUs = ``ceil(sum over tasks of inst_num * plan_gpu / 100)`` (``plan_gpu`` is percent of one
    GPU), CPUs = ``ceil(sum inst_num * plan_cpu / 100)``, memory = ``sum inst_num * plan_mem`` GB; submit
    = the job's ``start_time``, duration = ``end_time - start_time``. Jobs without GPU tasks or with a
    status outside ``statuses`` (``None`` = all) are filtered out.
    """
    p = Path(path)
    task_path = Path(tasks) if tasks is not None else p.with_name("pai_task_table.csv")
    demand: dict[str, list[float]] = {}
    gpu_type: dict[str, str] = {}
    t_skipped = 0
    t_errors: list[str] = []
    for row in iter_rows(task_path, header=PAI_TASK_COLUMNS):
        try:
            if "__bad__" in row._values:
                raise row.error(None, f"malformed row: {row._values['__bad__']}")
            name = row.str("job_name")
            n = row.float("inst_num", min_value=0)
            cpu = row.float("plan_cpu", optional=True, min_value=0) or 0.0
            mem = row.float("plan_mem", optional=True, min_value=0) or 0.0
            gpu = row.float("plan_gpu", optional=True, min_value=0) or 0.0
        except TraceError as e:
            if not lenient:
                raise
            t_skipped += 1
            if len(t_errors) < 20:
                t_errors.append(str(e))
            continue
        d = demand.setdefault(name, [0.0, 0.0, 0.0])
        d[0] += n * gpu / 100.0
        d[1] += n * cpu / 100.0
        d[2] += n * mem
        gt = row.str("gpu_type", optional=True)
        if gt and gt not in ("MISC",):
            gpu_type.setdefault(name, gt)

    def convert(row: Row) -> TraceJob | None:
        name = row.str("job_name")
        status = row.str("status")
        start = row.float("start_time", min_value=0)
        end = row.float("end_time", min_value=0)
        if end <= start:
            raise row.error("end_time", f"end_time {end:g} is not after start_time {start:g}")
        d = demand.get(name)
        if d is None or d[0] <= 0 or (statuses is not None and status not in statuses):
            return None
        gpus = max(1, math.ceil(d[0] - 1e-9))
        return TraceJob(name, start, gpus, end - start, tenant=row.str("user"), cpus=math.ceil(d[1] - 1e-9),
                        mem_gb=d[2], line=row.line,
                        attrs={"gpu_type": gpu_type[name]} if name in gpu_type else {})

    jobs, skipped, filtered, errors = read_jobs(p, convert, required=(), lenient=lenient, header=PAI_JOB_COLUMNS)
    return _finish("pai", path, jobs, skipped + t_skipped, filtered, t_errors + errors)


# ------------------------------------------------------------------ generic
GENERIC_FIELDS = ("submit", "duration", "gpus", "id", "model", "tenant", "cpus", "mem_gb", "iterations", "plan",
                  "guaranteed")
GENERIC_REQUIRED = ("submit", "duration", "gpus")


def parse_mapping(text: str | Mapping[str, str]) -> dict[str, str]:
    """``"submit=ts,duration=dur,gpus=n_gpu"`` (or a dict) -> ``{field: column}``, validated."""
    if isinstance(text, Mapping):
        items = dict(text)
    else:
        items = {}
        for part in (p for p in text.split(",") if p.strip()):
            if "=" not in part:
                raise TraceError(f"mapping entry {part!r} is not FIELD=COLUMN", source="<column mapping>")
            k, v = part.split("=", 1)
            items[k.strip()] = v.strip()
    unknown = set(items) - set(GENERIC_FIELDS)
    if unknown:
        raise TraceError(f"unknown field(s) {sorted(unknown)}; known: {', '.join(GENERIC_FIELDS)}",
                         source="<column mapping>", field=sorted(unknown)[0])
    missing = [f for f in GENERIC_REQUIRED if f not in items]
    if missing:
        raise TraceError(f"the mapping must give {', '.join(missing)}", source="<column mapping>", field=missing[0])
    return items


def load_generic(path: str | Path, *, lenient: bool = False, mapping: str | Mapping[str, str] | None = None,
                 time_unit: float = 1.0) -> Trace:
    """Any CSV with a header row, given ``mapping`` = {field: column} for ``submit`` (seconds or a
    date-time), ``duration`` (seconds x ``time_unit``) and ``gpus``, and optionally ``id``, ``model``,
    ``tenant``, ``cpus``, ``mem_gb``, ``iterations``, ``plan``, ``guaranteed``."""
    if mapping is None:
        raise TraceError("the generic format needs a column mapping (e.g. 'submit=ts,duration=dur,gpus=gpu')",
                         source=str(path))
    m = parse_mapping(mapping)

    def convert(row: Row) -> TraceJob:
        jid = row.str(m["id"]) if "id" in m else f"job-{row.line}"
        return TraceJob(
            jid, row.time(m["submit"]), row.int(m["gpus"], min_value=1),
            row.float(m["duration"], positive=True) * time_unit,
            model=row.str(m["model"], optional=True) if "model" in m else None,
            tenant=(row.str(m["tenant"], optional=True) or "default") if "tenant" in m else "default",
            cpus=row.int(m["cpus"], optional=True, min_value=0) if "cpus" in m else None,
            mem_gb=row.float(m["mem_gb"], optional=True, min_value=0) if "mem_gb" in m else None,
            iterations=row.float(m["iterations"], optional=True, positive=True) if "iterations" in m else None,
            plan=row.str(m["plan"], optional=True) if "plan" in m else None,
            guaranteed=bool(row.bool(m["guaranteed"], optional=True)) if "guaranteed" in m else False,
            line=row.line)

    return _finish("generic", path, *read_jobs(path, convert, required=tuple(m.values()), lenient=lenient))


LOADERS: dict[str, Callable[..., Trace]] = {
    "philly": load_philly,
    "tiresias": load_tiresias,
    "rubick": load_rubick,
    "pollux": load_pollux,
    "sia": load_pollux,
    "helios": load_helios,
    "pai": load_pai,
    "generic": load_generic,
}


def load_trace(path: str | Path, fmt: str, **options) -> Trace:
    try:
        loader = LOADERS[fmt]
    except KeyError:
        raise TraceError(f"unknown trace format {fmt!r}; known: {', '.join(LOADERS)}", source=str(path),
                         field="format") from None
    return loader(path, **options)
