"""Each run in its own worker process, with a hard timeout.

:func:`execute` runs one case (from its plain ``payload``) and returns its record fields; it is what a
worker process does. :func:`run_isolated` starts that process and waits for it at most ``hard_timeout_s``
seconds; a run that overstays (a solver ignoring its limit) is killed and recorded as ``killed``, a
worker that dies (segfault, out of memory) as ``error`` with its exit code.

Processes come from a ``forkserver`` that has imported schedlab once (a fresh process in milliseconds, no
threads inherited from the caller). Where the caller may not have children of its own (a daemonic Dask
worker process), the run goes to a fresh interpreter (``python -m schedlab.benchmarks.harness.worker``)
with the payload on stdin. A worker dies with the process that started it (``PR_SET_PDEATHSIG`` on Linux,
else a watchdog on the parent's pid), so a ``kill -9`` of ``schedlab bench`` leaves no orphans.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import resource
import signal
import subprocess
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


def hard_timeout(limit_s: float) -> float:
    """The wall-clock limit of a worker whose solver limit is ``limit_s``: twice that plus a grace."""
    return 2.0 * limit_s + GRACE_S


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
def _die_with_parent() -> None:
    """Exit when the parent goes away (``schedlab bench`` killed with -9)."""
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


def _silence(fd: int) -> None:
    """Point C-level writes to ``fd`` (solver logs: HiGHS prints on stdout) at /dev/null: a worker
    reports through its record only, never into the caller's terminal or ``--format json`` output."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


def _child(payload: dict[str, Any], conn) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it kills us
    _die_with_parent()
    _silence(1)
    _silence(2)
    conn.send(execute(payload))
    conn.close()
    os._exit(0)  # the record is sent; skip interpreter teardown (atexit handlers inherited from the server)


def _context() -> mp.context.BaseContext:
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["schedlab.benchmarks.harness.preload"])
        return ctx
    return mp.get_context("spawn")


def _may_fork() -> bool:
    return not mp.current_process().daemon


def _failure(status: str, message: str, t0: float, started: str) -> dict[str, Any]:
    return {"status": status, "message": message, "wall_s": time.perf_counter() - t0, "started_at": started,
            "finished_at": _now()}


def run_isolated(payload: dict[str, Any], hard_timeout_s: float,
                 on_start: Callable[[Callable[[], None]], None] | None = None) -> dict[str, Any]:
    """Run ``payload`` in a fresh worker process, killing it after ``hard_timeout_s`` seconds.

    ``on_start(kill)`` receives a function that kills the worker (the runner calls it on Ctrl-C)."""
    t0, started = time.perf_counter(), _now()
    if not _may_fork():
        return _run_subprocess(payload, hard_timeout_s, on_start, t0, started)
    ctx = _context()
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(payload, send), name="schedlab-run")
    proc.start()
    send.close()
    if on_start is not None:
        on_start(proc.kill)
    try:
        if recv.poll(hard_timeout_s):
            try:
                return recv.recv()
            except EOFError:
                proc.join(5)
                return _failure("error", f"worker process died (exit code {proc.exitcode})", t0, started)
        proc.kill()
        return _failure("killed", f"killed after the hard timeout of {hard_timeout_s:.0f} s", t0, started)
    finally:
        recv.close()
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join()


def _run_subprocess(payload: dict[str, Any], hard_timeout_s: float,
                    on_start: Callable[[Callable[[], None]], None] | None, t0: float, started: str) -> dict[str, Any]:
    proc = subprocess.Popen([sys.executable, "-m", "schedlab.benchmarks.harness.worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if on_start is not None:
        on_start(proc.kill)
    try:
        out, _ = proc.communicate(pickle.dumps(payload), timeout=hard_timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return _failure("killed", f"killed after the hard timeout of {hard_timeout_s:.0f} s", t0, started)
    if proc.returncode != 0 or not out:
        return _failure("error", f"worker process died (exit code {proc.returncode})", t0, started)
    return pickle.loads(out)


def main() -> None:
    """``python -m schedlab.benchmarks.harness.worker``: a payload (pickle) on stdin, the record on stdout."""
    payload = pickle.loads(sys.stdin.buffer.read())
    _die_with_parent()
    sys.stdout.flush()
    result = os.fdopen(os.dup(1), "wb")
    _silence(1)
    rec = execute(payload)
    result.write(pickle.dumps(rec))
    result.close()


if __name__ == "__main__":
    main()


__all__ = ["GRACE_S", "execute", "hard_timeout", "run_isolated"]
