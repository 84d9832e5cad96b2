"""``gandiva``: the Tiresias artifact's gandiva scheduler (``../shared/docs/gandiva-reference.md``).

Hand-worked steps of its node sets (:mod:`heuristics.baselines.gandiva_sets`), whole replays worked by
hand on the artifact's 10-s grid, and the artifact's own figures under ``--semantics tiresias``
(60_job here, to the cent; the Philly VCs with ``-m slow``: 2869ce about 45 s, 0e4a51 about 8 min).
"""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from schedlab.benchmarks.harness.suites.tiresias import GANDIVA_REFERENCE, REFERENCE_TOLERANCE, spec_path
from schedlab.benchmarks.simulator import simulate
from schedlab.benchmarks.workloads import TIRESIAS_MODELS, load_trace
from schedlab.benchmarks.workloads.convert import trace_workload
from schedlab.heuristics import POLICIES
from schedlab.heuristics.baselines.gandiva_sets import ORDER, GandivaSets, NodeSet
from schedlab.topology.errors import SpecError
from schedlab.topology.presets import load_cluster


def _sets(gpn: int, nodes: int, jobs: dict[str, tuple[int, int]]) -> GandivaSets:
    s = GandivaSets(gpn, nodes)
    for jid, (g, d) in jobs.items():
        s.add(jid, g, d)
    return s


def test_order_is_cpython27_dict_order():
    """Recompute CPython 2.7's slot order of the 9-key ``node_g`` literal (presized to 16 slots;
    open addressing ``i = 5 i + perturb + 1``, ``perturb >>= 5``)."""
    tab: list[int | None] = [None] * 16
    for k in (1, 2, 4, 8, 12, 16, 24, 32, 64):
        i, perturb = k & 15, k
        while tab[i & 15] is not None:
            i = 5 * i + perturb + 1
            perturb >>= 5
        tab[i & 15] = k
    assert ORDER == tuple(k for k in tab if k is not None) == (16, 1, 2, 4, 24, 32, 8, 64, 12)


def test_placement_strict_capacity_then_new_set_then_oversubscribe():
    """gpn 4: 1-GPU sets hold C = 4 but (a) admits only while util + 1 < 4; then (b) a new node; with
    no free node, (c) the lowest-util set left after (a) takes the job anyway."""
    s = _sets(4, 2, {f"j{i}": (1, 100) for i in range(8)})
    for i in range(3):
        assert s.place(f"j{i}")
    assert [(ns.util, ns.jobs) for ns in s.classes[1]] == [(3, ["j0", "j1", "j2"])]
    assert s.place("j3")  # 3 + 1 < 4 fails: a new set on the second node
    assert [(ns.util, ns.jobs) for ns in s.classes[1]] == [(1, ["j3"]), (3, ["j0", "j1", "j2"])] and s.free == 0
    assert s.place("j4") and s.place("j5")  # (a) on the new set: 2, 3 jobs
    assert s.place("j6")  # (a) fails on util 3 (set moves to the end), (b) no node, (c) the other set
    assert sorted((ns.util, len(ns.jobs)) for ns in s.classes[1]) == [(3, 3), (4, 4)]


def test_util_is_not_decreased_when_jobs_end():
    s = _sets(4, 1, {"a": (1, 10), "b": (1, 30), "c": (1, 30)})
    for j in "ab":
        s.place(j)
    assert s.step(10, 10, []) == ["a"]
    assert s.classes[1][0].util == 2 and s.classes[1][0].jobs == ["b"]
    s.place("c")
    assert s.classes[1][0].util == 3


def test_shrink_merges_sets_counted_in_whole_nodes():
    """The doc's example: three 1-GPU jobs on three 8-GPU nodes: demand 3 GPUs < occupied 24, so two
    sets dissolve and their jobs join the third (free and instantaneous)."""
    s = _sets(8, 4, {j: (1, 100) for j in "abc"})
    s.classes[1] = [NodeSet(1, 8, 1, ["a"]), NodeSet(1, 8, 1, ["b"]), NodeSet(1, 8, 1, ["c"])]
    s.free = 1
    s.adjust()
    assert [(ns.util, ns.jobs) for ns in s.classes[1]] == [(3, ["c", "a", "b"])] and s.free == 3


def test_expand_spreads_only_when_the_reused_loop_variable_ends_above_zero():
    """Six 1-GPU jobs on one 4-GPU node (C = 4): target 6 GPUs, diff 2 -> two new sets. With 3 free
    nodes both openings succeed, i ends at 0: no spread (the empty sets dissolve in the slice). With 1
    free node the second fails, i = 2: the jobs are re-spread round-robin (stable sort by util)."""
    jobs = {f"j{i}": (1, 100) for i in range(1, 7)}
    s = _sets(4, 4, jobs)
    s.classes[1] = [NodeSet(1, 4, 6, list(jobs))]
    s.free = 3
    s.step(10, 10, [])
    assert [ns.jobs for ns in s.classes[1]] == [list(jobs)] and s.free == 3
    assert s.executing() == ["j1", "j2", "j3", "j4"]
    s = _sets(4, 2, jobs)
    s.classes[1] = [NodeSet(1, 4, 6, list(jobs))]
    s.free = 1
    s.adjust()
    assert sorted(ns.jobs for ns in s.classes[1]) == [["j1", "j4", "j5"], ["j2", "j3", "j6"]]


def test_pending_retry_skips_the_job_after_each_placed_one():
    """Class-4 jobs wait behind an 8-GPU job on 2 x 4 GPUs; when it ends both nodes free up: P1 gets
    a node, P2 is skipped by the list iteration, P3 gets the other node."""
    s = _sets(4, 2, {"x": (8, 10), "p1": (4, 50), "p2": (4, 50), "p3": (4, 50)})
    assert s.place("x") and not any(s.place(p) for p in ("p1", "p2", "p3"))
    s.pending = ["p1", "p2", "p3"]
    assert s.step(10, 10, []) == ["x"]
    assert s.pending == ["p2"] and sorted(ns.jobs[0] for ns in s.classes[4]) == ["p1", "p3"]


@pytest.mark.parametrize(("arrival_b", "jcts"), [(0.0, [160.0, 200.0]), (5.0, [105.0, 200.0])])
def test_rotation_only_on_a_clock_that_is_a_multiple_of_60(mk, arrival_b, jcts):
    """Two 4-GPU jobs of 100 s on one 4-GPU machine (one set, C = 1). Both at 0: A runs to 60, rotates
    out, B runs 60-120, A 120-160 (ends, JCT 160), B 160-200 (JCT 200). B at 5: the grid is 5, 15, ...
    never a multiple of 60, so A runs to the end (105) and B after it (205, JCT 200)."""
    jobs = [mk.job("A", 4, 100), mk.job("B", 4, 100, arrival=arrival_b)]
    res = simulate(mk.cluster(1, 4), jobs, POLICIES.build("gandiva"), semantics="tiresias")
    assert sorted(r.jct for r in res.jobs) == jcts


def test_ends_are_logged_on_the_10s_grid(mk):
    """A (25 s) and B (15 s), 4 GPUs each, on one 4-GPU machine at 0: A's work ends at 25, logged at
    the step 30; B then runs from 30, its work ends at 45, logged at 50."""
    res = simulate(mk.cluster(1, 4), [mk.job("A", 4, 25), mk.job("B", 4, 15)], POLICIES.build("gandiva"),
                   semantics="tiresias")
    assert {r.job_id: r.jct for r in res.jobs} == {"A": 30.0, "B": 50.0}


def test_refuses_other_semantics_and_odd_sizes(mk):
    with pytest.raises(SpecError, match="gandiva-like"):
        simulate(mk.cluster(1, 4), [mk.job("A", 1, 10)], POLICIES.build("gandiva"), semantics="realistic")
    with pytest.raises(SpecError, match="3 GPUs"):
        simulate(mk.cluster(1, 4), [mk.job("A", 3, 10)], POLICIES.build("gandiva"), semantics="tiresias")


def test_artifact_60_job(traces_dir):
    """The artifact's own 60_job.csv on its cluster_spec.csv (1 x 16 x 4): 185.87 / 131.5."""
    cl = load_cluster(str(traces_dir / "tiresias" / "cluster_spec.csv"))
    jobs = trace_workload(load_trace(traces_dir / "tiresias" / "60_job.csv", "tiresias"), cl,
                          model_pool=TIRESIAS_MODELS).jobs
    res = simulate(cl, jobs, POLICIES.build("gandiva"), semantics="tiresias")
    avg, med = GANDIVA_REFERENCE["60_job"][1:3]
    assert res.metrics["avg_jct"] == pytest.approx(avg, abs=0.01)
    assert statistics.median(r.jct for r in res.jobs) == med and len(res.jobs) == 60


@pytest.mark.slow
@pytest.mark.parametrize("vc", ["2869ce", "0e4a51"])
def test_artifact_philly(vc, traces_dir):
    table = load_trace(traces_dir / "philly" / "sia_philly_jobs.csv", "philly")
    spec, avg, med, done, makespan = GANDIVA_REFERENCE[vc]
    rows = [j for j in table.jobs if j.tenant == vc]
    tr = replace(table, jobs=tuple(replace(j, submit=j.submit - rows[0].submit) for j in rows))
    cl = load_cluster(spec_path(spec))
    res = simulate(cl, trace_workload(tr, cl, model_pool=TIRESIAS_MODELS).jobs, POLICIES.build("gandiva"),
                   semantics="tiresias")
    assert res.metrics["avg_jct"] == pytest.approx(avg, rel=REFERENCE_TOLERANCE)
    assert res.metrics["avg_jct"] == pytest.approx(avg, abs=0.01)  # in fact to the cent
    assert statistics.median(r.jct for r in res.jobs) == med and len(res.jobs) == done
    assert res.metrics["makespan"] == makespan
