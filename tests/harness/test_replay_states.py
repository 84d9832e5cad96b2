"""Issue 21.3/21.7: gap cases on decision states sampled from a replay (harness.states) beside generated
instances, and the instance cache every method of a sweep shares."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.harness.cases import GapCase, case_from_spec, case_spec
from schedlab.benchmarks.harness.gap import case_instance, run_gap
from schedlab.benchmarks.harness.states import check_state
from schedlab.topology.errors import SpecError

STATE = {"workload": "smoke-mt", "load": 4.0, "policy": "fifo", "k": 2, "min_queued": 3, "index": 1}


def test_a_state_reference_is_checked_before_anything_runs():
    with pytest.raises(SpecError, match="not 'horizon-wait'") as e:
        check_state("horizon-wait", STATE)
    assert e.value.field == "state"
    with pytest.raises(SpecError) as e:
        check_state("joint", {**STATE, "index": 2})
    assert e.value.field == "state.index"
    with pytest.raises(SpecError) as e:
        check_state("joint", {**STATE, "wokload": "x"})
    assert e.value.field == "state.wokload"
    with pytest.raises(SpecError) as e:
        GapCase("joint", "rubick-64", 1, "fifo", state={**STATE, "policy": "nope"}).check()
    assert e.value.field == "state.policy"


def test_a_state_case_round_trips_and_has_its_own_instance_id():
    c = GapCase("joint", "rubick-64", 1, "fifo", state=STATE)
    assert case_from_spec(case_spec(c)) == c and "state=smoke-mtx4@fifo#1" in c.label
    gen = GapCase("joint", "rubick-64", 1, "fifo")
    assert c.instance_id() != gen.instance_id() and c.key() != gen.key()


def test_policies_and_twins_answer_the_same_sampled_state(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_INSTANCE_CACHE", str(tmp_path))
    fifo = run_gap(GapCase("joint", "rubick-64", 1, "fifo", state=STATE)).flat()
    rigid = run_gap(GapCase("joint", "rubick-64", 1, "joint-rigid", "highs", state=STATE, time_limit_s=30)).flat()
    assert not fifo["instance_cached"] and rigid["instance_cached"]  # built once, read back by the twin
    assert fifo["instance_source"] == rigid["instance_source"] == "replay"
    assert fifo["origin"] == rigid["origin"] and fifo["origin"].startswith("smoke-mt under fifo (seed 0)")
    assert fifo["jobs"] == rigid["jobs"] >= 3 and fifo["status"] == "ok" and rigid["status"] == "optimal"
    assert fifo["decision_set"] == rigid["decision_set"] == "joint-rigid"
    assert fifo["objective"] <= rigid["bound"] + 1e-6  # the rigid optimum bounds FIFO on the state it met


def test_the_cache_returns_the_same_instance_and_can_be_turned_off(tmp_path, monkeypatch):
    from schedlab.benchmarks.registry import all_kinds, all_policies

    monkeypatch.setenv("SCHEDLAB_INSTANCE_CACHE", str(tmp_path))
    case = GapCase("tier-placement", "dally-2", 4, "fifo", seed=1)
    a, pa, hit_a = case_instance(case)
    b, pb, hit_b = case_instance(case)
    assert (hit_a, hit_b) == (False, True) and pa == pb == {"instance_source": "generated"}
    kind = all_kinds()["tier-placement"]
    alloc = all_policies()["fifo"].build({}, seed=0).decide(a.base, seed=0)
    assert alloc == all_policies()["fifo"].build({}, seed=0).decide(b.base, seed=0)
    assert kind.score(a, alloc) == kind.score(b, alloc)
    monkeypatch.setenv("SCHEDLAB_INSTANCE_CACHE", "off")
    assert case_instance(case)[2] is False and case_instance(case)[2] is False


def test_the_gap_table_says_where_each_instance_came_from():
    from schedlab.benchmarks.harness.analysis import frame
    from schedlab.benchmarks.harness.report.tables import gap_table

    def rec(label, inst, extra, objective):
        return {"case_type": "gap", "suite": "s", "label": label, "kind": "joint", "cluster": "rubick-64", "jobs": 12,
                "seed": 0, "method": "fifo", "backend": None, "role": "policy", "instance": inst, "status": "ok",
                "objective": objective, "bound": None, "sense": "max", "verified": True, "params": {},
                "finished_at": "2026-01-01", "build_s": 0.0, "solve_s": 0.0,
                "extra": {"decision_set": "joint-rigid", **extra}}

    origin = "smoke-mt under fifo (seed 0), decision 2/29 at t=582.471 s"
    gt = gap_table(frame([rec("a", "gen", {"instance_source": "generated"}, 5.0),
                          rec("b", "st", {"instance_source": "replay", "origin": origin}, 6.0)]))
    assert sorted(gt["instances"]) == ["generated", origin] and len(gt) == 2


def test_on_a_replay_state_the_twin_has_the_holding_rule_and_exact_joint_is_a_check(tmp_path, monkeypatch):
    """A replay state carries the simulator's holding rule (``hold_preempted``): the twin never starts a job on
    a preempted job's resources. exact-joint (``preemption=hold``, the state's reconfiguration penalty 0)
    solves that same model: a check, at the twin's optimum, with no re-solve; Rubick's decision keeps the
    rule (the simulator would reject one that did not). With its default penalty (0.05 here against the
    state's 0) exact-joint solved another model: a result, saying why."""
    from schedlab.formulations.builtin_kinds import JOINT

    monkeypatch.setenv("SCHEDLAB_INSTANCE_CACHE", str(tmp_path))
    inst, _, _ = case_instance(GapCase("joint", "rubick-64", 1, "fifo", state=STATE))
    assert inst.hold_preempted and len(inst.base.current) > 0
    twin = run_gap(GapCase("joint", "rubick-64", 1, "joint-2stage", "highs", state=STATE, time_limit_s=30)).flat()
    ex = run_gap(GapCase("joint", "rubick-64", 1, "exact-joint", state=STATE, time_limit_s=30,
                         policy_params={"reconfig_penalty": 0.0, "threads": 1})).flat()
    assert twin["status"] == "optimal" and ex["status"] == "ok" and ex["check"] is True
    assert ex["objective"] == pytest.approx(twin["objective"], rel=1e-6, abs=1e-9)
    other = run_gap(GapCase("joint", "rubick-64", 1, "exact-joint", state=STATE, time_limit_s=30,
                            policy_params={"threads": 1})).flat()
    assert other["check"] is False and "reconfiguration penalty" in " ".join(other["notes"])
    rub = run_gap(GapCase("joint", "rubick-64", 1, "rubick", state=STATE)).flat()
    assert rub["status"] == "ok" and rub["objective"] <= twin["bound"] + 1e-6
    assert JOINT.rules is not None
