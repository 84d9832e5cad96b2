"""One record per run: the flat row the results store keeps, and the environment it was measured in.

Fields (``FIELDS``; ``None`` where a field does not apply):

* identity: ``key`` (the store key: suite, case key and code version), ``suite``, ``label``, ``case_type``
  (``gap``/``bound``/``replay``), ``role`` (``policy``/``exact``/``pop``/``bound``/``online``/``replay``),
  ``method``, ``backend``, ``params`` (JSON), ``instance`` (an id shared by every method answering the same
  input), ``kind``, ``cluster``, ``jobs`` and ``gpus`` (instance size), ``seed``;
* outcome: ``status`` (the solver's termination, ``ok``/``invalid`` for a policy's decision, ``bound`` for a
  relaxation, ``killed`` past the hard timeout, ``error``, ``unsupported``), ``objective`` (recomputed by
  the kind's objective function), ``bound`` (this run's proven bound), ``sense``, ``own_gap`` (objective vs
  its own bound), ``proven`` (the run proved optimality), ``verified`` (the verifier's verdict),
  ``violations``, ``message``;
* warm start (exact methods): ``warm_start`` (the policy whose decision was offered as a start, the case's
  ``params.warm_start``) and ``warm_start_used`` (``SolveResult.warm_start_used``: the backend took it as a
  feasible point of the model; False when the backend or the method takes no start or it is no such point);
* cost: ``build_s``, ``solve_s`` (a policy: the median of its warm ``decide()`` calls inside the worker,
  ``extra.first_call_s`` its first call in the fresh process), ``wall_s`` (the run inside the worker
  process, instance generation included), ``process_s`` (the worker process's start apart from the run:
  the caller's wall time for the run minus ``wall_s``: fork, hand-over of the case and of the record),
  ``peak_mem_mb`` (the worker process's peak resident set), ``threads``, ``cpu_count``, ``time_limit_s``;
* provenance: ``versions`` (schedlab, Python, solvers), ``code_version``, ``host``, ``executor``,
  ``started_at``, ``finished_at``;
* ``metrics`` (JSON: a replay's simulator metrics, a bound case's online metrics), ``records_dir`` (a
  replay's per-job records, relative to the results directory), ``extra`` (JSON: anything else).

The best bound of an instance and each run's gap against it are derived over the whole sweep
(:mod:`schedlab.benchmarks.harness.analysis`), since the exact runs finish after the heuristic ones.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

#: column name -> SQLite type, in table order
FIELDS: dict[str, str] = {
    "key": "TEXT PRIMARY KEY", "suite": "TEXT", "label": "TEXT", "case_type": "TEXT", "role": "TEXT",
    "method": "TEXT", "backend": "TEXT", "params": "TEXT", "instance": "TEXT", "kind": "TEXT", "cluster": "TEXT",
    "jobs": "INTEGER", "gpus": "INTEGER", "seed": "INTEGER", "status": "TEXT", "objective": "REAL",
    "bound": "REAL", "sense": "TEXT", "own_gap": "REAL", "proven": "INTEGER", "verified": "INTEGER",
    "violations": "TEXT", "message": "TEXT", "build_s": "REAL", "solve_s": "REAL", "wall_s": "REAL",
    "peak_mem_mb": "REAL", "threads": "INTEGER", "cpu_count": "INTEGER", "time_limit_s": "REAL",
    "versions": "TEXT", "code_version": "TEXT", "host": "TEXT", "executor": "TEXT", "started_at": "TEXT",
    "finished_at": "TEXT", "metrics": "TEXT", "records_dir": "TEXT", "extra": "TEXT", "spec": "TEXT",
    "warm_start": "TEXT", "warm_start_used": "INTEGER", "process_s": "REAL",
}
#: stored as 0/1, read back as bools
BOOL_FIELDS = ("proven", "verified", "warm_start_used")
JSON_FIELDS = ("params", "violations", "versions", "metrics", "extra", "spec")
#: terminal statuses that are results (a resumed sweep skips them); ``error``/``killed`` rerun only with
#: ``--retry-failed``
FAILED = ("error", "killed")

_PACKAGES = ("schedlab", "ortools", "highspy", "pulp", "scipy", "numpy", "networkx", "pandas", "pydantic")


@functools.cache
def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            continue
    return out


#: source that only presents results (the CLI, reports, comparisons): editing it keeps stored results
PRESENTATION = ("benchmarks/cli/", "benchmarks/harness/report/", "benchmarks/harness/compare.py",
                "benchmarks/harness/analysis.py", "benchmarks/harness/suites/paper_figures.py")


def code_version() -> str:
    """``<version>+<digest>[+plugins.<digest>]``: the package version, a SHA-256 of schedlab's own source
    files (those that compute results; :data:`PRESENTATION` excluded) and of the loaded plugins' source,
    so a changed formula never reuses stored results (editable installs included)."""
    from schedlab.benchmarks.harness.plugins import plugin_digest

    pd = plugin_digest()
    return _schedlab_version() + (f"+plugins.{pd}" if pd else "")


@functools.cache
def _schedlab_version() -> str:
    import schedlab.benchmarks as bench

    root = Path(bench.__file__).resolve().parent.parent
    h = hashlib.sha256()
    for layer in ("topology", "perfmodel", "scheduling", "formulations", "heuristics", "benchmarks"):
        base = root / layer
        for f in sorted(base.rglob("*.py")):
            if f.relative_to(root).as_posix().startswith(PRESENTATION):
                continue
            h.update(f.relative_to(base).as_posix().encode())
            h.update(f.read_bytes())
    return f"{versions().get('schedlab', '0')}+{h.hexdigest()[:12]}"


@functools.cache
def git_commit() -> str | None:
    """The git commit of schedlab's source tree (``+dirty`` with uncommitted changes under it), or
    ``None`` outside a git checkout (an installed wheel): the code version is a digest of the source,
    this is where to find that source."""
    import subprocess

    import schedlab.benchmarks as bench

    root = Path(bench.__file__).resolve().parent.parent
    try:
        mine = subprocess.run(["git", "-C", str(root), "ls-files", "--error-unmatch", "--",
                               "benchmarks/harness/record.py"], capture_output=True, text=True, timeout=10)
        if mine.returncode != 0:  # not a checkout of schedlab (an install inside some other repository)
            return None
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", "."],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip()[:12] + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def environment() -> dict[str, Any]:
    """Where a sweep runs: cores, host, versions, the git commit of the source (when it is a checkout) and
    the load average when it started (timings taken on a loaded machine say so)."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"cpu_count": os.cpu_count() or 1, "host": platform.node(), "versions": versions(), "load_avg": load,
            "git": git_commit()}


def store_key(suite: str, case_key: str, code: str) -> str:
    return hashlib.sha256(f"{suite}\n{case_key}\n{code}".encode()).hexdigest()[:32]


def to_row(record: dict[str, Any]) -> dict[str, Any]:
    """The store row: every field present, JSON columns serialised, the rest moved into ``extra``."""
    rec = dict(record)
    extra = dict(rec.pop("extra", None) or {})
    row: dict[str, Any] = {}
    for name in FIELDS:
        row[name] = rec.pop(name, None)
    extra.update(rec)
    row["extra"] = extra or None
    for name in BOOL_FIELDS:
        if row[name] is not None:
            row[name] = int(bool(row[name]))
    for name in JSON_FIELDS:
        if row[name] is not None:
            row[name] = json.dumps(row[name], sort_keys=True, default=str)
    return row


def from_row(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    for name in JSON_FIELDS:
        if out.get(name) is not None:
            out[name] = json.loads(out[name])
    for name in BOOL_FIELDS:
        if out.get(name) is not None:
            out[name] = bool(out[name])
    return out


__all__ = ["BOOL_FIELDS", "FAILED", "FIELDS", "JSON_FIELDS", "code_version", "environment", "git_commit", "from_row", "store_key", "to_row",
           "versions"]
