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
        mine = [c for c in gap if c.kind == kind and not c.state]
        assert {c.method for c in mine if c.backend is None} >= {"fifo"}
        assert {c.backend for c in mine if c.method == exact} == {"cpsat", "highs"}
        assert len({(c.jobs, c.seed) for c in mine}) == 4  # 2 sizes x 2 seeds
    replays = [c for c in quick.cases if isinstance(c, ReplayCase)]
    assert {(c.source.workload, c.policy) for c in replays} >= {("smoke", "fifo"), ("smoke-mt", "fifo")}
    assert [c.policy for c in quick.cases if isinstance(c, BoundCase)][0] == "fifo"


def test_quick_shows_contention_on_sampled_states_and_busy_replays():
    """Issue 21.7: replays at a load where jobs queue (arrivals compressed 4x; the rigid mix on 16 GPUs),
    the gap parts also on decision states sampled from replays (joint: FIFO; the placement kinds: their own
    family's scheduler; every policy and twin of a kind on the same states), each policy beside its own decision set's twin, the bound on a busy 32-GPU cluster."""
    quick = builtin.quick()
    replays = [c for c in quick.cases if isinstance(c, ReplayCase)]
    assert {c.source.load for c in replays} == {4.0}
    assert {c.source.cluster for c in replays if c.source.workload == "smoke"} == {builtin.BUSY_CLUSTER}
    every = [c for c in quick.cases if isinstance(c, GapCase) and c.state]
    assert {c.kind for c in every} == {"joint", "tiresias-placement", "tier-placement"}
    assert {c.state["policy"] for c in every if c.kind == "tier-placement"} == {"dally"}
    assert {c.state["policy"] for c in every if c.kind == "tiresias-placement"} == {"2d-las"}
    states = [c for c in every if c.kind == "joint"]
    assert {c.state["index"] for c in states} == {0, 1}
    policies = set(builtin.twin_kinds()["joint"])
    assert {c.method for c in states if c.backend is None} == policies
    assert {c.method for c in states if c.backend is not None} == {"joint-2stage", "joint-rigid", "joint-plan"}
    assert {"yarn-cs", "gandiva-like", "sia", "rubick-e"} <= policies
    bound = [c for c in quick.cases if isinstance(c, BoundCase)]
    assert {c.cluster for c in bound} == {builtin.BOUND_WORKLOAD["cluster"]}


def test_a_policy_registered_later_joins_quick(monkeypatch):
    from schedlab.benchmarks import merged
    from schedlab.heuristics.fifo import FifoPolicy

    base = merged.all_policies()
    extra = PolicySpec("new-rubick", FifoPolicy, "a Rubick-family stand-in", PolicyFamily.RUBICK, base["fifo"].params,
                       twins=("joint",), preemptive=True)
    monkeypatch.setattr(merged, "all_policies", lambda: PolicyRegistry.merged(base, {"new-rubick": extra}))
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
