"""Durations are ground truth: on a cluster where nothing queues, every job's JCT equals the duration the
trace recorded, under every semantics and for every combination of mapped columns (iterations, model,
batch, plan, CPUs); a resized request keeps GPU-hours; without a duration the perf model times the job
and the report says so."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.registry import all_policies
from schedlab.benchmarks.simulator import perf_adapter, simulate
from schedlab.benchmarks.simulator.rates import PerfModelRates, TierRates, consolidated_counts
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.perfmodel.plans import ExecutionPlan, parse_plan
from schedlab.scheduling import Job, Resources
from schedlab.topology import preset

CLUSTER = "dally-16"  # 1,024 GPUs in 128 8-GPU machines: a few 1-16-GPU jobs never queue
OPTIONAL = ("iterations", "model", "batch", "plan", "cpus")
MODELS = ("resnet50", "vgg16", "bert", "vit", "gpt2", "cifar10", "deepspeech2", "Inception_V3", "mystery-net")
PLANS = ("ga", "gc", "zero-dp")


def _plan_for(model: str, g: int, batch: int | None) -> str | None:
    """A plan of ``model`` on ``g`` GPUs that fits an 80 GB GPU, or None."""
    z = perf_adapter.zoo_name(model)
    if z is None:
        return None
    for name in PLANS:
        try:
            p = parse_plan(name, g)
        except Exception:
            continue
        if perf_adapter.memory_problem(z, p, 80.0, batch) is None:
            return name
    return None


def _write(tmp_path, rows: list[dict], cols: tuple[str, ...]) -> str:
    header = ["jid", "t", "n", "dur", *cols]
    lines = [",".join(header)]
    for r in rows:
        lines.append(",".join(str(r[c]) if r.get(c) is not None else "" for c in header))
    p = tmp_path / "trace.csv"
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def _replay(path: str, cols: tuple[str, ...], semantics: str, *, with_duration: bool = True):
    mapping = "submit=t,gpus=n,id=jid" + (",duration=dur" if with_duration else "") + "".join(
        f",{c}={c}" for c in cols)
    w, c = WorkloadSource(trace=path, columns=mapping, cluster=CLUSTER).build()
    res = simulate(c, w.jobs, all_policies().build("fifo", {}, seed=0), semantics=semantics)
    assert res.unfinished == () and res.metrics["avg_queue"] == 0.0  # nothing queued
    if semantics == "tiresias":  # the artifact's whole-second clock: every floored job is counted
        rows = {r.job_id: r for r in res.jobs}
        assert res.metrics["rounded_jobs"] == sum(j.duration != math.floor(j.duration) for j in w.jobs
                                                  if j.id in rows)
    return w, {r.job_id: r for r in res.jobs}


def _expected(dur: float, semantics: str) -> float:
    """The recorded duration; under ``tiresias`` semantics the artifact's whole seconds (floored)."""
    return float(max(1, math.floor(dur))) if semantics == "tiresias" else dur


def _rows(seed: int, n: int = 6) -> list[dict]:
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        g = int(rng.choice([1, 2, 4, 8, 16]))
        model = str(MODELS[int(rng.integers(len(MODELS)))])
        batch = int(rng.choice([16, 32, 64])) * g
        rows.append({"jid": f"j{i}", "t": 30 * i, "n": g, "dur": round(float(rng.uniform(60, 5000)), 3),
                     "iterations": int(rng.integers(10, 5000)), "model": model, "batch": batch,
                     "plan": _plan_for(model, g, batch), "cpus": 8 * g})
    return rows


COMBOS = [c for k in range(len(OPTIONAL) + 1) for c in itertools.combinations(OPTIONAL, k)]


@pytest.mark.parametrize("cols", COMBOS, ids=lambda c: "+".join(c) or "none")
def test_every_column_combination_replays_the_recorded_duration(tmp_path, cols):
    rows = _rows(seed=len(cols) * 7 + sum(map(len, cols)))
    if "plan" in cols and "model" not in cols:  # a plan without a model: keep plain data-parallel plans valid
        for r in rows:
            r["plan"] = None
    path = _write(tmp_path, rows, cols)
    for semantics in ("realistic", "tiresias"):
        w, rec = _replay(path, cols, semantics)
        resized = {ex.job for n in w.assumptions.get("gpus-resized") for ex in n.examples}
        for r in rows:
            job = rec[r["jid"]]
            if job.job_id in resized:
                continue
            assert job.jct == pytest.approx(_expected(r["dur"], semantics), rel=1e-9), (semantics, cols, r)
            assert job.ideal_duration == pytest.approx(_expected(r["dur"], semantics), rel=1e-9)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 8),
       cols=st.sets(st.sampled_from(OPTIONAL)).map(lambda s: tuple(c for c in OPTIONAL if c in s)),
       semantics=st.sampled_from(["realistic", "tiresias"]))
def test_property_jct_equals_recorded_duration(tmp_path, seed, n, cols, semantics):
    rows = _rows(seed, n)
    if "model" not in cols:
        for r in rows:
            r["plan"] = None
    path = _write(tmp_path, rows, cols)
    w, rec = _replay(path, cols, semantics)
    # requests resized (none here: every plan fits; resizes keep GPU-hours and are reported)
    for note in w.assumptions.get("gpus-resized"):
        for ex in note.examples:
            g0, g1 = map(int, ex.detail.split(" -> "))
            r = next(x for x in rows if x["jid"] == ex.job)
            assert rec[ex.job].jct == pytest.approx(_expected(r["dur"] * g0 / g1, semantics), rel=1e-9)
    resized = {ex.job for note in w.assumptions.get("gpus-resized") for ex in note.examples}
    for r in rows:
        if r["jid"] not in resized:
            assert rec[r["jid"]].jct == pytest.approx(_expected(r["dur"], semantics), rel=1e-9)


def test_resized_request_keeps_gpu_hours_and_is_reported(tmp_path):
    # 2,000 GPUs on a 1,024-GPU cluster: resized to 1,024, duration 100 s x 2000/1024
    # (realistic semantics; under ``tiresias`` the artifact keeps it uncut and it never runs)
    path = _write(tmp_path, [{"jid": "big", "t": 0, "n": 2000, "dur": 100.0}], ())
    w, rec = _replay(path, (), "realistic")
    (note,) = w.assumptions.get("gpus-resized")
    assert note.count == 1 and note.examples[0].detail == "2000 -> 1024" and note.examples[0].line == 2
    assert "larger than the cluster (1024 GPUs)" in note.what
    assert rec["big"].jct == pytest.approx(100.0 * 2000 / 1024)
    assert rec["big"].trace_gpus == 2000 and rec["big"].gpus == 1024 and rec["big"].granted_gpus == 1024


def test_without_duration_the_perf_model_times_the_job_and_says_so(tmp_path):
    path = _write(tmp_path, [{"jid": "a", "t": 0, "n": 4, "dur": None, "iterations": 100, "model": "resnet50",
                              "batch": 128}], ("iterations", "model", "batch"))
    w, rec = _replay(path, ("iterations", "model", "batch"), "realistic", with_duration=False)
    (note,) = w.assumptions.get("duration-perfmodel")
    assert note.count == 1 and note.examples[0].job == "a"
    c = preset(CLUSTER)
    t = perf_adapter.perf_instance(c).iteration_time("resnet50", ExecutionPlan(dp=4), consolidated_counts(c, 4), 0,
                                                      global_batch=128)
    assert rec["a"].jct == pytest.approx(100 * t, rel=1e-9)


def test_rates_scale_relative_to_the_request():
    """Hand check of ``t(alloc) = t_req x S(alloc) / S(request)``."""
    c = preset("dally-2")
    m0, m1 = c.machines_in("rack0")[:2]
    job = Job("j", Resources(8, 64), iterations=10, model="bert", duration=50.0, global_batch=32)
    pr = PerfModelRates(c)
    plan = ExecutionPlan(dp=8)
    s_req = pr.model_time(job, plan, {m0: 8}, 64)
    s_split = pr.model_time(job, plan, {m0: 4, m1: 4}, 64)
    # at the request: exactly duration / iterations = 5 s, whatever the perf model's absolute time
    assert pr.speed(job, plan, {m0: Resources(8, 64)})[0] == pytest.approx(5.0)
    assert pr.speed(job, plan, {m0: Resources(4, 32), m1: Resources(4, 32)})[0] == pytest.approx(5.0 * s_split / s_req)
    # tier rates: MobileNetV3, Dally Table 1: machine 42 %, rack 940 %; request of 8 GPUs = one machine
    mj = Job("m", Resources(8), iterations=10, model="mobilenetv3", attrs={"iter_time": 2.0})
    tr = TierRates(c)
    assert tr.speed(mj, plan, {m0: Resources(8)})[0] == pytest.approx(2.0)
    # rack 940 % is above the rates' bound (5x compute, Dally §3.1): 500 %
    assert tr.speed(mj, plan, {m0: Resources(4), m1: Resources(4)})[0] == pytest.approx(2.0 / 1.42 * 6.0)
    # 4 GPUs on one machine: compute per iteration doubles (linear in GPUs), overhead stays the machine's
    assert tr.speed(mj, ExecutionPlan(dp=4), {m0: Resources(4)})[0] == pytest.approx(2.0 * 2)
