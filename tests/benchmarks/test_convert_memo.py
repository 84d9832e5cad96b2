"""The memoised trace conversion (one conversion per job shape, per-row work only) gives the jobs and
the assumption report that converting every row afresh gives: same jobs (``repr``, so attribute order
and number types too), same notes (counts, examples in order), same errors, strict and lenient."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.workloads.assumptions import AssumptionLog
from schedlab.benchmarks.workloads.convert import DALLY_MODELS, trace_to_jobs
from schedlab.benchmarks.workloads.trace import Trace, TraceJob
from schedlab.topology import preset
from schedlab.topology.errors import SchedlabError


@cache
def _cluster(name: str):
    return preset(name)


# few values per field, so shapes repeat (and notes fill their examples) within a table
_row = st.fixed_dictionaries({
    "gpus": st.sampled_from([1, 2, 3, 8, 200]),
    "duration": st.sampled_from([None, 10.0, 3600.0, 1e-9]),
    "model": st.sampled_from([None, "", "resnet50", "ResNet-50", "vgg16", "bert", "vit", "llama7", "no-such-net"]),
    "plan": st.sampled_from([None, None, None, "211", "121", "xyz"]),
    "batch_size": st.sampled_from([None, None, 16, 4096]),
    "cpus": st.sampled_from([None, None, 4]),
    "mem_gb": st.sampled_from([None, 2.0, 2]),
    "iterations": st.sampled_from([None, None, 100.0]),
    "guaranteed": st.booleans(),
    "attrs": st.sampled_from([{}, {"x": 1}, {"rates": "y", "iter_time": 0}]),
})


def _trace(rows: list[dict]) -> Trace:
    return Trace("t", "<test>", tuple(TraceJob(f"j{i}", float(i), line=i + 2, **r) for i, r in enumerate(rows)))


def _convert(trace: Trace, cluster: str, memo: bool, strict: bool, **kw):
    log = AssumptionLog(source="<test>", strict=strict)
    try:
        out = repr(trace_to_jobs(trace, _cluster(cluster), log=log, memo=memo, **kw))
    except SchedlabError as e:
        out = f"{type(e).__name__}: {e}"
    return out, repr(log.report())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kinds=st.lists(_row, min_size=1, max_size=5), picks=st.lists(st.integers(0, 4), min_size=1, max_size=60),
       cluster=st.sampled_from(["tiresias-60", "rubick-64"]), pool=st.booleans(), override=st.booleans(),
       lenient=st.sampled_from([True, True, True, False]), strict=st.sampled_from([False, False, False, True]),
       reconf=st.booleans(), keep_cpus=st.booleans(), seed=st.integers(0, 3))
def test_memoised_conversion_equals_fresh(kinds, picks, cluster, pool, override, lenient, strict, reconf, keep_cpus,
                                          seed):
    rows = []
    for k, i in enumerate(picks):  # a few row kinds, repeated; durations differ per row
        r = dict(kinds[i % len(kinds)])
        if r["duration"] is not None:
            r["duration"] *= 1 + k / 7
        rows.append(r)
    trace = _trace(rows)
    kw = dict(seed=seed, model_pool=DALLY_MODELS if pool else None, override_models=override, lenient=lenient,
              reconfigurable=reconf, keep_cpus=keep_cpus, min_gpus={"bert": 2})
    strict = strict and not lenient
    got = _convert(trace, cluster, True, strict, **kw)
    event("jobs" if got[0].startswith("(") else "error")
    assert got == _convert(trace, cluster, False, strict, **kw)


def test_memo_shares_shapes_and_fills_notes():
    """Many rows of two shapes: notes past their five examples are only counted (the sink's deferred
    counts reach the report), and a shape's plan and request are converted once."""
    rows = [dict(gpus=200 if i % 2 else 1, duration=100.0 + i) for i in range(50)]
    trace = _trace(rows)
    ref = _convert(trace, "tiresias-60", False, False, model_pool=DALLY_MODELS, seed=1)
    assert _convert(trace, "tiresias-60", True, False, model_pool=DALLY_MODELS, seed=1) == ref
    log = AssumptionLog(source="<test>")
    jobs = trace_to_jobs(trace, _cluster("tiresias-60"), log=log, model_pool=DALLY_MODELS, seed=1)
    rep = log.report()
    assert rep.count("model-pool") == 50 and rep.count("gpus-resized") == 25
    assert [e.job for e in rep.get("gpus-resized")[0].examples] == ["j1", "j3", "j5", "j7", "j9"]
    assert [j.duration for j in jobs[:2]] == pytest.approx([100.0, 101.0 * 200 / 60])


_BASE = dict(gpus=2, duration=3600.0, model="resnet50", plan=None, batch_size=None, cpus=None, mem_gb=None,
             iterations=None, guaranteed=False)
_OTHER = [("gpus", 1), ("gpus", 200), ("model", "vit"), ("model", "bert"), ("plan", "211"), ("batch_size", 16),
          ("cpus", 4), ("mem_gb", 2.0), ("iterations", 100.0), ("duration", None), ("guaranteed", True)]


@pytest.mark.parametrize(("name", "value"), _OTHER)
@pytest.mark.parametrize("base_model", ["resnet50", "vit"])
def test_rows_one_field_apart_are_other_shapes(name, value, base_model):
    """Two row kinds differing in one shape field alternate: each keeps its own plan, request and notes."""
    base = dict(_BASE, model=base_model, iterations=100.0 if name == "duration" else None)
    other = dict(base, **{name: value})
    trace = _trace([dict(r, duration=None if r["duration"] is None else r["duration"] + k)
                    for k, r in enumerate([base, other] * 8)])
    for cluster in ("tiresias-60", "rubick-64"):
        kw = dict(lenient=True, reconfigurable=True)
        assert _convert(trace, cluster, True, False, **kw) == _convert(trace, cluster, False, False, **kw)
