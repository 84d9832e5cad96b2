"""Every declared dependency is used: imported somewhere in the package (or, for tools, used by the
configuration). Libraries being adopted by work in progress are listed in ``ADOPTING`` with the
reason; once their code lands the entry is redundant and can go."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("schedlab", "topology", "perfmodel", "scheduling", "formulations", "heuristics", "benchmarks")

IMPORT_NAME = {"pyyaml": "yaml", "pytest-benchmark": "pytest_benchmark", "dask[distributed]": "distributed"}

ADOPTING: dict[str, str] = {}
TOOLS = {
    "ruff": "lint (CI: ruff check .)",
    "pytest": "the test runner",
    "pytest-benchmark": "--benchmark-disable in pytest addopts",
    "setuptools": "build backend of examples/plugin, installed offline by tests/harness/test_plugins.py",
    "wheel": "build backend of examples/plugin, installed offline by tests/harness/test_plugins.py",
}


def _declared() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    return [re.split(r"[<>=!~ ;]", r, maxsplit=1)[0].strip().lower() for r in reqs]


def _imported() -> set[str]:
    found: set[str] = set()
    pattern = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_][A-Za-z0-9_]*)"
                         r"|importorskip\(\s*[\"']([A-Za-z_][A-Za-z0-9_]*)", re.M)
    for folder in SOURCES + ("tests",):
        for p in (ROOT / folder).rglob("*.py"):
            found.update(a or b for a, b in pattern.findall(p.read_text(encoding="utf-8")))
    return found


def test_every_declared_dependency_is_used():
    imported = _imported()
    unused = []
    for dist in _declared():
        if dist in ADOPTING or dist in TOOLS:
            continue
        name = IMPORT_NAME.get(dist, dist.replace("-", "_"))
        if name not in imported:
            unused.append(dist)
    assert not unused, f"declared but never imported (use them or remove them from pyproject.toml): {unused}"


def test_exceptions_name_declared_dependencies():
    declared = set(_declared())
    assert set(ADOPTING) <= declared and set(TOOLS) <= declared, "stale entries: drop what is no longer declared"
