"""A fast CLI start: importing the command line (which ``schedlab --help`` does) and building every
registry ``schedlab list`` shows import no heavy library. Checked on ``sys.modules`` in a fresh
interpreter: deterministic, not timed (the timing is ``benchmarks/bench_cli.py``)."""

import json
import subprocess
import sys

import pytest

HEAVY = ("scipy", "ortools", "pandas", "matplotlib", "networkx", "pulp", "highspy", "dask", "pyarrow")


def heavy_after(code: str, extra: tuple[str, ...] = ()) -> list[str]:
    probe = code + (f"; import sys, json; print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & "
                    f"set({list(HEAVY + extra)!r}))))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", [
    "import schedlab.benchmarks.cli",
    "from schedlab.benchmarks.cli import build_command; build_command()",
    "from schedlab.benchmarks.registry import registries, all_policies; registries(); all_policies()",
    "import schedlab.scheduling, schedlab.topology, schedlab.perfmodel.zoo",
], ids=["cli", "command-tree", "list-registries", "vocabulary"])
def test_no_heavy_imports(code):
    assert heavy_after(code) == []


def test_list_help_names_every_registry():
    from schedlab.benchmarks.cli.list_cmd import REGISTRY_NAMES
    from schedlab.benchmarks.registry import REGISTRY_SOURCES

    assert REGISTRY_NAMES == tuple(REGISTRY_SOURCES)


def test_help_imports_no_pydantic_or_numpy():
    assert heavy_after("from schedlab.benchmarks.cli import build_command; build_command()", extra=("pydantic", "numpy")) == []


def test_every_instance_kind_has_its_solve_defaults_listed(cli):
    """``schedlab solve --generate KIND`` takes the kind's default cluster and size, which ``schedlab list
    kinds`` prints (the help names that command instead of importing the registry)."""
    from schedlab.formulations import KINDS
    from schedlab.topology.presets import load_cluster

    out = cli("list", "kinds").out
    for kind in KINDS.values():
        load_cluster(kind.default_cluster)
        assert f"default: {kind.default_cluster}, {kind.default_jobs} jobs" in out
    assert "schedlab list kinds" in " ".join(cli("solve", "--help").out.split())
