"""The multi-machine recipe of docs/harness.md on loopback (issue 25): a scheduler and a worker started
from the ``dask`` command line on 127.0.0.1, ``schedlab bench --executor dask --scheduler tcp://...``
runs a tiny suite on them; and ``--executor dask`` without an address runs on a LocalCluster."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schedlab.benchmarks.harness.store import Store

TINY = """
name: dask-tiny
defaults: {seeds: [0], time_limit_s: 20, backends: [highs]}
gap:
  - {kind: joint, cluster: rubick-64, sizes: [2], policies: [fifo]}
replay:
  - {workload: smoke, policies: [fifo]}
"""


def _dask(*args: str) -> list[str]:
    script = Path(sys.executable).with_name("dask")
    if not script.exists():
        pytest.skip("the dask command line is not installed")
    return [sys.executable, str(script), *args]


def _stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _records(out: Path) -> list[dict]:
    with Store(out, create=False) as s:
        return s.records()


def test_cli_scheduler_and_worker_on_loopback(tmp_path, cli):
    pytest.importorskip("distributed")
    (tmp_path / "tiny.yaml").write_text(TINY)
    sfile = tmp_path / "scheduler.json"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    sched = subprocess.Popen(_dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                   "--scheduler-file", str(sfile)),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    worker = None
    try:
        end = time.monotonic() + 60
        while not sfile.exists() and time.monotonic() < end:
            time.sleep(0.2)
        address = json.loads(sfile.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        worker = subprocess.Popen(_dask("worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                                        "--host", "127.0.0.1"),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        from distributed import Client

        with Client(address, timeout="30s") as c:  # wait for the worker to register
            c.wait_for_workers(1, timeout=60)
        out = tmp_path / "out"
        code, stdout, err = cli("bench", tmp_path / "tiny.yaml", "--out", out, "--executor", "dask", "--scheduler",
                                address, "--no-report")
        assert code == 0, err
        recs = _records(out)
        assert {r["case_type"] for r in recs} == {"gap", "replay"} and {r["executor"] for r in recs} == {"dask"}
        assert all(r["status"] not in ("error", "killed") for r in recs), recs
    finally:
        if worker is not None:
            _stop(worker)
        _stop(sched)


def test_dask_without_an_address_runs_on_a_local_cluster(tmp_path, cli):
    pytest.importorskip("distributed")
    (tmp_path / "tiny.yaml").write_text(TINY)
    out = tmp_path / "out"
    code, _, err = cli("bench", tmp_path / "tiny.yaml", "--out", out, "--executor", "dask", "--workers", "1",
                       "--no-report")
    assert code == 0, err
    recs = _records(out)
    assert {r["case_type"] for r in recs} == {"gap", "replay"} and {r["executor"] for r in recs} == {"dask"}
    assert {(r["extra"] or {}).get("dask_worker_slots") for r in recs} == {1}
