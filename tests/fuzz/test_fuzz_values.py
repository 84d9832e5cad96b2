"""Fuzz the Python API's core types: any value either builds a valid object (numbers normalised) or
raises ``SchedlabError`` naming the field; nothing else escapes (no TypeError, no silent acceptance)."""

from __future__ import annotations

import math

from fuzz.strategies import fuzz, nasty_values
from hypothesis import given
from hypothesis import strategies as st

from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources
from schedlab.scheduling.instance import JobProgress
from schedlab.topology import LinkSpec, SchedlabError, preset
from schedlab.topology.spec import MachineSpec

SMALL = preset("tiresias-60")
maybe = st.one_of(nasty_values(), st.integers(0, 8), st.floats(0, 100))


def _builds(cls, **kw):
    try:
        return cls(**kw)
    except SchedlabError as e:
        assert str(e), "an error must say what is wrong"
        return None


@fuzz(150)
@given(g=maybe, c=maybe, m=maybe)
def test_resources(g, c, m):
    r = _builds(Resources, gpus=g, cpus=c, mem_gb=m)
    if r is not None:
        assert type(r.gpus) is int and type(r.cpus) is int and type(r.mem_gb) is float
        assert r.gpus >= 0 and r.cpus >= 0 and math.isfinite(r.mem_gb) and r.mem_gb >= 0
        assert not isinstance(g, bool) and not isinstance(c, bool) and not isinstance(m, bool)


JOB_FIELDS = ("id", "requested", "iterations", "arrival", "model", "tenant", "plan", "job_class", "reconfigurable",
              "max_tier", "min_resources", "global_batch", "num_layers", "duration", "priority", "attrs")


@fuzz(150)
@given(field=st.sampled_from(JOB_FIELDS), value=nasty_values())
def test_job_one_bad_field(field, value):
    kw = {"id": "j", "requested": Resources(2, 4, 8.0)}
    kw[field] = value
    j = _builds(Job, **kw)
    if j is not None:
        for name in ("iterations", "arrival", "priority"):
            assert type(getattr(j, name)) is float and math.isfinite(getattr(j, name))
        assert j.iterations > 0 and j.arrival >= 0
        assert j.duration is None or (type(j.duration) is float and 0 < j.duration < math.inf)
        assert isinstance(j.id, str) and j.id and isinstance(j.reconfigurable, bool)


@fuzz(80)
@given(job=st.one_of(st.just("a"), nasty_values()), plan=st.one_of(st.just(ExecutionPlan(dp=2)), nasty_values()),
       machine=st.one_of(st.sampled_from(SMALL.machines[:2]), nasty_values().filter(lambda v: v.__hash__)),
       res=st.one_of(st.just(Resources(2)), nasty_values()))
def test_allocations(job, plan, machine, res):
    try:
        ja = JobAllocation(job, plan, {machine: res})
        alloc = Allocation.of([ja])
    except (SchedlabError, TypeError) as e:  # TypeError only for unhashable keys, raised by dict itself
        assert not isinstance(e, TypeError) or "unhashable" in str(e)
        return
    assert isinstance(ja.job_id, str) and isinstance(ja.plan, ExecutionPlan) and len(alloc) == 1
    assert all(isinstance(m, str) and isinstance(r, Resources) for m, r in ja.placement.items())


@fuzz(80)
@given(field=st.sampled_from(("progress", "attained", "executed", "waited", "preemptions", "last_change")),
       value=nasty_values())
def test_job_progress(field, value):
    p = _builds(JobProgress, **{field: value})
    if p is not None:
        assert all(math.isfinite(x) and x >= 0 for x in (p.progress, p.attained, p.executed, p.waited))
        assert type(p.preemptions) is int and p.preemptions >= 0


@fuzz(80)
@given(field=st.sampled_from(("jobs", "current", "quotas", "reserved", "time", "progress", "cluster")),
       value=nasty_values())
def test_instance(field, value):
    kw = {"cluster": SMALL, "jobs": (Job("a", Resources(1)),)}
    kw[field] = value
    inst = _builds(Instance, **kw)
    if inst is not None:
        assert all(isinstance(j, Job) for j in inst.jobs) and math.isfinite(inst.time)


@fuzz(80)
@given(field=st.sampled_from(("name", "rack", "gpus", "gpu_model", "gpu_memory_gb", "cpus", "host_memory_gb",
                              "pcie_gbps", "intra", "bandwidth", "latency")), value=nasty_values())
def test_spec_values(field, value):
    kw = {"name": "m", "rack": "r", "gpus": 4, "gpu_model": "x", "gpu_memory_gb": 16.0, "cpus": 8,
          "host_memory_gb": 64.0, "intra": LinkSpec(10.0), "uplink": LinkSpec(5.0), "pcie_gbps": 16.0}
    if field in ("bandwidth", "latency"):
        link = _builds(LinkSpec, **{"bandwidth_gbps": 10.0, "latency_us": 0.0,
                                    ("bandwidth_gbps" if field == "bandwidth" else "latency_us"): value})
        if link is not None:
            assert 0 < link.bandwidth_gbps < math.inf and 0 <= link.latency_us < math.inf
        return
    kw[field] = value
    m = _builds(MachineSpec, **kw)
    if m is not None:
        assert type(m.gpus) is int and 0 <= m.gpus <= 10_000 and type(m.cpus) is int and m.cpus >= 0
        assert all(math.isfinite(v) and v >= 0 for v in (m.gpu_memory_gb, m.host_memory_gb, m.pcie_gbps))
