"""Built-in suites are generic over the registries (a policy merged later joins by being registered),
validate, and the exact-method ladder stops where proofs stop."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.harness import BoundCase, GapCase, ReplayCase
from schedlab.benchmarks.harness.runner import Ladder, Task
from schedlab.benchmarks.harness.suites import SUITES, builtin
from schedlab.benchmarks.harness.validate import validate_suite
from schedlab.scheduling.registry import PolicyFamily, PolicyRegistry, PolicySpec


@pytest.mark.parametrize("name", ["quick", "gap", "scale"])
def test_builtin_suites_validate(name):
    suite = SUITES[name]()
    validate_suite(suite)
    assert suite.cases and len({c.label for c in suite.cases}) == len(suite.cases)


def test_quick_pairs_every_twin_with_its_exact_formulation_on_two_backends():
    quick = SUITES["quick"]()
    gap = [c for c in quick.cases if isinstance(c, GapCase)]
    for kind, exact in (("joint", "joint-2stage"), ("tiresias-placement", "tiresias-ilp"), ("tier-placement",
                                                                                       "tier-ilp")):
        mine = [c for c in gap if c.kind == kind]
        assert {c.method for c in mine if c.backend is None} >= {"fifo"}
        assert {c.backend for c in mine if c.method == exact} == {"cpsat", "highs"}
        assert len({(c.jobs, c.seed) for c in mine}) == 4  # 2 sizes x 2 seeds
    replays = [c for c in quick.cases if isinstance(c, ReplayCase)]
    assert {(c.source.workload, c.policy) for c in replays} >= {("smoke", "fifo"), ("smoke-mt", "fifo")}
    assert [c.policy for c in quick.cases if isinstance(c, BoundCase)][0] == "fifo"


def test_a_policy_registered_later_joins_quick(monkeypatch):
    from schedlab.benchmarks import registry
    from schedlab.heuristics.fifo import FifoPolicy

    base = registry.all_policies()
    extra = PolicySpec("new-rubick", FifoPolicy, "a Rubick-family stand-in", PolicyFamily.RUBICK, base["fifo"].params,
                       twins=("joint",), preemptive=True)
    monkeypatch.setattr(registry, "all_policies", lambda: PolicyRegistry.merged(base, {"new-rubick": extra}))
    quick = builtin.quick()
    assert any(isinstance(c, GapCase) and c.method == "new-rubick" and c.kind == "joint" for c in quick.cases)
    assert {c.source.workload for c in quick.cases if isinstance(c, ReplayCase) and c.policy == "new-rubick"} == {
        "smoke", "smoke-mt"}  # the Rubick family's representative replays
    assert any(isinstance(c, BoundCase) and c.policy == "new-rubick" for c in quick.cases)


def test_exact_methods_stop_growing_once_they_stop_proving():
    grp = ("joint", "c", "{}", "joint", "cpsat", "{}", 60.0)

    def task(n, seed):
        return Task(GapCase("joint", "rubick-64", n, "joint", "cpsat", seed=seed), f"{n}/{seed}", 1.0, grp)

    ladder = Ladder()
    tasks = {(n, s): task(n, s) for n in (8, 16, 32, 64) for s in (0, 1)}
    for t in tasks.values():
        ladder.expect(t)
    ladder.finish(tasks[8, 0], "optimal")
    ladder.finish(tasks[8, 1], "optimal")
    ladder.finish(tasks[16, 0], "optimal")
    ladder.finish(tasks[16, 1], "feasible-at-limit")  # one seed still proved at 16: go on
    assert ladder.stopped_at(tasks[32, 0]) is None
    ladder.finish(tasks[32, 0], "feasible-at-limit")
    assert ladder.stopped_at(tasks[64, 0]) is None  # 32 not finished for every seed yet
    ladder.finish(tasks[32, 1], "killed")
    assert ladder.stopped_at(tasks[64, 0]) == 32 and ladder.stopped_at(tasks[64, 1]) == 32
