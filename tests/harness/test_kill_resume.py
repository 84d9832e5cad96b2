"""A real ``kill -9`` of ``schedlab bench`` mid-sweep: no completed record is lost, no worker is left
behind, and the rerun resumes where it stopped without redoing a run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

SUITE = """
name: killme
defaults: {seeds: [0, 1, 2, 3, 4, 5, 6, 7], time_limit_s: 30}
gap:
  - {kind: joint, cluster: rubick-64, sizes: [2], formulations: [{method: nap, backends: [cpsat]}]}
"""


def _count(db) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            return c.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _rows(db) -> dict:
    with sqlite3.connect(db) as c:
        return {k: (s, t) for k, s, t in c.execute("SELECT key, status, started_at FROM records")}


def _bench(tmp_path, plugin_dir):
    """The suite file written; the results folder, its store, the environment and the bench command."""
    (tmp_path / "suite.yaml").write_text(SUITE)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(plugin_dir), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "schedlab", "--plugin", "schedlab_test_plugin", "bench", str(tmp_path / "suite.yaml"),
           "--out", str(out), "--workers", "1", "--no-report"]
    return out, out / "results.sqlite", env, cmd


def test_kill_9_mid_sweep_then_resume(tmp_path, plugin_dir):
    psutil = pytest.importorskip("psutil")
    out, db, env, cmd = _bench(tmp_path, plugin_dir)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while _count(db) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before it could be killed"
    family = psutil.Process(proc.pid).children(recursive=True)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    gone, alive = psutil.wait_procs(family, timeout=10)
    assert not alive, f"workers left behind: {alive}"
    stored = _rows(db)
    assert 2 <= len(stored) < 8 and all(s == "optimal" for s, _ in stored.values())
    from schedlab.benchmarks.harness.store import Store

    with Store(out, create=False) as st:  # the killed session: interrupted, with what it stored
        killed = st.sessions()[-1]
    assert killed["status"] == "interrupted" and killed["counts"]["ran"] == len(stored)
    assert killed["counts"]["total"] == 8

    again = subprocess.run([*cmd, "--format", "json"], env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    run = json.loads(again.stdout)["runs"][0]
    assert run["stored_before"] == len(stored) and run["ran"] == 8 - len(stored)
    final = _rows(db)
    assert len(final) == 8
    assert {k: final[k] for k in stored} == stored  # the first run's records are untouched


def test_sigterm_is_handled_as_ctrl_c(tmp_path, plugin_dir):
    """Issue 26 item 8: SIGTERM printed nothing and left the session running; now it stops the workers,
    says so, exits 130 and closes the session as interrupted with its counts."""
    out, db, env, cmd = _bench(tmp_path, plugin_dir)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while _count(db) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before it could be terminated"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted: every finished run is stored" in err and "Traceback" not in err
    with sqlite3.connect(db) as c:
        status, counts = c.execute("SELECT status, counts FROM sessions ORDER BY id DESC").fetchone()
        n = c.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    assert status == "interrupted" and json.loads(counts)["ran"] == n and 2 <= n < 8
