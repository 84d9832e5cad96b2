"""Simulator: hand-computed timelines, costs, verifier integration, records, Ctrl-C, determinism."""

from __future__ import annotations

import csv
import dataclasses

import pytest

from schedlab.benchmarks.simulator import CostModel, Recorder, Simulator, simulate, summarize
from schedlab.benchmarks.simulator.events import EventQueue
from schedlab.benchmarks.simulator.records import JobRecord
from schedlab.heuristics import POLICIES
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Job, JobAllocation, JobClass, Resources
from schedlab.scheduling.policy import ClusterView, Decision, EventKind, Timer
from schedlab.topology import preset
from schedlab.topology.errors import PolicyError, SpecError


def rjob(jid, gpus, iters, arrival=0.0, it=1.0, **kw):
    return Job(jid, Resources(gpus), iterations=iters, arrival=arrival, attrs={"iter_time": it}, **kw)


@pytest.fixture(scope="module")
def t60():
    return preset("tiresias-60")  # 15 machines x 4 GPUs, one rack


def by_id(res):
    return {r.job_id: r for r in res.jobs}


def test_fifo_head_of_line_blocking_hand_timeline(t60):
    jobs = [rjob("a", 4, 100, 0), rjob("b", 60, 50, 10, it=2.0), rjob("c", 1, 10, 20)]
    r = by_id(simulate(t60, jobs, POLICIES.build("fifo"), semantics="reference"))
    # a runs 0-100; b needs the whole cluster: 100-200; c is blocked behind b: 200-210
    assert (r["a"].first_start, r["a"].end) == (0, 100)
    assert (r["b"].first_start, r["b"].end) == (100, 200)
    assert (r["c"].first_start, r["c"].end) == (200, 210)
    assert [r[j].queue_delay for j in "abc"] == [0, 90, 180]
    r2 = by_id(simulate(t60, jobs, POLICIES.build("fifo-backfill"), semantics="reference"))
    assert (r2["c"].first_start, r2["c"].end) == (20, 30)  # best-effort variant backfills
    assert (r2["b"].first_start, r2["b"].end) == (100, 200)


class Scripted:
    """Runs a list of (event-kind or timer tag) -> decision steps."""

    name = "scripted"

    def __init__(self, steps):
        self.steps = list(steps)

    def schedule(self, view: ClusterView) -> Decision:
        if not self.steps:
            return Decision()
        trigger, make = self.steps[0]
        if any(e.kind is trigger or e.tag == trigger for e in view.events):
            self.steps.pop(0)
            return make(view)
        return Decision()


def on(machine, job, gpus, plan=None):
    """``machine`` is "m<i>" (rack0-m<i> of the preset) or a full name."""
    name = f"rack0-{machine}" if machine.startswith("m") else machine
    return JobAllocation(job.id, plan or ExecutionPlan(dp=gpus), {name: Resources(gpus)})


def test_preemption_costs_and_progress_kept(t60):
    j = rjob("j", 1, 100)
    pol = Scripted([
        (EventKind.ARRIVAL, lambda v: Decision(start={"j": on("m0", j, 1)}, timers=(Timer(30.0, "p"),))),
        ("p", lambda v: Decision(preempt=("j",))),
        (EventKind.PREEMPT_DONE, lambda v: Decision(start={"j": on("m1", j, 1)})),
    ])
    rec = Recorder(keep_segments=True)
    res = simulate(t60, [j], pol, costs=CostModel(5.0, 5.0, 7.0), rates=None, semantics="reference", recorder=rec)
    r = res.jobs[0]
    # run 0-30 (30 it), checkpoint 30-35, restore 35-40, run 40-110 (70 it)
    assert r.end == pytest.approx(110.0)
    assert r.preemptions == 1 and r.reconfigurations == 0
    assert r.overhead_seconds == pytest.approx(10.0)
    assert r.run_seconds == pytest.approx(100.0)
    assert r.gpu_seconds == pytest.approx(110.0)
    assert r.waiting == pytest.approx(0.0)
    assert [(s.start, s.end, s.iter_time) for s in rec.segments] == [
        (0.0, 30.0, 1.0), (30.0, 35.0, 0.0), (35.0, 40.0, 0.0), (40.0, pytest.approx(110.0), 1.0)]


def test_reconfiguration_resize_integrates_progress_exactly(t60):
    j = rjob("j", 4, 100, reconfigurable=True)  # 1 s/iteration at 4 GPUs, 2 s at 2 (reference scaling)
    pol = Scripted([
        (EventKind.ARRIVAL, lambda v: Decision(start={"j": on("m0", j, 2)}, timers=(Timer(20.0, "grow"),))),
        ("grow", lambda v: Decision(start={"j": on("m0", j, 4)})),
    ])
    res = simulate(t60, [j], pol, costs=CostModel(0.0, 0.0, 6.0), semantics="reference")
    r = res.jobs[0]
    # 0-20: 10 it on 2 GPUs; 20-26 reconfiguring on 4 GPUs; 26-116: 90 it
    assert r.end == pytest.approx(116.0)
    assert r.reconfigurations == 1
    assert r.gpu_seconds == pytest.approx(2 * 20 + 4 * 6 + 4 * 90)
    assert r.run_seconds == pytest.approx(110.0)


def test_invalid_decisions_name_policy_and_violation(t60):
    j = rjob("j", 1, 10)
    bad_gang = Scripted([(EventKind.ARRIVAL, lambda v: Decision(start={"j": on("m0", j, 2)}))])
    with pytest.raises(PolicyError, match=r"(?s)scripted.*gang"):
        simulate(t60, [j], bad_gang, semantics="reference")
    a, b = rjob("a", 4, 100), rjob("b", 1, 10, arrival=5)
    over = Scripted([(EventKind.ARRIVAL, lambda v: Decision(start={"a": on("m0", a, 4)})),
                     (EventKind.ARRIVAL, lambda v: Decision(start={"b": on("m0", b, 1)}))])
    with pytest.raises(PolicyError, match=r"(?s)capacity.*'rack0-m0'"):  # a holds m0: reserved in the check
        simulate(t60, [a, b], over, semantics="reference")
    unknown = Scripted([(EventKind.ARRIVAL, lambda v: Decision(start={"zz": on("m0", j, 1)}))])
    with pytest.raises(PolicyError, match="unknown job 'zz'"):
        simulate(t60, [j], unknown, semantics="reference")
    past = Scripted([(EventKind.ARRIVAL, lambda v: Decision(timers=(Timer(0.0),)))])
    with pytest.raises(PolicyError, match="not in the future"):
        simulate(t60, [j], past, semantics="reference")
    ghost = Scripted([(EventKind.ARRIVAL, lambda v: Decision(start={"j": on("xx-nowhere", j, 1)}))])
    with pytest.raises(PolicyError, match="unknown machine"):
        simulate(t60, [j], ghost, semantics="reference")


def test_quota_counts_running_peers_of_the_tenant(t60):
    g1 = rjob("g1", 4, 100, tenant="A", job_class=JobClass.GUARANTEED)
    g2 = rjob("g2", 2, 100, arrival=1, tenant="A", job_class=JobClass.GUARANTEED)
    pol = Scripted([(EventKind.ARRIVAL, lambda v: Decision(start={"g1": on("m0", g1, 4)})),
                    (EventKind.ARRIVAL, lambda v: Decision(start={"g2": on("m1", g2, 2)}))])
    with pytest.raises(PolicyError, match="quota"):
        simulate(t60, [g1, g2], pol, quotas={"A": Resources(5)}, semantics="reference")


def test_job_larger_than_cluster_is_rejected(t60):
    with pytest.raises(SpecError, match="requests 61 GPUs"):
        Simulator(t60, [rjob("big", 61, 1)], POLICIES.build("fifo"))


def test_gpu_only_semantics_drops_cpu_requests(t60):
    j = Job("j", Resources(1, 1000), iterations=5, attrs={"iter_time": 1.0})  # 1000 CPUs fit nowhere
    res = simulate(t60, [j], POLICIES.build("fifo"), semantics="reference")
    assert res.jobs[0].end == 5.0
    res = simulate(t60, [j], POLICIES.build("fifo"), semantics="realistic")
    assert res.unfinished == ("j",) and not res.jobs


def test_ctrl_c_leaves_complete_records(t60, tmp_path):
    class Interrupting:
        name = "int"

        def __init__(self):
            self.inner = POLICIES.build("fifo")
            self.passes = 0

        def schedule(self, view):
            self.passes += 1
            if self.passes == 6:
                raise KeyboardInterrupt
            return self.inner.schedule(view)

    jobs = [rjob(f"j{i}", 1, 10, arrival=20.0 * i) for i in range(10)]  # each finishes before the next
    res = simulate(t60, jobs, Interrupting(), semantics="reference", recorder=Recorder(tmp_path))
    assert res.interrupted
    # passes: arrival j0 (1), completion j0 (2), arrival j1 (3), completion j1 (4), arrival j2 (5),
    # completion j2 (6: j2 is recorded when its completion event is handled, before the pass)
    assert [r.job_id for r in res.jobs] == ["j0", "j1", "j2"]
    rows = list(csv.DictReader(open(tmp_path / "jobs.csv")))
    assert [r["job_id"] for r in rows] == ["j0", "j1", "j2"] and float(rows[1]["end"]) == 30.0
    series = list(csv.DictReader(open(tmp_path / "series.csv")))
    assert len(series) == 5


def test_metrics_hand_values():
    def rec(jid, gpus, arr, start, end, ideal):
        return JobRecord(jid, "m", "t", "best-effort", gpus, 1.0, arr, start, end, end - arr, start - arr,
                         start - arr, gpus * (end - start), end - start, 0.0, 0.25 * (end - start), 0, 0, "machine",
                         ideal)
    jobs = [rec("a", 1, 0, 0, 100, 100), rec("b", 2, 0, 50, 200, 150), rec("c", 8, 100, 100, 400, 300),
            rec("d", 16, 100, 200, 500, 5000)]
    m = summarize(jobs, total_gpus=20, small_gpus=8, short_s=1000)
    # JCTs 100, 200, 300, 400
    assert m["avg_jct"] == 250 and m["median_jct"] == 250
    assert m["p95_jct"] == pytest.approx(385) and m["p99_jct"] == pytest.approx(397)
    assert m["avg_queue"] == pytest.approx((0 + 50 + 0 + 100) / 4)
    # waiting (all time queued) differs from the first-start queueing delay once a job is preempted:
    # "b" queued 50 s before its start and 70 s after a preemption -> waits 0, 0, 100, 120
    jobs[1] = dataclasses.replace(jobs[1], waiting=120.0)
    w = summarize(jobs, total_gpus=20, small_gpus=8, short_s=1000)
    assert w["avg_queue"] == m["avg_queue"] and w["avg_waiting"] == pytest.approx(220 / 4)
    assert w["p95_waiting"] == pytest.approx(100 + 0.85 * 20)   # sorted 0, 0, 100, 120: rank 2.85
    assert m["makespan"] == 500
    gs = 100 + 2 * 150 + 8 * 300 + 16 * 300
    assert m["utilization"] == pytest.approx(gs / (20 * 500))
    assert m["comm_overhead"] == pytest.approx(0.25)
    assert m["bins"]["small-short"] == {"jobs": 3, "avg_jct": 200.0}
    assert m["bins"]["large-long"] == {"jobs": 1, "avg_jct": 400.0}
    assert m["bins"]["large-short"]["jobs"] == 0


def test_event_queue_order():
    q = EventQueue([(5.0, "a1"), (5.0, "a2"), (7.0, "a3")])
    q.push(5.0, EventKind.TIMER, None, "t")
    q.push(5.0, EventKind.COMPLETION, "c", 0)
    q.push(1.0, EventKind.RECONF_DONE, "r", 0)
    q.push(5.0, EventKind.COMPLETION, "c2", 0)
    out = []
    while len(q):
        t, k, jid, _ = q.pop()
        out.append((t, k, jid))
    assert out == [(1.0, 2, "r"), (5.0, 0, "c"), (5.0, 0, "c2"), (5.0, 3, "a1"), (5.0, 3, "a2"), (5.0, 4, None),
                   (7.0, 3, "a3")]
    q = EventQueue([(5.0, "a1"), (5.0, "a2"), (7.0, "a3")])
    q.push(5.0, EventKind.TIMER, None, "t")
    q.push(5.0, EventKind.PREEMPT_DONE, "p", 1)
    q.push(5.0, EventKind.COMPLETION, "c", 0)
    assert q.pop_batch() == (5.0, [(0, "c", 0), (1, "p", 1), (3, "a1", None), (3, "a2", None), (4, None, "t")])
    assert q.pop_batch() == (7.0, [(3, "a3", None)]) and len(q) == 0


def test_same_seed_identical_records_different_seed_differs(tmp_path):
    from schedlab.benchmarks.workloads import WORKLOADS

    spec = WORKLOADS["tiresias-480"]
    c = preset(spec.cluster)

    def run(seed):
        w = spec.build(c, seed=seed)
        res = simulate(c, w.jobs, POLICIES.build("fifo"), recorder=Recorder(keep_segments=True))
        return res.jobs, res.recorder.series, res.recorder.segments

    a, b = run(3), run(3)
    assert a == b
    assert run(4)[0] != a[0]


def test_view_is_live_and_read_only(t60):
    seen = {}

    def look(v):
        jv, qv = v.job("j"), v.job("q")
        seen.update(progress=jv.progress, attained=jv.attained_service, executed=jv.executed_time,
                    rate=jv.rate, waiting=qv.waiting_time, status=qv.status.value, queue=[x.id for x in v.queue()],
                    running=[x.id for x in v.running()], free=v.index.total, now=v.now)
        with pytest.raises(AttributeError):
            jv.progress = 0.0
        with pytest.raises(AttributeError):
            jv.extra = 1
        return Decision()

    j, q = rjob("j", 2, 100, it=0.5), rjob("q", 60, 10, arrival=10)
    pol = Scripted([
        (EventKind.ARRIVAL, lambda v: Decision(start={"j": on("m0", j, 2)}, timers=(Timer(30.0, "look"),))),
        ("look", look),
    ])
    simulate(t60, [j, q], pol, semantics="reference", until=40.0)
    # at t = 30: j ran 30 s at 2 it/s on 2 GPUs; q (60 GPUs) has waited since t = 10
    assert seen == {"progress": 60.0, "attained": 60.0, "executed": 30.0, "rate": 2.0, "waiting": 20.0,
                    "status": "queued", "queue": ["q"], "running": ["j"], "free": 58, "now": 30.0}


def test_named_cost_models():
    from schedlab.benchmarks.simulator import COSTS, cost_model

    t = cost_model("tiresias")
    assert t.checkpoint_s + t.restore_s == pytest.approx(13724 / 221)  # = 62.1 s per preemption
    r = COSTS["rubick"]
    assert (r.checkpoint_s + r.restore_s, r.reconfigure_s) == (78.0, 78.0)
    with pytest.raises(SpecError, match="unknown cost model"):
        cost_model("nope")
    with pytest.raises(SpecError):
        CostModel(-1.0)
