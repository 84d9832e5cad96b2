"""The perf-model calibration is one replay parameter: the simulator's rates and the policy see the same
one, the default leaves records and store keys as they were, and an unknown name is refused at the edge."""

from __future__ import annotations

import json

import pytest

from schedlab.benchmarks.harness.replay import ReplayCase, replay_policy, run_replay
from schedlab.benchmarks.registry import all_policies
from schedlab.benchmarks.simulator import Simulator
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.topology.errors import SpecError

TINY = WorkloadSource(workload="smoke-mt")  # 24 zoo-model jobs: every one timed by the perf model


def _policy_pm(policy):
    """The perf model the policy built for itself (Rubick's curve book, Synergy's and Sia's own)."""
    return policy._book.pm if policy.name == "rubick" else policy._pm


@pytest.mark.parametrize("name", ["rubick", "synergy", "sia"])
@pytest.mark.parametrize("calibration", ["flat", "fitted"])
def test_policy_and_simulator_share_the_calibration(name, calibration):
    w, cluster = TINY.build()
    pol = all_policies().build(name, None, seed=0, source="<test>")
    sim = Simulator(cluster, w.jobs, pol, calibration=calibration, **w.simulator_args())
    res = sim.run()
    assert res.rate_sources == {"perfmodel": len(w.jobs)}
    sim_pm = sim.rates.perfmodel().pm
    assert sim_pm.calibration == calibration
    assert _policy_pm(pol).calibration == sim_pm.calibration
    assert sim.view.calibration == calibration


@pytest.mark.parametrize("name", ["rubick", "sia"])
def test_results_differ_only_through_the_calibration(name):
    w, cluster = TINY.build()
    got = {c: replay_policy(w, cluster, name, None, seed=0, calibration=c)[1] for c in ("flat", "fitted")}
    plain = replay_policy(w, cluster, name, None, seed=0)[1]  # no calibration given: the default
    assert got["flat"]["avg_jct"] != pytest.approx(got["fitted"]["avg_jct"])
    assert got["fitted"]["calibration"] == "fitted" and "calibration" not in got["flat"]
    def same(m):  # NaN-safe: as the records store them, less the wall time
        return json.dumps({k: v for k, v in m.items() if k != "wall_s"}, sort_keys=True, default=str)

    assert same(plain) == same(got["flat"])


def test_case_key_unchanged_for_the_default():
    a = ReplayCase(TINY, "rubick")
    b = ReplayCase(TINY, "rubick", calibration="flat")
    c = ReplayCase(TINY, "rubick", calibration="fitted")
    assert "calibration" not in a.spec() and a.key() == b.key() != c.key()
    assert ReplayCase.from_spec(c.spec()) == c and ReplayCase.from_spec(a.spec()) == a
    assert run_replay(c).metrics["calibration"] == "fitted"


def test_unknown_calibration_names_the_known_ones(cli):
    with pytest.raises(SpecError, match="known: flat, fitted"):
        ReplayCase(TINY, "rubick", calibration="nope")
    code, _, err = cli("simulate", "--workload", "smoke-mt", "--policy", "rubick", "--calibration", "nope")
    assert code == 2 and "unknown calibration 'nope'" in err and "fitted" in err


def test_simulate_cli_calibration(cli, tmp_path):
    out = {}
    for c in ("flat", "fitted"):
        code, text, _ = cli("simulate", "--workload", "smoke-mt", "--policy", "sia", "--calibration", c,
                            "--format", "json", "--out", str(tmp_path / c), "-q")
        assert code == 0
        out[c] = json.loads(text)["policies"]["sia"]
    assert out["fitted"]["calibration"] == "fitted" and out["flat"]["avg_jct"] != out["fitted"]["avg_jct"]
    assert json.loads((tmp_path / "fitted" / "run.json").read_text())["calibration"] == "fitted"
    assert "calibration" not in json.loads((tmp_path / "flat" / "run.json").read_text())
