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
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab.benchmarks.harness.plugins import plugin_digest

if TYPE_CHECKING:
    from schedlab.benchmarks.harness.casebase import Case

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


class Status(StrEnum):
    """Every status a record can have (stored as its value)."""

    # a solver's status (``formulations.Status``, the same values)
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    FEASIBLE_AT_LIMIT = "feasible-at-limit"
    NO_SOLUTION_AT_LIMIT = "no-solution-at-limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    # a policy's decision, a bound, a replay
    OK = "ok"
    INVALID = "invalid"
    BOUND = "bound"
    NO_BOUND = "no-bound"
    INTERRUPTED = "interrupted"
    INCOMPLETE = "incomplete"
    UNSUPPORTED = "unsupported"
    # the process
    ERROR = "error"
    KILLED = "killed"
    # set by the analysis: a verified value better than the proven bound of its instance
    BOUND_VIOLATED = "bound-violated"


#: terminal statuses that are results (a resumed sweep skips them); ``error``/``killed`` rerun only with
#: ``--retry-failed``
FAILED = (Status.ERROR, Status.KILLED)
#: terminations that close an instance (optimality or infeasibility proven)
PROOFS = (Status.OPTIMAL, Status.INFEASIBLE)
#: statuses of runs that ended on their own (a proof, a decision, a bound)
FINISHED = (Status.OPTIMAL, Status.OK, Status.BOUND, Status.INFEASIBLE)
#: statuses of a solver stopped by a limit
AT_LIMIT = (Status.FEASIBLE_AT_LIMIT, Status.NO_SOLUTION_AT_LIMIT)

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
    pd = plugin_digest()
    return _schedlab_version() + (f"+plugins.{pd}" if pd else "")


@functools.cache
def _schedlab_version() -> str:
    root = Path(__file__).resolve().parents[2]
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
    import subprocess  # lazy: start-up (only a sweep asks for its commit)

    root = Path(__file__).resolve().parents[2]
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


def to_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """The store row: every field present, JSON columns serialised. A key that is no field is an error
    (what a run measures beyond the fields goes into ``extra`` by name, in its :class:`Outcome`)."""
    unknown = sorted(set(record) - FIELDS.keys())
    if unknown:
        raise ValueError(f"not record fields: {', '.join(unknown)} (put them in extra)")
    row = {name: record.get(name) for name in FIELDS}
    if isinstance(row["status"], Status):
        row["status"] = row["status"].value
    row["extra"] = dict(row["extra"]) or None if row["extra"] is not None else None
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


@dataclass(frozen=True)
class Outcome:
    """What running a case measured (``Case.run``): the result fields of its record. Anything else it
    measured goes into ``extra`` by name; ``files`` are a replay's per-job records (name -> bytes), written
    by the runner into the results directory; ``backend_version`` joins the record's ``versions``."""

    status: Status
    role: str | None = None
    message: str | None = None
    objective: float | None = None
    bound: float | None = None
    sense: str | None = None
    own_gap: float | None = None
    proven: bool | None = None
    verified: bool | None = None
    violations: list[str] | None = None
    jobs: int | None = None
    gpus: int | None = None
    cluster: str | None = None
    build_s: float | None = None
    solve_s: float | None = None
    threads: int | None = None
    metrics: Mapping[str, Any] | None = None
    warm_start: str | None = None
    warm_start_used: bool | None = None
    backend_version: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    files: Mapping[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))

    @classmethod
    def failure(cls, status: Status, message: str) -> Outcome:
        return cls(status, message=message)

    def flat(self) -> dict[str, Any]:
        """The record fields it sets and its ``extra``, in one flat dict (for inspection: a test, a
        notebook); ``files`` left out."""
        out = {f: getattr(self, f) for f in self.__dataclass_fields__ if f not in ("extra", "files")}
        return out | dict(self.extra)


@dataclass(frozen=True)
class Process:
    """Where and when a run's process ran: its clock, its memory, and (``extra``) the worker's own
    facts (``pid``, ``start_mem_mb``, a Dask worker's ``dask_worker_slots``); ``process_s`` (set by the
    caller) is the process's start and hand-over apart from the run measured inside it."""

    started_at: str | None = None
    finished_at: str | None = None
    wall_s: float | None = None
    peak_mem_mb: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    process_s: float | None = None


@dataclass(frozen=True)
class Run:
    """A finished run as a worker returns it: the case's outcome and its process."""

    outcome: Outcome
    process: Process = field(default_factory=Process)


@dataclass(frozen=True)
class Provenance:
    """What the runner adds: the store key, suite, code version, where it ran and, for a replay, the
    process limit it ran under (its ``time_limit_s``)."""

    key: str
    suite: str
    code_version: str
    executor: str
    environment: Mapping[str, Any]
    hard_limit_s: float | None = None
    records_dir: str | None = None


@dataclass(frozen=True)
class Record:
    """One stored run, a typed row (:data:`FIELDS`, in table order). Built in one place, :meth:`of`."""

    key: str
    suite: str
    label: str
    case_type: str
    role: str | None
    method: str
    backend: str | None
    params: Mapping[str, Any]
    instance: str
    kind: str
    cluster: str | None
    jobs: int | None
    gpus: int | None
    seed: int
    status: Status
    objective: float | None
    bound: float | None
    sense: str | None
    own_gap: float | None
    proven: bool | None
    verified: bool | None
    violations: list[str] | None
    message: str | None
    build_s: float | None
    solve_s: float | None
    wall_s: float | None
    peak_mem_mb: float | None
    threads: int | None
    cpu_count: int | None
    time_limit_s: float | None
    versions: Mapping[str, Any] | None
    code_version: str
    host: str | None
    executor: str
    started_at: str | None
    finished_at: str | None
    metrics: Mapping[str, Any] | None
    records_dir: str | None
    extra: Mapping[str, Any] | None
    spec: Mapping[str, Any]
    warm_start: str | None
    warm_start_used: bool | None
    process_s: float | None

    @classmethod
    def of(cls, case: Case, spec: Mapping[str, Any], run: Run, prov: Provenance) -> Record:
        """The record of ``case`` (its plain ``spec``) that ended in ``run``, stored as ``prov`` says."""
        o, p, info, env = run.outcome, run.process, case.info(), prov.environment
        versions = dict(env["versions"]) | ({"backend": o.backend_version} if o.backend_version else {})
        return cls(
            key=prov.key, suite=prov.suite, label=case.label, case_type=case.TYPE, role=o.role, method=info.method,
            backend=info.backend, params=dict(info.params), instance=case.instance_id(), kind=info.kind,
            cluster=o.cluster or info.cluster, jobs=o.jobs if o.jobs is not None else info.jobs, gpus=o.gpus,
            seed=info.seed, status=o.status, objective=o.objective, bound=o.bound, sense=o.sense, own_gap=o.own_gap,
            proven=o.proven, verified=o.verified, violations=o.violations, message=o.message, build_s=o.build_s,
            solve_s=o.solve_s, wall_s=p.wall_s, peak_mem_mb=p.peak_mem_mb, threads=o.threads,
            cpu_count=env["cpu_count"], time_limit_s=info.time_limit_s or prov.hard_limit_s, versions=versions,
            code_version=prov.code_version, host=env["host"], executor=prov.executor, started_at=p.started_at,
            finished_at=p.finished_at, metrics=o.metrics, records_dir=prov.records_dir,
            extra={**o.extra, **p.extra} or None, spec=dict(spec), warm_start=o.warm_start,
            warm_start_used=o.warm_start_used, process_s=p.process_s)

    def row(self) -> dict[str, Any]:
        """The store row (:func:`to_row`)."""
        return to_row(asdict(self))


__all__ = ["AT_LIMIT", "BOOL_FIELDS", "FAILED", "FIELDS", "FINISHED", "JSON_FIELDS", "PROOFS", "Outcome", "Process",
           "Provenance", "Record", "Run", "Status", "code_version", "environment", "from_row", "git_commit",
           "store_key", "to_row", "versions"]
