"""Tiresias 2D-LAS / 2D-Gittins: hand-worked scenarios (the hand computation is written in each test).

Times are whole seconds under ``--semantics tiresias`` (one pool of GPUs, free preemption), so every
schedule below can be followed on paper. Jobs run 1 iteration per second at their request.
"""

from __future__ import annotations

import pytest

from schedlab.benchmarks.simulator import Recorder, simulate
from schedlab.heuristics import POLICIES
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources, validate_allocation
from schedlab.scheduling.policy import ExecutionPlan


def _ends(res):
    return {r.job_id: r.end for r in res.jobs}


def _avg(ends, jobs):
    return sum(ends[j.id] - j.arrival for j in jobs) / len(jobs)


def test_three_jobs_on_two_gpus_las_gittins_srsf(mk, tmp_path):
    """Three jobs on one two-GPU machine (the setting of the paper's Figure 7, whose job sizes the text
    does not give; these are ours): J1 (1 GPU, 6 s) and J2 (1 GPU, 10 s) at t=0, J3 (1 GPU, 1 s) at t=3.

    2D-LAS (one queue in reach: threshold 100 GPU-s): J1, J2 run 0-6 / 0-10; J3 waits behind them
    in Q1 (jobs of a queue never preempt each other) and runs 6-7. JCTs 6, 10, 4 -> 20/3.
    2D-Gittins, service samples {2, 12} GPU-s, quantum up to 100: G(0) = 2 / (2 + 12) = 1/7; at t=3
    the running jobs have a = 3: G(3) = 1 / (12 - 3) = 1/9 < 1/7, so J3 preempts one of them (equal
    indices: the later started, J2). J3 runs 3-4, J2 resumes at 4 with 7 s left -> 11. JCTs 6, 11, 1
    -> 18/3. SRSF (oracle) at t=3: remaining service J1 3, J2 7, J3 1 -> J3 and J1 run, J2 waits ->
    the same schedule, 18/3. More information, lower average JCT: SRSF = Gittins < LAS.
    """
    c = mk.cluster(1, 2)
    jobs = [mk.job("J1", 1, 6), mk.job("J2", 1, 10), mk.job("J3", 1, 1, arrival=3)]
    dist = tmp_path / "service.csv"
    dist.write_text("duration\n2\n12\n")
    las = _ends(simulate(c, jobs, POLICIES.build("2d-las", {"threshold": 100}), semantics="tiresias"))
    assert las == {"J1": 6, "J2": 10, "J3": 7}
    git = simulate(c, jobs, POLICIES.build("2d-gittins", {"threshold": 100, "distribution": str(dist),
                                                          "preempt_margin": 0}), semantics="tiresias")
    assert _ends(git) == {"J1": 6, "J2": 11, "J3": 4}
    assert {r.job_id: r.preemptions for r in git.jobs} == {"J1": 0, "J2": 1, "J3": 0}
    srsf = _ends(simulate(c, jobs, POLICIES.build("srsf"), semantics="tiresias"))
    assert srsf == {"J1": 6, "J2": 11, "J3": 4}
    assert _avg(srsf, jobs) == pytest.approx(6.0) == _avg(_ends(git), jobs) < _avg(las, jobs) == pytest.approx(20 / 3)


def test_demotion_exactly_at_the_threshold_by_timer(mk):
    """Two-GPU jobs on a two-GPU machine, K = 2, threshold 4 GPU-s (attained service counts GPUs):
    A (2 GPUs, 10 s) at 0 reaches 2 x 2 = 4 GPU-s at exactly t = 2 and is demoted; B (2 GPUs, 3 s),
    waiting in Q1 since t = 1, preempts it. B reaches 4 GPU-s at t = 4, is demoted too, and keeps
    running (same queue as A now: no preemption); B ends at 5, A resumes with 8 s left: 5-13.
    Decision points: arrivals 0 and 1, the two demotion timers 2 and 4, completions 5 and 13 = 6
    passes (timers, never polling)."""
    c = mk.cluster(1, 2)
    jobs = [mk.job("A", 2, 10), mk.job("B", 2, 3, arrival=1)]
    pol = POLICIES.build("2d-las", {"threshold": 4})
    rec = Recorder(keep_segments=True)
    res = simulate(c, jobs, pol, semantics="tiresias", recorder=rec)
    assert _ends(res) == {"A": 13, "B": 5}
    assert [(s.job_id, s.start, s.end) for s in sorted(rec.segments, key=lambda s: s.start)] == [
        ("A", 0, 2), ("B", 2, 5), ("A", 5, 13)]
    assert pol.demotions == 2 and res.passes == 6


def test_artifact_discipline_demotes_late_by_its_rounding(mk):
    """The artifact computes the next demotion at every event as ``(limit - executed) // GPUs + now``.
    A (4 GPUs, limit 10 GPU-s): at t = 0, 10 // 4 + 0 = 2; B's arrival at t = 1 is an event, so the
    jump becomes (10 - 1) // 4 + 1 = 3 (the jump at 2 is no longer the artifact's next event: our
    timer at 2 is ignored); at 3, 3 x 4 = 12 >= 10: demoted, B starts. A really crosses 10 GPU-s at
    t = 2.5, where our 2D-LAS demotes it and starts B."""
    c = mk.cluster(1, 4)
    jobs = [mk.job("A", 4, 10), mk.job("B", 4, 1, arrival=1)]
    ours = simulate(c, jobs, POLICIES.build("2d-las", {"threshold": 10}), semantics="reference")
    art = simulate(c, jobs, POLICIES.build("2d-las", {"threshold": 10, "discipline": "artifact"}),
                   semantics="tiresias")
    assert {r.job_id: r.first_start for r in ours.jobs}["B"] == 2.5
    assert {r.job_id: r.first_start for r in art.jobs}["B"] == 3


def test_victim_claimed_again_in_the_same_pass_keeps_running(mk):
    """Free preemption, one pool of 5 GPUs, K = 2, threshold 10 GPU-s. Y (4 GPUs, 100 s) at 0 is
    demoted at 2.5, X (1 GPU, 100 s) at 1 is demoted at 11 (later, so lower priority in Q2). A and B
    (1 GPU, 5 s) arrive at 20 with no GPU free: A's claim evicts X (lowest priority, 1 GPU), B's
    evicts Y (4 GPUs: 3 left over), and Q2's walk then claims X again for 1 of those 3. X must keep
    running (it was once both started and preempted in one decision: the verifier's PolicyError).
    A and B run 20-25; Y waits (4 > 2 free) and resumes at 25 with 80 s left -> 105; X never stops -> 101."""
    c = mk.cluster(1, 5)
    jobs = [mk.job("Y", 4, 100), mk.job("X", 1, 100, arrival=1), mk.job("A", 1, 5, arrival=20),
            mk.job("B", 1, 5, arrival=20)]
    res = simulate(c, jobs, POLICIES.build("2d-las", {"threshold": 10}), semantics="tiresias")
    assert _ends(res) == {"Y": 105, "X": 101, "A": 25, "B": 25}
    assert {r.job_id: r.preemptions for r in res.jobs} == {"Y": 1, "X": 0, "A": 0, "B": 0}


def test_promoteknob_rescues_a_starving_job(mk):
    """One GPU, K = 2, threshold 10 GPU-s. A (19 s) runs 0-10 and is demoted; short jobs S_k (2 s,
    arriving at 2k + 1, k = 1..20) keep Q1 busy back to back from 10 to 50 (S_k runs
    [10 + 2(k-1), 10 + 2k]).
    Without the knob A waits until 50 and ends at 50 + 9 = 59.
    With PROMOTEKNOB = 1: A has executed t_J = 10 s and waits from 10; at 20 its waiting time reaches
    1 x 10 and it returns to Q1 (a timer at exactly 20), behind S6..S9 that entered Q1 before it
    (20-28), ahead of S10 (t = 21); it runs 28-37 with its clocks reset (9 GPU-s < 10: no demotion)."""
    c = mk.cluster(1, 1)
    jobs = [mk.job("A", 1, 19)] + [mk.job(f"S{k}", 1, 2, arrival=2 * k + 1) for k in range(1, 21)]
    off = simulate(c, jobs, POLICIES.build("2d-las", {"threshold": 10}), semantics="tiresias")
    assert _ends(off)["A"] == 59
    pol = POLICIES.build("2d-las", {"threshold": 10, "knob": 1})
    on = simulate(c, jobs, pol, semantics="tiresias")
    assert _ends(on)["A"] == 37 and pol.promotions == 1
    assert {k: v for k, v in _ends(on).items() if k in ("S9", "S10")} == {"S9": 28, "S10": 39}


def _busy_instance(c, job):
    """Fillers hold 3, 3 and 2 GPUs of machines 0-2: free GPUs are 1, 1, 2, 4."""
    ms = c.machines
    fill = [Job(f"f{i}", Resources(g), iterations=100) for i, g in enumerate((3, 3, 2))]
    current = Allocation({f.id: JobAllocation(f.id, ExecutionPlan(dp=f.requested.gpus),
                                              {ms[i]: f.requested}) for i, f in enumerate(fill)})
    return Instance(c, (*fill, job), current=current)


def test_skewed_job_consolidated_and_unskewed_job_spread(mk):
    """Free GPUs per machine 1, 1, 2, 4. VGG16 (skew 0.74 > PACKLIMIT 0.4) takes the whole free
    machine (4 on m3); ResNet-50 (skew 0.09) is spread over the most fragmented machines first
    (1 + 1 + 2 on m0-m2), keeping m3 whole for jobs that need it. Snapshot form: the policy's own pass."""
    c = mk.cluster(4, 4)
    ms = c.machines
    for model, want in (("vgg16", {ms[3]: 4}), ("resnet50", {ms[0]: 1, ms[1]: 1, ms[2]: 2})):
        x = Job("x", Resources(4), iterations=10, model=model, global_batch=128, duration=10.0)
        inst = _busy_instance(c, x)
        alloc = POLICIES["2d-las"].decide(inst)
        assert alloc.assignments["x"].gpu_counts == want, model
        assert validate_allocation(inst, alloc) == []


def test_skewed_job_waits_for_consolidation_then_spreads(mk):
    """Two machines x 2 GPUs. a (1 GPU, 100 s), b (2 GPUs, 10 s), c (1 GPU, 100 s) at 0 fill them
    (b spread over both). X (VGG16, 2 GPUs, 20 s) arrives at 5; at 10 b ends: 1 GPU free on each
    machine, no consolidated placement: X waits pack_wait_s = 30 s, then is spread at 40 (ends 60).
    By default (pack_wait_s = 0: the paper "attempts to consolidate", its artifact never waits) it is
    spread at once at 10."""
    c = mk.cluster(2, 2)
    jobs = [mk.job("a", 1, 100), mk.job("b", 2, 10), mk.job("c", 1, 100),
            mk.job("X", 2, 20, arrival=5, model="vgg16", global_batch=64)]
    for extra, start in (({"pack_wait_s": 30.0}, 40), ({}, 10)):
        rec = Recorder(keep_segments=True)
        res = simulate(c, jobs, POLICIES.build("2d-las", {**extra, "threshold": 1e6}),
                       semantics="reference", recorder=rec)
        x = next(r for r in res.jobs if r.job_id == "X")
        assert (x.first_start, x.end) == (start, start + 20)
        seg = next(s for s in rec.segments if s.job_id == "X")
        assert len(seg.placement) == 2  # spread over both machines


def test_gittins_index_hand_values():
    """Samples {2, 12}. G(a) = #{a < s <= hi} / (sum_{s > a} min(s, hi) - a #{s > a}).
    hi = 100: G(0) = 2 / 14; G(3) = 1 / (12 - 3); G(12) = 0 (no mass above). hi = 5: G(0) = 1 / (2 + 5)."""
    from schedlab.heuristics.tiresias.gittins import ServiceDistribution

    d = ServiceDistribution([12, 2])
    assert list(d.index([0.0, 3.0, 12.0], 100.0)) == pytest.approx([2 / 14, 1 / 9, 0.0])
    assert d.index(0.0, 5.0) == pytest.approx(1 / 7)


def test_artifact_gittins_table_hand_value():
    """Samples 10, 20, 30, 40, Δ = 15, attained a = 9 (looked up by the first sample above a, 10):
    idx = 0, a + Δ = 24 -> idx_Δ = 2 (30); p = 2 / 4 = 0.5; e = (10 + 20 + 15 x 2) // 4 = 15 (whole
    durations, integer division); rank = 0.5 x 10^6 / 15 = 33333.3333. Beyond the largest sample: 0."""
    from schedlab.heuristics.tiresias.gittins import ArtifactGittins

    t = ArtifactGittins([40, 10, 30, 20], 15)
    assert t.rank(9) == t.rank(0) == 33333.3333
    assert t.rank(40) == 0.0 and t.rank(41) == 0.0


def test_packlimit_threshold_fit_by_hand():
    """Observations (skew, slowed down by spreading): 0.05 F, 0.09 F, 0.1 T, 0.2 T, 0.3 F, 0.62 T,
    0.77 T. Threshold 0.095 misclassifies only 0.3; 0.25 misclassifies 0.1 and 0.2: 0.095 wins."""
    from schedlab.heuristics.tiresias.placement import PacklimitLearner, fit_threshold

    obs = [(0.05, False), (0.09, False), (0.1, True), (0.2, True), (0.3, False), (0.62, True), (0.77, True)]
    assert fit_threshold(obs, 0.4) == pytest.approx(0.095)
    learner = PacklimitLearner(0.4, every=len(obs))
    for s, y in obs:
        learner.add(s, y)
    assert learner.value == pytest.approx(0.095) and learner.refits == 1


def test_packlimit_learned_from_measured_slowdowns(mk):
    """The learner reads slowdowns from the rate model: here spreading costs 50 % on every model, so
    every spread job is 'sensitive' and PACKLIMIT falls to 0 (consolidate everything)."""
    from schedlab.heuristics.tiresias.placement import PacklimitLearner

    c = mk.cluster(4, 4)

    class View:
        cluster = c

        def estimate(self, job, plan, placement):
            return 1.5 if sum(1 for r in placement.values() if r.gpus) > 1 else 1.0

    learner = PacklimitLearner(0.4, every=2)
    ms = c.machines
    for k, skew in enumerate((0.09, 0.2)):
        j = Job(f"j{k}", Resources(2), iterations=1)
        learner.observe(View(), j, {ms[0]: Resources(1), ms[1]: Resources(1)}, skew)
    assert learner.value == 0.0


def test_knob_on_every_job_finishes(mk):
    """No job waits forever with the knob on (smoke workload, both Tiresias policies)."""
    from schedlab.benchmarks.workloads import get_workload
    from schedlab.topology import preset

    c = preset("tiresias-60")
    w = get_workload("smoke").build(c, seed=3)
    for name in ("2d-las", "2d-gittins"):
        res = simulate(c, w.jobs, POLICIES.build(name, {"knob": 1, "threshold": 600}))
        assert res.unfinished == () and len(res.jobs) == len(w.jobs)


def test_placement_changes_speed_under_realistic_semantics(mk):
    """Realistic semantics time a placement with the perf model's network overhead: two machines x 4
    GPUs, a 1-GPU job holds one GPU of m0. A 4-GPU VGG16 job (skew 0.74) is consolidated on m1 (one
    machine); with PACKLIMIT = 1 (never consolidate) it is spread 3 + 1 over both machines (rack tier)
    and runs slower by exactly the rate model's ratio of the two placements."""
    from schedlab.benchmarks.workloads import generators as gen
    from schedlab.benchmarks.workloads.convert import trace_to_jobs

    c = mk.cluster(2, 4)
    tr = gen.synthetic_trace("t", [0.0, 1.0], [1, 4], [10_000.0, 3_600.0], models=["resnet50", "vgg16"])
    jobs = trace_to_jobs(tr, c)
    rec = {}
    for limit in (0.4, 1.0):
        r = Recorder(keep_segments=True)
        res = simulate(c, jobs, POLICIES.build("2d-las", {"packlimit": limit, "threshold": 1e9}), recorder=r)
        x = next(j for j in res.jobs if j.job_id == "t-1")
        seg = next(s for s in r.segments if s.job_id == "t-1")
        rec[limit] = (x.end - x.first_start, len(seg.placement), seg.iter_time)
    (t_con, n_con, it_con), (t_spr, n_spr, it_spr) = rec[0.4], rec[1.0]
    assert (n_con, n_spr) == (1, 2)
    assert t_spr > t_con and t_spr / t_con == pytest.approx(it_spr / it_con)


def test_snapshot_decisions_on_the_tiresias_ilp_input():
    """The twins' input (``formulations.GENERATORS["tiresias-placement"]``): the snapshot decision of
    each policy scored by that ILP is a verified allocation that places every job it can."""
    from schedlab.formulations import GENERATORS
    from schedlab.topology import preset

    c = preset("tiresias-60")
    for name, spec in POLICIES.items():
        if "tiresias-placement" not in spec.twins:
            continue
        for seed in range(3):
            inst = GENERATORS["tiresias-placement"](c, 3, seed=seed, gpus=8).base
            alloc = spec.decide(inst)
            assert validate_allocation(inst, alloc) == [], (name, seed)
            assert set(alloc.assignments) == {j.id for j in inst.jobs}, (name, seed)  # room for all three


def test_gittins_waiting_job_preempts_a_same_queue_job_of_index_zero(mk, tmp_path):
    """Issue 22, defect 1. One GPU, K = 2, threshold 100 GPU-s, samples {2, 12}. R (1 GPU, 50 s) runs
    from 0; at t = 13 it has a = 13 GPU-s (still Q1) and no sample lies above 13: G(13) = 0, the lowest
    priority in Q1. J (1 GPU, 1 s) arrives at 13 with G(0) = 2 / 14 > 0 and takes R's GPU at once
    (§3.2: a queue is served by index at every event): J runs 13-14, R resumes at 14 with 37 s left ->
    51. Before the fix index-0 running jobs were never preempted: J waited until 50 and ended at 51."""
    c = mk.cluster(1, 1)
    dist = tmp_path / "service.csv"
    dist.write_text("duration\n2\n12\n")
    jobs = [mk.job("R", 1, 50), mk.job("J", 1, 1, arrival=13)]
    res = simulate(c, jobs, POLICIES.build("2d-gittins", {"threshold": 100, "distribution": str(dist)}),
                   semantics="tiresias")
    assert _ends(res) == {"R": 51, "J": 14}
    assert {r.job_id: r.preemptions for r in res.jobs} == {"R": 1, "J": 0}


def test_gittins_margin_is_opt_in(mk, tmp_path):
    """The paper re-sorts by index with no margin (default 0). Samples {2, 12}, threshold 100, one GPU.
    A (1 GPU, 6 s) runs from 0; at t = 3 it has G(3) = 1 / (12 - 3) = 1/9; B (1 GPU, 1 s) arrives with
    G(0) = 2/14 = 1/7 > 1/9: preempts A (B 3-4, A ends 7). With ``preempt_margin`` 0.5 B needs
    1/7 > 1.5 x 1/9 = 1/6, false: B waits (A ends 6, B 6-7)."""
    c = mk.cluster(1, 1)
    dist = tmp_path / "service.csv"
    dist.write_text("duration\n2\n12\n")
    jobs = [mk.job("A", 1, 6), mk.job("B", 1, 1, arrival=3)]
    base = {"threshold": 100, "distribution": str(dist)}
    assert POLICIES["2d-gittins"].validate()["preempt_margin"] == 0
    assert _ends(simulate(c, jobs, POLICIES.build("2d-gittins", base), semantics="tiresias")) == {"A": 7, "B": 4}
    held = simulate(c, jobs, POLICIES.build("2d-gittins", {**base, "preempt_margin": 0.5}), semantics="tiresias")
    assert _ends(held) == {"A": 6, "B": 7}
