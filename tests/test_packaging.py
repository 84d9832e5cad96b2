"""The distribution installs every package under ``schedlab`` and runs as ``python -m schedlab``."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("topology", "perfmodel", "scheduling", "formulations", "heuristics", "benchmarks")


def test_every_package_folder_is_listed_in_pyproject():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    assert conf["package-dir"] == {"schedlab": "schedlab", **{f"schedlab.{p}": p for p in LAYERS}}
    found = {"schedlab"}
    for layer in LAYERS:
        for init in (ROOT / layer).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT)
            found.add("schedlab." + ".".join(rel.parts))
    assert found == listed, {"missing from pyproject": sorted(found - listed),
                             "listed but absent": sorted(listed - found)}


def test_layers_resolve_under_the_namespace():
    import schedlab.topology

    assert Path(schedlab.topology.__file__).resolve().parent == ROOT / "topology"


def test_python_dash_m_schedlab(tmp_path):
    out = subprocess.run([sys.executable, "-m", "schedlab", "--help"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Usage" in out.stdout
