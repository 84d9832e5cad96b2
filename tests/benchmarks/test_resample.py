"""Seeded trace resampling (``WorkloadSource.resample="bootstrap"``): arrivals kept, each arrival's job
drawn with replacement from the trace's jobs; the same seed gives the same workload."""

from __future__ import annotations

from collections import Counter

import pytest

from schedlab.benchmarks.harness.replay import ReplayCase
from schedlab.benchmarks.workloads import generators as gen
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.topology.errors import SpecError

ROWS = [(0.0, 1, 60.0), (10.0, 2, 600.0), (25.0, 4, 3600.0), (40.0, 8, 7200.0), (41.0, 1, 30.0),
        (90.0, 16, 900.0), (120.0, 2, 45.0), (130.0, 1, 12_000.0)]


def _trace():
    submits, gpus, durs = zip(*ROWS, strict=True)
    return gen.synthetic_trace("t", submits, gpus, durs, models=[f"m{i}" for i in range(len(ROWS))])


def _body(j):  # the job row without its arrival and id
    return (j.gpus, j.duration, j.model, j.tenant, j.line)


def test_bootstrap_is_seeded_keeps_arrivals_and_draws_from_the_trace():
    tr = _trace()
    a, b, c = gen.bootstrap(tr, seed=3), gen.bootstrap(tr, seed=3), gen.bootstrap(tr, seed=4)
    assert a == b  # same seed, same workload
    assert [_body(j) for j in a.jobs] != [_body(j) for j in c.jobs]  # another seed, another draw
    for r in (a, c):
        assert [(j.id, j.submit) for j in r.jobs] == [(j.id, j.submit) for j in tr.jobs]  # arrivals identical
        pool = {_body(j) for j in tr.jobs}
        assert all(_body(j) in pool for j in r.jobs)  # every job's attributes are one trace job's, whole
    # with replacement: some trace job is drawn more than once in one of the draws
    assert any(max(Counter(_body(j) for j in r.jobs).values()) > 1 for r in (a, c))


def _philly(tmp_path):
    lines = ["timestamp,duration,num_gpus,gpu_time,cluster"]
    for i, (sub, g, d) in enumerate(ROWS):
        lines.append(f"2017-10-09 06:{int(sub) // 60:02d}:{int(sub) % 60:02d},{d},{g},{g * d},vc{i % 2}")
    p = tmp_path / "p.csv"
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def test_source_resample_workload_and_notes(tmp_path):
    trace = _philly(tmp_path)
    src = WorkloadSource(trace=trace, trace_format="philly", cluster="tiresias-60", seed=2, load=2.0,
                         resample="bootstrap")
    w1, _ = src.build()
    w2, _ = src.build()
    w0, _ = WorkloadSource(trace=trace, trace_format="philly", cluster="tiresias-60", seed=2, load=2.0).build()
    w3, _ = WorkloadSource(trace=trace, trace_format="philly", cluster="tiresias-60", seed=5, load=2.0,
                           resample="bootstrap").build()
    key = [(j.arrival, j.requested.gpus, j.duration, j.model) for j in w1.jobs]
    assert key == [(j.arrival, j.requested.gpus, j.duration, j.model) for j in w2.jobs]
    assert [j.arrival for j in w1.jobs] == [j.arrival for j in w0.jobs] == [j.arrival for j in w3.jobs]
    assert Counter((j.requested.gpus, j.duration) for j in w1.jobs) != Counter((j.requested.gpus, j.duration) for j in w0.jobs)
    assert {(j.requested.gpus, j.duration) for j in w1.jobs} <= {(j.requested.gpus, j.duration) for j in w0.jobs}
    assert [(j.requested.gpus, j.duration) for j in w3.jobs] != [(j.requested.gpus, j.duration) for j in w1.jobs]
    note = w1.assumptions.get("resample")
    assert len(note) == 1 and "resampled: bootstrap, seed 2" in note[0].what and note[0].count == len(ROWS)
    assert not note[0].assumption  # asked for: reported, never rejected by --strict
    assert w1.setting["resample"] == "bootstrap, seed 2" and "resample" not in w0.setting
    assert not w0.assumptions.get("resample")


def test_resample_validation_names_the_field(tmp_path):
    with pytest.raises(SpecError) as e:
        WorkloadSource(trace=_philly(tmp_path), trace_format="philly", resample="jackknife").check()
    assert e.value.field == "resample" and "bootstrap" in str(e.value)
    with pytest.raises(SpecError) as e:
        WorkloadSource(workload="tiresias-480", resample="bootstrap").check()
    assert e.value.field == "resample"


def test_resample_is_part_of_the_case_key_and_old_keys_stay():
    plain = ReplayCase(WorkloadSource(trace="x.csv", trace_format="philly"), "fifo")
    rs = ReplayCase(WorkloadSource(trace="x.csv", trace_format="philly", resample="bootstrap"), "fifo")
    assert plain.key() != rs.key()
    assert "resample" not in plain.key() and '"resample": "bootstrap"' in rs.key()  # stores from before match
    assert ReplayCase.from_spec(rs.spec()) == rs and ReplayCase.from_spec(plain.spec()) == plain
    assert "resample=bootstrap" in rs.instance_id()
