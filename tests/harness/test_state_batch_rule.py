"""Issue 21 regression: the joint replay states of the gap suite whose records were errors. One batch rule
(``d * a * m`` divides the global batch: :func:`~schedlab.perfmodel.search.batch_problem`) in the verifier,
in ``plan_runs`` and in the perf-model pricer; trace plan codes read with valid micro-batch counts; a
running job's held plan among its joint options."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.harness.cases import GapCase
from schedlab.benchmarks.harness.gap import run_gap
from schedlab.benchmarks.harness.states import sample
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.formulations.policies.joint_snapshot import OptionTables
from schedlab.perfmodel import PerfModel, parse_plan
from schedlab.perfmodel.environment import shape_placements
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Instance, Job, JobAllocation, Resources, ViolationKind, validate_allocation
from schedlab.scheduling.allocation import Allocation
from schedlab.topology import preset

#: the gap suite's joint replay states (suites.builtin.QUICK_STATES["joint"])
STATE = {"workload": "smoke-mt", "load": 4.0, "policy": "fifo", "k": 2, "min_queued": 3}


def _on_consolidated(cluster, job_id: str, plan: ExecutionPlan) -> Allocation:
    counts = shape_placements(cluster, plan.gpus)[0]
    return Allocation.of([JobAllocation(job_id, plan, {m: Resources(g, 8 * g, 8.0 * g) for m, g in counts.items()})])


def test_the_verifier_and_the_pricer_agree_on_rubick_mt_14():
    """The job FIFO's replay started on seed 2's first state: LLaMA-30B, 48 GPUs, Rubick's plan code ``344``
    (PP 3, TP 4, DP 4), global batch 32 (the zoo's). Read as ``2 p`` = 6 micro-batches, each of the 4 replicas
    would split 8 samples into 6: the pricer refused it, the verifier let it run. Both refuse it now; the
    workload reads the code with 4 micro-batches (the largest count <= 2 p dividing 8), which both accept."""
    w, cluster = WorkloadSource(workload="smoke-mt", load=4.0, seed=0).build()
    job = next(j for j in w.jobs if j.id == "rubick-mt-14")
    assert (job.model, job.requested.gpus, job.global_batch) == ("llama30", 48, None)
    pm = PerfModel(cluster)
    counts = shape_placements(cluster, 48)[0]
    old = parse_plan("344", 48)
    assert old.micro_batches == 6
    inst = Instance(cluster, (job,))
    assert "not divisible by d*a*m = 24" in pm.plan_problem("llama30", old, counts, 384)
    assert [v.kind for v in validate_allocation(inst, _on_consolidated(cluster, job.id, old))] \
        == [ViolationKind.PLAN_BATCH]
    new = job.requested_plan
    assert (new.dp, new.tp, new.pp, new.micro_batches) == (4, 4, 3, 4)
    assert pm.plan_problem("llama30", new, counts, 384) is None
    assert validate_allocation(inst, _on_consolidated(cluster, job.id, new)) == []


@pytest.mark.parametrize(("seed", "index", "method"), [(2, 0, "fifo"), (2, 0, "sia"), (2, 1, "sia")])
def test_the_joint_states_that_were_errors_are_priced(seed, index, method, tmp_path, monkeypatch):
    """Seed 2's states: FIFO's and every rigid policy's decision started rubick-mt-14 at its request (the
    pricer refused the plan); Sia kept rubick-mt-19's code plan at 40 GPUs (d*a*m = 40 > batch 32)."""
    monkeypatch.setenv("SCHEDLAB_INSTANCE_CACHE", str(tmp_path))
    out = run_gap(GapCase("joint", "rubick-64", 1, method, seed=seed, state={**STATE, "index": index}))
    assert out.status.value == "ok" and out.verified and out.objective is not None


def test_sia_never_scales_a_batch_32_job_past_its_batch(tmp_path, monkeypatch):
    """Seed 1's second state: Sia scaled rubick-mt-15 (LLaMA-7B, batch 32) to 40 data-parallel replicas,
    which no option of the joint model holds. ``plan_runs`` applies the batch rule now, so Sia's
    configurations stop at 32; what Sia decides there is scored (it may break a guarantee, which the
    kind's verifier reports as a violation: a result, not an error)."""
    monkeypatch.setenv("SCHEDLAB_INSTANCE_CACHE", str(tmp_path))
    s, snap, _ = sample("rubick-64", {**STATE, "index": 1}, 1)
    from schedlab.formulations.policies import SiaPolicy

    job = snap.instance.job_by_id["rubick-mt-15"]
    sizes = {g for _, g, _, _ in SiaPolicy().configs(job, snap.instance.cluster)}
    assert max(sizes) == 32 and all(32 % g == 0 for g in sizes)
    out = run_gap(GapCase("joint", "rubick-64", 1, "sia", seed=1, state={**STATE, "index": 1}))
    assert out.status.value in ("ok", "invalid") and out.message is None
    assert out.status.value == "ok" or all("[slo]" in v for v in out.violations)


def test_a_running_job_keeps_its_held_plan_among_its_options():
    """A table capped at 8 GPUs (``max_gpus``) and a running job that holds 16: its options gain the held
    plan's (every placement class and CPU level of dp16), so the state can be priced as it is."""
    from schedlab.formulations.policies.base import ViewSnapshot
    from schedlab.formulations.policies.joint_snapshot import joint_snapshot

    cluster = preset("rubick-64")
    job = Job("j", Resources(4, 32, 32.0), model="bert", reconfigurable=True, plan=ExecutionPlan(dp=4))
    held = _on_consolidated(cluster, "j", ExecutionPlan(dp=16))
    tables = OptionTables(cluster, max_gpus=8)
    assert 16 not in {o.gpus for o in tables.table(job)[0]}
    inst = joint_snapshot(ViewSnapshot(Instance(cluster, (job,), current=held), ()), tables, 0.0, hold=True)
    assert {o.gpus for o in inst.options["j"]} >= {1, 2, 4, 8, 16}
    assert tables.counters["held-allocation-options"] == 1
    assert inst.norm(held["j"]) > 0  # priced, not refused
    bare = joint_snapshot(ViewSnapshot(Instance(cluster, (job,), current=held), ()), OptionTables(cluster,
                          max_gpus=8, source="request"), 0.0)
    assert 16 in {o.gpus for o in bare.options["j"]}  # a fixed-plan table gains the held plan too
