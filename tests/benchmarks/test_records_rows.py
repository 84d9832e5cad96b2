"""``Recorder`` writes a job row as a flat field read (``operator.attrgetter`` over the fields), not
``dataclasses.astuple`` (a recursive copy per field): the same CSV bytes on a small replay."""

from __future__ import annotations

import csv
import dataclasses
import io

from schedlab.benchmarks.simulator import Recorder, simulate
from schedlab.benchmarks.simulator.records import JOB_FIELDS, JobRecord, _row
from schedlab.benchmarks.workloads import get_workload
from schedlab.heuristics import POLICIES
from schedlab.topology import preset


def _astuple_csv(jobs: list[JobRecord]) -> bytes:
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(JOB_FIELDS)
    for r in jobs:
        w.writerow(dataclasses.astuple(r))  # the former path
    return buf.getvalue().encode()


def test_jobs_csv_bytes_as_astuple(tmp_path):
    cluster = preset("dally-2")
    jobs = get_workload("smoke").build(cluster, seed=0).jobs[:40]
    rec = Recorder(tmp_path, flush_every=7)
    res = simulate(cluster, jobs, POLICIES.build("fifo", seed=0), recorder=rec)
    assert len(res.jobs) == len(jobs)
    assert (tmp_path / "jobs.csv").read_bytes() == _astuple_csv(res.jobs)
    for r in res.jobs:
        assert _row(r) == dataclasses.astuple(r)


def test_row_handles_nan_and_defaults():
    r = JobRecord("j", "m", "t", "best-effort", 2, 10.0, 0.0, 1.0, 5.0, 5.0, 1.0, 1.0, 8.0, 4.0, 0.0, 0.0, 0, 0,
                  "machine", float("nan"))
    assert repr(_row(r)) == repr(dataclasses.astuple(r))
