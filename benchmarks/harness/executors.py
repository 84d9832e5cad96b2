"""Where runs execute: this machine (``local``) or a Dask cluster (``dask``, dask.distributed).

Both run every case in its own worker process with a hard timeout
(:func:`~schedlab.benchmarks.harness.worker.run_isolated`, processes forked by a
:class:`~schedlab.benchmarks.harness.launcher.Launcher`); they differ in where that happens.

* :class:`LocalExecutor` — ``workers`` threads here, each waiting on one worker process at a time (the
  process's launcher starts on the first run, so a fully stored sweep starts no process at all).
* :class:`DaskExecutor` — a task per run on the cluster at ``--scheduler tcp://HOST:PORT``; the task
  starts the worker process on the Dask worker, with the solver threads clamped so that threads x the
  Dask worker's task slots never exceed its cores. The address is checked (with a timeout) before any
  run starts; an address that does not answer is an error naming it. Without an address it starts a
  ``LocalCluster`` here (``workers`` worker processes of one task slot each, on 127.0.0.1) and closes
  it at the end.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor
from concurrent.futures import wait as cf_wait
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from schedlab.benchmarks.harness.launcher import shared_launcher
from schedlab.benchmarks.harness.record import Run
from schedlab.benchmarks.harness.worker import run_isolated
from schedlab.topology.errors import SpecError


class LocalExecutor:
    name = "local"

    def __init__(self, workers: int) -> None:
        self.capacity = workers
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="schedlab-bench")
        self._kills: dict[int, Callable[[], None]] = {}
        self._lock = threading.Lock()
        self._n = 0

    def submit(self, payload: dict[str, Any], hard_limit_s: float) -> Future:
        with self._lock:
            self._n += 1
            n = self._n

        def started(kill: Callable[[], None]) -> None:
            with self._lock:
                self._kills[n] = kill

        def job() -> Run:
            try:

                return run_isolated(shared_launcher(), payload, hard_limit_s, on_start=started)
            finally:
                with self._lock:
                    self._kills.pop(n, None)

        return self._pool.submit(job)

    def wait(self, futures: Iterable[Future], timeout: float) -> set:
        done, _ = cf_wait(list(futures), timeout=timeout, return_when=FIRST_COMPLETED)
        return done

    @staticmethod
    def result(future: Future) -> Run:
        return future.result()

    def close(self, *, kill: bool = False) -> None:
        if kill:
            with self._lock:
                kills = list(self._kills.values())
            for k in kills:
                try:
                    k()
                except OSError:
                    pass
        self._pool.shutdown(wait=True, cancel_futures=True)


def remote_run(payload: dict[str, Any], hard_limit_s: float, threads: int) -> Run:
    """A Dask task: clamp the solver threads to this worker's share of its machine's cores, then run."""
    slots = 1
    try:
        from distributed import get_worker  # lazy: optional dependency (dask.distributed)

        slots = max(1, int(get_worker().state.nthreads))
    except (ImportError, ValueError, AttributeError):
        pass
    share = max(1, (os.cpu_count() or 1) // slots)
    run = run_isolated(shared_launcher(), {**payload, "threads": max(1, min(threads, share))}, hard_limit_s)
    return replace(run, process=replace(run.process, extra={**run.process.extra, "dask_worker_slots": slots}))


def _probe(address: str, timeout_s: float) -> None:
    """A plain TCP connect to a ``tcp://HOST:PORT`` scheduler first: an address that does not answer is
    a one-line error within ``timeout_s``, before a Dask client exists."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme != "tcp":
        return
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None:
        raise SpecError(f"cannot read the Dask scheduler address {address!r}; expected tcp://HOST:PORT",
                        source="--scheduler", field="scheduler")
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as e:
        raise SpecError(f"cannot reach the Dask scheduler at {address}: {e}", source="--scheduler",
                        field="scheduler") from None


class DaskExecutor:
    name = "dask"

    def __init__(self, address: str, *, threads: int = 1, connect_timeout_s: float = 10.0,
                 local_workers: int | None = None) -> None:
        try:
            from distributed import Client  # lazy: optional dependency (dask.distributed)
        except ImportError:
            raise SpecError("the dask executor needs dask.distributed: pip install 'schedlab[distributed]'",
                            source="--executor", field="executor") from None
        self.cluster = None
        if not address and local_workers:
            import logging  # lazy: optional dependency (dask.distributed)

            from distributed import LocalCluster  # lazy: optional dependency (dask.distributed)

            self.cluster = LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True,
                                        host="127.0.0.1", protocol="tcp", dashboard_address=None,
                                        silence_logs=logging.ERROR)
            address = self.cluster.scheduler_address
        if not address:
            raise SpecError("--executor dask needs --scheduler tcp://HOST:PORT", source="--scheduler",
                            field="scheduler")
        _probe(address, connect_timeout_s)
        try:
            self.client = Client(address, timeout=f"{connect_timeout_s}s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise SpecError(f"cannot reach the Dask scheduler at {address}: {type(e).__name__}: {e}",
                            source="--scheduler", field="scheduler") from None
        self.address = address
        self.threads = threads
        info = self.client.scheduler_info()
        workers = info.get("workers", {})
        self.capacity = max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))
        if not workers:
            self.client.close()
            raise SpecError(f"the Dask scheduler at {address} has no workers", source="--scheduler",
                            field="scheduler")

    def submit(self, payload: dict[str, Any], hard_limit_s: float):
        return self.client.submit(remote_run, payload, hard_limit_s, self.threads, pure=False)

    def wait(self, futures: Iterable[Any], timeout: float) -> set:
        """The finished futures, polling their state for at most ``timeout`` seconds (no default client)."""
        futs = list(futures)
        end = time.monotonic() + timeout
        while True:
            done = {f for f in futs if f.done()}
            if done or time.monotonic() >= end:
                return done
            time.sleep(0.05)

    @staticmethod
    def result(future: Any) -> Run:
        return future.result()

    def close(self, *, kill: bool = False) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(kind: str, *, workers: int, threads: int, scheduler: str | None, connect_timeout_s: float = 10.0):
    """``dask`` without ``scheduler``: a LocalCluster of ``workers`` worker processes (see the module doc)."""
    if kind == "local":
        return LocalExecutor(workers)
    if kind == "dask":
        return DaskExecutor(scheduler or "", threads=threads, connect_timeout_s=connect_timeout_s,
                            local_workers=None if scheduler else workers)
    raise SpecError(f"unknown executor {kind!r}; known: local, dask", source="--executor", field="executor")


__all__ = ["DaskExecutor", "LocalExecutor", "make_executor", "remote_run"]
