"""``schedlab list`` keeps its listing per source digest (issue 25): a hit prints exactly what a fresh
listing prints and imports no policy, formulation or workload module; any change of the input misses."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from schedlab.benchmarks.cli import list_cache

PROBE = textwrap.dedent("""
    import sys
    from schedlab.benchmarks.cli import main
    main(sys.argv[1:])
    heavy = sorted(m for m in sys.modules if m.startswith(("schedlab.heuristics", "schedlab.formulations",
                   "schedlab.benchmarks.workloads", "schedlab.benchmarks.simulator", "schedlab.scheduling")))
    print("IMPORTED", ",".join(heavy), file=sys.stderr)
""")


def _run(args, cache, **env):
    e = {k: v for k, v in os.environ.items() if k not in (list_cache.NO_CACHE_ENV, "SCHEDLAB_PLUGINS")}
    e.update({list_cache.CACHE_ENV: str(cache), **env})
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stderr
    imported = next(line for line in r.stderr.splitlines() if line.startswith("IMPORTED"))
    return r.stdout, imported.removeprefix("IMPORTED").strip()


def test_a_hit_prints_the_fresh_listing_and_imports_no_registry(tmp_path):
    cache = tmp_path / "cache"
    for args in (["list"], ["list", "policies", "--format", "json"]):
        fresh, heavy = _run(args, cache, **{list_cache.NO_CACHE_ENV: "1"})
        assert heavy  # computed: the registries were imported
        miss, _ = _run(args, cache)
        hit, hit_heavy = _run(args, cache)
        assert fresh == miss == hit
        assert hit_heavy == "", hit_heavy  # the listing came from the cache: no policy module imported
    assert len(list(cache.glob("list-*.txt"))) == 2
    assert "params" in hit and "2d-las" in hit


def test_the_key_follows_the_source_and_refuses_plugins(tmp_path, monkeypatch):
    root = tmp_path / "src"
    (root / "heuristics").mkdir(parents=True)
    mod = root / "heuristics" / "x.py"
    mod.write_text("A = 1\n")
    monkeypatch.setattr(list_cache, "_source_root", lambda: root)
    monkeypatch.setattr(list_cache, "usable", lambda: True)
    site = tmp_path / "site"
    (site / "demo-1.0.dist-info").mkdir(parents=True)
    monkeypatch.setattr(list_cache, "_search_path", [str(site)])
    k1 = list_cache.key(("list", "", "text"))
    assert k1 is not None and k1 == list_cache.key(("list", "", "text"))
    assert list_cache.key(("list", "policies", "text")) != k1
    mod.write_text("A = 2\n")
    k2 = list_cache.key(("list", "", "text"))
    assert k2 != k1
    (site / "other-2.0.dist-info").mkdir()  # a distribution installed
    assert list_cache.key(("list", "", "text")) not in (k1, k2)
    (site / "demo-1.0.dist-info" / "entry_points.txt").write_text("[schedlab.policies]\nx = y:Z\n")
    assert list_cache.key(("list", "", "text")) is None  # a plugin: computed every time


def test_not_used_where_registries_may_have_changed(monkeypatch):
    import schedlab.heuristics  # noqa: F401 - this process imported a registry

    monkeypatch.delenv(list_cache.NO_CACHE_ENV, raising=False)  # tests/conftest.py turns the cache off

    assert not list_cache.usable()
    assert list_cache.key(("list", "", "text")) is None
    for m in [m for m in sys.modules if m.startswith("schedlab.") and m != "schedlab.benchmarks.cli.list_cache"]:
        monkeypatch.delitem(sys.modules, m)
    assert list_cache.usable()  # a fresh process
    monkeypatch.setenv("SCHEDLAB_PLUGINS", "some_module")
    assert not list_cache.usable()
    monkeypatch.delenv("SCHEDLAB_PLUGINS")
    monkeypatch.setenv(list_cache.NO_CACHE_ENV, "1")
    assert not list_cache.usable()


def test_store_and_load_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv(list_cache.CACHE_ENV, str(tmp_path))
    assert list_cache.load("abc") is None
    list_cache.store("abc", "policies (1):\n")
    assert list_cache.load("abc") == "policies (1):\n"
    for i in range(list_cache.KEEP + 3):
        list_cache.store(f"k{i}", "x\n")
    assert len(list(tmp_path.glob("list-*.txt"))) == list_cache.KEEP
    list_cache.store(None, "ignored")  # no key: nothing stored
