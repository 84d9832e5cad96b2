"""The runner: a suite's cases -> one record each in the results store, each run in its own worker
process with a hard timeout, on this machine or a Dask cluster, resumable.

1. Check everything first (:mod:`~schedlab.benchmarks.harness.validate`, the executor's address), then
   open the store: bad input never touches stored records.
2. Key every case (suite, case key, code version); skip those already stored (``error``/``killed``
   ones too, unless ``retry_failed``).
3. Dispatch at most ``capacity`` runs at a time; solver threads x concurrent runs never exceed the
   cores (``workers`` is clamped, and the clamp reported). Each finished run is stored at once, in
   its own transaction. With ``Suite.until_unproven``, an exact method's sizes run in increasing order
   and stop once every seed of a size finished without proving optimality.
4. At the end: the suite's reproduction rows (``Suite.reproduce``) and the session's counts.

One ``bench`` per results folder at a time (:class:`~schedlab.benchmarks.harness.store.BenchLock`); a
session left ``running`` by a killed writer is closed as interrupted by the next one.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.casebase import Case, ReproRow, Suite
from schedlab.benchmarks.harness.cases import case_spec
from schedlab.benchmarks.harness.executors import make_executor
from schedlab.benchmarks.harness.plugins import load_plugins
from schedlab.benchmarks.harness.record import (
    FAILED,
    PROOFS,
    Outcome,
    Provenance,
    Record,
    Run,
    Status,
    code_version,
    environment,
    store_key,
)
from schedlab.benchmarks.harness.replay import REPLAY_LIMIT_S
from schedlab.benchmarks.harness.store import BenchLock, Store
from schedlab.benchmarks.harness.validate import validate_suite
from schedlab.benchmarks.harness.worker import GRACE_S
from schedlab.topology.errors import SpecError


@dataclass(frozen=True)
class BenchOptions:
    """``workers``: concurrent runs (default: cores // threads); ``threads``: solver threads per run;
    ``time_limit_s``: overrides every case's solver limit (and is a replay's hard limit); ``seed`` is
    added to every case's seeds (instance, workload, policy and solver); a run is killed after twice
    its solver limit plus ``grace_s``; ``connect_timeout_s`` bounds the wait for a Dask scheduler."""

    out: Path
    workers: int | None = None
    threads: int = 1
    executor: str = "local"
    scheduler: str | None = None
    time_limit_s: float | None = None
    seed: int = 0
    plugins: tuple[str, ...] = ()
    retry_failed: bool = False
    grace_s: float = GRACE_S
    connect_timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise SpecError(f"workers must be >= 1, got {self.workers}", source="--workers", field="workers")
        if self.threads < 1:
            raise SpecError(f"threads must be >= 1, got {self.threads}", source="--threads", field="threads")
        if self.time_limit_s is not None and not self.time_limit_s > 0:
            raise SpecError(f"time limit must be > 0 seconds, got {self.time_limit_s}", source="--time-limit",
                            field="time_limit")
        if self.seed < 0:
            raise SpecError(f"seed must be >= 0, got {self.seed}", source="--seed", field="seed")


def concurrency(workers: int | None, threads: int, cores: int | None = None) -> tuple[int, int, list[str]]:
    """``(workers, threads, notes)`` with ``workers * threads <= cores``; ``notes`` says what was clamped."""
    cores = cores or os.cpu_count() or 1
    notes = []
    if threads > cores:
        notes.append(f"solver threads clamped from {threads} to the {cores} cores")
        threads = cores
    most = max(1, cores // threads)
    if workers is None:
        workers = most
    elif workers > most:
        notes.append(f"workers clamped from {workers} to {most} ({cores} cores / {threads} solver threads)")
        workers = most
    return workers, threads, notes


def with_seed_and_limit(case: Case, seed: int, limit: float | None) -> Case:
    """``case`` with ``seed`` added to its seeds and (gap and bound cases) its solver limit replaced."""
    if seed == 0 and limit is None:
        return case
    return case.shifted(seed, limit)


@dataclass
class Task:
    case: Case
    key: str
    hard_limit_s: float
    group: tuple | None = None

    @property
    def size(self) -> int:
        return case_size(self.case)


def case_size(case: Case) -> int:
    jobs = case.info().jobs
    return jobs if jobs is not None else 0


def _group(suite: Suite, case: Case) -> tuple | None:
    return case.ladder() if suite.until_unproven else None


class Ladder:
    """Exact methods grow with size until every seed of a size finished without a proof (of optimality
    or infeasibility: :data:`PROOFS`)."""

    def __init__(self) -> None:
        self.expected: dict[tuple, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.proven: dict[tuple, dict[int, list[bool]]] = defaultdict(lambda: defaultdict(list))

    def expect(self, t: Task) -> None:
        if t.group is not None:
            self.expected[t.group][t.size] += 1

    def finish(self, t: Task, status: str | None) -> None:
        if t.group is not None:
            self.proven[t.group][t.size].append(status in PROOFS)

    def stopped_at(self, t: Task) -> int | None:
        if t.group is None:
            return None
        for size in sorted(self.expected[t.group]):
            if size >= t.size:
                return None
            got = self.proven[t.group][size]
            if len(got) == self.expected[t.group][size] and not any(got):
                return size
        return None

    def blocked(self, t: Task, unfinished: Callable[[tuple, int], bool]) -> bool:
        return t.group is not None and unfinished(t.group, t.size)


@dataclass
class SuiteRun:
    suite: str
    total: int = 0
    stored_before: int = 0
    ran: int = 0
    failed: int = 0
    skipped: list[str] = field(default_factory=list)
    interrupted: bool = False
    keys: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    repro: list[ReproRow] = field(default_factory=list)
    wall_s: float = 0.0


Progress = Callable[[str, int, int, str], None]  # (suite, done, total, last label)


def plan(suite: Suite, options: BenchOptions) -> list[Task]:
    tasks = []
    code = code_version()
    for c in suite.cases:
        case = with_seed_and_limit(c, options.seed, options.time_limit_s)
        hard = case.process_limit_s(options.grace_s, options.time_limit_s)
        tasks.append(Task(case, store_key(suite.name, case.key(), code), hard, _group(suite, case)))
    return tasks


@dataclass
class _Context:
    """What every record of one suite's session shares."""

    suite: str
    out: Path
    executor: str
    env: dict[str, Any]
    code: str


def _write_files(task: Task, files: Mapping[str, bytes], out: Path) -> str | None:
    """A replay's per-job records into ``out/replays/KEY``; the folder relative to ``out``."""
    if not files:
        return None
    rel = Path("replays") / task.key
    (out / rel).mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (out / rel / name).write_bytes(data)
    return rel.as_posix()


def finish(task: Task, run: Run, ctx: _Context) -> Record:
    """The record of ``task``'s finished ``run`` (its files written into the results directory)."""
    prov = Provenance(task.key, ctx.suite, ctx.code, ctx.executor, ctx.env, hard_limit_s=task.hard_limit_s,
                      records_dir=_write_files(task, run.outcome.files, ctx.out))
    return Record.of(task.case, case_spec(task.case), run, prov)


class _Session:
    """One suite's pass over its pending tasks: dispatch (the ladder permitting), collect, store."""

    def __init__(self, run: SuiteRun, pending: list[Task], ladder: Ladder, options: BenchOptions, executor: Any,
                 store: Store, ctx: _Context, progress: Progress | None, done: int) -> None:
        self.run, self.pending, self.ladder, self.options = run, pending, ladder, options
        self.executor, self.store, self.ctx, self.progress, self.done = executor, store, ctx, progress, done
        self.running: dict[Any, Task] = {}

    def unfinished(self, group: tuple, size: int) -> bool:
        return any(t.group == group and t.size < size for t in [*self.pending, *self.running.values()])

    def tick(self, label: str) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.run.suite, self.done, self.run.total, label)

    def dispatch(self) -> None:
        i = 0
        while len(self.running) < self.executor.capacity and i < len(self.pending):
            t = self.pending[i]
            if self.ladder.blocked(t, self.unfinished):
                i += 1
                continue
            self.pending.pop(i)
            stop = self.ladder.stopped_at(t)
            if stop is not None:
                info = t.case.info()
                self.run.skipped.append(f"{t.case.label}: {info.method}@{info.backend} stopped proving "
                                        f"optimality at n={stop}")
                self.tick(f"skipped {t.case.label}")
                continue
            payload = {"case": case_spec(t.case), "threads": self.options.threads,
                       "plugins": list(self.options.plugins)}
            self.running[self.executor.submit(payload, t.hard_limit_s)] = t

    def collect(self) -> None:
        for fut in self.executor.wait(self.running, 0.5):
            t = self.running.pop(fut)
            try:
                run = self.executor.result(fut)
            except Exception as e:  # noqa: BLE001 - a lost Dask worker is a failed run, not a crash
                run = Run(Outcome.failure(Status.ERROR, f"{self.executor.name}: {type(e).__name__}: {e}"))
            rec = finish(t, run, self.ctx)
            self.store.put(rec)
            self.ladder.finish(t, rec.status)
            self.run.ran += 1
            self.run.failed += rec.status in FAILED
            self.tick(t.case.label)

    def loop(self) -> None:
        if self.progress is not None:
            self.progress(self.run.suite, self.done, self.run.total, "")
        while self.pending or self.running:
            self.dispatch()
            if not self.running:
                if self.pending:  # cannot happen: the smallest pending size of a group is never blocked
                    raise RuntimeError(f"{len(self.pending)} runs wait on nothing: {self.pending[0].case.label}")
                continue
            self.collect()


def run_suite(suite: Suite, options: BenchOptions, executor: Any, store: Store, *,
              progress: Progress | None = None) -> SuiteRun:
    """Run ``suite`` (already validated) with ``executor`` into ``store``."""
    t0 = time.perf_counter()
    tasks = plan(suite, options)
    run = SuiteRun(suite.name, total=len(tasks), keys=[t.key for t in tasks])
    stored = store.statuses(run.keys)
    env = environment()
    ladder = Ladder()
    pending: list[Task] = []
    for t in tasks:
        ladder.expect(t)
        st = stored.get(t.key)
        if st is not None and not (options.retry_failed and st in FAILED):
            run.stored_before += 1
            ladder.finish(t, st)
        else:
            pending.append(t)
    session = store.begin_session(suite.name, {**{k: str(v) for k, v in vars(options).items()}, "executor": executor.name},
                                  env, {"total": run.total, "stored_before": run.stored_before})
    ctx = _Context(suite.name, options.out, executor.name, env, code_version())
    try:
        _Session(run, pending, ladder, options, executor, store, ctx, progress, run.stored_before).loop()
    except KeyboardInterrupt:
        run.interrupted = True
        executor.close(kill=True)
        raise
    finally:
        run.wall_s = time.perf_counter() - t0
        counts = {"total": run.total, "stored_before": run.stored_before, "ran": run.ran, "failed": run.failed,
                  "skipped": len(run.skipped)}
        store.end_session(session, "interrupted" if run.interrupted else "done", counts, run.skipped)
    run.repro = reproduce(suite, store, run.keys)
    if suite.reproduce is not None:
        store.set_repro(suite.name, run.repro, session)
    return run


def reproduce(suite: Suite, store: Store, keys: list[str]) -> list[ReproRow]:
    """``Suite.reproduce`` on the stored runs (``label -> metrics``: a replay's simulator metrics, else
    the record with its best-bound gap); a failure becomes one row saying why."""
    if suite.reproduce is None:
        return []
    from schedlab.benchmarks.harness.analysis import frame, results_by_label  # lazy: start-up (pandas)

    wanted = set(keys)
    df = frame(store.records(suite.name))
    sel = df[df["key"].isin(wanted)] if len(df) else df
    results = results_by_label(sel)
    # cases with identical specs share one record (a key ignores the label) stored under the last label:
    # every label of the suite must still see it (``keys`` are the suite's cases' keys, in order)
    label_of = dict(zip(sel["key"], sel["label"], strict=True)) if len(sel) else {}
    for case, key in zip(suite.cases, keys, strict=False):
        if case.label not in results and label_of.get(key) in results:
            results[case.label] = results[label_of[key]]
    try:
        return list(suite.reproduce(results))
    except Exception as e:  # noqa: BLE001 - a missing run (failed, killed) must not hide the others
        return [ReproRow(f"{suite.name}: reproduction failed", None, None, "",
                         f"{type(e).__name__}: {e} (did a run fail? see the records)")]


def run_bench(suite: Suite, options: BenchOptions, *, progress: Progress | None = None,
              on_notes: Callable[[list[str]], None] | None = None) -> list[SuiteRun]:
    """Run a benchmark suite into a results folder, each run in its own process, resumably.

    Validates the suite (or each of its ``parts``), loads the plugins, connects the executor, then runs
    every case not yet stored in ``options.out`` (an SQLite store; a killed or interrupted session is
    closed first, so a rerun resumes where it stopped).

    Parameters
    ----------
    suite : Suite
        The suite (``harness.suites.SUITES[name]`` or a suite file's).
    options : BenchOptions
        ``out`` (the results folder), ``workers``, ``threads``, ``executor``, ``time_limit_s``,
        ``seed``, ``plugins``, ...
    progress : callable, optional
        ``(suite, done, total, last label)`` after every run.
    on_notes : callable, optional
        Given the notes on the concurrency chosen (e.g. workers reduced to the cores).

    Returns
    -------
    list of SuiteRun
        One per part: cases in all, stored before, ran, failed, skipped, their keys, the wall time.

    Raises
    ------
    SpecError
        An invalid suite or option.
    SchedlabError
        The results folder is locked by another session, or the executor cannot connect.

    Examples
    --------
    >>> import tempfile
    >>> from schedlab.benchmarks.harness.cases import Suite
    >>> from schedlab.benchmarks.harness.runner import BenchOptions, run_bench
    >>> out = tempfile.mkdtemp()
    >>> [run] = run_bench(Suite("empty", "a suite without cases", ()), BenchOptions(out=out, workers=1))
    >>> run.total, run.ran, run.failed
    (0, 0, 0)

    A real suite runs the same way (minutes; a second call finds every run stored)::

        run_bench(SUITES["quick"], BenchOptions(out="schedlab-results/quick"))
    """
    plugins = load_plugins(options.plugins)
    options = replace(options, plugins=plugins)
    parts = suite.parts or (suite,)
    for p in parts:
        validate_suite(p)
    if options.executor == "local" or (options.executor == "dask" and not options.scheduler):
        workers, threads, notes = concurrency(options.workers, options.threads)  # a LocalCluster: this machine
    else:
        workers, threads, notes = options.workers or 1, options.threads, []
    options = replace(options, workers=workers, threads=threads)
    executor = make_executor(options.executor, workers=workers, threads=threads, scheduler=options.scheduler,
                             connect_timeout_s=options.connect_timeout_s)
    runs = []
    try:
        with BenchLock(options.out), Store(options.out) as store:
            if on_notes is not None and notes:
                on_notes(notes)
            store.close_killed_sessions()
            for p in parts:
                r = run_suite(p, options, executor, store, progress=progress)
                r.notes = list(notes)
                runs.append(r)
    finally:
        executor.close()
    return runs


__all__ = ["REPLAY_LIMIT_S", "BenchOptions", "Ladder", "SuiteRun", "Task", "concurrency", "finish", "plan",
           "reproduce", "run_bench", "run_suite", "with_seed_and_limit"]
