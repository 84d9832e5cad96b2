"""Dally: delay scheduling (Algorithm 1), the auto-tuner (Algorithm 2), the network-sensitive priority
and preemption, each on a scenario whose answer is worked out by hand in the test.

Iteration times follow Dally's model ``compute x (1 + overhead(tier))`` with Table 1 overheads
(ResNet18: machine 0.07, rack 1.16, network 27.49); every job has ``compute_time = 1 s``.
"""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import simulate
from schedlab.benchmarks.simulator.costs import cost_model
from schedlab.heuristics import POLICIES
from schedlab.heuristics.dally import AutoTuner, FixedTimers, Levels, nw_sens
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources, validate_allocation
from schedlab.scheduling.instance import JobProgress
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.loaders import spec_from_dict
from schedlab.topology.presets import preset

H = 3600.0


def cluster(racks: int, machines: int, gpus: int = 8) -> Cluster:
    return Cluster(spec_from_dict({
        "name": f"t{racks}x{machines}x{gpus}",
        "defaults": {"gpus": gpus, "gpu_model": "A100-80GB", "gpu_memory_gb": 80, "cpus": 64,
                     "host_memory_gb": 512, "pcie_gbps": 32},
        "links": {"machine": {"bandwidth_gbit": 900, "latency_us": 1}, "rack": {"bandwidth_gbit": 400, "latency_us": 2},
                  "network": {"bandwidth_gbit": 800, "latency_us": 10}},
        "racks": racks, "machines_per_rack": machines}, source="<test>"))


def djob(jid: str, gpus: int, seconds_at_machine: float, arrival: float = 0.0, model: str = "resnet18") -> Job:
    """A rigid data-parallel job whose run at machine tier (overhead 0.07 for ResNet18) takes
    ``seconds_at_machine``: iterations = seconds / (1 x 1.07)."""
    return Job(jid, Resources(gpus), iterations=seconds_at_machine / 1.07, arrival=arrival, model=model,
               attrs={"compute_time": 1.0, "rates": "tier"})


def xjob() -> Job:
    """X: 4 GPUs, ResNet18, 1000 iterations of 1 s compute, arriving at t=1."""
    return Job("X", Resources(4), iterations=1000.0, arrival=1.0, model="resnet18",
               attrs={"compute_time": 1.0, "rates": "tier"})


def x_between(a_end: float, b_end: float, *, machine_timer: float):
    """One rack of two 8-GPU machines; A (6 GPUs) on m0 until ``a_end``, B (6 GPUs) on m1 until
    ``b_end``, then X (:func:`xjob`) under Dally-manual without preemption. Returns (result, X's record)."""
    pol = POLICIES.build("dally-manual", {"machine_timer": machine_timer, "rack_timer": 0.0, "preemption": False})
    res, r = run(cluster(1, 2), [djob("A", 6, a_end), djob("B", 6, b_end), xjob()], pol)
    return res, r["X"]


def run(c, jobs, policy, costs="free"):
    res = simulate(c, jobs, policy, costs=cost_model(costs))
    assert res.unfinished == ()
    return res, {r.job_id: r for r in res.jobs}


# ------------------------------------------------------------------ Algorithm 1
def test_waiting_for_a_machine_beats_a_rack_offer_when_the_timer_is_long_enough():
    """One rack, two 8-GPU machines. A (6 GPUs, until t=100) fills m0 and B (6 GPUs, until t=1000)
    fills m1; X (4 GPUs, ResNet18, 1000 iterations) arrives at t=1. The offer at t=1 has 2 + 2 free GPUs
    in the rack but no machine with 4: a rack offer. With a machine timer of 1000 s X rejects it
    (starvation 0 < 1000), and at t=100 A's machine frees: X accepts the machine offer.
    JCT = 99 s waiting + 1000 x 1.07 = 1169 s, against 1000 x 2.16 = 2160 s had it taken the rack."""
    _, x = x_between(100.0, 1000.0, machine_timer=1000.0)
    assert x.first_start == pytest.approx(100.0)
    assert x.tiers == "machine"
    assert x.jct == pytest.approx(99.0 + 1070.0)


def test_an_expired_timer_accepts_the_rack_offer_as_a_timer_event():
    """Same cluster; A and B now hold m0 and m1 until t=5000. X's machine timer is 50 s: it rejects the
    rack offer at t=1, and its timer expiry at t=1+50 is a simulator event (no polling): at t=51 X
    accepts the rack offer. JCT = 50 + 1000 x 2.16 = 2210 s (waiting for a machine would have been
    4999 + 1070 = 6069 s). Decision passes: 1 (t=0, two arrivals) + 1 (t=1) + 1 (timer t=51) +
    1 (A and B end together at t=5000) + 1 (X ends) = 5."""
    res, x = x_between(5000.0, 5000.0, machine_timer=50.0)
    assert x.first_start == pytest.approx(51.0)
    assert x.tiers == "rack"
    assert x.jct == pytest.approx(50.0 + 2160.0)
    assert res.passes == 5


def test_a_16_gpu_job_skips_the_machine_level_and_a_32_gpu_job_skips_both():
    """8-GPU machines, 2 racks x 2 machines. Y (16 GPUs) cannot fit one machine: its machine timer is
    0 (Dally §4.3.2), so despite a 10^6 s machine timer it takes a whole rack at t=0. Z (32 GPUs) fits
    no rack either: both timers are 0 and it accepts the network at once (after Y ends)."""
    c = cluster(2, 2)
    pol = POLICIES.build("dally-manual", {"machine_timer": 1e6, "rack_timer": 1e6, "preemption": False})
    _, r = run(c, [djob("Y", 16, 100.0), djob("Z", 32, 100.0, arrival=1.0)], pol)
    assert r["Y"].first_start == 0.0 and r["Y"].tiers == "rack"
    assert r["Z"].tiers == "network" and r["Z"].first_start == pytest.approx(100.0 * 2.16 / 1.07)
    assert pol.levels.capacities == (8, 16)
    timers = FixedTimers([1e6, 1e6], pol.levels.capacities)
    assert timers.timers(4, 0.0) == (1e6, 2e6)    # absolute: rack = machine + rack
    assert timers.timers(16, 0.0) == (0.0, 2e6)   # larger than a machine: machine level skipped
    assert timers.timers(32, 0.0) == (0.0, 0.0)   # larger than a rack: both skipped


def test_levels_follow_the_graph():
    """Levels are read from the networkx tree: dally-4 has machines (8 GPUs) and racks (64 GPUs);
    a single-rack cluster still has both levels, its rack spanning every machine."""
    lv = Levels.from_cluster(preset("dally-4"))
    assert [x.name for x in lv.levels] == ["machine", "rack"] and lv.capacities == (8, 64)
    assert lv.best_level(8) == 0 and lv.best_level(9) == 1 and lv.best_level(65) == lv.top == 2
    one = Levels.from_cluster(preset("rubick-64"))
    assert one.capacities == (8, 64) and len(one[1].members) == 1


def _levels_of_graph(c: Cluster) -> list[tuple]:
    """The levels as the networkx tree gives them (each machine's ancestors up to the root; the tier of
    a level from the edge below it): what ``Levels.from_cluster`` read before it stopped building the graph."""
    import networkx as nx

    g = c.graph
    root = next(n for n, d in g.nodes(data=True) if d.get("kind") == "network")
    parent = dict(nx.bfs_predecessors(g, root))
    chains = {}
    for m in c.machines:
        chain = [m]
        while parent.get(chain[-1]) not in (None, root):
            chain.append(parent[chain[-1]])
        chains[m] = chain
    (depth,) = {len(ch) for ch in chains.values()}
    out = []
    for k in range(depth):
        domain_of = {m: ch[k] for m, ch in chains.items()}
        members: dict[str, list[str]] = {}
        for m in c.machines:
            members.setdefault(domain_of[m], []).append(m)
        first = chains[c.machines[0]]
        tier = "machine" if k == 0 else g.edges[first[k - 1], first[k]]["tier"]
        cap = max(sum(c.machine(m).gpus for m in ms) for ms in members.values())
        out.append((k, tier, g.nodes[first[k]]["kind"], domain_of, {d: tuple(ms) for d, ms in members.items()}, cap))
    return out


@pytest.mark.parametrize("name", ["dally-4", "rubick-64", "philly", "tiresias-60"])
def test_levels_are_the_graph_tree(name):
    """``Levels.from_cluster`` reads the cluster's machines and racks: the same levels (tiers, kinds,
    domains with their machines in order, capacities) as walking its networkx tree."""
    c = preset(name)
    got = [(lv.index, lv.tier.label, lv.kind, dict(lv.domain_of), {d: ms for d, ms in lv.members.items()},
            lv.capacity) for lv in Levels.from_cluster(c).levels]
    want = _levels_of_graph(c)
    assert got == want
    assert [list(x[4]) for x in got] == [list(x[4]) for x in want]   # domains in the same order


# ------------------------------------------------------------------ Algorithm 2
def test_autotuner_timer_after_a_known_list_of_waits():
    """(machine, 4 GPUs) waits 100, 200, 300, 600 s: mean 300, sample variance
    (200^2 + 100^2 + 0 + 300^2) / 3 = 46,666.7, std 216.02 -> timer 300 + 2 x 216.02 = 732.05 s.
    (rack, 4 GPUs) waits 1000, 3000: mean 2000, std sqrt(2 x 1000^2 / 1) = 1414.21 -> 4828.43 s.
    Window 1 h: at t = 3600 + 10 the first machine wait (recorded at t=0) has left: 200, 300, 600 ->
    mean 366.67, sample variance (166.67^2 + 66.67^2 + 233.33^2) / 2 = 43,333.3,
    std 208.17 -> 783.00 s."""
    tuner = AutoTuner(window=H, capacities=(8, 64), cold=(12 * H, 24 * H))
    for t, w in ((0.0, 100.0), (20.0, 200.0), (30.0, 300.0), (40.0, 600.0)):
        tuner.record(0, 4, w, t)
    tuner.record(1, 4, 1000.0, 50.0)
    tuner.record(1, 4, 3000.0, 60.0)
    m, r = tuner.timers(4, 100.0)
    assert m == pytest.approx(300 + 2 * math.sqrt(140000 / 3))
    assert m == pytest.approx(732.05, abs=0.01)
    assert r == pytest.approx(2000 + 2 * math.sqrt(2e6), abs=1e-6)
    assert tuner.timers(4, H + 10.0)[0] == pytest.approx(783.00, abs=0.01)
    assert tuner.waits(0, 4, H + 10.0) == [200.0, 300.0, 600.0]


def test_autotuner_cold_start():
    """Fewer than min_samples (2) waits in a list: that level's timer is the cold-start value
    (Dally-manual's 12 h / 24 h). One wait of 500 s with min_samples = 1: timer 500 (std of one = 0).
    When the window empties a list, the cold start is back."""
    tuner = AutoTuner(window=H, capacities=(8, 64), cold=(12 * H, 24 * H))
    assert tuner.timers(2, 0.0) == (12 * H, 24 * H)
    tuner.record(0, 2, 500.0, 0.0)
    assert tuner.timers(2, 1.0) == (12 * H, 24 * H)
    one = AutoTuner(window=H, capacities=(8, 64), cold=(12 * H, 24 * H), min_samples=1)
    one.record(0, 2, 500.0, 0.0)
    assert one.timers(2, 1.0) == (500.0, 24 * H)
    assert one.timers(2, 2 * H) == (12 * H, 24 * H)
    assert one.timers(16, 1.0) == (0.0, 24 * H)


def test_history_limit_is_a_sliding_window_not_a_cap_on_waits():
    """HISTORY_TIME_LIMIT read as a sliding window over when waits were recorded (chosen), not as the
    pseudo-code's literal test on the wait itself (drop waits longer than the limit). Window 1 h: waits
    of 2 h and 4 h recorded at t = 0 and 10 stay in the list at t = 100 (timer = mean 3 h + 2 x sample
    std sqrt(2) h) although each exceeds 1 h; at t = 3,605 the first has left the window, one wait is
    left (< min_samples 2): the cold start is back."""
    tuner = AutoTuner(window=H, capacities=(8, 64), cold=(12 * H, 24 * H))
    tuner.record(0, 4, 2 * H, 0.0)
    tuner.record(0, 4, 4 * H, 10.0)
    assert tuner.waits(0, 4, 100.0) == [2 * H, 4 * H]
    assert tuner.timers(4, 100.0)[0] == pytest.approx(3 * H + 2 * math.sqrt(2) * H)
    assert tuner.timers(4, H + 5.0)[0] == 12 * H


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=2, max_size=40), st.floats(0, 3))
def test_autotuner_matches_mean_plus_k_sample_std(waits, k):
    tuner = AutoTuner(window=1e9, capacities=(8, 64), cold=(1.0, 2.0), sigmas=k)
    for i, w in enumerate(waits):
        tuner.record(0, 1, w, float(i))
    want = statistics.fmean(waits) + k * statistics.stdev(waits)
    assert tuner.timers(1, len(waits))[0] == pytest.approx(want, rel=1e-6, abs=1e-3)


def test_the_policy_records_waits_at_acceptance():
    """The first scenario under Dally (tuned): X accepts the machine offer at t=100 after 99 s of
    starvation, so the (machine, 4) list holds [99]; A and B (t=0, no wait) left 0 in (machine, 6)."""
    c = cluster(1, 2)
    pol = POLICIES.build("dally", {"machine_timer": 1000.0, "rack_timer": 0.0, "preemption": False})
    run(c, [djob("A", 6, 100.0), djob("B", 6, 1000.0), xjob()], pol)
    assert pol.tuner.waits(0, 4, 100.0) == [pytest.approx(99.0)]
    assert pol.tuner.waits(0, 6, 100.0) == [0.0, 0.0]


# ------------------------------------------------------------------ priority
def test_nw_sens_formula():
    """W = 50/1000 = 0.05, T_norm = 100 s / (1 s x 1000) = 0.1 -> Nw_sens = 0.5; never run -> 1."""
    assert nw_sens(completed=50, total=1000, run_time=100, compute_time=1.0) == pytest.approx(0.5)
    assert nw_sens(completed=0, total=1000, run_time=0, compute_time=1.0) == 1.0
    assert nw_sens(completed=10, total=1000, run_time=10 * 28.49, compute_time=1.0) == pytest.approx(1 / 28.49)


def test_offers_go_in_increasing_nw_sens():
    """Three queued 8-GPU jobs in queue order J3, J2, J1 with known progress (compute 1 s/iteration,
    1000 iterations): J1 did 50 iterations in 100 s of running (Nw 0.5), J2 90 in 100 s (Nw 0.9), J3
    never ran (Nw 1). One free 8-GPU machine goes to J1; two go to J1 and J2; J3 waits. (Preemption
    off: with it, J2 at Nw 0.9 could take the blocker B's machine, B never having run: Nw 1.)"""
    c = cluster(1, 2)
    jobs = tuple(Job(j, Resources(8), iterations=1000.0, model="resnet18", attrs={"compute_time": 1.0})
                 for j in ("J3", "J2", "J1"))
    progress = {"J1": JobProgress(progress=50, executed=100, last_change=10.0),
                "J2": JobProgress(progress=90, executed=100, last_change=10.0)}
    busy = Allocation({"B": JobAllocation("B", ExecutionPlan(dp=8), {"rack0-m1": Resources(8)})})
    blocker = Job("B", Resources(8), iterations=1.0)
    inst = Instance(c, (*jobs, blocker), current=busy, time=20.0, progress=progress)
    off = {"preemption": False}
    assert set(POLICIES["dally"].decide(inst, off).assignments) == {"B", "J1"}
    inst2 = Instance(c, jobs, time=20.0, progress=progress)
    assert set(POLICIES["dally"].decide(inst2, off).assignments) == {"J1", "J2"}


# ------------------------------------------------------------------ preemption
def _preempt_instance(c):
    """2 racks x 1 machine x 8 GPUs. P (ResNet18, 8 GPUs) runs across the racks (4 + 4): after 100 s
    of running it did 100 / 28.49 iterations -> Nw 0.035. H (4 GPUs on m0) and V1..V4 (1 GPU each on
    m1) ran unslowed (Nw 1 and 1/1.07 = 0.93 for H). No GPU is free."""
    m0, m1 = c.machines
    jobs = [Job("P", Resources(8), iterations=1e4, model="resnet18", attrs={"compute_time": 1.0}),
            Job("H", Resources(4), iterations=1e4, model="resnet18", attrs={"compute_time": 1.0})]
    jobs += [Job(f"V{i}", Resources(1), iterations=1e4, model="resnet18", attrs={"compute_time": 1.0})
             for i in range(1, 5)]
    cur = {"P": JobAllocation("P", ExecutionPlan(dp=8), {m0: Resources(4), m1: Resources(4)}),
           "H": JobAllocation("H", ExecutionPlan(dp=4), {m0: Resources(4)})}
    cur.update({f"V{i}": JobAllocation(f"V{i}", ExecutionPlan(dp=1), {m1: Resources(1)}) for i in range(1, 5)})
    prog = {"P": JobProgress(progress=100 / 28.49, executed=100.0, last_change=0.0),
            "H": JobProgress(progress=100 / 1.07, executed=100.0, last_change=0.0)}
    prog.update({f"V{i}": JobProgress(progress=100.0, executed=100.0, last_change=0.0) for i in range(1, 5)})
    return Instance(c, tuple(jobs), current=Allocation(cur), time=100.0, progress=prog)


def test_a_slowed_job_preempts_lower_priority_jobs_for_its_best_tier():
    """P (Nw 0.035) wants one machine (8 GPUs fit one). m0: its own 4 + H's 4; m1: its own 4 + V1..V4.
    Both domains need 4 victim GPUs (H: Nw 0.93, V: Nw 1, all > 0.035 + 0.1); m0 needs one victim,
    m1 four: H is preempted (the snapshot shows H gone, P still holding until the claim is served).
    With preempt_margin 1 nobody has a high enough Nw_sens; with preemption off nothing moves; with a
    600 s lease every job is still inside its lease (they started at t=0, the snapshot is at t=100).
    P is *running*: only with ``upgrade`` (ours; the paper offers resources to queued jobs only) does
    it look for a better tier at all — by default nothing changes."""
    c = cluster(2, 1)
    inst = _preempt_instance(c)
    ours = {"upgrade": True, "preempt_margin": 0.1}
    alloc = POLICIES["dally"].decide(inst, {**ours, "lease": 60.0})      # everyone has run 100 s >= 60 s
    assert set(inst.current.assignments) - set(alloc.assignments) == {"H"}
    assert validate_allocation(inst, alloc) == []
    for params in ({"preempt_margin": 1.0}, {"preemption": False}, {"lease": 600.0}):
        assert dict(POLICIES["dally"].decide(inst, {**ours, **params}).assignments) == dict(inst.current.assignments)
    assert dict(POLICIES["dally"].decide(inst).assignments) == dict(inst.current.assignments)


def test_online_preemption_then_the_claim_is_served():
    """Online, realistic costs (checkpoint 39 s, restore 39 s, move 78 s); 2 racks x 1 machine x 8 GPUs;
    timers 0 (any tier at once), lease 10^4 s. t=0: H (5 GPUs) -> m0 (tie: first machine), Q (4) -> m1
    (m0 has only 3 left). t=1: P (7 GPUs) finds 3 + 4 free GPUs in two racks and takes them (network).
    t=10^4: Z (1 GPU) arrives, H and Q are past their lease; P has Nw 1/28.49 = 0.035 and wants one
    machine: on m0 it needs H's 5 GPUs (its own 3 + 5 >= 7), on m1 Q's 4 (4 + 4): the fewest preempted
    GPUs is Q (Nw 1/1.07 = 0.935 > 0.035 + 0.1); P claims m1. t=10^4+39: Q's checkpoint is done; P
    moves to m1 (7 GPUs) and Q, back in the queue, takes the 3 + 1 GPUs left (network). When P ends,
    m1 frees and Q moves up to it in that pass's offers (offers come before preemption, so H is not
    touched; the passes before it, t=10^4+39 and +78, came too early for Q's Nw to drop below
    0.935 - 0.1), and Z starts on m1 in the same pass. (Move-up, margin 0.1 and the lease are ours:
    all three on.)"""
    c = cluster(2, 1)
    jobs = [djob("H", 5, 5e4), djob("Q", 4, 5e4), djob("P", 7, 2000.0, arrival=1.0), djob("Z", 1, 10.0, arrival=1e4)]
    pol = POLICIES.build("dally-manual", {"machine_timer": 0.0, "rack_timer": 0.0, "lease": 1e4, "upgrade": True,
                                          "preempt_margin": 0.1})
    _, r = run(c, jobs, pol, costs="rubick")
    assert r["P"].first_start == 1.0
    assert r["P"].tiers == "machine|network" and r["P"].reconfigurations == 1
    assert r["Q"].preemptions == 1 and r["Q"].reconfigurations == 1 and r["Q"].tiers == "machine|network"
    assert r["Q"].waiting == pytest.approx(0.0)   # its checkpoint holds GPUs: not queueing
    assert r["H"].preemptions == 0
    assert r["Z"].first_start == pytest.approx(r["P"].end)


def test_a_running_job_moves_up_when_its_best_tier_frees():
    """No preemption needed: H (5 GPUs) -> m0, K (4 GPUs, 100 s) -> m1; P (7 GPUs, timers 0) takes
    3 + 4 across the racks at t=1. At t=100 K ends: m1 has 4 free + P's own 4 >= 7, so P moves there
    (one reconfiguration) and nobody is preempted — with ``upgrade`` (ours). The paper's Dally never
    moves a running job: by default P stays across the racks until it ends."""
    c = cluster(2, 1)
    jobs = [djob("H", 5, 5000.0), djob("K", 4, 100.0), djob("P", 7, 2000.0, arrival=1.0)]
    timers = {"machine_timer": 0.0, "rack_timer": 0.0}
    _, r = run(c, jobs, POLICIES.build("dally-manual", {**timers, "upgrade": True}))
    assert r["P"].tiers == "machine|network" and r["P"].reconfigurations == 1
    assert sum(x.preemptions for x in r.values()) == 0
    _, r = run(c, jobs, POLICIES.build("dally-manual", timers))
    assert r["P"].tiers == "network" and r["P"].reconfigurations == 0


# ------------------------------------------------------------------ snapshot form
def test_snapshot_waiting_since_and_timers():
    """Instance at t=1000: X (4 GPUs, arrived at 0) is offered only a rack (2 + 2 free GPUs).
    Machine timer 2000 s: starvation 1000 < 2000 -> X stays queued. Timer 500 s: expired -> X takes
    the rack. If X was preempted at t=900 (JobProgress.last_change), starvation is 100 < 500 -> queued."""
    c = cluster(1, 2)
    m0, m1 = c.machines
    a, b = Job("A", Resources(6), iterations=10.0), Job("B", Resources(6), iterations=10.0)
    x = Job("X", Resources(4), iterations=10.0, model="resnet18", attrs={"compute_time": 1.0})
    cur = Allocation({"A": JobAllocation("A", ExecutionPlan(dp=6), {m0: Resources(6)}),
                      "B": JobAllocation("B", ExecutionPlan(dp=6), {m1: Resources(6)})})
    inst = Instance(c, (a, b, x), current=cur, time=1000.0)
    spec = POLICIES["dally-manual"]
    assert "X" not in spec.decide(inst, {"machine_timer": 2000.0}).assignments
    placed = spec.decide(inst, {"machine_timer": 500.0}).assignments["X"]
    assert placed.gpu_counts == {m0: 2, m1: 2}
    pre = Instance(c, (a, b, x), current=cur, time=1000.0,
                   progress={"X": JobProgress(progress=1.0, executed=1.0, preemptions=1, last_change=900.0)})
    assert "X" not in spec.decide(pre, {"machine_timer": 500.0}).assignments


# ------------------------------------------------------------------ parameters
@pytest.mark.parametrize(("name", "params", "field"), [
    ("dally", {"machine_timer": -1}, "dally.machine_timer"),
    ("dally", {"history_window": 0}, "dally.history_window"),
    ("dally", {"min_samples": 0}, "dally.min_samples"),
    ("dally", {"preempt_margin": 2}, "dally.preempt_margin"),
    ("dally", {"sigmas": "two"}, "dally.sigmas"),
    ("dally-manual", {"rack_timer": -5}, "dally-manual.rack_timer"),
    ("dally-manual", {"history_window": 10}, "dally-manual.history_window"),
])
def test_bad_parameters_name_the_parameter(name, params, field):
    with pytest.raises(SpecError) as ei:
        POLICIES[name].validate(params)
    assert ei.value.field == field


def test_registration():
    for name in ("dally", "dally-manual"):
        spec = POLICIES[name]
        assert spec.twins == ("tier-placement",) and spec.preemptive and not spec.oracle
    assert POLICIES.build("dally").name == "dally" and POLICIES.build("dally-manual").name == "dally-manual"



# ------------------------------------------------------------------ property
@settings(max_examples=20, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from([2, 4, 8]), st.integers(0, 10_000),
       st.sampled_from(["dally", "dally-manual"]), st.floats(0, 2 * H), st.booleans())
def test_random_workloads_finish_verified_and_deterministic(racks, machines, gpus, seed, name, timer, preempt):
    """Any tree (1-3 racks of 1-3 machines), random rigid jobs (any size up to the cluster), any timers,
    preemption on or off: every decision passes the simulator's verifier, every job finishes, and the
    same inputs give the same records."""
    import random

    rng = random.Random(seed)
    c = cluster(racks, machines, gpus)
    models = ("vgg11", "alexnet", "mobilenetv3", "resnet18", "resnet50", "bert_large")
    sizes = [rng.randint(1, c.total_gpus) if rng.random() < 0.2 else rng.choice([1, 2, gpus]) for _ in range(12)]
    jobs = [Job(f"j{i}", Resources(g), iterations=float(rng.randint(10, 5000)), arrival=float(rng.randint(0, 3000)),
                model=rng.choice(models), global_batch=32 * g,   # 32 per GPU: the DP plan fits GPU memory
                attrs={"compute_time": 1.0, "rates": "tier"}) for i, g in enumerate(sizes)]
    params = {"machine_timer": timer, "rack_timer": timer / 2, "preemption": preempt, "lease": 300.0}
    a = simulate(c, jobs, POLICIES.build(name, params), costs=cost_model("rubick"))
    b = simulate(c, jobs, POLICIES.build(name, params), costs=cost_model("rubick"))
    assert a.unfinished == ()
    assert [(r.job_id, r.first_start, r.end, r.tiers) for r in a.jobs] == [(r.job_id, r.first_start, r.end, r.tiers)
                                                                            for r in b.jobs]
