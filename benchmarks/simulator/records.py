"""Records: one flat row per finished job and a time series of cluster state (imitating Ciw's
``DataRecord``). Rows are appended to CSV files as they are produced and flushed periodically, so an
interrupted run (Ctrl-C) leaves complete rows for every job that finished.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, fields
from operator import attrgetter
from pathlib import Path
from typing import IO


@dataclass(frozen=True, slots=True)
class JobRecord:
    """``gpus`` = GPUs requested (as simulated); ``queue_delay`` = first start - arrival; ``waiting`` =
    all time queued (incl. after preemptions); ``gpu_seconds`` = GPUs held x time held (incl.
    restore/checkpoint); ``run_seconds`` = productive time; ``comm_seconds`` = exposed communication
    inside ``run_seconds``; ``tiers`` = tiers used ("|"); ``trace_gpus`` = GPUs the trace row requested
    (differs from ``gpus`` when the load resized the request, see the assumption report);
    ``granted_gpus`` = GPUs granted, time-weighted over productive running (= ``gpus`` for rigid jobs);
    ``placement_slowdown`` = the largest, over the job's allocations, iteration time / iteration time of
    the same GPUs, plan and CPUs on the most consolidated placement (1 = never slowed by placement)."""

    job_id: str
    model: str
    tenant: str
    job_class: str
    gpus: int
    iterations: float
    arrival: float
    first_start: float
    end: float
    jct: float
    queue_delay: float
    waiting: float
    gpu_seconds: float
    run_seconds: float
    overhead_seconds: float
    comm_seconds: float
    preemptions: int
    reconfigurations: int
    tiers: str
    ideal_duration: float
    trace_gpus: int = 0
    granted_gpus: float = 0.0
    placement_slowdown: float = 1.0


JOB_FIELDS = tuple(f.name for f in fields(JobRecord))
# the slots' setters: :func:`job_record` fills a record without the frozen ``__init__``'s
# ``object.__setattr__`` per field (the simulator writes one record per job)
_S = tuple(getattr(JobRecord, f).__set__ for f in JOB_FIELDS)
_new = object.__new__
# a record's fields as a flat tuple, in field order: the values are str, int and float, so this is what
# ``dataclasses.astuple`` gives, without its recursive copy per field (it was most of ``--out``'s cost)
_row = attrgetter(*JOB_FIELDS)


def job_record(job_id: str, model: str, tenant: str, job_class: str, gpus: int, iterations: float, arrival: float,
               first_start: float, end: float, jct: float, queue_delay: float, waiting: float, gpu_seconds: float,
               run_seconds: float, overhead_seconds: float, comm_seconds: float, preemptions: int,
               reconfigurations: int, tiers: str, ideal_duration: float, trace_gpus: int, granted_gpus: float,
               placement_slowdown: float) -> JobRecord:
    """``JobRecord(...)`` with every field given, positionally (the simulator's hot path; the values are
    the simulator's own, already typed)."""
    r = _new(JobRecord)
    _S[0](r, job_id)
    _S[1](r, model)
    _S[2](r, tenant)
    _S[3](r, job_class)
    _S[4](r, gpus)
    _S[5](r, iterations)
    _S[6](r, arrival)
    _S[7](r, first_start)
    _S[8](r, end)
    _S[9](r, jct)
    _S[10](r, queue_delay)
    _S[11](r, waiting)
    _S[12](r, gpu_seconds)
    _S[13](r, run_seconds)
    _S[14](r, overhead_seconds)
    _S[15](r, comm_seconds)
    _S[16](r, preemptions)
    _S[17](r, reconfigurations)
    _S[18](r, tiers)
    _S[19](r, ideal_duration)
    _S[20](r, trace_gpus)
    _S[21](r, granted_gpus)
    _S[22](r, placement_slowdown)
    return r


SERIES_FIELDS = ("time", "used_gpus", "queued", "running", "free_machine_block", "free_rack_block",
                 "free_network_block")


@dataclass(frozen=True, slots=True)
class Segment:
    """A stretch of time a job held ``gpus`` GPUs at ``iter_time`` (0 = no progress: restore/checkpoint)."""

    job_id: str
    start: float
    end: float
    placement: tuple[tuple[str, int], ...]
    iter_time: float


OUT_FORMATS = ("csv", "parquet")


def parquet_available() -> bool:
    """Whether pyarrow (the optional ``parquet`` extra) is installed."""
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def require_parquet() -> None:
    from schedlab.topology.errors import SpecError

    if not parquet_available():
        raise SpecError("--out-format parquet needs pyarrow: pip install 'schedlab[parquet]' (or pyarrow)",
                        source="<records>", field="out_format")


class Recorder:
    """Collects job rows and state samples; with ``out_dir``, streams them to ``jobs.csv`` and
    ``series.csv`` (flushed every ``flush_every`` rows and on :meth:`close`), or, with
    ``out_format="parquet"``, writes ``jobs.parquet`` and ``series.parquet`` on :meth:`close` (pyarrow)."""

    def __init__(self, out_dir: str | Path | None = None, *, keep_segments: bool = False,
                 flush_every: int = 1000, out_format: str = "csv") -> None:
        self.jobs: list[JobRecord] = []
        self.series: list[tuple[float, int, int, int, int, int, int]] = []
        self.segments: list[Segment] | None = [] if keep_segments else None
        self._files: list[IO[str]] = []
        self._job_writer = self._series_writer = None
        self._flush_every = flush_every
        self._since_flush = 0
        self._series_written = 0
        self._jobs_written = 0
        self._parquet_dir: Path | None = None
        if out_format not in OUT_FORMATS:
            from schedlab.topology.errors import SpecError

            raise SpecError(f"unknown output format {out_format!r}; use {' or '.join(OUT_FORMATS)}",
                            source="<records>", field="out_format")
        if out_dir is not None and out_format == "parquet":
            require_parquet()
            self._parquet_dir = Path(out_dir)
            self._parquet_dir.mkdir(parents=True, exist_ok=True)
        elif out_dir is not None:
            d = Path(out_dir)
            d.mkdir(parents=True, exist_ok=True)
            fj = open(d / "jobs.csv", "w", newline="")
            fs = open(d / "series.csv", "w", newline="")
            self._files = [fj, fs]
            self._job_writer = csv.writer(fj)
            self._job_writer.writerow(JOB_FIELDS)
            self._series_writer = csv.writer(fs)
            self._series_writer.writerow(SERIES_FIELDS)

    def job(self, rec: JobRecord) -> None:
        self.jobs.append(rec)
        if self._job_writer is not None:
            self._write_jobs()
            self._tick()

    def _write_jobs(self) -> None:
        # by count, so that a row appended just before an interrupt is still written on close
        n = len(self.jobs)
        if self._jobs_written < n:
            self._job_writer.writerows(map(_row, self.jobs[self._jobs_written:n]))
            self._jobs_written = n

    def sample(self, row: tuple[float, int, int, int, int, int, int]) -> None:
        s = self.series
        if s and s[-1][0] == row[0]:
            s[-1] = row
        else:
            s.append(row)

    def segment(self, seg: Segment) -> None:
        if self.segments is not None:
            self.segments.append(seg)

    def _tick(self) -> None:
        self._since_flush += 1
        if self._since_flush >= self._flush_every:
            self.flush()

    def flush(self) -> None:
        if self._series_writer is not None:
            # the last sample may still be overwritten by a same-time one: hold it back
            upto = len(self.series) - 1
            if upto > self._series_written:
                self._series_writer.writerows(self.series[self._series_written:upto])
                self._series_written = upto
        for f in self._files:
            f.flush()
        self._since_flush = 0

    def write_parquet(self, out_dir: str | Path) -> None:
        """``jobs.parquet`` and ``series.parquet`` of everything recorded (columns as in the CSVs)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        d = Path(out_dir)
        jobs = {f: [getattr(r, f) for r in self.jobs] for f in JOB_FIELDS}
        schema = pa.schema([(f.name, {"str": pa.string(), "int": pa.int64(), "float": pa.float64()}[f.type])
                            for f in fields(JobRecord)])
        pq.write_table(pa.table(jobs, schema=schema), d / "jobs.parquet")
        cols = list(zip(*self.series, strict=True)) if self.series else [[] for _ in SERIES_FIELDS]
        series = pa.table({f: pa.array(c, type=pa.float64() if f == "time" else pa.int64())
                           for f, c in zip(SERIES_FIELDS, cols, strict=True)})
        pq.write_table(series, d / "series.parquet")

    def close(self) -> None:
        if self._parquet_dir is not None:
            self.write_parquet(self._parquet_dir)
            self._parquet_dir = None
        if self._job_writer is not None:
            self._write_jobs()
        if self._series_writer is not None and len(self.series) > self._series_written:
            self._series_writer.writerows(self.series[self._series_written:])
            self._series_written = len(self.series)
        for f in self._files:
            f.flush()
            f.close()
        self._files = []
        self._job_writer = self._series_writer = None


__all__ = ["JOB_FIELDS", "JobRecord", "OUT_FORMATS", "Recorder", "SERIES_FIELDS", "Segment",
           "parquet_available", "require_parquet"]
