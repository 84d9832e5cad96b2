"""``schedlab list`` from plain data (issue 25): ``benchmarks/cli/list_meta.json`` is exactly what the live
registries declare (a parameter, policy, kind or workload added without regenerating the file fails
here), the listing printed from it is byte-identical to the one computed from the registries in every
format, and a fresh ``schedlab list`` imports no registry, policy, solver module, pydantic or typer.
Deterministic: module sets and text are compared, nothing is timed."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

from schedlab.benchmarks.cli import list_meta
from schedlab.benchmarks.cli.list_cmd import ListFormat, render_listing

PROBE = textwrap.dedent("""
    import sys
    from schedlab.benchmarks.cli import main
    main(sys.argv[1:])
    heavy = sorted(m for m in sys.modules if m.startswith(("schedlab.heuristics", "schedlab.formulations",
                   "schedlab.benchmarks.workloads", "schedlab.benchmarks.simulator", "schedlab.scheduling",
                   "schedlab.benchmarks.harness", "schedlab.benchmarks.registry", "schedlab.benchmarks.cli.app",
                   "pydantic", "typer", "numpy")))
    print("IMPORTED", ",".join(heavy), file=sys.stderr)
""")


def _fresh(args: list[str]) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_PLUGINS"}
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    imported = next(line for line in r.stderr.splitlines() if line.startswith("IMPORTED"))
    return r.stdout, imported.removeprefix("IMPORTED").strip()


def test_the_file_is_what_the_registries_declare():
    """The checked-in file equals a fresh generation, byte for byte (else: run the --write command)."""
    text = list_meta.META_FILE.read_text(encoding="utf-8")
    assert text == list_meta._dump(list_meta.generated()), f"{list_meta.META_FILE} is stale: run {list_meta.WRITE_COMMAND}"
    assert list_meta.main(["--check"]) == 0
    data = list_meta.load()
    assert tuple(data["registries"]) == list_meta.REGISTRY_NAMES
    assert set(data["policies"]) == set(data["registries"]["policies"]) == set(data["policy_reprs"])


def test_a_parameter_added_without_regenerating_is_caught(monkeypatch, capsys):
    """A policy that declares one more parameter than the file: the check fails and names the command."""
    from schedlab.benchmarks import registry
    from schedlab.heuristics.fifo import FifoParams
    from schedlab.scheduling.registry import paper

    class WiderFifoParams(FifoParams):
        window: int = paper(4, ge=1, description="a parameter the file does not know")

    real = registry.all_policies

    def widened():
        reg = real()
        from dataclasses import replace

        reg["fifo"] = replace(reg["fifo"], params=WiderFifoParams)
        return reg

    monkeypatch.setattr(registry, "all_policies", widened)
    assert list_meta.main(["--check"]) == 1
    assert list_meta.WRITE_COMMAND in capsys.readouterr().err
    fifo = list_meta.collect(["policies"])["policies"]["fifo"]
    assert [p["name"] for p in fifo["params"]] == ["blocking", "window"]


@pytest.mark.parametrize("args", [[], ["policies"], ["kinds"], ["formulations"], ["backends"], ["suites"],
                                  ["--format", "json"], ["policies", "--format=json"], ["--format", "yaml"],
                                  ["formulations", "--format", "yaml"]],
                         ids=lambda a: "-".join(a) or "all")
def test_a_fresh_list_prints_the_live_listing_and_imports_no_registry(args):
    fmt = next((a.partition("=")[2] for a in args if a.startswith("--format=")), None) \
        or (args[args.index("--format") + 1] if "--format" in args else "text")
    registry = next((a for a in args if not a.startswith("-") and a != fmt), None)
    out, heavy = _fresh(["list", *args])
    assert heavy == "", heavy  # printed from the file: nothing of the registries or the command tree imported
    assert out == render_listing(registry, ListFormat(fmt))  # the live registries, the same renderer


def test_the_file_is_not_used_where_it_may_not_be_the_whole_truth(monkeypatch, tmp_path):
    monkeypatch.setattr(list_meta, "usable", lambda: True)
    assert list_meta.fast_listing(["list"]) is not None
    for args in (["list", "nope"], ["list", "--format", "xml"], ["list", "policies", "kinds"], ["list", "--help"],
                 ["--plugin", "x", "list"], ["simulate"], []):
        assert list_meta.fast_listing(args) is None, args
    monkeypatch.undo()
    import schedlab.heuristics  # noqa: F401 - this process imported a registry (it may have been changed)

    assert not list_meta.usable()
    for m in [m for m in sys.modules if m.startswith("schedlab.") and not m.startswith("schedlab.benchmarks.cli")]:
        monkeypatch.delitem(sys.modules, m)
    monkeypatch.delenv("SCHEDLAB_PLUGINS", raising=False)
    monkeypatch.setattr(list_meta, "_search_path", [str(tmp_path)])
    assert list_meta.usable()  # as in a fresh process
    monkeypatch.setenv("SCHEDLAB_PLUGINS", "some_module")
    assert not list_meta.usable()
    monkeypatch.delenv("SCHEDLAB_PLUGINS")
    (tmp_path / "demo-1.0.dist-info").mkdir()
    (tmp_path / "demo-1.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\ndemo = demo:main\n")
    assert list_meta.usable()
    (tmp_path / "demo-1.0.dist-info" / "entry_points.txt").write_text("[schedlab.policies]\nx = demo:POLICIES\n")
    assert list_meta.plugins_installed() and not list_meta.usable()


def test_module_present_agrees_with_find_spec_and_imports_nothing():
    from schedlab.formulations.backends import BACKEND_MODULES, quick_availability

    probe = [*BACKEND_MODULES.values(), "no_such_module_xyz", "json.no_such_sub", "json.decoder", "os.path",
             "email.mime.text"]
    for name in probe:
        assert list_meta.module_present(name) == (importlib.util.find_spec(name) is not None), name
    for b in BACKEND_MODULES:
        assert (b not in list_meta.unavailable_backends({"backend_modules": BACKEND_MODULES})) == quick_availability(b).ok
    code = ("import sys; from schedlab.benchmarks.cli.list_meta import module_present; "
            "assert module_present('scipy.optimize'); print('scipy' in sys.modules, 'numpy' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]
