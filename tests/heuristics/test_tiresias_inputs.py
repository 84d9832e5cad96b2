"""Bad input to the Tiresias policies: clear errors naming the parameter, or the file and line, before
anything runs; and the ``tiresias`` semantics' reading of jobs (pool, uncut oversized jobs, whole seconds)."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.simulator import simulate
from schedlab.heuristics import POLICIES
from schedlab.topology.errors import SpecError


@pytest.mark.parametrize(("name", "params", "field", "words"), [
    ("2d-las", {"thresholds": [7200, 3600], "queues": 3}, "2d-las.thresholds", "strictly increasing"),
    ("2d-las", {"thresholds": [0, 3600], "queues": 3}, "2d-las.thresholds", "> 0"),
    ("2d-las", {"queues": 0}, "2d-las.queues", "greater than or equal to 1"),
    ("2d-gittins", {"knob": -1}, "2d-gittins.knob", "greater than 0"),
    ("2d-las", {"thresholds": [3600], "queues": 3}, "2d-las.params", "queues=3 needs 2"),
    ("2d-las", {"packlimit": 1.5}, "2d-las.packlimit", "less than or equal to 1"),
    ("dlas-gpu", {"queues": 2}, "dlas-gpu.queues", "fixed by this preset"),
    ("gandiva-like", {"quantum_s": 0}, "gandiva-like.quantum_s", "greater than 0"),
])
def test_bad_parameters_name_the_parameter(name, params, field, words):
    with pytest.raises(SpecError) as ei:
        POLICIES.build(name, params)
    assert ei.value.field == field and words in str(ei.value)


def test_unknown_preset():
    with pytest.raises(SpecError, match=r"unknown policy 'dlas-gpu-2'; known: .*dlas-gpu-gittins"):
        POLICIES.build("dlas-gpu-2")


@pytest.mark.parametrize(("text", "line", "words"), [
    ("", None, "empty"),
    ("duration\n", 1, "no samples"),
    ("duration\n10\nabc\n", 3, "not a number: 'abc'"),
    ("duration\n10\n-5\n", 3, ">= 0"),
    ("job,gpus\n1,2\n", 1, "no 'duration' column"),
])
def test_bad_gittins_distribution_file(tmp_path, text, line, words):
    p = tmp_path / "dist.csv"
    p.write_text(text)
    with pytest.raises(SpecError) as ei:
        POLICIES.build("2d-gittins", {"distribution": str(p)})
    assert ei.value.source == str(p) and ei.value.line == line and words in str(ei.value)
    with pytest.raises(SpecError):
        POLICIES.build("dlas-gpu-gittins", {"distribution": str(p)})


def test_missing_gittins_file(tmp_path):
    with pytest.raises(SpecError, match="not found"):
        POLICIES.build("2d-gittins", {"distribution": str(tmp_path / "nope.csv")})


def test_tiresias_semantics_one_pool_of_gpus(mk):
    """Under ``tiresias`` semantics the cluster is one machine holding every GPU (the artifact's
    ``count`` placement: a job fits when enough GPUs are free anywhere); the smallest GPU memory of
    the original machines, the sums of their CPUs and host memory. (The VC x FIFO reference tests show
    the effect on whole traces: consolidating inside machines was 2.3-2.4 % off on two VCs.)"""
    from schedlab.benchmarks.simulator import Simulator

    c = mk.cluster(3, 4, racks=2)
    sim = Simulator(c, [mk.job("x", 10, 5)], POLICIES.build("fifo"), semantics="tiresias")
    (m,) = sim.cluster.machines
    spec = sim.cluster.machine(m)
    assert (spec.gpus, spec.cpus, spec.gpu_memory_gb) == (24, 6 * 64, 16)
    res = sim.run()
    assert res.jobs[0].end == 5 and res.jobs[0].tiers == "machine"
    assert Simulator(c, [], POLICIES.build("fifo"), semantics="reference").cluster is c


def test_tiresias_semantics_keeps_oversized_jobs_uncut(mk):
    """A trace conversion cuts a 6-GPU job to the 4 GPUs of the cluster (keeping GPU-hours). The
    artifact never resizes: under ``tiresias`` semantics it gets its 6 GPUs back and never runs;
    FIFO blocks behind it for good (the jobs after it never start), 2D-LAS skips it."""
    from dataclasses import replace

    from schedlab.scheduling import Resources

    c = mk.cluster(1, 4)
    cut = replace(mk.job("big", 4, 15, arrival=1), attrs={"iter_time": 1.0, "requested_gpus": 6})
    jobs = [mk.job("a", 2, 10), cut, mk.job("c", 1, 5, arrival=2)]
    fifo = simulate(c, jobs, POLICIES.build("fifo"), semantics="tiresias")
    assert [r.job_id for r in fifo.jobs] == ["a"] and set(fifo.unfinished) == {"big", "c"}
    assert fifo.metrics["oversized_jobs"] == 1 and fifo.metrics["avg_jct"] == 10
    las = simulate(c, jobs, POLICIES.build("2d-las"), semantics="tiresias")
    assert las.unfinished == ("big",) and {r.job_id: r.end for r in las.jobs} == {"a": 10, "c": 7}
    assert simulate(c, jobs, POLICIES.build("fifo"), semantics="reference").unfinished == ()  # cut: it runs
    assert Resources(6) != cut.requested


def test_tiresias_semantics_whole_seconds(mk):
    """Arrivals and durations are floored to whole seconds (the artifact's ``int``): a job arriving
    at 1.7 s for 2.9 s arrives at 1 and runs 2 s; JCTs are whole seconds."""
    c = mk.cluster(1, 1)
    res = simulate(c, [mk.job("a", 1, 2.9, arrival=1.7)], POLICIES.build("fifo"), semantics="tiresias")
    r = res.jobs[0]
    assert (r.arrival, r.end, r.jct) == (1.0, 3.0, 2.0) and res.metrics["rounded_jobs"] == 1
