"""The Dask executor (dask.distributed, a LocalCluster on loopback) gives the same records as the local
one; an address that does not answer is an error naming it, before anything runs or is stored."""

from __future__ import annotations

import logging

import pytest

from schedlab.benchmarks.harness.analysis import frame
from schedlab.benchmarks.harness.runner import BenchOptions, run_bench
from schedlab.benchmarks.harness.store import Store
from schedlab.topology.errors import SpecError

SAME = ["label", "status", "objective", "bound", "best_bound", "gap", "verified", "instance", "jobs", "gpus", "role"]


def _current(d):
    with Store(d, create=False) as s:
        df = frame(s.records())
    return df.sort_values("label").reset_index(drop=True)


def test_dask_gives_the_same_records_as_local(tmp_path, small_run, small_suite):
    distributed = pytest.importorskip("distributed")
    local_dir, _ = small_run
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        runs = run_bench(small_suite, BenchOptions(out=tmp_path, executor="dask", scheduler=cluster.scheduler_address,
                                                   connect_timeout_s=30))
    assert runs[0].ran == 13 and runs[0].failed == 0
    a, b = _current(local_dir), _current(tmp_path)
    assert (b["executor"] == "dask").all() and (a["executor"] == "local").all()
    for col in SAME:
        left, right = a[col].tolist(), b[col].tolist()
        if col in ("objective", "bound", "best_bound", "gap"):
            assert right == pytest.approx(left, rel=1e-6, abs=1e-9, nan_ok=True), col
        else:
            assert right == left, col
    ma = a.set_index("label")["metrics"].dropna().to_dict()
    mb = b.set_index("label")["metrics"].dropna().to_dict()
    for label, m in ma.items():  # the replays' and the bound case's simulator metrics
        assert mb[label]["avg_jct"] == pytest.approx(m["avg_jct"])


def test_unreachable_dask_address_fails_before_anything_runs(tmp_path, small_suite):
    pytest.importorskip("distributed")
    with pytest.raises(SpecError) as ei:
        run_bench(small_suite, BenchOptions(out=tmp_path / "never", executor="dask", scheduler="tcp://127.0.0.1:9",
                                            connect_timeout_s=5))
    assert "tcp://127.0.0.1:9" in str(ei.value) and ei.value.field == "scheduler"
    assert not (tmp_path / "never").exists()
