"""Which trace format a file is, from its header, and a column mapping guessed for any other header.

:func:`detect_format` recognises the known formats by their header columns (Rubick, Tiresias, Philly,
Pollux/Sia, Helios, Alibaba 2023; PAI 2020 tables by their header or, headerless, by the shape of the
first row). For any other header it raises a :class:`TraceError` that lists the columns found and a
ready-to-paste ``--trace-format generic --columns ...`` line guessed from the column names
(:func:`guess_mapping`: ``submission_time -> submit``, ``num_gpu -> gpus``, ...).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from schedlab.benchmarks.workloads.loaders import (
    ALIBABA_COLUMNS,
    HELIOS_COLUMNS,
    LOADERS,
    PAI_JOB_COLUMNS,
    PHILLY_COLUMNS,
    POLLUX_COLUMNS,
    RUBICK_COLUMNS,
    TIRESIAS_COLUMNS,
)
from schedlab.benchmarks.workloads.plausibility import delimiter_problem
from schedlab.benchmarks.workloads.trace import Trace
from schedlab.topology.errors import TraceError
from schedlab.topology.files import read_text

#: format -> the header columns that identify it (most specific first)
SIGNATURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("rubick", RUBICK_COLUMNS),
    ("helios", HELIOS_COLUMNS),
    ("alibaba", ALIBABA_COLUMNS),
    ("tiresias", TIRESIAS_COLUMNS),
    ("pollux", POLLUX_COLUMNS),
    ("philly", PHILLY_COLUMNS),
    ("pai", PAI_JOB_COLUMNS),
)
PAI_STATUSES = frozenset({"Terminated", "Failed", "Running", "Waiting", "Interrupted"})

#: field -> normalised column names that mean it, best first (then names containing one of ``_PARTS``)
_NAMES: dict[str, tuple[str, ...]] = {
    "submit": ("submit", "submittime", "submissiontime", "submittedtime", "submitted", "arrival", "arrivaltime",
               "arrivetime", "creationtime", "createtime", "createdat", "created", "enqueuetime", "queuedtime",
               "timestamp", "time", "ts", "starttime", "start"),
    "duration": ("duration", "durations", "runtime", "runningtime", "runtimes", "elapsed", "elapsedtime",
                 "jobduration", "dur", "length", "len", "walltime", "exectime", "executiontime"),
    "gpus": ("gpus", "numgpu", "numgpus", "gpunum", "gpucount", "ngpu", "ngpus", "gpu", "nogpus", "numreplicas",
             "replicas", "gpurequest", "requestedgpus", "totalgpus"),
    "id": ("jobid", "id", "jobname", "name", "job", "uid", "jobuid"),
    "model": ("model", "modelname", "application", "app", "network", "net", "arch", "architecture", "dnn",
              "workload", "jobtype"),
    "tenant": ("tenant", "user", "username", "vc", "virtualcluster", "team", "queue", "group", "project",
               "org", "account"),
    "cpus": ("cpus", "cpu", "numcpu", "numcpus", "cpunum", "ncpu", "ncpus", "vcpu", "vcpus", "cores"),
    "mem_gb": ("memgb", "memorygb", "mem", "memory", "ram"),
    "iterations": ("iterations", "iteration", "numiteration", "numiterations", "iters", "niters", "steps",
                   "numsteps", "totalsteps", "totaliterations"),
    "plan": ("plan", "execplan", "parallelism", "strategy", "parallelplan"),
    "guaranteed": ("guaranteed", "issla", "sla", "guarantee"),
    "batch": ("batch", "batchsize", "globalbatch", "globalbatchsize", "bs", "bsz"),
    "deadline": ("deadline", "due", "duetime", "ddl"),
}
_PARTS: dict[str, tuple[str, ...]] = {
    "submit": ("submit", "arriv"), "duration": ("duration", "runtime"), "gpus": ("gpu",),
    "iterations": ("iter", "step"), "batch": ("batch",), "model": ("model",), "deadline": ("deadline",),
    "cpus": ("cpu",), "mem_gb": ("mem",),
}
_ORDER = ("submit", "duration", "gpus", "id", "model", "iterations", "batch", "tenant", "cpus", "mem_gb", "plan",
          "guaranteed", "deadline")


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def guess_mapping(columns: Sequence[str]) -> dict[str, str]:
    """``{field: column}`` guessed from column names (each column used once): exact names first
    (``submission_time``, ``num_gpu``, ``model_name``, ...), then names containing a telling part."""
    norm = {c: _norm(c) for c in columns}
    used: set[str] = set()
    out: dict[str, str] = {}
    for f in _ORDER:
        hit = None
        for cand in _NAMES[f]:
            hit = next((c for c in columns if c not in used and norm[c] == cand), None)
            if hit is not None:
                break
        if hit is None:
            hit = next((c for c in columns if c not in used and any(p in norm[c] for p in _PARTS.get(f, ()))),
                       None)
        if hit is not None:
            out[f] = hit
            used.add(hit)
    return out


def mapping_text(mapping: Mapping[str, str]) -> str:
    return ",".join(f"{f}={c}" for f, c in mapping.items())


def suggestion(columns: Sequence[str]) -> str:
    """The ``--columns`` advice for an unknown header."""
    m = guess_mapping(columns)
    missing = [f for f in ("submit", "gpus") if f not in m]
    if "duration" not in m and "iterations" not in m:
        missing.append("duration")
    text = mapping_text({**m, **{f: "?" for f in missing}})
    line = "--columns " + (shlex.quote(text) if re.search(r"[^\w=,.\-]", text) else text)
    advice = f"map its columns, e.g.\n  {line}"
    if missing:
        advice += f"\n  (no column looks like {', '.join(missing)}: replace each '?' with the column that holds it)"
    advice += ("\n  numbers are seconds unless --time-unit ms|min|h says otherwise; check each guess against the "
               "file")
    return advice


def _header(text: str) -> list[str]:
    first = text.lstrip("\ufeff\n\r").split("\n", 1)[0].rstrip("\r")
    import csv

    return [c.strip() for c in next(csv.reader([first]), [])]


def _looks_like_pai_row(cells: Sequence[str]) -> bool:
    if len(cells) != len(PAI_JOB_COLUMNS) or cells[3] not in PAI_STATUSES:
        return False
    for v in cells[4:6]:
        if v:
            try:
                float(v)
            except ValueError:
                return False
    return True


def _first_line(path: str | Path) -> str:
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            return f.readline().rstrip("\r\n")
    except OSError:
        return ""  # the loader reports an unreadable file itself


def _check_delimiter(header_line: str, path: str | Path) -> None:
    why = delimiter_problem(header_line)
    if why:
        raise TraceError(why, source=str(path), line=1)


def detect_format(path: str | Path, *, mapping: str | Mapping[str, str] | None = None,
                  text: str | None = None) -> str:
    """The format of ``path`` from its header (``generic`` when a ``mapping`` is given). An unknown
    header raises a :class:`TraceError` naming the columns found and a guessed ``--columns`` line."""
    if mapping is not None:
        _check_delimiter(_first_line(path) if text is None else text.lstrip("\ufeff\n\r").split("\n", 1)[0], path)
        return "generic"
    if text is None:
        text = read_text(path, what="trace")
    _check_delimiter(text.lstrip("\ufeff\n\r").split("\n", 1)[0].rstrip("\r"), path)
    cols = _header(text)
    have = set(cols)
    for fmt, sig in SIGNATURES:
        if set(sig) <= have:
            return fmt
    if _looks_like_pai_row(cols):
        return "pai"
    if not any(c for c in cols):
        raise TraceError("the first line has no column names", source=str(path), line=1)
    shown = ", ".join(cols[:40]) + (f", ... ({len(cols)} in all)" if len(cols) > 40 else "")
    raise TraceError(f"header not recognised as a known trace format (philly, tiresias, rubick, pollux/sia, "
                     f"helios, pai, alibaba); columns found: {shown}. To load it, {suggestion(cols)}",
                     source=str(path), line=1)


def load_trace(path: str | Path, fmt: str | None = None, **options) -> Trace:
    """Load ``path`` as ``fmt`` (``None``: detected from the header,
    :func:`detect_format`). Lives beside the detection it uses, so ``loaders`` never imports back."""
    if fmt is None:
        fmt = detect_format(path, mapping=options.get("mapping"))
    try:
        loader = LOADERS[fmt]
    except KeyError:
        raise TraceError(f"unknown trace format {fmt!r}; known: {', '.join(LOADERS)}", source=str(path),
                         field="format") from None
    return loader(path, **options)


__all__ = ["SIGNATURES", "detect_format", "guess_mapping", "load_trace", "mapping_text", "suggestion"]
