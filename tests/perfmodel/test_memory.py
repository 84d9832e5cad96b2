"""Memory estimator: hand-computed bytes on the toy model and the artifact's OOM tables (80 GB A800)."""

import pytest

from schedlab.perfmodel.memory import (
    RESERVE_GB,
    plan_gpu_memory_gb,
    plan_host_memory_gb,
    plan_memory_violation,
)
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode, parse_plan
from schedlab.perfmodel.zoo import get_model

A800 = 80.0


def test_plain_dp_hand_computed(toy):
    # states 16 GB; activations 34*s*h = 3.4e6 B per layer and sample, x 10 layers x 8 samples
    assert plan_gpu_memory_gb(toy, ExecutionPlan()) == pytest.approx(16 + 0.272 + RESERVE_GB)


def test_zero2_and_offload_states(toy):
    # ZeRO-2 over d=4: (2 + 14/4) * 1e9 B; 2 samples per GPU
    assert plan_gpu_memory_gb(toy, ExecutionPlan(dp=4, zero=ZeroMode.DP)) == pytest.approx(5.5 + 0.068 + RESERVE_GB)
    # ZeRO-Offload keeps only fp16 parameters on the GPU
    assert plan_gpu_memory_gb(toy, ExecutionPlan(zero=ZeroMode.OFFLOAD)) == pytest.approx(2 + 0.272 + RESERVE_GB)


def test_gradient_checkpointing_and_tp(toy):
    # GC: per sample 2*s*h*l + one layer (3.4e6) = 5.4e6 B, 8 samples
    assert plan_gpu_memory_gb(toy, ExecutionPlan(gc=True)) == pytest.approx(16 + 0.0432 + RESERVE_GB)
    # TP 2 halves states and activations
    assert plan_gpu_memory_gb(toy, ExecutionPlan(tp=2)) == pytest.approx(8 + 0.136 + RESERVE_GB)


def test_pipeline_in_flight_micro_batches(toy):
    # p=2, m=4: micro-batch 2 samples, 2 in flight, 5 layers per stage; states / 2
    assert plan_gpu_memory_gb(toy, ExecutionPlan(pp=2, micro_batches=4)) == pytest.approx(
        8 + 2 * 2 * 3.4e6 * 5 / 1e9 + RESERVE_GB)


def test_ga_divides_the_micro_batch(toy):
    assert plan_gpu_memory_gb(toy, ExecutionPlan(ga_steps=4)) == pytest.approx(16 + 0.068 + RESERVE_GB)


def test_host_memory(toy):
    assert plan_host_memory_gb(toy, ExecutionPlan(dp=2)) == pytest.approx(8.0)
    assert plan_host_memory_gb(toy, ExecutionPlan(dp=2, zero=ZeroMode.OFFLOAD)) == pytest.approx(8.0 + 14.0)


# --- the artifact's OOM table: largest micro-batch per 80 GB GPU that it ran --------------------------

@pytest.mark.parametrize("model,plan,batch", [
    ("bert", "dp", 32), ("bert", "gc", 32), ("bert", "zero-dp", 32), ("bert", "zero-offload", 32),
    ("gpt2", "dp", 16), ("gpt2", "gc", 16), ("gpt2", "zero-dp", 16), ("gpt2", "zero-offload", 16),
    ("t5", "dp", 16), ("t5", "zero-dp", 16), ("t5", "zero-offload", 16),
    ("vit", "dp", 64), ("vit", "zero-offload", 64), ("roberta", "dp", 64), ("roberta", "gc", 64),
    ("roberta", "zero-offload", 64),
])
def test_oom_table_fits(model, plan, batch):
    assert plan_memory_violation(model, batch, parse_plan(plan, 1), A800) is None


def test_llama7_plain_dp_never_fits_but_zero_offload_does():
    for p in (ExecutionPlan(), ExecutionPlan(gc=True), ExecutionPlan(ga_steps=8, gc=True)):
        assert plan_memory_violation("llama7", 8, p, A800) is not None
    # states alone: 16 B x 6.74e9 = 108 GB; even spread over 8 GPUs of plain DP
    assert plan_memory_violation("llama-2-7b", 32, ExecutionPlan(dp=8, ga_steps=4), A800) is not None
    off_gc = ExecutionPlan(zero=ZeroMode.OFFLOAD, gc=True)
    assert plan_memory_violation("llama7", 8, off_gc, A800) is None
    # ZeRO-DP with micro-batch 2 over 8 GPUs fits (artifact: ZeRO-DP 2)
    assert plan_memory_violation("llama7", 16, ExecutionPlan(dp=8, zero=ZeroMode.DP), A800) is None


def test_llama30_plain_dp_never_fits_offload_with_gc_and_ga_does():
    assert plan_memory_violation("llama30", 32, ExecutionPlan(dp=8), A800) is not None
    p = ExecutionPlan(zero=ZeroMode.OFFLOAD, gc=True, ga_steps=8)
    assert plan_memory_violation("llama30", 32, p, A800) is None
    assert plan_gpu_memory_gb(get_model("llama30"), p, 32) > 65  # 2 B x 32.5e9 parameters stay


def test_unknown_model_is_not_checked():
    assert plan_memory_violation("my-private-net", 8, ExecutionPlan(dp=1024), 1.0) is None


def test_violation_message_names_plan_and_need():
    msg = plan_memory_violation("llama7", 32, ExecutionPlan(), A800)
    assert "llama7" in msg and "GB" in msg and "80" in msg
