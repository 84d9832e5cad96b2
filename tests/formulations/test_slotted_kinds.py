"""The time-slotted kinds (horizon-wait, offline-ti, offline-resizable) are registry kinds: generated,
saved and loaded through :data:`KINDS`, with declared roles and the true orders between their optima."""

from __future__ import annotations

import json

import pytest

from schedlab.formulations import (
    KINDS,
    METHODS,
    Role,
    SolutionStatus,
    SolveParams,
    load_instance,
    save_instance,
)
from schedlab.scheduling.registry import Decision
from schedlab.topology.errors import SpecError
from schedlab.topology.presets import load_cluster

P = SolveParams(threads=1, time_limit_s=60, seed=0)


@pytest.mark.parametrize("kind", ["horizon-wait", "offline-ti", "offline-resizable"])
def test_registry_round_trip_with_the_kind_tag(kind, tmp_path):
    k = KINDS[kind]
    inst = k.generate(load_cluster(k.default_cluster), 3, seed=1)
    p = tmp_path / "i.json"
    save_instance(inst, p)
    assert json.loads(p.read_text())["kind"] == kind
    assert load_instance(p).to_dict() == inst.to_dict()
    assert not k.snapshot  # answered by their own scorers, not by a snapshot decide()
    # horizon-wait is in the suites (policies replayed over the horizon); the offline kinds are not
    assert (k.plan is not None) == (kind == "horizon-wait")


def test_a_method_name_is_not_a_kind_tag(tmp_path):
    """The instance files of issue 21's branch carried the method name as the tag: refused, naming the file."""
    k = KINDS["offline-ti"]
    p = tmp_path / "old.json"
    p.write_text(json.dumps({"kind": "offline-preemptive-ti",
                             **k.generate(load_cluster("rubick-64"), 2, seed=0).to_dict()}))
    with pytest.raises(SpecError, match="unknown instance kind 'offline-preemptive-ti'") as e:
        load_instance(p)
    assert str(p) in str(e.value)


def test_generated_offline_data_are_slotted():
    """arrivals rounded down, durations up, to the slot (an odd slot, so the rounding is exercised)."""
    inst = KINDS["offline-ti"].generate(load_cluster("rubick-64"), 6, seed=3, slot=450.0, mean_gap=700)
    assert inst.slot == 450.0
    for j in inst.base.jobs:
        assert j.arrival % 450 == 0 and j.duration % 450 == 0 and j.duration >= 600
    with pytest.raises(SpecError, match="generator.mode"):
        KINDS["offline-ti"].generate(load_cluster("rubick-64"), 2, mode="pooled")


def test_roles_and_decision_sets():
    assert METHODS["offline-fluid"].role is Role.RELAXATION and METHODS["offline-fluid"].kind == "offline-resizable"
    for kind, exact in (("horizon-wait", "horizon-wait"), ("offline-ti", "offline-preemptive-ti"),
                        ("offline-resizable", "offline-resizable-ti")):
        assert KINDS[kind].exact_method().name == exact
    hw = KINDS["horizon-wait"]
    assert Decision.WAITING in hw.decisions and Decision.GPUS not in hw.decisions
    assert hw.twin_for(frozenset({Decision.WAITING, Decision.PLACEMENT})).name == "horizon-wait"
    assert Decision.GPUS in KINDS["offline-resizable"].decisions and Decision.GPUS not in KINDS["offline-ti"].decisions


@pytest.mark.parametrize("seed", [0, 1])
def test_fluid_le_resizable_le_rigid_preemptive_on_one_trace(seed):
    """The generators share the trace, and W_j = s_j(g_j) d_j: every rigid preemptive schedule is a
    resizable one (resizable <= rigid), and the fluid relaxation bounds the resizable optimum."""
    cl = load_cluster("tiresias-60")
    ti = KINDS["offline-ti"].generate(cl, 5, seed=seed, mean_gap=60)
    rz = KINDS["offline-resizable"].generate(cl, 5, seed=seed, mean_gap=60)
    assert [j.id for j in rz.jobs] == [j.id for j in ti.base.jobs]
    r_ti = METHODS["offline-preemptive-ti"].solve(ti, "cpsat", P)
    r_rz = METHODS["offline-resizable-ti"].solve(rz, "cpsat", P)
    assert r_ti.verified and r_rz.verified
    assert r_ti.solution_status is SolutionStatus.OPTIMAL and r_rz.solution_status is SolutionStatus.OPTIMAL
    fluid = KINDS["offline-resizable"].relaxation(rz, None)
    assert fluid == pytest.approx(METHODS["offline-fluid"].solve(rz, "none", P).bounds.dual)
    assert fluid <= r_rz.objective + 1e-6 <= r_ti.objective + 2e-6
    assert KINDS["offline-ti"].objective(ti, r_ti.solution) == pytest.approx(r_ti.objective)
