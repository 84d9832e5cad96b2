"""FreeIndex (incremental free-GPU structure) against brute force; rate models by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator.rates import ReferenceRates, TierRates
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Job, Resources
from schedlab.scheduling.policy import FreeIndex
from schedlab.topology import preset

PHILLY = preset("philly")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(PHILLY.machines) - 1), st.integers(0, 8)), max_size=60),
       st.integers(1, 8))
def test_free_index_matches_brute_force(updates, g):
    free = {m: PHILLY.machine(m).gpus for m in PHILLY.machines}
    idx = FreeIndex(PHILLY, free)
    for i, k in updates:
        m = PHILLY.machines[i]
        k = min(k, PHILLY.machine(m).gpus)
        free[m] = k
        idx._set(m, k)
    assert idx.total == sum(free.values())
    assert idx.largest_machine_block() == max(free.values())
    racks = {}
    for m, k in free.items():
        racks[PHILLY.rack_of(m)] = racks.get(PHILLY.rack_of(m), 0) + k
    assert idx.largest_rack_block() == max(racks.values())
    best = idx.best_fit(g)
    ok = [k for k in free.values() if k >= g]
    if not ok:
        assert best is None
    else:
        assert free[best] == min(ok)
    assert [free[m] for m in idx.machines_by_free()] == sorted((k for k in free.values() if k), reverse=True)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 512), st.integers(1, 512)), max_size=40))
def test_free_index_queries_between_updates_on_big_machines(steps):
    """Queries interleaved with updates (the largest-block bound is lowered by queries, raised by
    updates) on machines of hundreds of GPUs, as a one-pool cluster has."""
    from schedlab.topology import Cluster, spec_from_dict

    big = Cluster(spec_from_dict({
        "name": "pool", "defaults": {"gpus": 512, "gpu_model": "P100-16GB", "gpu_memory_gb": 16, "cpus": 64,
                     "host_memory_gb": 256, "pcie_gbps": 16},
        "links": {"machine": {"bandwidth_gbps": 40, "latency_us": 1}, "rack": {"bandwidth_gbit": 100, "latency_us": 2},
                  "network": {"bandwidth_gbit": 100, "latency_us": 5}},
        "racks": 1, "machines_per_rack": 3}, source="<test>"))
    free = {m: 512 for m in big.machines}
    idx = FreeIndex(big, free)
    for i, k, g in steps:
        m = big.machines[i]
        free[m] = k
        idx._set(m, k)
        assert idx.largest_machine_block() == max(free.values())
        best = idx.best_fit(g)
        ok = [v for v in free.values() if v >= g]
        assert (best is None) if not ok else (free[best] == min(ok))


def job(model, gpus, **attrs):
    return Job("j", Resources(gpus), iterations=10, model=model, attrs=attrs)


def test_reference_rates_ignore_placement_scale_with_gpus():
    r = ReferenceRates()
    j = job("x", 4, iter_time=2.0)
    assert r.speed(j, ExecutionPlan(dp=4), {"a": Resources(4)}) == (2.0, 0.0)
    assert r.speed(j, ExecutionPlan(dp=4), {"a": Resources(2), "b": Resources(2)}) == (2.0, 0.0)
    assert r.speed(j, ExecutionPlan(dp=2), {"a": Resources(2)}) == (4.0, 0.0)


def test_tier_rates_dally_table():
    pytest.importorskip("schedlab.perfmodel.network")
    c = preset("dally-2")
    r = TierRates(c, max_overhead=math.inf)  # Dally's Table 1 as printed
    j = job("mobilenetv3", 8, compute_time=0.5)
    m0, m1 = c.machines_in("rack0")[:2]
    m2 = c.machines_in("rack1")[0]
    plan = ExecutionPlan(dp=8)
    # Dally Table 1, MobileNetV3: machine 42 %, rack 940 %, network 19592 %
    assert r.speed(j, plan, {m0: Resources(8)})[0] == pytest.approx(0.5 * 1.42)
    t, f = r.speed(j, plan, {m0: Resources(4), m1: Resources(4)})
    assert t == pytest.approx(0.5 * 10.40) and f == pytest.approx(9.40 / 10.40)
    assert r.speed(j, plan, {m0: Resources(4), m2: Resources(4)})[0] == pytest.approx(0.5 * 196.92)
    assert not r.capped
    # the default bound: exposed communication at most 5x compute (Dally §3.1), machine tier untouched
    b = TierRates(c)
    assert b.speed(j, plan, {m0: Resources(8)})[0] == pytest.approx(0.5 * 1.42)
    t, f = b.speed(j, plan, {m0: Resources(4), m1: Resources(4)})
    assert t == pytest.approx(0.5 * 6.0) and f == pytest.approx(5.0 / 6.0)
    assert b.speed(j, plan, {m0: Resources(4), m2: Resources(4)})[0] == pytest.approx(0.5 * 6.0)
    assert dict(b.capped) == {"mobilenetv3@rack": 1, "mobilenetv3@network": 1}
    assert r.speed(job("mobilenetv3", 1, compute_time=0.5), ExecutionPlan(), {m0: Resources(1)}) == (0.5, 0.0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(PHILLY.machines) - 1), st.integers(0, 8), st.booleans()), max_size=80))
def test_largest_rack_block_kept_between_updates(updates):
    """The largest rack block is kept across updates (raised at once, recomputed after it shrank):
    queried after any update, it is the brute-force maximum."""
    free = {m: PHILLY.machine(m).gpus for m in PHILLY.machines}
    idx = FreeIndex(PHILLY, free)
    for i, k, ask in updates:
        m = PHILLY.machines[i]
        free[m] = min(k, PHILLY.machine(m).gpus)
        idx._set(m, free[m])
        if ask:
            racks: dict[str, int] = {}
            for mm, kk in free.items():
                racks[PHILLY.rack_of(mm)] = racks.get(PHILLY.rack_of(mm), 0) + kk
            assert idx.largest_rack_block() == max(racks.values())
