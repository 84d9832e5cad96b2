"""Imports go one way: topology <- perfmodel <- scheduling <- (formulations, heuristics) <- benchmarks,
all under the ``schedlab`` namespace (a bare ``import topology`` would shadow other projects)."""

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
    """``(line, module)`` for every absolute import in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "schedlab" and len(parts) > 1 and parts[1] in LAYERS else None


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_no_upward_or_sideways_imports(package):
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for lineno, module in _imports(path):
            top = _layer(module)
            if top is not None and top != package and top not in LAYERS[package]:
                bad.append(f"{path.relative_to(ROOT)}:{lineno} imports {top}")
    assert not bad, "layering violations:\n" + "\n".join(bad)


def test_every_import_uses_the_namespace():
    """Code, tests and examples import ``schedlab.topology``, never the bare folder name."""
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0].startswith(".") or "build" in rel.parts:
            continue
        for lineno, module in _imports(path):
            if module.split(".")[0] in LAYERS:
                bad.append(f"{rel}:{lineno} imports {module}")
    assert not bad, "bare layer imports:\n" + "\n".join(bad)


def test_no_sys_path_hacks():
    offenders = [str(p.relative_to(ROOT)) for pkg in LAYERS for p in (ROOT / pkg).rglob("*.py")
                 if "sys.path" in p.read_text()]
    assert not offenders, offenders
