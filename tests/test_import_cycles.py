"""No import cycles inside schedlab, counting the imports hidden inside functions too.

The graph has an edge ``a -> b`` for every ``import`` of ``b`` (or a name from it) anywhere in module ``a``
(module level, functions, methods), and to every package above ``b`` whose ``__init__`` that import runs. An import inside a function that exists only to keep start-up fast
is marked on its line with ``# lazy: WHY`` (start-up, an optional dependency, one process only); those
edges are left out, since they run after every module is loaded. ``TYPE_CHECKING`` blocks are left out too. The test fails on any
cycle and names it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("topology", "perfmodel", "scheduling", "formulations", "heuristics", "benchmarks")
MARK = "# lazy:"
#: in-function imports that close a cycle today, outside the harness, each to be removed by a module split
#: (formulations modules whose helpers import back). The list may only
#: shrink: a new cycle anywhere fails.
KNOWN_BACK_EDGES = {
    ("schedlab.formulations.joint_instance", "schedlab.formulations.joint_options"),
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["schedlab", *parts])


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def _targets(node: ast.AST, here: str, is_pkg: bool, known: dict[str, Path]) -> list[str]:
    """The schedlab modules an import statement loads (``from a import b``: ``a.b`` when that is a module)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
        return [n for n in names if n in known]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = here.split(".") if is_pkg else here.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        mod = ".".join([*base, *([node.module] if node.module else [])])
    else:
        mod = node.module or ""
    subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in known]
    if len(subs) == len(node.names):  # ``from pkg import submodule``: the submodules, not pkg's __init__
        return subs
    return ([mod] if mod in known else []) + subs


def _with_packages(target: str, here: str, known: dict[str, Path]) -> set[str]:
    """``target`` and the packages above it whose ``__init__`` importing it runs (not those ``here`` is
    in: they are initialising already)."""
    out = set()
    parts = target.split(".")
    for i in range(2, len(parts) + 1):
        name = ".".join(parts[:i])
        if name in known and name != here and not here.startswith(name + "."):
            out.add(name)
    return out


def import_graph() -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for mod, path in known.items():
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text, filename=str(path))
        skip = _type_checking_lines(tree)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or node.lineno in skip:
                continue
            if MARK in lines[node.lineno - 1]:
                continue
            for t in _targets(node, mod, path.name == "__init__.py", known):
                graph[mod].update(_with_packages(t, mod, known))
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (a list of modules, first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return [*stack[stack.index(m):], m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles():
    graph = import_graph()
    for a, b in KNOWN_BACK_EDGES:
        graph.get(a, set()).discard(b)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_harness_registries_and_cli_have_no_cycle_at_all():
    """The harness, the registries and the command line: no cycle, and no known exception either."""
    graph = import_graph()
    mine = ("schedlab.benchmarks.harness", "schedlab.benchmarks.cli", "schedlab.benchmarks.registry",
            "schedlab.benchmarks.merged")
    sub = {m: {t for t in ts if t.startswith(mine)} for m, ts in graph.items() if m.startswith(mine)}
    cycle = find_cycle(sub)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
