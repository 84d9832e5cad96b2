"""Imports go one way: topology <- perfmodel <- scheduling <- (formulations, heuristics) <- benchmarks."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {
    "topology": set(),
    "perfmodel": {"topology"},
    "scheduling": {"topology", "perfmodel"},
    "formulations": {"topology", "perfmodel", "scheduling"},
    "heuristics": {"topology", "perfmodel", "scheduling"},
    "benchmarks": {"topology", "perfmodel", "scheduling", "formulations", "heuristics"},
}


def _imports(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_no_upward_or_sideways_imports(package):
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for lineno, top in _imports(path):
            if top in LAYERS and top != package and top not in LAYERS[package]:
                bad.append(f"{path.relative_to(ROOT)}:{lineno} imports {top}")
    assert not bad, "layering violations:\n" + "\n".join(bad)


def test_no_sys_path_hacks():
    offenders = [str(p.relative_to(ROOT)) for pkg in LAYERS for p in (ROOT / pkg).rglob("*.py")
                 if "sys.path" in p.read_text()]
    assert not offenders, offenders
