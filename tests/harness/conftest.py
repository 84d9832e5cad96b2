"""Shared fixtures of the harness tests: a tiny plugin module (formulations that nap, hang or fail) and
one small sweep run once per session, which the record, report, resume and compare tests read."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

PLUGIN = textwrap.dedent('''
    """Test plugin: formulation methods on joint instances that nap, hang or fail; one exact method that
    claims a too-tight proven bound (1 % of its objective) and a restriction that does the same."""
    import dataclasses
    import time

    from schedlab.formulations import METHODS, Method, Role


    def nap(inst, backend, params):
        time.sleep(0.4)
        return METHODS["joint"].solve(inst, backend, params)


    def hang(inst, backend, params):
        time.sleep(3600)  # ignores its limit: the harness must kill it


    def fail(inst, backend, params):
        raise RuntimeError("boom")


    def tight(inst, backend, params):
        res = METHODS["joint"].solve(inst, backend, params)
        return dataclasses.replace(res, bounds=dataclasses.replace(res.bounds, dual=0.01 * res.objective))


    FORMULATIONS = [Method("nap", "joint", nap), Method("hang", "joint", hang), Method("fail", "joint", fail),
                    Method("liar", "joint", tight, Role.EXACT),
                    Method("restricted", "joint", tight, Role.RESTRICTION)]
''')


@pytest.fixture(scope="session")
def plugin_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("plugin")
    (d / "schedlab_test_plugin.py").write_text(PLUGIN)
    return d


@pytest.fixture(scope="session", autouse=True)
def plugin_module(plugin_dir):
    """The module name of the test plugin, importable here and (through ``PYTHONPATH``, set before any
    worker launcher starts: autouse) in worker processes."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(plugin_dir), *([old] if old else [])])
    sys.path.insert(0, str(plugin_dir))
    yield "schedlab_test_plugin"
    sys.path.remove(str(plugin_dir))
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="session")
def small_suite():
    from schedlab.benchmarks.harness import BoundCase, GapCase, ReplayCase, ReproRow, Suite
    from schedlab.benchmarks.workloads.source import WorkloadSource

    cases = []
    for s in (0, 1):
        cases += [GapCase("joint", "rubick-64", 4, "fifo", seed=s, time_limit_s=20),
                  GapCase("joint", "rubick-64", 4, "joint", "highs", seed=s, time_limit_s=20),
                  GapCase("joint", "rubick-64", 4, "joint", "cpsat", seed=s, time_limit_s=20),
                  GapCase("joint", "rubick-64", 4, "lp-bound", seed=s, time_limit_s=20)]
    cases += [GapCase("joint", "rubick-64", 8, "fifo", seed=0, time_limit_s=20),
              GapCase("joint", "rubick-64", 8, "joint", "highs", seed=0, time_limit_s=20)]
    src = WorkloadSource(workload="smoke", seed=1)
    cases += [ReplayCase(src, "fifo", label="smoke/fifo"), ReplayCase(src, "yarn-cs", label="smoke/yarn-cs"),
              BoundCase("fifo", "tiresias-60", 12, generator={"mean_gap": 10}, time_limit_s=20)]

    def reproduce(results):
        ratio = results["smoke/yarn-cs"]["avg_jct"] / results["smoke/fifo"]["avg_jct"]
        gap = results["joint/rubick-64/n=4/s=0/fifo"]["gap"]
        return [ReproRow("avg JCT, yarn-cs / fifo", 1.0, ratio, "x", "same policy: must be 1"),
                ReproRow("FIFO gap on joint n=4", None, gap, "", "no paper figure")]

    return Suite("small", "a small sweep for the tests", tuple(cases), reproduce=reproduce, paper="none")


@pytest.fixture(scope="session")
def small_run(tmp_path_factory, small_suite):
    """``(directory, runs)`` of ``small_suite`` run once with two local workers."""
    from schedlab.benchmarks.harness.runner import BenchOptions, run_bench

    d = tmp_path_factory.mktemp("small")
    runs = run_bench(small_suite, BenchOptions(out=d, workers=2))
    return d, runs
