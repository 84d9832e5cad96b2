"""Plan names of the artifact's tables and invariants of plan enumeration over random placements."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.perfmodel import PerfModel
from schedlab.perfmodel.memory import plan_gpu_memory_gb
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode, parse_plan
from schedlab.perfmodel.zoo import get_model


@pytest.mark.parametrize("name,gpus,expect", [
    ("248", 64, ExecutionPlan(dp=8, tp=4, pp=2, micro_batches=4)),
    ("851", 40, ExecutionPlan(dp=1, tp=5, pp=8, micro_batches=16)),
    ("zero-offload+gc", 4, ExecutionPlan(dp=4, gc=True, zero=ZeroMode.OFFLOAD)),
    ("tp+ga", 2, ExecutionPlan(tp=2, ga_steps=2)),
    ("gc", 8, ExecutionPlan(dp=8, gc=True)),
])
def test_artifact_names(name, gpus, expect):
    p = parse_plan(name, gpus)
    assert p == expect
    assert parse_plan(p.canonical()) == p


def test_every_artifact_table_name_parses():
    names = ["ga", "gc", "zero-dp", "zero-offload", "zero-offload+gc", "tp+ga", "111", "141", "182", "248",
             "284", "428", "444", "524", "542", "624", "641", "642", "811", "851", "881"]
    for n in names:
        p = parse_plan(n, None if n.isdigit() else 8)
        assert p.gpus >= 1 and (p.name == n or not n.isdigit() or not p.is_3d)


@st.composite
def placements(draw):
    k = draw(st.integers(1, 4))
    return {f"rack0-m{i}": draw(st.integers(1, 8)) for i in range(k)}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(["bert", "t5", "gpt2", "llama7", "llama30", "vgg16"]), place=placements())
def test_enumeration_invariants(rubick, model, place):
    pm = PerfModel(rubick)
    spec = get_model(model)
    g = sum(place.values())
    plans = pm.enumerate_plans(model, place, cpus=g)
    assert len(set(plans)) == len(plans)
    for p in plans:
        assert p.gpus == g
        assert all(c % p.tp == 0 for c in place.values())
        assert spec.layers % p.pp == 0 and spec.global_batch % (p.dp * p.ga_steps * p.micro_batches) == 0
        assert p.zero is ZeroMode.NONE or (p.tp == p.pp == 1 and spec.family == "transformer")
        assert plan_gpu_memory_gb(spec, p) <= 80 + 1e-9
        assert pm.plan_problem(model, p, place, g) is None
    best = pm.best_plan(model, place, g)
    assert (best is None) == (not plans)
    if best:
        assert best[0] in plans


def test_tp_degree_must_divide_attention_heads():
    """T5 has 16 heads: TP 5 on 5 GPUs is not a Megatron configuration, TP 4 is."""
    from schedlab.perfmodel import ExecutionPlan, PerfModel
    from schedlab.topology import preset

    c = preset("rubick-64")
    pm = PerfModel(c)
    m = c.machines[0]
    plans = pm.enumerate_plans("t5", {m: 5}, cpus=8)
    assert all(p.tp != 5 for p in plans)  # 5 divides the hidden size 1280 but not the 16 heads
    assert any(p.tp == 4 for p in pm.enumerate_plans("t5", {m: 4}, cpus=8))
    assert ExecutionPlan(tp=5) not in plans
