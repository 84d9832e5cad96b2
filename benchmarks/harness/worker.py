"""Each run in its own worker process, with a hard timeout.

:func:`execute` runs one case (from its plain ``payload``) and returns its record fields; it is what a
worker process does. :func:`run_isolated` starts that process and waits for it at most ``hard_timeout_s``
seconds; a run that overstays (a solver ignoring its limit) is killed and recorded as ``killed``, a
worker that dies (segfault, out of memory) as ``error`` with its exit code.

Processes are forked by a launcher (:mod:`~schedlab.benchmarks.harness.launcher`) that imported schedlab,
the solvers and the plugins once: a fresh process per run in milliseconds, no threads or state inherited
from the caller. A worker dies with the launcher and the launcher with the process that started it, so a
``kill -9`` of ``schedlab bench`` leaves no orphans.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schedlab.topology.errors import SchedlabError

#: spare seconds a run gets past its own limit (instance generation, model building, teardown)
GRACE_S = 30.0


def hard_timeout(limit_s: float, grace_s: float = GRACE_S) -> float:
    """The wall-clock limit of a worker whose solver limit is ``limit_s``: twice that plus a grace."""
    return 2.0 * limit_s + grace_s


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _rss_mb() -> float | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return None


def _peak_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20


def execute(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one case: ``payload`` = ``{"case": case_spec, "threads", "plugins", "keep_records"}``. A replay's
    per-job records come back as ``files`` (name -> bytes), written by the caller into the results
    directory (so a run killed mid-way leaves nothing behind, and Dask workers need no shared disk).
    Never raises: a failure is a record with ``status="error"`` and the reason in ``message``."""
    from schedlab.benchmarks.harness.cases import BoundCase, GapCase, ReplayCase, case_from_spec
    from schedlab.benchmarks.harness.plugins import load_plugins

    started = _now()
    t0 = time.perf_counter()
    rec: dict[str, Any] = {"started_at": started, "start_mem_mb": _rss_mb(), "pid": os.getpid()}
    try:
        load_plugins(payload.get("plugins") or ())
        case = case_from_spec(payload["case"])
        threads = int(payload.get("threads") or 1)
        if isinstance(case, GapCase):
            from schedlab.benchmarks.harness.gap import run_gap

            rec.update(run_gap(case, threads=threads))
        elif isinstance(case, BoundCase):
            from schedlab.benchmarks.harness.gap import run_bound

            rec.update(run_bound(case, threads=threads))
        elif isinstance(case, ReplayCase):
            from schedlab.benchmarks.harness.replay import run_replay

            with tempfile.TemporaryDirectory(prefix="schedlab-replay-") as tmp:
                res = run_replay(case, out_dir=tmp if payload.get("keep_records", True) else None)
                rec["files"] = {f.name: f.read_bytes() for f in sorted(Path(tmp).iterdir()) if f.is_file()}
            m = res.metrics
            rec.update(role="replay", metrics=m, jobs=m.get("jobs"),
                       gpus=m.get("total_gpus"), cluster=m.get("cluster"), solve_s=m.get("wall_s"), threads=1,
                       status="interrupted" if m.get("interrupted") else ("incomplete" if m.get("unfinished") else "ok"),
                       verified=True, objective=m.get("avg_jct"), sense="min")
        else:  # pragma: no cover - case_from_spec knows every type
            raise TypeError(f"unknown case {case!r}")
    except SchedlabError as e:
        rec.update(status="error", message=f"{type(e).__name__}: {e}")
    except Exception as e:  # noqa: BLE001 - one failing run must not stop a sweep; the record says why
        tb = traceback.extract_tb(e.__traceback__)
        where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
        rec.update(status="error", message=f"{type(e).__name__}: {e}{where}")
    rec.update(wall_s=time.perf_counter() - t0, peak_mem_mb=_peak_mb(), finished_at=_now())
    return rec


# ----------------------------------------------------------------------------- the worker process side
def die_with_parent() -> None:
    """Exit when the parent goes away: ``PR_SET_PDEATHSIG`` (Linux) and a watchdog on the parent's pid."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, daemon=True, name="schedlab-parent-watch").start()


def silence(fd: int) -> None:
    """Point C-level writes to ``fd`` (solver logs: HiGHS prints on stdout) at /dev/null: a worker
    reports through its record only, never into the caller's terminal or ``--format json`` output."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


def child_main(conn) -> None:
    """A forked worker: receive the payload, say who we are, run, send the record, exit."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it kills us
    os.setpgid(0, 0)  # our own process group: a kill takes the solver's helper processes (POP) with us
    die_with_parent()
    silence(1)
    silence(2)
    try:
        payload = conn.recv()
        conn.send({"pid": os.getpid()})
        conn.send(execute(payload))
        conn.close()
    finally:
        os._exit(0)  # the record is sent; skip interpreter teardown


def _failure(status: str, message: str, t0: float, started: str) -> dict[str, Any]:
    return {"status": status, "message": message, "wall_s": time.perf_counter() - t0, "started_at": started,
            "finished_at": _now()}


def run_isolated(launcher, payload: dict[str, Any], hard_timeout_s: float,
                 on_start: Callable[[Callable[[], None]], None] | None = None) -> dict[str, Any]:
    """Run ``payload`` in a fresh worker process forked by ``launcher`` (a
    :class:`~schedlab.benchmarks.harness.launcher.Launcher`), killing it after ``hard_timeout_s`` seconds.

    ``on_start(kill)`` receives a function that kills the worker (the runner calls it on Ctrl-C)."""
    t0, started = time.perf_counter(), _now()
    conn = launcher.connect()
    pid = None

    def kill() -> None:
        if pid is not None:
            try:
                os.killpg(pid, signal.SIGKILL)  # the worker leads its own process group
            except (ProcessLookupError, PermissionError):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    try:
        conn.send(payload)
        if not conn.poll(60.0):
            return _failure("error", "the worker launcher did not start a process within 60 s", t0, started)
        pid = conn.recv()["pid"]
        if on_start is not None:
            on_start(kill)
        if conn.poll(hard_timeout_s):
            rec = conn.recv()
            # the process's start and hand-over, apart from the run measured inside it
            rec["process_s"] = max(0.0, time.perf_counter() - t0 - float(rec.get("wall_s") or 0.0))
            return rec
        kill()
        return _failure("killed", f"killed after the hard timeout of {hard_timeout_s:.0f} s", t0, started)
    except (EOFError, OSError) as e:
        return _failure("error", f"worker process died ({type(e).__name__}: killed by a signal, out of memory or "
                        "crashed)", t0, started)
    finally:
        conn.close()


__all__ = ["GRACE_S", "child_main", "die_with_parent", "execute", "hard_timeout", "run_isolated", "silence"]
