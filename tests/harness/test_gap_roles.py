"""Gaps that check themselves (issue 20, defect 3): signed gaps against the best bound of the methods
whose role bounds the optimum (exact, relaxation), never a restriction's; a verified objective better
than a proven bound is a ``bound-violated`` record listed first in the report, never a gap. Defect 5:
the offline bound refuses a policy that may resize jobs."""

from __future__ import annotations

import math

import pytest

from schedlab.benchmarks.harness import BoundCase
from schedlab.benchmarks.harness.analysis import frame
from schedlab.benchmarks.harness.report import render_report
from schedlab.benchmarks.harness.store import Store


def _rec(method, role, objective, bound=None, *, backend="highs", sense="max", verified=True, label=None):
    return {"suite": "s", "label": label or method, "case_type": "gap", "role": role, "method": method,
            "backend": backend, "instance": "I", "kind": "joint", "cluster": "c", "jobs": 4, "gpus": 8,
            "status": "ok", "objective": objective, "bound": bound, "sense": sense, "proven": bound is not None,
            "verified": verified, "build_s": 0.0, "solve_s": 0.0, "finished_at": "t", "time_limit_s": 10.0,
            "message": ""}


def test_a_restrictions_bound_never_becomes_the_best_bound():
    """POP's merged solution and any model over a subset of the decisions: its optimum (8) is lower than
    the true one (10); taken as the bound (old rule: min over every bound) FIFO's 7 would read 12.5 %."""
    df = frame([_rec("joint", "exact", 10.0, 10.0), _rec("pop-joint", "restriction", 8.0, 8.0),
                _rec("fifo", "policy", 7.0, backend=None)]).set_index("method")
    assert (df["best_bound"] == 10.0).all() and df["bound_optimal"].all()
    assert df.loc["fifo", "gap"] == pytest.approx(0.3) and df.loc["pop-joint", "gap"] == pytest.approx(0.2)


def test_gaps_are_signed_on_a_minimisation_and_a_negative_objective():
    df = frame([_rec("m", "exact", 31.0, 31.0, label="a"), _rec("rubick", "policy", -21.0, backend=None, label="b")])
    assert df.set_index("label").loc["b", "gap"] == pytest.approx(52 / 31)  # worse: positive, above 100 %
    low = frame([_rec("m", "exact", 10.0, 10.0, sense="min", label="a"),
                 _rec("p", "policy", 12.0, backend=None, sense="min", label="b")])
    assert low.set_index("label").loc["b", "gap"] == pytest.approx(2 / 12)


def test_a_value_better_than_a_proven_bound_is_an_error_not_a_gap():
    df = frame([_rec("joint", "exact", 10.0, 10.0), _rec("fifo", "policy", 11.0, backend=None),
                _rec("bad", "policy", 12.0, backend=None, verified=False)]).set_index("method")
    assert df.loc["fifo", "status"] == "bound-violated" and df["gap"].isna().all()
    msg = df.loc["fifo", "bound_violation"]
    assert "fifo reached 11" in msg and "bound 10 of joint@highs" in msg
    assert df.loc["bad", "status"] == "ok"  # an unverified value is no evidence against the bound


ROLES_SUITE = """
name: roles
gap:
  - {kind: joint, cluster: rubick-64, sizes: [4], seeds: [0], policies: [fifo], formulations: [liar],
     backends: [highs], time_limit_s: 20}
  - {kind: joint, cluster: rubick-64, sizes: [4], seeds: [1], policies: [fifo], formulations: [joint, restricted],
     backends: [highs], time_limit_s: 20}
"""


def test_a_too_tight_proven_bound_is_caught_end_to_end(tmp_path, plugin_module, cli, monkeypatch, request):
    """``liar`` (an exact plugin method) claims 1 % of its objective as a proven bound: FIFO and the liar's
    own solution beat it; both are ``bound-violated`` records, ``bench`` exits 1 and the report lists them
    first. The same claim from a restriction (``restricted``) is ignored: the best bound stays the exact
    model's."""
    from schedlab.benchmarks.harness import plugins

    # `--plugin` registers the module for this process (code version, environment): undone after the test
    monkeypatch.setenv(plugins.ENV, "")  # recorded, so the value `--plugin` sets is undone
    monkeypatch.setattr(plugins, "PLUGIN_MODULES", set(plugins.PLUGIN_MODULES))
    request.addfinalizer(plugins.load_module.cache_clear)  # a later load registers the module again
    (tmp_path / "roles.yaml").write_text(ROLES_SUITE)
    r = cli("--plugin", plugin_module, "bench", tmp_path / "roles.yaml", "--out", tmp_path / "out")
    assert r.code == 1 and "beating a proven bound" in r.out and "bound-violated" in r.out, r.out + r.err
    out = tmp_path / "out"
    with Store(out, create=False) as s:
        df = frame(s.records()).set_index("label")
    lied = df[df["seed"] == 0]
    assert (lied["status"] == "bound-violated").all() and lied["gap"].isna().all()
    honest = df[df["seed"] == 1].set_index("method")
    assert honest.loc["restricted", "role"] == "restriction"
    assert honest.loc["restricted", "bound"] < honest.loc["joint", "bound"]  # would have been the "optimum"
    assert (honest["best_bound"] == honest.loc["joint", "bound"]).all()
    assert honest.loc["restricted", "gap"] == pytest.approx(0.0, abs=1e-6) and not math.isnan(honest.loc["fifo", "gap"])
    md = render_report(out).markdown.read_text()
    assert md.index("Bound violations (2)") < md.index("## Runs") and "better than the proven upper bound" in md
    # issue 26.1: each gap table is headed by its kind's objective, decision set and gap note
    head = md[md.index("### joint"):]
    assert "Objective: normalised throughput" in head and "Decision set of the exact model: admission, gpus" in head
    assert "Note: joint: reconfiguration is charged" in head


def test_the_summary_never_averages_one_method_across_kinds():
    """Issue 26.2: FIFO on joint and on tier-placement are two rows."""
    from schedlab.benchmarks.harness.report.tables import summary

    recs = [_rec("fifo", "policy", 7.0, backend=None, label="a"), _rec("joint", "exact", 10.0, 10.0, label="b"),
            {**_rec("fifo", "policy", 3.0, backend=None, label="c"), "kind": "tier-placement", "instance": "J"},
            {**_rec("tier-ilp", "exact", 4.0, 4.0, label="d"), "kind": "tier-placement", "instance": "J"}]
    s = summary(frame(recs)).set_index(["kind", "method"])
    assert s.loc[("joint", "fifo"), "mean gap [%]"] == pytest.approx(30.0)
    assert s.loc[("tier-placement", "fifo"), "mean gap [%]"] == pytest.approx(25.0)


def test_the_offline_bound_refuses_a_resizing_policy():
    from schedlab.benchmarks.harness.suites.builtin import bound_cases, bound_refused
    from schedlab.benchmarks.harness.validate import check_bound
    from schedlab.topology.errors import SpecError

    with pytest.raises(SpecError, match="decides gpus, plan.*rigid jobs") as ei:
        check_bound(BoundCase("rubick", "tiresias-60", 4))
    assert ei.value.field == "policy"
    check_bound(BoundCase("rubick-n", "tiresias-60", 4))  # no resizing: the bound is valid for it
    assert "rubick" in bound_refused() and "exact-joint" in bound_refused()
    assert not {c.policy for c in bound_cases()} & set(bound_refused())


def test_a_policy_decision_below_a_guaranteed_slo_is_invalid_not_a_gap():
    # synergy gives guaranteed syn-t5 1 GPU / 4 CPUs (its minRes 1/3 met, so validate_allocation accepts it)
    # at 10.4 samples/s, below its SLO of 12: no point of the joint problem (the models admit no such
    # option), so the record is invalid with the [slo] violation instead of a value that beats the bound
    from schedlab.benchmarks.harness import GapCase
    from schedlab.benchmarks.harness.gap import _policy
    from schedlab.formulations import KINDS
    from schedlab.formulations.joint_options import generate_joint
    from schedlab.topology.cluster import Cluster
    from schedlab.topology.loaders import spec_from_dict

    cl = Cluster(spec_from_dict({
        "name": "one", "defaults": {"gpus": 8, "gpu_model": "A800-80GB", "gpu_memory_gb": 80, "cpus": 32,
                                    "host_memory_gb": 512},
        "links": {"machine": {"bandwidth_gbps": 100}, "rack": {"bandwidth_gbps": 10}}, "racks": 1,
        "machines_per_rack": 1}))
    inst = generate_joint(cl, 1, seed=3, source="synthetic", guaranteed_frac=0.3)
    out = _policy(KINDS["joint"], inst, GapCase("joint", "rubick-64", 1, "synergy", seed=3))
    assert out["status"] == "invalid" and out["objective"] is None
    assert len(out["violations"]) == 1 and out["violations"][0].startswith("[slo] guaranteed job 'j0000'")
    rubick = _policy(KINDS["joint"], inst, GapCase("joint", "rubick-64", 1, "rubick", seed=3))
    assert rubick["status"] == "ok" and rubick["objective"] >= 1.0
