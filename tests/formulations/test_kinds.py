"""The kind registry (issue 20): one Kind object per instance kind, methods with declared roles, typed
generator options, a typed ``Unsupported`` error, and the signed gap."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedlab.formulations import (
    GENERATORS,
    KINDS,
    METHODS,
    JointObjective,
    Method,
    Role,
    SolveParams,
    TierMode,
)
from schedlab.formulations.base import solve_built
from schedlab.formulations.joint import JointFormulation
from schedlab.formulations.result import signed_gap
from schedlab.scheduling.registry import Decision
from schedlab.topology.errors import SpecError, Unsupported
from schedlab.topology.presets import load_cluster


def test_every_kind_is_one_consistent_object():
    assert set(KINDS) == {"joint", "tiresias-placement", "tier-placement", "offline", "horizon-wait", "offline-ti",
                          "offline-resizable"}
    for kind in KINDS.values():
        load_cluster(kind.default_cluster)
        assert kind.objective_name and kind.gap_note and kind.decisions
        assert all(m.kind == kind.name for m in kind.methods)
        exact = kind.exact_method()
        assert exact is not None and exact.role is Role.EXACT
        inst = kind.generate(load_cluster(kind.default_cluster), 2, seed=0)
        assert inst.KIND == kind.name and kind.sense(inst) in ("min", "max")
        assert kind.load(inst.to_dict()).to_dict() == inst.to_dict()


def test_roles_are_declared_not_read_from_names():
    assert {m.name for m in METHODS.values() if m.role is Role.RESTRICTION} == {
        "pop-joint", "pop-tier-ilp", "pop-tiresias-ilp"}
    assert {m.name for m in METHODS.values() if m.role is Role.RELAXATION} == {"offline-preemptive", "offline-fluid"}
    assert {m.name for m in METHODS.values() if m.role is Role.EXACT} == {
        "joint", "joint-machines", "joint-2stage", "joint-rigid", "joint-plan", "tiresias-ilp", "tier-ilp",
        "offline-nonpreemptive", "horizon-wait", "offline-preemptive-ti", "offline-resizable-ti"}
    # joint-rigid is exact over its own, narrower decision set only
    assert METHODS["joint-rigid"].decisions is not None and METHODS["joint"].decisions is None
    assert not Role.RESTRICTION.bounds and not Role.HEURISTIC.bounds and Role.EXACT.bounds and Role.RELAXATION.bounds
    # the joint model may resize jobs; the offline bound may not
    assert Decision.GPUS in KINDS["joint"].decisions and Decision.GPUS not in KINDS["offline"].decisions


def test_generator_options_are_typed():
    """Defect 2: ``objective: max-min`` used to pass through as a string and run the weighted sum."""
    cl = load_cluster("rubick-64")
    assert GENERATORS["joint"](cl, 3, seed=0, objective="max-min").objective is JointObjective.MAXMIN
    assert GENERATORS["tier-placement"](load_cluster("dally-2"), 3, seed=0, mode="min-overhead").mode \
        is TierMode.MIN_OVERHEAD
    with pytest.raises(SpecError) as ei:
        GENERATORS["joint"](cl, 3, seed=0, objective="maxmin")
    assert ei.value.field == "generator.objective" and "'max-min'" in str(ei.value)
    with pytest.raises(SpecError) as ei:
        GENERATORS["tier-placement"](cl, 3, seed=0, running_frac=0.5)
    assert ei.value.field == "generator.running_frac" and "takes no option" in str(ei.value)
    with pytest.raises(SpecError, match="params.node_limit"):
        METHODS["joint"].parse_options({"node_limit": 0})


def test_a_registry_refuses_taken_names_and_unknown_kinds():
    again = Method("joint", "joint", METHODS["joint"].solve)
    with pytest.raises(SpecError, match="registered twice"):
        KINDS.merged(methods=[again])
    with pytest.raises(SpecError, match="unknown instance kind 'nope'"):
        KINDS.merged(methods=[Method("m", "nope", again.solve)])
    merged = KINDS.merged(methods=[Method("mine", "joint", again.solve, Role.RESTRICTION)])
    assert merged.methods["mine"].role is Role.RESTRICTION and "mine" not in KINDS.methods  # nothing patched


def test_a_backend_that_cannot_run_a_model_raises_unsupported():
    """Not matched on error text: a typed error (the offline model needs intervals: CP-SAT only)."""
    inst = GENERATORS["offline"](load_cluster("tiresias-60"), 3, seed=0)
    with pytest.raises(Unsupported, match="lacks intervals"):
        METHODS["offline-nonpreemptive"].solve(inst, "highs", SolveParams(time_limit_s=5, threads=1))


def test_the_driver_never_changes_the_callers_model():
    inst = GENERATORS["joint"](load_cluster("rubick-64"), 3, seed=0)
    form = JointFormulation()
    built = form.build(inst)
    built.model.hints = {0: 1.0}
    first = solve_built(form, inst, built, "cpsat", SolveParams(time_limit_s=10, threads=1))
    warm = solve_built(form, inst, built, "cpsat",
                       SolveParams(time_limit_s=10, threads=1, warm_start=first.allocation))
    assert built.model.hints == {0: 1.0} and warm.objective == pytest.approx(first.objective)


@pytest.mark.parametrize("value,bound,sense,gap", [
    (9.0, 10.0, "max", 0.1),           # worse than an upper bound: positive
    (11.0, 10.0, "max", -1 / 11),      # better than the bound: negative (a violated bound)
    (12.0, 10.0, "min", 2 / 12),       # worse than a lower bound: positive
    (-21.0, 31.0, "max", 52 / 31),     # a negative objective (reconfiguration penalty): above 100 %
    (5.0, 0.0, "min", 1.0),            # a bound of 0: a worse value reads 100 %
    (10.0, 10.0 + 1e-12, "max", 0.0),  # rounding
])
def test_signed_gap_hand_values(value, bound, sense, gap):
    assert signed_gap(value, bound, sense) == pytest.approx(gap)


def test_signed_gap_needs_both_values_and_a_sense():
    assert signed_gap(None, 1.0, "max") is None and signed_gap(1.0, None, "max") is None
    assert signed_gap(1.0, 2.0, "sideways") is None


finite = st.floats(-1e6, 1e6, allow_nan=False)


@given(finite, finite)
def test_signed_gap_invariants(value, bound):
    """Worse = positive in both senses; a minimisation is the maximisation of the negated values; the
    scale keeps it within [-2, 2] (2 only when the signs are opposite)."""
    up, down = signed_gap(value, bound, "max"), signed_gap(-value, -bound, "min")
    assert up == pytest.approx(down, abs=1e-12)
    assert -2.0 <= up <= 2.0
    if value < bound - 1e-6:
        assert up > 0
    if value > bound + 1e-6:
        assert up < 0
    if abs(up) > 1.0 + 1e-9:
        assert value * bound < 0


def test_plugins_register_kinds_and_methods_without_patching():
    from schedlab.benchmarks.harness.plugins import PluginKinds

    reg = PluginKinds()
    extra = Method("pack-it", "tier-placement", METHODS["tier-ilp"].solve, Role.RESTRICTION)
    reg.register(extra, "test")
    reg.register(extra, "test")  # idempotent
    assert reg.merged().methods["pack-it"].role is Role.RESTRICTION and "pack-it" not in KINDS.methods
    with pytest.raises(SpecError, match="is a built-in method"):
        reg.register(Method("joint", "joint", extra.solve), "test")
    with pytest.raises(SpecError, match="is a built-in kind"):
        reg.register(KINDS["joint"], "test")
    with pytest.raises(SpecError, match="expected a formulations Method or Kind"):
        reg.register(object(), "test")
