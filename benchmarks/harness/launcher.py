"""A small fork server for worker processes.

``multiprocessing``'s forkserver re-runs the caller's ``__main__`` script in every child (seconds per
run when that script imports much), and daemonic processes (Dask workers) may not start children at
all. So runs get their processes from a launcher of our own:

* :class:`Launcher` starts ``python -m schedlab.benchmarks.harness.launcher SOCKET`` once (in the
  caller's directory and environment, so plugin modules resolve the same way: from the current
  directory, ``PYTHONPATH`` or the installed packages); that process imports
  schedlab, the solvers and the plugins (:mod:`~schedlab.benchmarks.harness.preload`), freezes its heap
  and listens on a Unix socket in a private temporary directory;
* each run connects, and the launcher forks a child that owns the connection: it receives the payload,
  sends its pid (so the caller can kill it at the hard timeout), runs
  :func:`~schedlab.benchmarks.harness.worker.execute` and sends the record back;
* the launcher exits within half a second of its parent (it polls its parent's pid), and each child
  dies with the launcher (``PR_SET_PDEATHSIG`` plus a watchdog), so a ``kill -9`` of the caller leaves no
  orphan behind.
"""

from __future__ import annotations

import functools
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection

from schedlab.topology.errors import SchedlabError


class Launcher:
    """Client side: start the launcher process and hand out connections to fresh workers."""

    def __init__(self, *, startup_timeout_s: float = 180.0) -> None:
        self._dir = tempfile.mkdtemp(prefix="schedlab-launcher-")
        os.chmod(self._dir, 0o700)
        self.path = os.path.join(self._dir, "socket")
        self._log = open(os.path.join(self._dir, "launcher.log"), "w+b")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen([sys.executable, "-m", "schedlab.benchmarks.harness.launcher", self.path],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log)
        self._wait_ready(startup_timeout_s)

    def _wait_ready(self, timeout_s: float) -> None:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                self._log.seek(0)
                tail = self._log.read().decode(errors="replace").strip().splitlines()[-3:]
                self.close()
                raise SchedlabError("the worker launcher failed to start: " + (" | ".join(tail) or
                                                                               f"exit code {self.proc.returncode}"))
            try:
                self.connect().close()
                return
            except OSError:
                time.sleep(0.05)
        self.close()
        raise SchedlabError(f"the worker launcher did not start within {timeout_s:.0f} s")

    def connect(self) -> Connection:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.path)
        except OSError:
            s.close()
            raise
        return Connection(s.detach())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._log.close()
        shutil.rmtree(self._dir, ignore_errors=True)


@functools.cache
def shared_launcher() -> Launcher:
    """One launcher per process (``schedlab bench``, a Dask worker): started on first use, stopped at
    exit. Payloads name their plugin modules; the launcher imports them on first use (once per fork)."""
    import atexit  # lazy: start-up

    launcher = Launcher()
    atexit.register(launcher.close)
    return launcher


def serve(path: str) -> None:
    """The launcher process: import everything once, then fork one worker per connection."""
    import gc  # lazy: the launcher process only

    # lazy: the launcher process only; the point: import once, fork many
    from schedlab.benchmarks.harness import preload  # noqa: F401  # lazy: the launcher process only
    from schedlab.benchmarks.harness.worker import child_main  # lazy: the launcher process only

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller handles Ctrl-C and kills what it must
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    parent = os.getppid()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(128)
    gc.freeze()  # keep the imported heap shared with the children (no copy-on-write from the collector)
    while True:
        ready, _, _ = select.select([server], [], [], 0.5)
        if os.getppid() != parent:
            os._exit(0)
        if not ready:
            continue
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            child_main(Connection(conn.detach()))
        conn.close()


if __name__ == "__main__":
    serve(sys.argv[1])


__all__ = ["Launcher", "serve", "shared_launcher"]
