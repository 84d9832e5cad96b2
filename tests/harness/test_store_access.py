"""Issue 26 items 7 and 8: reading a results store never needs write access (read-only folders give one
``error:`` line, exit 2, never a traceback); one ``bench`` per folder at a time; a session whose writer
died is shown as interrupted with what it stored."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from schedlab.benchmarks.harness.store import BenchLock, Store, lock_held
from schedlab.topology.errors import SpecError

TINY = """
name: tiny
defaults: {seeds: [0], time_limit_s: 20, backends: [highs]}
gap:
  - {kind: joint, cluster: rubick-64, sizes: [2], policies: [fifo]}
"""


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_reading_a_store_is_read_only_and_changes_nothing(small_run, tmp_path):
    d, _ = small_run
    copy = tmp_path / "copy"
    shutil.copytree(d, copy)
    db = copy / "results.sqlite"
    before = _digest(db)
    with Store(copy, create=False) as s:
        assert s.readonly and len(s.records()) == 13
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            s.conn.execute("DELETE FROM records")
    assert _digest(db) == before


def test_unwritable_store_folder_is_one_spec_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SpecError, match="cannot write"):
        Store(blocker / "sub")


def _as_nobody() -> list[str]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a command as an unprivileged user")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture()
def ro_results(small_run):
    """A copy of the small sweep in a folder tree nobody (uid 65534) can read but not write."""
    d, _ = small_run
    top = Path(tempfile.mkdtemp(prefix="schedlab-ro-", dir="/tmp"))
    os.chmod(top, 0o755)
    ro = top / "ro"
    ro.mkdir()
    shutil.copytree(d, ro / "r")
    for p in [ro, *ro.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    rw = top / "rw"
    rw.mkdir()
    rw.chmod(0o777)
    yield top
    for p in [ro, *ro.rglob("*")]:
        p.chmod(stat.S_IRWXU)
    shutil.rmtree(top)


def test_read_only_folders_as_an_unprivileged_user(ro_results):
    """The reproduction of item 7: bench/simulate into a read-only folder, report and compare of a
    read-only results folder. Before: OperationalError, PermissionError and a WAL-pragma crash."""
    nobody = _as_nobody()
    top = ro_results
    (top / "rw" / "tiny.yaml").write_text(TINY)
    env = dict(os.environ, HOME=str(top / "rw"), MPLCONFIGDIR=str(top / "rw" / "mpl"))
    db = top / "ro" / "r" / "results.sqlite"
    before = _digest(db)

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([*nobody, sys.executable, "-m", "schedlab", *argv], cwd=top, env=env,
                              capture_output=True, text=True, timeout=300)

    for argv, words in ((["bench", "rw/tiny.yaml", "--out", "ro/new"], "not writable"),
                        (["bench", "rw/tiny.yaml", "--out", "ro/r"], "not writable"),
                        (["simulate", "--workload", "smoke", "--out", "ro/sim"], "not writable"),
                        (["report", "ro/r"], "give --out FOLDER"),
                        (["compare", "ro/r", "ro/r", "--out", "ro/c.csv"], "not writable")):
        r = run(*argv)
        assert r.returncode == 2, (argv, r.stderr[-1500:])
        assert r.stderr.startswith("error: ") and words in r.stderr and "Traceback" not in r.stderr, argv
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = run("compare", "ro/r", "ro/r")
    assert r.returncode == 0 and "no difference beyond seed-to-seed noise" in r.stdout, r.stderr[-1500:]
    r = run("report", "ro/r", "--out", "rw/report", "--format", "json")
    assert r.returncode == 0, r.stderr[-1500:]
    assert (top / "rw" / "report" / "report.html").is_file()
    assert _digest(db) == before and not (top / "ro" / "new").exists()


def test_a_second_bench_into_the_same_folder_is_refused(tmp_path, cli):
    """Item 8: two ``bench`` runs into one --out at once. Before: the second silently recomputed."""
    (tmp_path / "tiny.yaml").write_text(TINY)
    out = tmp_path / "out"
    with BenchLock(out):
        assert lock_held(out)
        code, _, err = cli("bench", tmp_path / "tiny.yaml", "--out", out, "--no-report")
    assert code == 2 and "is in use by another schedlab bench (pid" in err and f"pid {os.getpid()}" in err
    assert not lock_held(out) and not (out / "results.sqlite").exists()
    code, _, err = cli("bench", tmp_path / "tiny.yaml", "--out", out, "--no-report")
    assert code == 0, err


def test_a_killed_session_shows_as_interrupted_with_what_it_stored(small_run, tmp_path, cli):
    """A writer killed with ``kill -9`` leaves its session ``running``: readers show it interrupted, with
    the runs it stored (the small sweep stored all 13), and the next writer closes it so."""
    d, _ = small_run
    copy = tmp_path / "copy"
    shutil.copytree(d, copy)
    with sqlite3.connect(copy / "results.sqlite") as c:  # the first session (it stored all 13), killed
        c.execute("DELETE FROM sessions WHERE id > (SELECT MIN(id) FROM sessions)")  # later resumes (other tests)
        c.execute("UPDATE sessions SET status = 'running', finished_at = NULL, counts = '{\"total\": 13}'")
    with BenchLock(copy), Store(copy, create=False) as s:  # a live writer: still running
        assert s.sessions()[-1]["status"] == "running"
    with Store(copy, create=False) as s:
        last = s.sessions()[-1]
    assert last["status"] == "interrupted" and last["counts"] == {"total": 13, "ran": 13, "failed": 0, "skipped": 0}
    assert last["finished_at"] is not None
    code, _, err = cli("report", copy)
    assert code == 0, err
    assert "interrupted (killed: counts are what it stored)" in (copy / "report.md").read_text()
    with BenchLock(copy), Store(copy) as s:
        assert s.close_killed_sessions() == 1
    with sqlite3.connect(copy / "results.sqlite") as c:
        assert c.execute("SELECT status FROM sessions ORDER BY id DESC").fetchone()[0] == "interrupted"
