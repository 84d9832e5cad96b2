"""Extending schedlab: the example plugin (examples/plugin, the worked example of docs/EXTENDING.md)
installed by pip into a private directory registers its formulation, policy, workload and suite through
entry points; they appear in ``schedlab list``, run in ``schedlab bench`` and pass the example's own
conformance tests. ``--plugin MODULE`` does the same without installing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "plugin"


SUITE = """
name: plugged
gap:
  - {kind: tier-placement, cluster: dally-2, sizes: [4], policies: [largest-first],
     formulations: [pack-first, pack-local, tier-ilp], backends: [highs]}
replay:
  - {workload: smoke-burst, policies: [largest-first]}
"""


def _run(args, env_path, timeout=300, **kw):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(env_path), os.environ.get("PYTHONPATH", "")]))
    env.pop("SCHEDLAB_PLUGINS", None)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env, **kw)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The example plugin installed by pip (no network: --no-index, --no-build-isolation)."""
    src = tmp_path_factory.mktemp("src") / "plugin"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    target = tmp_path_factory.mktemp("site")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                        "--no-index", "--target", str(target), str(src)], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.fail(f"pip could not install the example plugin: {r.stderr[-1500:]}")
    return target


def test_installed_plugin_appears_everywhere_like_a_builtin(site, tmp_path):
    r = _run(["-m", "schedlab", "list", "--format", "json"], site)
    assert r.returncode == 0, r.stderr
    listed = json.loads(r.stdout)
    assert "largest-first" in listed["policies"] and listed["policies"]["largest-first"]["twins"] == ["tier-placement"]
    assert "pack-first" in listed["formulations"] and "smoke-burst" in listed["workloads"]
    assert "example" in listed["suites"]
    (tmp_path / "suite.yaml").write_text(SUITE)
    r = _run(["-m", "schedlab", "bench", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "out"), "--format",
              "json"], site)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    recs = {x["label"]: x for x in out["records"]}
    assert out["runs"][0]["ran"] == 5 and out["runs"][0]["failed"] == 0
    pack = recs["tier-placement/dally-2/n=4/s=0/pack-first@highs"]
    assert pack["status"] == "optimal" and pack["verified"] and pack["gap"] is not None
    assert pack["role"] == "heuristic-in-model"
    # the restriction proves its own optimum (12.46) below the tier-aware one (13.99): it never becomes the bound
    local, exact = recs["tier-placement/dally-2/n=4/s=0/pack-local@highs"], recs["tier-placement/dally-2/n=4/s=0/tier-ilp@highs"]
    assert local["role"] == "restriction" and local["status"] == "optimal" and local["bound"] < exact["bound"] - 1
    assert local["best_bound"] == exact["bound"] and local["gap"] > 0.05 and exact["gap"] == 0
    assert recs["tier-placement/dally-2/n=4/s=0/largest-first"]["status"] == "ok"
    assert recs["smoke-burst/realistic/s=0/largest-first"]["metrics"]["jobs"] == 24
    md = (tmp_path / "out" / "report.md").read_text()
    assert "pack-first@highs" in md and "largest-first" in md  # in reports like a built-in


def test_the_example_plugins_own_conformance_tests_pass(site):
    r = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(EXAMPLE), str(EXAMPLE / "tests")],
             site, cwd=EXAMPLE)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "2 passed" in r.stdout


def test_plugin_option_without_installing():
    from schedlab.benchmarks.harness.plugins import load_module
    from schedlab.topology.errors import SpecError

    r = _run(["-m", "schedlab", "--plugin", "schedlab_example", "list", "suites"], EXAMPLE)
    assert r.returncode == 0 and "example" in r.stdout, r.stderr
    with pytest.raises(SpecError, match="cannot import plugin module 'no_such_plugin_module'"):
        load_module("no_such_plugin_module")


def test_extending_doc_shows_the_tested_example_code():
    """Every Python block of docs/EXTENDING.md is a verbatim part of the example plugin's files."""
    doc = (ROOT / "docs" / "EXTENDING.md").read_text()
    sources = "\n".join(p.read_text() for p in EXAMPLE.rglob("*") if p.suffix in (".py", ".toml"))
    blocks = re.findall(r"```(?:python|toml)\n(.*?)```", doc, flags=re.S)
    assert len(blocks) >= 6
    for b in blocks:
        assert b.strip() in sources, f"this block of EXTENDING.md is not in examples/plugin:\n{b[:300]}"


CWD_PLUGIN = '''
from schedlab.heuristics.fifo import FifoParams, FifoPolicy
from schedlab.scheduling.registry import PolicySpec

POLICIES = [PolicySpec("cwd-fifo", FifoPolicy, "FIFO under another name, from a module in the cwd",
                       params=FifoParams)]
'''


def test_plugin_module_in_the_working_directory_with_the_console_script(tmp_path):
    """Issue 26 item 12: ``schedlab --plugin MODULE`` (the console script, whose sys.path holds its own
    folder, not the working directory) imports a module file of the working directory, as
    docs/EXTENDING.md shows; a missing module is still one error line."""
    (tmp_path / "my_cwd_plugin.py").write_text(CWD_PLUGIN)
    script = Path(sys.executable).parent / "schedlab"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCHEDLAB_PLUGINS")}
    r = subprocess.run([str(script), "--plugin", "my_cwd_plugin", "list", "policies"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "cwd-fifo" in r.stdout
    r = subprocess.run([str(script), "--plugin", "not_here_plugin", "list", "policies"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and len(r.stderr.splitlines()) == 1
    assert "cannot import plugin module 'not_here_plugin'" in r.stderr


def test_cwd_plugin_lookup_leaves_sys_path_alone(tmp_path, monkeypatch):
    from schedlab.benchmarks.harness.plugins import _import

    (tmp_path / "cwd_only_mod.py").write_text("VALUE = 42\n")
    (tmp_path / "cwd_broken_mod.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    before = list(sys.path)
    assert _import("cwd_only_mod").VALUE == 42
    assert sys.path == before
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_xyz"):  # not hidden by the lookup
        _import("cwd_broken_mod")
    assert "cwd_broken_mod" not in sys.modules
    sys.modules.pop("cwd_only_mod", None)
