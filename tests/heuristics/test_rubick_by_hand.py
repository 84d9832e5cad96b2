"""Rubick (Algorithm 1) on scenarios whose answers are worked out by hand: slopes, the two-job
micro-benchmark, shrinking and its penalty, guarantees, bad input, the variants. Curves come from
hand-written tables (``_rubick_tables.py``); slopes are normalised by the SLO throughput ``T_ref``."""

from __future__ import annotations

import numpy as np
import pytest

from schedlab.benchmarks.simulator import simulate
from schedlab.heuristics.rubick import RubickPolicy
from schedlab.heuristics.rubick.curves import CurveBook, JobModel, Mode, hull_slopes
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Instance, validate_allocation
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import JobProgress
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.snapshot import snapshot_view
from schedlab.topology.errors import SpecError

from ._rubick_tables import TableRates, a800_cluster, placed, table_job, table_policy


# ----------------------------------------------------------------------------- slopes
def test_hull_slopes_by_hand():
    # raw throughput at exactly 1, 2, 3 units: 10, invalid, 30 -> envelope 0, 10, 10, 30
    s = hull_slopes(np.array([10.0, 0.0, 30.0]))
    assert list(s.env) == [0, 10, 10, 30] and list(s.valid) == [False, True, False, True]
    assert s.gain(0) == 10          # max(10/1, 10/2, 30/3)
    assert s.gain(1) == 10          # max(0/1, 20/2)
    assert s.gain(2) == 20 and s.gain(3) == 0
    assert s.loss(3) == 10          # min(20/1, 20/2, 30/3)
    assert s.loss(2) == 0           # min(0/1, 10/2)
    assert s.saturation(3) == 3 and s.saturation(2) == 1


# ------------------------------------------------------------------ two-job micro-benchmark
# RoBERTa and T5 on one 4-GPU A800 server (paper Sec. 7.2), throughputs from our perf model when
# this test was written (no plan on 3 GPUs: the batch does not split 3 ways). Both request 4 GPUs.
MICRO = {"roberta": [0, 48.39, 95.57, 0, 186.40], "t5": [0, 16.94, 33.12, 0, 63.88]}


def test_micro_benchmark_allocation_by_hand():
    """Normalised by the 4-GPU throughput: RoBERTa E = 0, .2596, .5127, .5127, 1; T5 E = 0, .2652,
    .5185, .5185, 1. SortBySlope: gain(0) is .2596 (RoBERTa) vs .2652 (T5) -> T5 first, takes all 4.
    RoBERTa: gain(0) .2596 > T5 loss(4) = min(.4815, .4815/2, .7348/3, 1/4) = .2408 -> move (T5 3, R 1);
    gain(1) .2531 > loss(3) = 0 -> move (T5 2, R 2); gain(2) = max(0, .4873/2) = .2437 < loss(2) =
    min(.2533, .5185/2) = .2533 -> stop. 2 GPUs each (total normalised speedup 1.031; the paper's 3+1
    would give T5 only a 2-GPU plan on 3 GPUs: .5185 + .2596 = .778)."""
    cluster = a800_cluster(1, gpus=4, cpus=48)
    jobs = (table_job("roberta", "roberta", 4, 24), table_job("t5", "t5", 4, 24))
    inst = Instance(cluster, jobs)
    alloc = table_policy(cluster, MICRO).decide(inst)
    assert {ja.job_id: ja.gpus for ja in alloc} == {"roberta": 2, "t5": 2}
    assert all(ja.resources.cpus == 2 for ja in alloc)  # one CPU per GPU: more speeds nothing up
    assert validate_allocation(inst, alloc) == []


# ------------------------------------------------------------------------- shrinking
# Job A (diminishing returns) holds the whole 8-GPU server; job B (linear) arrives.
SHRINK = {"flat": [0, 10, 19, 27, 34, 40, 45, 49, 52], "lin": [0, 10, 20, 30, 40, 50, 60, 70, 80]}


def _shrink_instance(progress=None):
    cluster = a800_cluster(1)
    a, b = table_job("a", "flat", 8), table_job("b", "lin", 8)
    current = {"a": JobAllocation("a", ExecutionPlan(dp=8), placed(cluster, [8]))}
    return cluster, Instance(cluster, (a, b), current=Allocation(current), time=5000.0, progress=progress or {})


def test_shrink_that_must_happen():
    """B's gain is 10/80 = .125 everywhere. A's loss (normalised by 52): at 8, 3/52 = .058; at 7, 4/52 =
    .077; at 6, 5/52 = .096; at 5, min(6/52, 13/104) = .115 -- all below .125, one GPU moves each time;
    at 4, min(7, 15/2, 24/3, 34/4)/52 = .135 > .125: stop. A keeps 4 GPUs, B gets 4."""
    cluster, inst = _shrink_instance()
    alloc = table_policy(cluster, SHRINK).decide(inst)
    assert alloc["a"].gpus == 4 and alloc["b"].gpus == 4
    assert alloc["a"].plan == ExecutionPlan(dp=4)
    assert validate_allocation(inst, alloc) == []


@pytest.mark.parametrize(("executed", "shrinks"), [(1000.0, False), (3000.0, True)])
def test_shrink_blocked_by_the_penalty_threshold(executed, shrinks):
    """A was reconfigured once (N = 1, delta = 78 s): (1000 - 78)/1000 = .922 <= .97, so A may not
    be reconfigured and B waits; after 3,000 s of training (3000 - 78)/3000 = .974 > .97 and A shrinks."""
    cluster, inst = _shrink_instance({"a": JobProgress(executed=executed, reconfigurations=1)})
    alloc = table_policy(cluster, SHRINK).decide(inst)
    assert (alloc["a"].gpus, "b" in alloc) == ((4, True) if shrinks else (8, False))


@pytest.mark.parametrize(("counts", "shrinks"), [(None, False), ("restarts", False), ("reconfigurations", True)])
def test_penalty_counts_restarts_as_the_artifact(counts, shrinks):
    """N in the penalty: A was preempted once and never reconfigured. Counting restarts (the artifact's
    ``num_restarts``, default; a preemption is a shrink to zero) N = 1: (1000 - 78)/1000 = .922 <= .97,
    A may not be changed. Counting reconfigurations only (§5.2's words, a parameter) N = 0 and A shrinks
    — with that reading two large best-effort jobs preempt each other without end (docs/rubick.md)."""
    cluster, inst = _shrink_instance({"a": JobProgress(executed=1000.0, preemptions=1)})
    alloc = table_policy(cluster, SHRINK, **({} if counts is None else {"penalty_counts": counts})).decide(inst)
    assert (alloc["a"].gpus, "b" in alloc) == ((4, True) if shrinks else (8, False))


def test_threshold_is_a_parameter():
    cluster, inst = _shrink_instance({"a": JobProgress(executed=1000.0, reconfigurations=1)})
    alloc = table_policy(cluster, SHRINK, threshold=0.9).decide(inst)  # .922 > .9
    assert alloc["a"].gpus == 4


# ----------------------------------------------------------------- guarantees, preemption
def test_guaranteed_job_preempts_locked_best_effort_and_waits_for_its_checkpoint():
    """A best-effort job locked by the penalty holds the server; a guaranteed job (minRes 4) below its
    minRes may take its GPUs anyway: A is preempted whole and G starts once A's checkpoint is saved."""
    cluster = a800_cluster(1)
    a = table_job("a", "flat", 8)
    g = table_job("g", "lin", 4, guaranteed=True, tenant="A", min_gpus=4, arrival=10.0)
    a_long = Job("a", a.requested, iterations=500_000.0, model="flat", reconfigurable=True)
    pol = table_policy(cluster, SHRINK)
    res = simulate(cluster, (a_long, g), pol, quotas={"A": Resources(8)}, rates=TableRates(SHRINK))
    rec = {r.job_id: r for r in res.jobs}
    assert rec["a"].preemptions == 1
    assert rec["g"].first_start == pytest.approx(10.0 + 39.0)  # the checkpoint (39 s) frees the GPUs
    assert res.metrics["guarantee_violations"] == 0


def test_guaranteed_job_is_never_shrunk_below_its_minres():
    """G (guaranteed, minRes 4 = its request) holds 4 GPUs; B asks for 1 GPU of the linear model, so its
    normalised gain is 10/10 = 1 per GPU, far above anything G could lose: B takes the 4 free GPUs
    (its curve rises to 8) but none of G's, which sits at its minRes. G's own gain at 4 (6/34 = .18)
    is below B's loss at 4 (10/10 = 1): G does not grow either."""
    cluster = a800_cluster(1)
    g = table_job("g", "flat", 4, guaranteed=True, tenant="A", min_gpus=4)
    b = table_job("b", "lin", 1)
    inst = Instance(cluster, (g, b), current=Allocation({"g": JobAllocation("g", ExecutionPlan(dp=4),
                                                                             placed(cluster, [4]))}),
                    quotas={"A": Resources(8)})
    alloc = table_policy(cluster, SHRINK).decide(inst)
    assert alloc["g"].gpus == 4 and alloc["b"].gpus == 4


def test_running_jobs_grow_by_slope():
    """Same, but B asks for 8 GPUs (gain 10/80 = .125 per GPU) and G, higher (6/34 = .18), goes first:
    it takes the 4 free GPUs, then B shrinks it while G's loss is lower: at 8, 3/34 = .088; at 7,
    4/34 = .118; at 6, 5/34 = .147 > .125: G keeps 6, B gets 2."""
    cluster = a800_cluster(1)
    g = table_job("g", "flat", 4, guaranteed=True, tenant="A", min_gpus=4)
    inst = Instance(cluster, (g, table_job("b", "lin", 8)), current=Allocation(
        {"g": JobAllocation("g", ExecutionPlan(dp=4), placed(cluster, [4]))}), quotas={"A": Resources(8)})
    alloc = table_policy(cluster, SHRINK).decide(inst)
    assert alloc["g"].gpus == 6 and alloc["b"].gpus == 2


# ------------------------------------------------------------------------- bad input
def test_guaranteed_job_of_a_tenant_without_quota_is_an_error():
    cluster = a800_cluster(1)
    inst = Instance(cluster, (table_job("g1", "lin", 2, guaranteed=True, tenant="Z"),), quotas={"A": Resources(8)})
    with pytest.raises(SpecError) as ei:
        table_policy(cluster, SHRINK).decide(inst)
    assert ei.value.field == "tenant" and "g1" in str(ei.value) and "'Z'" in str(ei.value)


def test_guaranteed_job_whose_slo_no_plan_reaches():
    """llama30 on 3 GPUs: no plan runs there (batch and layers do not split 3 ways), so the SLO (the
    throughput of the request) is undefined: an error naming the job and field, or, with
    ``slo_fallback``, a counted run without an SLO."""
    cluster = a800_cluster(1)
    job = Job("big", Resources(3, 24), iterations=10.0, model="llama30", tenant="A",
              job_class=JobClass.GUARANTEED, reconfigurable=True)
    inst = Instance(cluster, (job,), quotas={"A": Resources(8)})
    with pytest.raises(SpecError) as ei:
        RubickPolicy().decide(inst)
    assert ei.value.field == "requested" and "'big'" in str(ei.value)
    pol = RubickPolicy(slo_fallback=True)
    alloc = pol.decide(inst)
    assert pol.counters["no-plan-at-request-slo-dropped"] == 1
    assert "big" in alloc and validate_allocation(inst, alloc) == []  # it runs (here on the whole server)


def test_model_missing_from_the_zoo_runs_rigid_and_is_counted():
    cluster = a800_cluster(1)
    job = Job("x", Resources(2, 2), iterations=100.0, model="no-such-model", reconfigurable=True,
              attrs={"iter_time": 1.0, "rates": "reference"})
    pol = RubickPolicy()
    res = simulate(cluster, (job,), pol)
    assert res.unfinished == () and res.jobs[0].gpus == 2
    assert res.metrics["policy_counters"] == {"unknown-model-rigid": 1}


# ------------------------------------------------------------------------- variants
def test_variants_keep_what_they_may_not_change():
    """Rubick-N and Rubick-E never resize a running job (B waits); Rubick-R resizes it as Rubick does."""
    for mode, shrinks in (("none", False), ("plans", False), ("resources", True), ("full", True)):
        cluster, inst = _shrink_instance()
        alloc = table_policy(cluster, SHRINK, mode=mode).decide(inst)
        assert (alloc["a"].gpus == 4) is shrinks, mode


def test_job_model_modes():
    cluster = a800_cluster(2)
    book = CurveBook(cluster)
    j = Job("j", Resources(4, 32), model="t5", plan=ExecutionPlan(dp=2, tp=2), reconfigurable=True)
    full = book.job_model(j, Mode.FULL)
    assert full.cap == 16 and full.granule == 1 and full.gain_g(4) > 0
    r = book.job_model(j, Mode.RESOURCES)
    assert r.family == ExecutionPlan(dp=2, tp=2) and r.granule == 2
    assert all(a % 2 == 0 for a in r.valid_amounts(16))  # TP 2 fixed: even GPU counts only
    for mode in (Mode.PLANS, Mode.NONE):
        jm = book.job_model(j, mode)
        assert jm.cap == 4 and jm.valid_amounts(16) == [4] and jm.gain_g(4) == 0
    rigid = book.job_model(Job("r", Resources(4, 32), model="t5"), Mode.FULL)
    assert isinstance(rigid, JobModel) and rigid.mode is Mode.NONE


def test_snapshot_view_schedule_is_what_decide_applies():
    cluster, inst = _shrink_instance()
    pol = table_policy(cluster, SHRINK)
    d = pol.schedule(snapshot_view(inst))
    assert set(d.start) == {"a", "b"} and d.preempt == ()
