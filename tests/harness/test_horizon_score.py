"""Heuristics' waiting decisions scored against the horizon twin, on the same objective."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.harness.horizon_score import horizon_gap, policy_by_name, simulate_policy
from schedlab.formulations import SolveParams
from schedlab.formulations.horizon import HorizonInstance, RunningJob, generate_horizon, horizon_violations
from schedlab.scheduling import Instance, Job, Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.loaders import spec_from_dict

P = SolveParams(threads=1, time_limit_s=60, seed=0, work_limit=60)


def cluster(machines: int = 2, gpus: int = 2, racks: int = 1) -> Cluster:
    links = {"machine": {"bandwidth_gbps": 100}, "rack": {"bandwidth_gbps": 10}}
    if racks > 1:
        links["network"] = {"bandwidth_gbps": 5}
    return Cluster(spec_from_dict({"name": "h", "defaults": {"gpus": gpus, "gpu_model": "X-80GB", "gpu_memory_gb": 80,
                                                             "cpus": 16, "host_memory_gb": 256},
                                   "links": links, "racks": racks, "machines_per_rack": machines}))


def wait_instance(rack_overhead: float) -> HorizonInstance:
    """m0 frees its busy GPU after 1 slot, m1's stays busy: J (2 GPUs, 10 s) spreads now
    (10·(1 + o_R)) or waits one slot for m0 (11)."""
    cl = cluster()
    m0, m1 = cl.machines
    return HorizonInstance(Instance(cl, (Job("J", Resources(2), duration=10.0),)),
                           {"J": (0.0, rack_overhead, rack_overhead)}, 1.0, 4,
                           (RunningJob("r0", {m0: 1}, 1.0), RunningJob("r1", {m1: 1}, 100.0)))


def test_dally_waits_and_las_spreads_hand_values():
    # o_R = 0.5: waiting (11) is optimal; Dally's delay timer waits one slot, 2D-LAS spreads now (15)
    inst = wait_instance(0.5)
    d = horizon_gap(inst, policy_by_name("dally"), params=P)
    assert d.bounded and d.best == pytest.approx(11.0)
    assert d.score.objective == pytest.approx(11.0) and d.gap == pytest.approx(0.0)
    las = simulate_policy(inst, policy_by_name("2d-las"))
    assert las.plan.start == {"J": 0} and las.objective == pytest.approx(15.0)
    # o_R = 0.05: spreading now (10.5) is optimal; Dally still waits (11): gap 0.5 / 10.5
    d = horizon_gap(wait_instance(0.05), policy_by_name("dally"), params=P)
    assert d.best == pytest.approx(10.5) and d.gap == pytest.approx(0.5 / 10.5)


@pytest.mark.parametrize("policy", ["fifo", "dally", "2d-las"])
def test_generated_policy_never_beats_the_optimum(policy):
    """The twin's optimum is a lower bound for every policy's plan (same decision set, same objective),
    and the replayed plan is feasible for the model."""
    for seed in range(2):
        inst = generate_horizon(cluster(machines=2, gpus=4, racks=2), 6, seed=seed, slot=60.0, slots=6)
        g = horizon_gap(inst, policy_by_name(policy), params=P)
        assert g.bounded and horizon_violations(inst, g.score.plan) == []
        assert g.score.objective >= g.best - 1e-6 and g.gap >= -1e-9


def test_the_harness_scores_waiting_policies_on_horizon_gap_cases(tmp_path, monkeypatch):
    """Issue 21.4/D: a GapCase naming a policy on ``horizon-wait`` replays it over the horizon and records
    the horizon objective in decision set horizon-wait; the exact method's proven optimum bounds it, and
    the analysis turns both into a signed gap (minimised)."""
    from schedlab.benchmarks.harness.analysis import frame
    from schedlab.benchmarks.harness.cases import GapCase
    from schedlab.benchmarks.harness.gap import run_gap
    from schedlab.topology.errors import SpecError

    monkeypatch.setenv("SCHEDLAB_INSTANCE_CACHE", str(tmp_path))
    cases = [GapCase("horizon-wait", "dally-2", 4, m, b, seed=1, time_limit_s=60)
             for m, b in (("fifo", None), ("2d-las", None), ("dally", None), ("horizon-wait", "highs"))]
    for c in cases:
        c.check()
    with pytest.raises(SpecError, match="online"):
        GapCase("offline-ti", "rubick-64", 4, "fifo").check()
    recs = []
    for c in cases:
        r = run_gap(c).flat()
        recs.append({**{k: v for k, v in r.items() if k not in ("decision_set", "twin", "check", "notes")},
                     "extra": {k: r.get(k) for k in ("decision_set", "twin", "check", "objective_name")},
                     "case_type": "gap", "kind": c.kind, "method": c.method, "backend": c.backend, "seed": c.seed,
                     "label": c.label, "instance": c.instance_id(), "suite": "s", "cluster": c.cluster,
                     "finished_at": "2026-01-01", "params": {}})
    df = frame(recs).set_index("method")
    assert (df["decision_set"] == "horizon-wait").all() and df.loc["horizon-wait", "proven"]
    opt = df.loc["horizon-wait", "objective"]
    assert (df["best_bound"] - opt).abs().max() < 1e-6 and df.loc["horizon-wait", "gap"] == 0
    for p in ("fifo", "2d-las", "dally"):
        assert df.loc[p, "status"] == "ok" and df.loc[p, "objective"] >= opt - 1e-6
        assert df.loc[p, "gap"] == pytest.approx((df.loc[p, "objective"] - opt) / df.loc[p, "objective"], abs=1e-9)
