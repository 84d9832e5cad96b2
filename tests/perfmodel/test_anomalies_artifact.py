"""The anomaly rule on hand-made rows, the artifact's model by hand, and online refitting of bandwidths."""

import pytest

from schedlab.perfmodel import PerfModel, PerfParams, parse_plan
from schedlab.perfmodel.anomalies import (
    MIN_SPEEDUP,
    PARITY_FACTOR,
    Measured,
    find_anomalies,
    parity_statistics,
)
from schedlab.perfmodel.artifact import ARTIFACT_MODELS, artifact_iteration_time
from schedlab.perfmodel.fitting import OnlineRefitter


def m(plan, placement, t, is_3d=False):
    return Measured(plan, tuple(int(c) for c in placement), is_3d, t)


def test_no_speedup_marks_both_rows_of_the_pair():
    rows = [m("ga", "1", 0.70), m("ga", "2", 0.70), m("ga", "4", 0.37), m("gc", "1", 1.76), m("gc", "2", 0.93),
            m("gc", "4", 0.90 * 0.93)]
    # ga: 0.70 -> 0.70 (ratio 1.0 >= 0.95): both; gc 2 -> 4: 0.90 < 0.95: a 10 % gain is enough
    found = find_anomalies(rows)
    assert [(a.index, a.rule) for a in found] == [(0, "no-speedup"), (1, "no-speedup")]
    assert found[0].ratio == pytest.approx(1.0) and found[0].threshold == pytest.approx(1 - MIN_SPEEDUP)
    # exactly at the threshold counts as no speed-up; multi-machine and 3D rows are not compared
    edge = [m("zero-dp", "4", 0.40), m("zero-dp", "8", 0.95 * 0.40), m("ga", "11", 0.9), m("ga", "2", 0.5),
            m("141", "4", 0.8, True), m("181", "8", 0.8, True)]
    assert [a.index for a in find_anomalies(edge)] == [0, 1]


def test_parity_rule_needs_a_table_wide_penalty():
    # one-machine references: 4 GPUs 0.10 s, 8 GPUs 0.05 s
    base = [m("ga", "4", 0.10), m("ga", "8", 0.05)]
    even = [m("ga", "22", 0.15), m("ga", "44", 0.07), m("ga", "2222", 0.08)]   # r = 1.5, 1.4, 1.6
    odd = [m("ga", "13", 0.40), m("ga", "35", 0.35), m("ga", "1111", 0.20), m("ga", "17", 0.12)]  # 4, 7, 2, 2.4
    rows = base + even + odd
    m_odd, m_even, ratio = parity_statistics(rows)
    assert m_even == pytest.approx(1.5) and m_odd == pytest.approx((2.4 + 4.0) / 2)
    # M_odd 3.2 > 2 x 1.5: penalty; odd rows above 2 x 1.5 = 3.0 are anomalies (13: 4x, 35: 7x), the
    # others (1111: 2x, 17: 2.4x) are not
    found = find_anomalies(rows)
    assert [(rows[a.index].counts, a.rule) for a in found] == [((1, 3), "placement-parity"),
                                                               ((3, 5), "placement-parity")]
    assert found[0].threshold == pytest.approx(PARITY_FACTOR * 1.5) and found[1].ratio == pytest.approx(7.0)
    # without a table-wide penalty nothing is marked, however slow one odd row is
    mild = base + even + [m("ga", "13", 0.40), m("ga", "35", 0.06), m("ga", "1111", 0.15)]
    assert find_anomalies(mild) == []


def test_artifact_dp_row_by_hand():
    a = ARTIFACT_MODELS["bert"]
    ps = 336297858 / 2 ** 20
    # ZeRO-DP on 4 GPUs of one machine: f = 225 / 3.2; V = 8 ps 3/4 MB over B_nvlink; k_sync overlap with
    # the backward; T_opt = k_opt ps / 4; plus k_swap (added for every plan) and k_const (ms)
    f = 225 / 3.2
    bwd = a.k_bwd * f
    v = 8 * ps * 3 / 4 / a.b_nvlink
    sync = (v ** a.k_sync + bwd ** a.k_sync) ** (1 / a.k_sync)
    expect = f + sync + a.k_opt * ps / 4 + a.k_swap + a.k_const
    got = artifact_iteration_time("bert", parse_plan("zero-dp", 4), [4])
    assert got == pytest.approx(expect / 1000)
    # across machines the same plan uses the constant 2 MB/ms
    v2 = 8 * ps * 3 / 4 / 2.0
    sync2 = (v2 ** a.k_sync + bwd ** a.k_sync) ** (1 / a.k_sync)
    assert artifact_iteration_time("bert", parse_plan("zero-dp", 4), [2, 2]) == pytest.approx(
        (f + sync2 + a.k_opt * ps / 4 + a.k_swap + a.k_const) / 1000)


def test_artifact_offload_and_3d_rows_by_hand():
    a = ARTIFACT_MODELS["gpt2"]
    ps = 1557686400 / 2 ** 20
    # ZeRO-Offload on 2 GPUs, 8 threads per GPU: T_off = 4 ps / 2 / B_pcie, added in both overlaps
    f = 1100 / 2
    bwd = a.k_bwd * f
    v = 8 * ps / 2 / a.b_nvlink
    sync = (v ** a.k_sync + bwd ** a.k_sync) ** (1 / a.k_sync)
    off = 4 * ps / 2 / a.b_pcie
    opt = a.k_opt_off * ps / (2 * 8)
    expect = f + (sync + a.k_off + off) + (opt + a.k_swap + off) + a.k_const
    assert artifact_iteration_time("gpt2", parse_plan("zero-offload", 2), [2]) == pytest.approx(expect / 1000)
    # code 411 (pp 4, tp 1, dp 1) on 1111: d = 4 * 1 // 1 // 4 = 1, mb = 16; f = 1100 * 1 / 4 / 1.15
    t = ARTIFACT_MODELS["gpt2"]
    f3 = 1100 * 1 / 4 / 1.15
    sh = t.hidden * t.seq * t.layers
    pp = (16 * 16 * sh // 1) / 20 / 2 ** 20 * 4
    expect3 = f3 + t.k_bwd * f3 + ps / 4 * t.k_opt + t.k_const + pp  # no DP, no TP traffic
    assert artifact_iteration_time("gpt2", parse_plan("411"), [1, 1, 1, 1]) == pytest.approx(expect3 / 1000)


def test_refit_moves_the_bandwidths_toward_new_measurements(rubick):
    """A model believing the cluster's 400 / 100 GB/s sees runs that reach 30 / 5 GB/s: the online refit
    moves both effective bandwidths to the measurements, and curves change with them."""
    truth = PerfParams(k_bwd=1.8, k_sync=2.0, k_opt=2e-4, k_opt_off=5e-3, k_off=2.5, k_swap=3.0, k_const=0.02,
                       b_intra=30.0, b_inter=5.0)
    believed = PerfParams(**{**truth.to_dict(), "b_intra": None, "b_inter": None})
    real = PerfModel(rubick, {"bert": truth})
    pm = PerfModel(rubick, {"bert": believed})
    before = pm.curve("bert", "gpu").at(16)
    r = OnlineRefitter(pm, "bert", threshold=0.05, starts=3)
    obs = [("ga", [1]), ("ga", [2]), ("ga", [4]), ("ga", [8]), ("gc", [8]), ("zero-dp", [4, 4]),
           ("ga", [8, 8]), ("gc", [2, 2]), ("zero-dp", [1, 1, 1, 1]), ("ga", [4, 4, 4, 4])]
    for name, counts in obs:
        place = {f"rack0-m{i}": k for i, k in enumerate(counts)}
        p = parse_plan(name, sum(counts))
        r.observe(p, place, p.gpus, real.throughput("bert", p, place, p.gpus))
    got = pm.params_for("bert")
    assert r.refits >= 1
    assert got.b_intra == pytest.approx(30.0, rel=0.05) and got.b_inter == pytest.approx(5.0, rel=0.05)
    after = pm.curve("bert", "gpu").at(16)
    assert after < before  # slower links: the 16-GPU (two-machine) point of the curve dropped
