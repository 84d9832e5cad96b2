"""Each term of Rubick's iteration-time model against hand-computed values (toy model of conftest:
P = 1e9, h = 1000, s = 100, l = 10, b = 8, t1 = 0.2 s per sample, 2 bytes per element)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedlab.perfmodel.iteration import PlanArrays, components, overlap
from schedlab.perfmodel.params import PerfParams
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode

P1 = PerfParams(k_bwd=2.0, k_sync=1.0, k_opt=0.001, k_opt_off=0.01, k_off=1.0, k_swap=1.0, k_const=0.01)


def comp(spec, plan, *, bw_dp=100.0, bw_tp=100.0, pcie=32.0, cpus=1, params=P1):
    a = PlanArrays.from_plans([plan], bw_dp, bw_tp, pcie, cpus)
    return {k: float(v[0]) for k, v in components(spec, params, a).items()}


def test_overlap_limits():
    assert overlap(np.array(3.0), np.array(4.0), 1.0) == pytest.approx(7.0)
    assert overlap(np.array(3.0), np.array(4.0), 2.0) == pytest.approx(5.0)
    assert overlap(np.array(3.0), np.array(4.0), 1000.0) == pytest.approx(4.0, rel=1e-3)
    assert overlap(np.array(0.0), np.array(0.0), 5.0) == 0.0
    assert overlap(np.array(2.5), np.array(0.0), 50.0) == pytest.approx(2.5)
    # no overflow for large times and exponents
    assert overlap(np.array(1e6), np.array(2e6), 1000.0) == pytest.approx(2e6)


@given(st.floats(0, 100), st.floats(0, 100), st.floats(1, 200))
def test_overlap_between_max_and_sum(x, y, k):
    v = float(overlap(np.array(x), np.array(y), k))
    assert max(x, y) - 1e-9 <= v <= x + y + 1e-9


def test_single_gpu_plain(toy):
    c = comp(toy, ExecutionPlan(), bw_dp=math.inf, bw_tp=math.inf)
    # T_fwd = 0.2 * 8 = 1.6; T_bwd = 3.2; no comm; T_opt = 0.001 * 1000 = 1.0
    assert c["fwd"] == pytest.approx(1.6)
    assert c["bwd"] == pytest.approx(3.2)
    assert c["dp"] == c["tp"] == c["pp"] == 0.0
    assert c["iter"] == pytest.approx(1.6 + 3.2 + 1.0 + 0.01)


def test_data_parallel_two_gpus(toy):
    c = comp(toy, ExecutionPlan(dp=2))
    # T_fwd = 0.8, T_bwd = 1.6, V_dp = 1e9 * 2 * 1/2 = 1e9 elements = 2e9 bytes -> 0.02 s at 100 GB/s
    assert c["fwd"] == pytest.approx(0.8)
    assert c["dp"] == pytest.approx(0.02)
    assert c["cc"] == pytest.approx(0.8 + 1.6 + 0.02)  # k_sync = 1: no overlap
    assert c["iter"] == pytest.approx(0.8 + 1.62 + 1.0 + 0.01)


def test_sync_overlap_and_ga(toy):
    p = PerfParams(k_bwd=2.0, k_sync=100.0, k_opt=0.0, k_opt_off=0.0, k_off=1.0, k_swap=1.0, k_const=0.0)
    # bw 1 GB/s -> T_dp = 2 s > T_bwd = 1.6 s: near-perfect overlap gives max = 2
    plain = comp(toy, ExecutionPlan(dp=2), bw_dp=1.0, params=p)
    assert plain["cc"] == pytest.approx(0.8 + 2.0, rel=1e-6)
    # GA a=2: per-step fwd 0.4, bwd 0.8: T_cc = 2*0.4 + 1*0.8 + max(0.8, 2) = 3.6
    ga = comp(toy, ExecutionPlan(dp=2, ga_steps=2), bw_dp=1.0, params=p)
    assert ga["fwd"] == pytest.approx(0.4)
    assert ga["cc"] == pytest.approx(3.6, rel=1e-6)


def test_gradient_checkpointing_adds_a_forward(toy):
    c = comp(toy, ExecutionPlan(dp=2, gc=True))
    assert c["bwd"] == pytest.approx(2 * 0.8 + 0.8)


def test_tensor_parallel_volume(toy):
    c = comp(toy, ExecutionPlan(tp=2), bw_tp=100.0)
    # V_tp = 8 (t-1) b s h l / (d t) = 8*1*8*100*1000*10/2 = 3.2e7 elements = 6.4e7 bytes -> 6.4e-4 s
    assert c["tp"] == pytest.approx(6.4e-4)
    assert c["fwd"] == pytest.approx(0.8)
    # T_opt = k_opt P' / (t p) = 0.5
    assert c["opt"] == pytest.approx(0.5)


def test_pipeline_forward_and_volume(toy):
    c = comp(toy, ExecutionPlan(pp=2, micro_batches=4), bw_dp=1.0)
    # T_fwd = t1 (b/m) / p (m + p - 1) = 0.2 * 2 / 2 * 5 = 1.0
    assert c["fwd"] == pytest.approx(1.0)
    # V_pp = 2 p b s h / (d t) = 2*2*8*100*1000 = 3.2e6 elements = 6.4e6 bytes at 1 GB/s
    assert c["pp"] == pytest.approx(6.4e-3)
    assert c["opt"] == pytest.approx(0.5)


def test_zero_dp_optimizer(toy):
    c = comp(toy, ExecutionPlan(dp=4, zero=ZeroMode.DP))
    assert c["opt"] == pytest.approx(0.001 * 1000 / 4)
    assert c["oo"] == pytest.approx(c["opt"])
    assert c["off"] == 0.0


def test_zero_offload_terms(toy):
    c = comp(toy, ExecutionPlan(dp=2, zero=ZeroMode.OFFLOAD), cpus=16, pcie=32.0)
    # c per GPU = 8: T_opt = 0.01 * 1000 / (2 * 8) = 0.625; T_off = 4 * 1e9 / (2 * 32e9) = 0.0625
    assert c["opt"] == pytest.approx(0.625)
    assert c["off"] == pytest.approx(0.0625)
    # k_off = k_swap = 1: sums
    assert c["oo"] == pytest.approx(0.02 + 0.0625 + 0.625 + 0.0625)
    assert c["iter"] == pytest.approx(c["cc"] + c["oo"] + 0.01)


def test_k_swap_only_with_offload(toy):
    big = PerfParams(k_bwd=2.0, k_sync=1.0, k_opt=0.001, k_opt_off=0.01, k_off=1.0, k_swap=1.0, k_const=0.0)
    a = comp(toy, ExecutionPlan(dp=2), params=big)
    b = comp(toy, ExecutionPlan(dp=2), params=PerfParams(**{**big.to_dict(), "k_swap": 50.0, "k_off": 50.0}))
    assert a["iter"] == pytest.approx(b["iter"])


def test_vectorised_matches_scalar(toy):
    plans = [ExecutionPlan(dp=2), ExecutionPlan(tp=2), ExecutionPlan(pp=2, micro_batches=2),
             ExecutionPlan(dp=2, zero=ZeroMode.OFFLOAD)]
    a = PlanArrays.from_plans(plans, 10.0, 100.0, 32.0, 8)
    many = components(toy, P1, a)["iter"]
    one = [comp(toy, p, bw_dp=10.0, bw_tp=100.0, cpus=8)["iter"] for p in plans]
    assert np.allclose(many, one)


def test_scalar_fast_path_matches_numpy(toy):
    from schedlab.perfmodel.iteration import iteration_time_scalar
    from schedlab.perfmodel.search import plan_to_row

    plans = [ExecutionPlan(dp=2, ga_steps=2, gc=True), ExecutionPlan(tp=2, pp=2, micro_batches=2),
             ExecutionPlan(dp=4, zero=ZeroMode.DP), ExecutionPlan(dp=2, zero=ZeroMode.OFFLOAD), ExecutionPlan()]
    params = PerfParams(k_bwd=1.7, k_sync=3.0, k_opt=2e-3, k_opt_off=0.02, k_off=2.0, k_swap=5.0, k_const=0.03)
    vec = components(toy, params, PlanArrays.from_plans(plans, 10.0, 100.0, 16.0, 6))["iter"]
    for p, v in zip(plans, vec, strict=True):
        assert iteration_time_scalar(toy, params, plan_to_row(p), 10.0, 100.0, 16.0, 6.0, 8) == pytest.approx(v)


@given(d=st.sampled_from([2, 4, 8]), k=st.integers(2, 8), nmax=st.integers(1, 8), nmin=st.integers(1, 8),
       odd=st.sampled_from([0, 1]), share=st.floats(0.0, 1.0), parity=st.floats(0.0, 5.0),
       zero=st.sampled_from(list(ZeroMode)), caps=st.booleans(), offx=st.sampled_from([None, 0.3, 2.0]))
def test_hierarchical_scalar_twin_matches_numpy(toy, d, k, nmax, nmin, odd, share, parity, zero, caps, offx):
    """The scalar fast path and the numpy path agree on the hierarchical all-reduce, the parity term and
    ``k_offx``, whatever the group shape, k_share, k_parity, ZeRO mode and bandwidth caps."""
    from schedlab.perfmodel.iteration import iteration_time_scalar
    from schedlab.perfmodel.search import plan_to_row

    nmin = min(nmin, nmax)
    params = PerfParams(k_bwd=1.7, k_sync=2.0, k_opt=2e-3, k_opt_off=0.02, k_off=2.0, k_swap=3.0, k_const=0.03,
                        b_intra=50.0 if caps else None, b_inter=5.0 if caps else None, k_share=share, k_parity=parity,
                        k_offx=offx)
    plan = ExecutionPlan(dp=d, zero=zero)
    a = PlanArrays.from_plans([plan], 10.0, 100.0, 16.0, 8 * d, dp_inter=1.0, pp_inter=1.0,
                              dp_shape=(k, nmax, nmin, odd))
    vec = float(components(toy, params, a)["iter"][0])
    one = iteration_time_scalar(toy, params, plan_to_row(plan), 10.0, 100.0, 16.0, 8.0 * d, 8, dp_inter=True,
                                pp_inter=True, dp_shape=(k, nmax, nmin, odd))
    assert one == pytest.approx(vec, rel=1e-12)


def test_hierarchical_terms_by_hand(toy):
    """k = 2 machines, n_max = n_min = 4, k_share 0.5, k_parity 1, inter 10 GB/s, intra 100 GB/s:
    intra phase 2e9 * 2 * 3/4 / 100e9 = 0.03 s; inter 2e9 * 2 * 1/2 / (10e9 * 4^0.5) = 0.1 s; the max.
    With an odd count (``35``-like, odd = 1) the parity volume 2e9 * 2 / 10e9 = 0.4 s joins the inter phase;
    ZeRO-Offload rows never take it, and their offload term uses the one-machine all-reduce (0.035 s for d = 8)."""
    params = PerfParams(**{**P1.to_dict(), "k_share": 0.5, "k_parity": 1.0})
    even = PlanArrays.from_plans([ExecutionPlan(dp=8)], 10.0, 100.0, 32.0, 8, dp_inter=1.0, dp_shape=(2, 4, 4, 0))
    odd = PlanArrays.from_plans([ExecutionPlan(dp=8)], 10.0, 100.0, 32.0, 8, dp_inter=1.0, dp_shape=(2, 5, 3, 1))
    assert float(components(toy, params, even)["dp"][0]) == pytest.approx(0.1)
    # odd: intra 2e9 * 2 * 4/5 / 100e9 = 0.032; inter 2e9 * 2 * 1/2 / (10e9 * sqrt(3)) + 0.4
    assert float(components(toy, params, odd)["dp"][0]) == pytest.approx(0.2 / math.sqrt(3) + 0.4)
    off = ExecutionPlan(dp=8, zero=ZeroMode.OFFLOAD)
    c = components(toy, params, PlanArrays.from_plans([off], 10.0, 100.0, 32.0, 64, dp_inter=1.0,
                                                       dp_shape=(2, 5, 3, 1)))
    assert float(c["dp"][0]) == pytest.approx(0.2 / math.sqrt(3))  # no parity term with ZeRO-Offload
    assert float(c["dp1"][0]) == pytest.approx(2e9 * 2 * 7 / 8 / 100e9)
    flat = PlanArrays.from_plans([ExecutionPlan(dp=8)], 10.0, 100.0, 32.0, 8)  # no counts: the flat formula
    assert float(components(toy, params, flat)["dp"][0]) == pytest.approx(2e9 * 2 * 7 / 8 / 10e9)


def test_offload_inter_machine_factor_by_hand(toy):
    """``k_offx`` scales the inter-machine phase of ZeRO-Offload rows only. k = 2 machines of 4 GPUs
    (``44``), k_share 0.5, inter 10 GB/s, intra 100 GB/s: the DP-family inter phase is
    2e9 * 2 * 1/2 / (10e9 * 4^0.5) = 0.1 s (the intra phase 0.03 s). With k_offx = 0.2 a ZeRO-Offload row's
    inter phase is 0.02 s, so its T_dp is the intra phase, 0.03 s; with k_offx = 3, 0.3 s. The DP-family row
    keeps 0.1 s, the offload term's one-machine all-reduce (0.035 s) is unchanged, and without counts (the
    flat formula) k_offx does nothing."""
    from schedlab.perfmodel.iteration import iteration_time_scalar
    from schedlab.perfmodel.search import plan_to_row

    off, dp = ExecutionPlan(dp=8, zero=ZeroMode.OFFLOAD), ExecutionPlan(dp=8)
    for kx, want in ((0.2, 0.03), (3.0, 0.3), (None, 0.1)):
        params = PerfParams(**{**P1.to_dict(), "k_share": 0.5, "k_offx": kx})
        a = PlanArrays.from_plans([off, dp], 10.0, 100.0, 32.0, 64, dp_inter=1.0, dp_shape=(2, 4, 4, 0))
        c = components(toy, params, a)
        assert float(c["dp"][0]) == pytest.approx(want)
        assert float(c["dp"][1]) == pytest.approx(0.1)
        assert float(c["dp1"][0]) == pytest.approx(2e9 * 2 * 7 / 8 / 100e9)
        one = iteration_time_scalar(toy, params, plan_to_row(off), 10.0, 100.0, 32.0, 64.0, 8, dp_inter=True,
                                    pp_inter=True, dp_shape=(2, 4, 4, 0))
        assert one == pytest.approx(float(c["iter"][0]))
        flat = PlanArrays.from_plans([off], 10.0, 100.0, 32.0, 64)
        assert float(components(toy, params, flat)["dp"][0]) == pytest.approx(2e9 * 2 * 7 / 8 / 10e9)
