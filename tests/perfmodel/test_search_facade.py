"""Plan enumeration, best plans, curves, options and minRes through the PerfModel facade."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.perfmodel import PerfModel, parse_plan
from schedlab.perfmodel.curves import pareto
from schedlab.perfmodel.memory import plan_gpu_memory_gb
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode
from schedlab.perfmodel.zoo import get_model
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources, validate_allocation

RUBICK = ("vit", "roberta", "bert", "t5", "gpt2", "llama7", "llama30")


@pytest.fixture(scope="module")
def pm(rubick):
    return PerfModel(rubick)


def m(i):
    return f"rack0-m{i}"


def test_enumerated_plans_respect_the_rules(pm):
    placement = {m(0): 8, m(1): 4, m(2): 4}
    spec = get_model("llama7")
    plans = pm.enumerate_plans("llama7", placement, cpus=16)
    assert plans
    # 12 GPUs: no d * t * p = 12 with d | 32, t | 4 and p | 32 layers
    assert pm.enumerate_plans("llama7", {m(0): 8, m(1): 4}, cpus=12) == []
    for p in plans:
        assert p.dp * p.tp * p.pp == 16
        assert 4 % p.tp == 0 and 8 % p.tp == 0  # TP inside a machine
        assert spec.layers % p.pp == 0
        assert spec.global_batch % (p.dp * p.ga_steps * p.micro_batches) == 0
        if p.zero is not ZeroMode.NONE:
            assert p.tp == p.pp == 1
        assert plan_gpu_memory_gb(spec, p) <= 80
    assert any(p.tp == 4 for p in plans) and not any(p.tp == 8 for p in plans)


def test_small_models_and_cnns_use_no_3d(pm):
    for name in ("bert", "vit", "resnet50"):
        assert all(not p.is_3d for p in pm.enumerate_plans(name, {m(0): 8}))
    assert all(p.zero is ZeroMode.NONE for p in pm.enumerate_plans("resnet50", {m(0): 8}))


def test_too_few_cpus_means_no_plan(pm):
    assert pm.enumerate_plans("bert", {m(0): 8}, cpus=4) == []
    assert pm.best_plan("bert", {m(0): 8}, cpus=4) is None


@pytest.mark.parametrize("model,placement,cpus", [
    ("bert", {"rack0-m0": 4}, 4), ("bert", {"rack0-m0": 2}, 16), ("t5", {"rack0-m0": 8, "rack0-m1": 8}, 16),
    ("llama7", {"rack0-m0": 1}, 12), ("gpt2", {"rack0-m0": 4, "rack0-m1": 4}, 64)])
def test_best_plan_is_the_brute_force_maximum(pm, model, placement, cpus):
    plans = pm.enumerate_plans(model, placement, cpus)
    brute = max(pm.throughput(model, p, placement, cpus) for p in plans)
    plan, tput = pm.best_plan(model, placement, cpus)
    assert tput == pytest.approx(brute)
    assert pm.throughput(model, plan, placement, cpus) == pytest.approx(tput)
    assert np.allclose(pm.throughputs(model, plans, placement, cpus),
                       [pm.throughput(model, p, placement, cpus) for p in plans])


def test_llama7_on_one_gpu_needs_zero_offload(pm):
    plans = pm.enumerate_plans("llama7", {m(0): 1}, cpus=8)
    assert plans and all(p.zero is ZeroMode.OFFLOAD for p in plans)


def test_throughput_is_batch_over_iteration_time(pm):
    p = parse_plan("zero-dp", 4)
    t = pm.iteration_time("bert", p, {m(0): 4}, 4)
    assert pm.throughput("bert", p, {m(0): 4}, 4) == pytest.approx(32 / t)
    assert pm.throughput("bert", p, {m(0): 4}, 4, global_batch=64) == pytest.approx(
        64 / pm.iteration_time("bert", p, {m(0): 4}, 4, global_batch=64))


def test_placement_bandwidth_matters(rubick):
    from schedlab.perfmodel import PerfParams

    pm = PerfModel(rubick, {"gpt2": PerfParams(k_sync=1.0)})  # no overlap: communication fully exposed
    p = ExecutionPlan(dp=8)
    one = pm.components("gpt2", p, {m(0): 8}, 8)
    two = pm.components("gpt2", p, {m(0): 4, m(1): 4}, 8)
    # flat (default): V_dp = 2 B x 1,557,686,400 x 2 x 7/8 over 400 GB/s NVLink vs 100 GB/s RDMA
    assert one["dp"] == pytest.approx(2 * 1_557_686_400 * 2 * 7 / 8 / 400e9)
    assert two["dp"] == pytest.approx(4 * one["dp"])
    assert two["iter"] - one["iter"] == pytest.approx(3 * one["dp"])
    # fitted: on 4 + 4 the hierarchical all-reduce: max(intra 2 x 3/4 over 400 GB/s, inter 2 x 1/2 over
    # the machines' shared 100 GB/s RDMA) = the inter
    pm = PerfModel(rubick, {"gpt2": PerfParams(k_sync=1.0)}, calibration="fitted")
    one = pm.components("gpt2", p, {m(0): 8}, 8)
    two = pm.components("gpt2", p, {m(0): 4, m(1): 4}, 8)
    e_p = 2 * 1_557_686_400
    assert one["dp"] == pytest.approx(e_p * 2 * 7 / 8 / 400e9)
    assert two["dp"] == pytest.approx(e_p * 2 * 1 / 2 / 100e9) and two["dp"] > e_p * 2 * 3 / 4 / 400e9
    assert two["iter"] - one["iter"] == pytest.approx(two["dp"] - one["dp"])


def test_more_cpus_speed_up_zero_offload_only(pm):
    p = parse_plan("zero-offload", 2)
    assert pm.iteration_time("bert", p, {m(0): 2}, 16) < pm.iteration_time("bert", p, {m(0): 2}, 2)
    q = parse_plan("zero-dp", 2)
    assert pm.iteration_time("bert", q, {m(0): 2}, 16) == pm.iteration_time("bert", q, {m(0): 2}, 2)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(RUBICK), resource=st.sampled_from(["gpu", "cpu"]), g=st.integers(1, 16))
def test_curves_are_monotone_envelopes(pm, model, resource, g):
    c = pm.curve(model, resource, gpus=g, max_amount=64 if resource == "gpu" else 200)
    assert np.all(np.diff(c.throughput) >= 0)
    assert np.all(c.throughput >= c.raw - 1e-12)
    assert np.allclose(c.throughput, np.maximum.accumulate(c.raw))
    for a, t, p in zip(c.amounts, c.throughput, c.plans, strict=True):
        assert (p is None) == (t == 0)
        if p is not None:
            assert p.gpus <= (a if resource == "gpu" else g)


def test_gpu_curve_agrees_with_best_plan(pm):
    c = pm.curve("bert", "gpu", max_amount=8)
    assert c.raw[7] == pytest.approx(pm.best_plan("bert", {m(0): 8}, 96)[1])
    # 3, 5, 6, 7 GPUs do not divide the global batch 32: invalid, so the envelope is flat there
    assert c.raw[2] == 0 and c.throughput[2] == c.throughput[1]


def test_surface_matches_curves(pm):
    s = pm.surface("t5", max_gpus=16, max_cpus=64)
    cc = pm.curve("t5", "cpu", gpus=4, max_amount=64)
    assert np.allclose(s[3], cc.raw)
    assert s[7, 3] == 0  # 4 CPUs for 8 GPUs: below one per GPU


def test_options_are_pareto_and_reachable(pm):
    opts = pm.options("llama7", max_gpus=16, cpus_per_gpu_choices=(1, 8))
    assert opts and opts == pareto(opts)
    for o in opts:
        for q in opts:
            if q is not o and q.machines == o.machines and q.gpus <= o.gpus and q.cpus <= o.cpus:
                assert q.throughput < o.throughput or (q.gpus, q.cpus) == (o.gpus, o.cpus)
        assert o.plan.gpus == o.gpus and o.gpu_mem_gb <= 80


def test_pareto_drops_dominated():
    from schedlab.perfmodel.curves import ResourceOption

    p = ExecutionPlan()
    a = ResourceOption(1, 1, 1, 10.0, p, 4.0, 10.0)
    b = ResourceOption(2, 2, 1, 9.0, ExecutionPlan(dp=2), 8.0, 10.0)
    c = ResourceOption(2, 2, 2, 9.0, ExecutionPlan(dp=2), 8.0, 10.0)
    assert pareto([a, b, c]) == [a, c]


def test_min_resources(pm):
    g, c, plan = pm.min_resources("bert", 8, 8, parse_plan("gc", 8))
    target = max(pm.throughput("bert", parse_plan("gc", 8), {m(0): 8}, 8),
                 pm.throughput("bert", parse_plan("gc", 8), {m(i): 1 for i in range(8)}, 8))
    assert g <= 8 and c <= 8 and plan.gpus == g
    assert pm.best_plan("bert", {m(0): g}, c)[1] >= target * (1 - 1e-9)
    # a slow requested plan (GC on 8 GPUs) is matched with fewer GPUs by a better plan (the artifact's
    # calibration of ViT, where GC costs a whole forward more)
    pm = PerfModel(pm.cluster, calibration="artifact")
    slow = parse_plan("gc", 8)
    g2, c2, p2 = pm.min_resources("vit", 8, 64, slow)
    assert g2 < 8 and c2 <= 64
    assert pm.throughput("vit", p2, {m(0): g2}, c2) >= pm.throughput("vit", slow, {m(0): 8}, 64) * (1 - 1e-9)
    smaller = [pm.best_plan("vit", {m(0): g}, c) for g in range(1, g2) for c in range(g, 65)]
    assert all(x is None or x[1] < pm.throughput("vit", slow, {m(0): 8}, 64) for x in smaller)
    # ZeRO-Offload asked with 64 CPUs: ZeRO-DP reaches it with one CPU per GPU
    g3, c3, p3 = pm.min_resources("bert", 8, 64, parse_plan("zero-offload", 8))
    assert (g3, c3) == (8, 8) and p3.zero is ZeroMode.DP
    # nothing better than an infeasible request: the request itself is the bar (plain DP of LLaMA-7B)
    assert pm.min_resources("llama7", 8, 8, ExecutionPlan(dp=8))[:2] == (8, 8)


def test_slope(pm):
    c = pm.curve("vit", "gpu")
    s = pm.slope("vit", "gpu", 4, normalize="none")
    assert s == pytest.approx(c.at(5) - c.at(4))
    assert pm.slope("vit", "gpu", 4) == pytest.approx((c.at(5) - c.at(4)) / c.at(4))
    assert pm.slope("vit", "gpu", 4, delta=4) == pytest.approx((c.at(8) - c.at(4)) / 4 / c.at(4))
    assert pm.slope("vit", "gpu", 64) == 0.0


def test_best_plans_pass_the_verifier(rubick, pm):
    jobs, assigns = [], []
    for i, (model, place, cpus) in enumerate([("llama7", {m(0): 8, m(1): 8}, 16), ("bert", {m(2): 4}, 4),
                                              ("llama30", {m(3): 8, m(4): 8}, 16), ("t5", {m(5): 2}, 16)]):
        spec = get_model(model)
        plan, _ = pm.best_plan(model, place, cpus)
        g = sum(place.values())
        jobs.append(Job(id=f"j{i}", requested=Resources(g, cpus, 0.0), model=model,
                        global_batch=spec.global_batch, num_layers=spec.layers, reconfigurable=True))
        per = {mm: Resources(k, cpus * k // g, 0.0) for mm, k in place.items()}
        assigns.append(JobAllocation(f"j{i}", plan, per))
    inst = Instance(rubick, tuple(jobs))
    assert validate_allocation(inst, Allocation.of(assigns)) == []
    # and the memory check does reject a plan that does not fit
    bad = JobAllocation("j0", ExecutionPlan(dp=16), {m(0): Resources(8, 8, 0.0), m(1): Resources(8, 8, 0.0)})
    kinds = {v.kind.value for v in validate_allocation(inst, Allocation.of([bad]))}
    assert "memory" in kinds


def test_gpu_curve_with_fixed_cpus_is_flat_beyond_them(pm):
    c = pm.curve("bert", "gpu", cpus=4, max_amount=16)
    assert c.raw[3] > 0 and np.all(c.raw[4:] == 0)  # one CPU per GPU: 5+ GPUs are invalid with 4 CPUs
    assert np.all(c.throughput[4:] == c.throughput[3])
    assert c.fixed == 4 and all(p is None or p.gpus <= 4 for p in c.plans)


def test_curve_rows_and_bad_resource(pm):
    from schedlab.topology.errors import SpecError

    rows = pm.curve("vit", "gpu", max_amount=4).rows()
    assert [r["amount"] for r in rows] == [1, 2, 3, 4] and rows[0]["canonical_plan"].startswith("dp1-")
    with pytest.raises(SpecError):
        pm.curve("vit", "memory")


def test_measured_calibration_answers_from_the_tables_and_counts(rubick, traces_dir):
    """``measured``: the measured time where the tables hold (model, plan, placement, batch) — BERT ``ga``
    on ``44`` measured 0.2100 s, on ``2222`` 0.2639 s (1.26x) — the fitted model elsewhere; counted."""
    from schedlab.perfmodel import parse_plan

    pm = PerfModel(rubick, calibration="measured", measured=str(traces_dir / "rubick" / "placements"))
    fitted = PerfModel(rubick, calibration="fitted")
    ga = parse_plan("ga", 8)
    assert pm.iteration_time("bert", ga, "44", 8) == pytest.approx(0.2100157894736842)
    assert pm.iteration_time("bert", ga, "2222", 8) == pytest.approx(0.26393157894736846)
    assert pm.throughputs("bert", [ga], "44", 8)[0] == pytest.approx(32 / 0.2100157894736842)
    assert pm.measured_hits == 3 and pm.measured_misses == 0
    other = ExecutionPlan(dp=8, ga_steps=8)  # not in the table: the fitted model
    assert pm.iteration_time("bert", other, "44", 8) == fitted.iteration_time("bert", other, "44", 8)
    assert pm.measured_misses == 1
    # ZeRO-Offload at another CPU count: the measured time scaled by the fitted model's ratio
    off = parse_plan("zero-offload", 8)
    t64, t32 = pm.iteration_time("bert", off, "44", 64), pm.iteration_time("bert", off, "44", 32)
    assert t64 == pytest.approx(0.30042631578947365)
    assert t32 / t64 == pytest.approx(fitted.iteration_time("bert", off, "44", 32)
                                      / fitted.iteration_time("bert", off, "44", 64))
    # the best plan and curves see the measured times too
    plan, tput = pm.best_plan("bert", "44", 64)
    plans = pm.enumerate_plans("bert", "44", 64)
    assert tput == pytest.approx(max(pm.throughputs("bert", plans, "44", 64)))
    assert tput >= 32 / 0.19755789473684213  # zero-dp on 44, measured
    from schedlab.topology.errors import SpecError

    with pytest.raises(SpecError, match="calibration"):
        PerfModel(rubick, calibration="exact")


def test_default_calibration_is_flat(rubick):
    """``flat`` (default): FLAT_PARAMS and no per-machine counts (the exact joint model's assumption);
    ``fitted`` / ``measured`` are the hierarchical model."""
    from schedlab.perfmodel.params import FLAT_PARAMS

    pm = PerfModel(rubick)
    assert pm.calibration == "flat" and pm.measured is None and not pm.hierarchical
    assert pm.params_for("bert") == FLAT_PARAMS["bert"] and PerfModel(rubick, calibration="fitted").hierarchical
    # flat: 4 + 4 and 2 + 2 + 2 + 2 in one rack have the same links, so the same time; fitted tells them apart
    plan = ExecutionPlan(dp=8)
    assert pm.iteration_time("vit", plan, "44", 8) == pm.iteration_time("vit", plan, "2222", 8)
    fitted = PerfModel(rubick, calibration="fitted")
    assert fitted.iteration_time("vit", plan, "44", 8) < fitted.iteration_time("vit", plan, "2222", 8)
