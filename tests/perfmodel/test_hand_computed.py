"""End-to-end T_iter through the PerfModel facade against values computed by hand, with the bandwidths
taken from the topology (tiny cluster of conftest: 4 GPUs per machine, intra-machine 100 GB/s, rack
uplinks 10 GB/s, PCIe 32 GB/s), plus the curve envelope, minRes bounds and cache keys.

Toy model (conftest): P = 1e9 parameters, h = 1000, s = 100, l = 10, b = 8, forward 0.2 s per sample
on one GPU, 2 bytes per element. Parameters Q below (k_opt in s per 10^6 parameters).
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.perfmodel import PerfModel, PerfParams, parse_plan
from schedlab.perfmodel.curves import envelope
from schedlab.perfmodel.environment import shape_placements
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode

Q = PerfParams(k_bwd=2.0, k_sync=1.0, k_opt=0.001, k_opt_off=0.01, k_off=1.0, k_swap=2.0, k_const=0.01)
M0, M1 = "rack0-m0", "rack0-m1"  # same rack: 10 GB/s between them


@pytest.fixture()
def pm(tiny_cluster, toy):
    p = PerfModel(tiny_cluster)
    p.set_params(toy, Q)
    return p


def test_3d_plan_on_two_machines_uses_each_groups_bandwidth(pm, toy):
    # d = 2, t = 2, p = 2, m = 2 on 4 + 4 GPUs: ranks i_pp*4 + i_dp*2 + i_tp, so each pipeline stage
    # is one machine: DP all-reduce over NVLink (100 GB/s), PP hand-off over the uplink (10 GB/s).
    plan = ExecutionPlan(dp=2, tp=2, pp=2, micro_batches=2)
    c = pm.components(toy, plan, {M0: 4, M1: 4}, 8)
    fwd = 0.2 * (8 / (2 * 2)) / (2 * 2) * (2 + 2 - 1)          # 0.3 s
    bwd = 2 * fwd                                                # 0.6 s
    t_dp = 2 * 1e9 * 2 * (2 - 1) / (2 * 2 * 2) / 100e9          # 0.005 s
    t_tp = 2 * 8 * (2 - 1) * 8 * 100 * 1000 * 10 / (2 * 2) / 100e9  # 3.2e-4 s
    t_pp = 2 * 2 * 2 * 8 * 100 * 1000 / (2 * 2) / 10e9          # 1.6e-4 s
    opt = 0.001 * 1000 / (2 * 2)                                 # 0.25 s
    assert c["fwd"] == pytest.approx(0.3)
    assert c["dp"] == pytest.approx(0.005) and t_dp == pytest.approx(0.005)
    assert c["tp"] == pytest.approx(t_tp) and c["pp"] == pytest.approx(1.6e-4)
    expected = fwd + (bwd + t_dp) + t_tp + t_pp + opt + 0.01
    assert expected == pytest.approx(1.16548)
    assert pm.iteration_time(toy, plan, {M0: 4, M1: 4}, 8) == pytest.approx(1.16548)
    assert pm.throughput(toy, plan, {M0: 4, M1: 4}, 8) == pytest.approx(8 / 1.16548)


def test_3d_plan_whose_dp_groups_cross_machines(pm, toy):
    # flat (default) calibration: d = 4, t = 2 on 4 + 4: DP group {0, 2, 4, 6} spans both machines -> 10 GB/s
    plan = ExecutionPlan(dp=4, tp=2)
    c = pm.components(toy, plan, {M0: 4, M1: 4}, 8)
    assert pm.calibration == "flat"
    assert c["dp"] == pytest.approx(2 * 1e9 * 2 * 3 / (4 * 2) / 10e9)  # 0.15 s
    # T_fwd 0.2, T_bwd 0.4, T_tp 1.6e-4, T_opt 0.5
    assert c["iter"] == pytest.approx(0.2 + 0.4 + 0.15 + 1.6e-4 + 0.5 + 0.01)
    assert pm.iteration_time(toy, plan, {M0: 4, M1: 4}, 8) == pytest.approx(1.26016)


def test_3d_plan_whose_dp_groups_cross_machines_hierarchical(tiny_cluster, toy):
    # fitted (hierarchical) calibration: the DP group {0, 2, 4, 6} holds 2 GPUs on each machine (k = 2,
    # n_max = n_min = 2): hierarchical all-reduce = max(intra phase, inter phase), k_share = 0 (default):
    # intra 2 B * 1e9 * 2 * (2-1)/2 / t / 100 GB/s = 0.01 s; inter 2e9 * 2 * (2-1)/2 / t / 10 GB/s = 0.1 s
    pm = PerfModel(tiny_cluster, {toy: Q}, calibration="fitted")
    plan = ExecutionPlan(dp=4, tp=2)
    c = pm.components(toy, plan, {M0: 4, M1: 4}, 8)
    intra = 2 * 1e9 * 2 * (2 - 1) / 2 / 2 / 100e9
    inter = 2 * 1e9 * 2 * (2 - 1) / 2 / 2 / 10e9
    assert (intra, inter) == (pytest.approx(0.01), pytest.approx(0.1))
    assert c["dp"] == pytest.approx(0.1)
    # the flat all-reduce would be 2 * 1e9 * 2 * 3 / (4 * 2) / 10e9 = 0.15 s (one GPU per machine: the same)
    # T_fwd 0.2, T_bwd 0.4, T_tp 1.6e-4, T_opt 0.5
    assert c["iter"] == pytest.approx(0.2 + 0.4 + 0.1 + 1.6e-4 + 0.5 + 0.01)
    assert pm.iteration_time(toy, plan, {M0: 4, M1: 4}, 8) == pytest.approx(1.21016)


def test_hierarchical_all_reduce_44_against_2222_and_flat_for_one_gpu_per_machine(rubick, toy):
    """8 GPUs as 4 + 4 against 2 + 2 + 2 + 2 and 1 x 8 on rubick-64 (plain DP, 400 / 100 GB/s, no caps,
    k_share 0.5): max(intra phase, inter phase 2 e P (k-1)/k / (B n_min^0.5)); one GPU per machine is the
    flat formula."""
    pm = PerfModel(rubick, calibration="fitted")
    pm.set_params(toy, PerfParams(**{**Q.to_dict(), "k_share": 0.5}))
    plan = ExecutionPlan(dp=8)
    ms = [f"rack0-m{i}" for i in range(8)]
    assert rubick.machines[:8] == tuple(ms) or set(ms) <= set(rubick.machines)
    t44 = pm.components(toy, plan, {ms[0]: 4, ms[1]: 4}, 8)["dp"]
    t2222 = pm.components(toy, plan, dict.fromkeys(ms[:4], 2), 8)["dp"]
    t1x8 = pm.components(toy, plan, dict.fromkeys(ms, 1), 8)["dp"]
    # intra phases 2e9 * 2 * (3/4) / 400e9 = 0.0075 s (44) and 0.005 s (2222): below the inter phases
    assert t44 == pytest.approx(2 * 1e9 * 2 * (1 / 2) / (100e9 * 2.0))            # 0.01 s
    assert t2222 == pytest.approx(2 * 1e9 * 2 * (3 / 4) / (100e9 * math.sqrt(2)))  # 0.02121 s
    assert t1x8 == pytest.approx(2 * 1e9 * 2 * 7 / 8 / 100e9)                     # 0.035 s, the flat formula
    # the same through a counts string (reference machines) and the scalar twin
    assert pm.iteration_time(toy, plan, "44", 8) == pytest.approx(pm.components(toy, plan, "44", 8)["iter"])
    assert pm.throughput(toy, plan, "44", 8) > pm.throughput(toy, plan, "2222", 8) > pm.throughput(toy, plan,
                                                                                                "11111111", 8)


def test_ga_iteration(pm, toy):
    q = PerfParams(**{**Q.to_dict(), "k_sync": 2.0})
    pm.set_params(toy, q)
    # d = 2, a = 4 on one machine: per-step T_fwd = 0.2 * 8 / (2 * 4) = 0.2, T_bwd = 0.4,
    # T_dp = 2 B * 1e9 * 2 * 1/2 / 100 GB/s = 0.02; T_cc = 4 * 0.2 + 3 * 0.4 + sqrt(0.4^2 + 0.02^2)
    t = pm.iteration_time(toy, ExecutionPlan(dp=2, ga_steps=4), {M0: 2}, 2)
    assert t == pytest.approx(0.8 + 1.2 + math.sqrt(0.16 + 0.0004) + 1.0 + 0.01)


def test_gc_iteration(pm, toy):
    # d = 2 with GC: T_fwd 0.8, T_bwd = 2 * 0.8 + 0.8 (recompute) = 2.4, T_dp 0.02, k_sync = 1 (sum)
    t = pm.iteration_time(toy, ExecutionPlan(dp=2, gc=True), {M0: 2}, 2)
    assert t == pytest.approx(0.8 + 2.4 + 0.02 + 1.0 + 0.01)


def test_zero_dp_iteration(pm, toy):
    # d = 4: T_fwd 0.4, T_bwd 0.8, T_dp = 2e9 * 2 * 3/4 / 100e9 = 0.03, T_opt = 0.001 * 1000 / 4
    t = pm.iteration_time(toy, ExecutionPlan(dp=4, zero=ZeroMode.DP), {M0: 4}, 4)
    assert t == pytest.approx(0.4 + 0.8 + 0.03 + 0.25 + 0.01)


def test_zero_offload_iteration_with_cpu_cores(pm, toy):
    plan = ExecutionPlan(dp=2, zero=ZeroMode.OFFLOAD)
    # 12 cores for 2 GPUs = 6 per GPU: T_opt = k_opt_off P' / (d c) = 0.01 * 1000 / (2 * 6);
    # T_off = 4 B * 1e9 / (2 * 32 GB/s) = 0.0625; T_oo = (T_dp + T_off) [k_off = 1]
    # + sqrt(T_opt^2 + T_off^2) [k_swap = 2]; T_cc = 0.8 + 1.6 + 0.02
    opt, off = 0.01 * 1000 / 12, 0.0625
    expect = 2.42 + (0.02 + off) + math.sqrt(opt ** 2 + off ** 2) + 0.01
    assert pm.iteration_time(toy, plan, {M0: 2}, 12) == pytest.approx(expect)
    opt2 = 0.01 * 1000 / 24  # twice the cores: the CPU optimizer step halves
    assert pm.iteration_time(toy, plan, {M0: 2}, 24) == pytest.approx(
        2.42 + (0.02 + off) + math.sqrt(opt2 ** 2 + off ** 2) + 0.01)


def test_zero_offload_across_machines_flat_against_fitted(tiny_cluster, toy):
    """d = 4 ZeRO-Offload on 2 + 2 (rack uplink 10 GB/s), 16 cores: T_fwd 0.4, T_bwd 0.8,
    T_opt = 0.01 * 1000 / (4 * 4) = 0.625, T_off = 4e9 / (4 * 32e9) = 0.03125. ``flat`` (default): the
    flat all-reduce 2e9 * 2 * 3/4 / 10e9 = 0.3 s in both T_cc and the offload overlap. ``fitted``:
    hierarchical max(2e9 * 2 * 1/2 / 100e9, 2e9 * 2 * 1/2 / 10e9) = 0.2 s in T_cc, the offload overlap
    on the one-machine all-reduce 2e9 * 2 * 3/4 / 100e9 = 0.03 s."""
    plan, place = ExecutionPlan(dp=4, zero=ZeroMode.OFFLOAD), {M0: 2, M1: 2}
    opt, off = 0.625, 0.03125
    swap = math.sqrt(opt ** 2 + off ** 2)
    flat = PerfModel(tiny_cluster, {toy: Q})
    assert flat.iteration_time(toy, plan, place, 16) == pytest.approx(0.4 + 0.8 + 0.3 + (0.3 + off) + swap + 0.01)
    assert flat.components(toy, plan, place, 16)["dp1"] == pytest.approx(0.3)
    fitted = PerfModel(tiny_cluster, {toy: Q}, calibration="fitted")
    assert fitted.iteration_time(toy, plan, place, 16) == pytest.approx(
        0.4 + 0.8 + 0.2 + (0.03 + off) + swap + 0.01)
    for pm in (flat, fitted):  # the vectorised path agrees with the scalar one
        assert pm.throughputs(toy, [plan], place, 16)[0] == pytest.approx(8 / pm.iteration_time(toy, plan, place, 16))


def test_envelope_by_hand():
    env, at = envelope(np.array([0.0, 3.0, 2.0, 0.0, 5.0, 4.0]))
    assert env.tolist() == [0.0, 3.0, 3.0, 3.0, 5.0, 5.0]
    assert at.tolist() == [0, 1, 1, 1, 4, 4]


def test_caches_are_keyed_by_params_batch_and_spec(tiny_cluster, toy):
    from dataclasses import replace

    pm = PerfModel(tiny_cluster)
    pm.set_params(toy, Q)
    place = {M0: 2}
    c1 = pm.curve(toy, "gpu")
    b1 = pm.best_plan(toy, place, 2)
    # new parameters: every cached answer must change (T_const + 1 s)
    pm.set_params(toy, PerfParams(**{**Q.to_dict(), "k_const": 1.01}))
    b2 = pm.best_plan(toy, place, 2)
    assert 8 / b2[1] == pytest.approx(8 / b1[1] + 1.0)
    assert pm.curve(toy, "gpu").throughput[1] == pytest.approx(8 / (8 / c1.throughput[1] + 1.0))
    # another global batch
    assert pm.best_plan(toy, place, 2, global_batch=16)[1] != pytest.approx(b2[1])
    # a different spec under the same name is not served the first one's cached answers
    slow = replace(toy, fwd_time_s=16.0)
    assert pm.best_plan(slow, place, 2)[1] < b2[1]
    # cached curves are read-only
    with pytest.raises(ValueError):
        pm.curve(toy, "gpu").throughput[0] = 1.0


@pytest.fixture(scope="module")
def rubick_pm(rubick):
    return PerfModel(rubick)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(["bert", "vit", "t5", "gpt2", "llama7"]), g=st.sampled_from([1, 2, 4, 8, 16]),
       cpg=st.sampled_from([1, 2, 8]), kind=st.sampled_from(["dp", "ga", "gc", "zero-dp", "zero-offload"]))
def test_min_resources_never_above_the_request(rubick_pm, model, g, cpg, kind):
    pm = rubick_pm
    plan = parse_plan(kind, g)
    cpus = cpg * g
    mg, mc, mp = pm.min_resources(model, g, cpus, plan)
    assert 1 <= mg <= g and 1 <= mc <= cpus and mp.gpus == mg
    if (mg, mc, mp) == (g, cpus, plan):
        return
    # what was returned reaches the requested throughput on some canonical placement of mg GPUs
    target = max((pm.throughput(model, plan, p, cpus) for p in shape_placements(pm.cluster, g)
                  if pm.plan_problem(model, plan, p, cpus) is None), default=0.0)
    if target == 0.0:
        target = max(x[1] for x in (pm.best_plan(model, p, cpus) for p in shape_placements(pm.cluster, g)) if x)
    got = max(pm.throughput(model, mp, p, mc) for p in shape_placements(pm.cluster, mg)
              if pm.plan_problem(model, mp, p, mc) is None)
    assert got >= target * (1 - 1e-9)
