"""Core types reject what is not a value at construction, naming the field; arithmetic stays
unchecked (a difference may be negative) and fast. Regression tests for issue 9's API examples."""

import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources
from schedlab.scheduling.instance import JobProgress
from schedlab.topology import preset
from schedlab.topology.errors import SpecError


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"gpus": -3}, "gpus"), ({"gpus": True}, "gpus"), ({"cpus": 1.5}, "cpus"), ({"gpus": "2"}, "gpus"),
    ({"mem_gb": math.nan}, "mem_gb"), ({"mem_gb": math.inf}, "mem_gb"), ({"mem_gb": -1.0}, "mem_gb"),
    ({"mem_gb": False}, "mem_gb"),
])
def test_resources_rejects(kwargs, field):  # issue 9: Resources(gpus=-3), Resources(gpus=True) were accepted
    with pytest.raises(SpecError) as ei:
        Resources(**kwargs)
    assert ei.value.field == field


def test_resources_normalises_numpy_and_int_memory():
    r = Resources(np.int64(4), np.int32(2), 3)
    assert (type(r.gpus), type(r.cpus), type(r.mem_gb)) == (int, int, float) and r == Resources(4, 2, 3.0)


def test_arithmetic_may_go_negative_and_is_reported():
    free, need = Resources(2, 4, 8.0), Resources(3, 1, 1.0)
    left = free - need  # "does it fit?" arithmetic: no error here ...
    assert left == Resources(0, 3, 7.0) - Resources(1, 0, 0.0) and not left.is_nonnegative()  # ... it says so
    assert -need + need == Resources() and Resources.total([free, -need]) == left
    assert pickle.loads(pickle.dumps(left)) == left


@given(a=st.tuples(st.integers(0, 64), st.integers(0, 256), st.floats(0, 1e6)),
       b=st.tuples(st.integers(0, 64), st.integers(0, 256), st.floats(0, 1e6)))
def test_arithmetic_is_componentwise(a, b):
    ra, rb = Resources(*a), Resources(*b)
    d = ra - rb
    assert (d.gpus, d.cpus) == (a[0] - b[0], a[1] - b[1]) and d.mem_gb == a[2] - b[2]
    assert (ra + rb) - rb == Resources(a[0], a[1], (a[2] + b[2]) - b[2])
    assert d.is_nonnegative() == (a[0] >= b[0] and a[1] >= b[1] and a[2] - b[2] >= -1e-9)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"arrival": math.nan}, "arrival"), ({"duration": -5}, "duration"), ({"duration": math.inf}, "duration"),
    ({"iterations": math.inf}, "iterations"), ({"iterations": True}, "iterations"), ({"priority": math.nan}, "priority"),
    ({"global_batch": 3.5}, "global_batch"), ({"num_layers": 0}, "num_layers"), ({"reconfigurable": 1}, "reconfigurable"),
    ({"model": None}, "model"), ({"tenant": ""}, "tenant"), ({"plan": "dp"}, "plan"), ({"requested": (1, 0, 0)}, "requested"),
    ({"attrs": [1]}, "attrs"), ({"id": 7}, "id"),
])
def test_job_rejects(kwargs, field):  # issue 9: Job(arrival=nan), Job(duration=-5) were accepted
    kw = {"id": "j", "requested": Resources(2)} | kwargs
    with pytest.raises(SpecError) as ei:
        Job(**kw)
    assert ei.value.field == field


def test_job_normalises_numbers():
    j = Job("j", Resources(1), iterations=10, arrival=np.float32(2.0), duration=np.int64(60), global_batch=np.int64(8))
    assert (type(j.iterations), type(j.arrival), type(j.duration), type(j.global_batch)) == (float, float, float, int)
    assert pickle.loads(pickle.dumps(j)) == j


def test_allocation_types_named():
    c = preset("tiresias-60")
    m = c.machines[0]
    with pytest.raises(SpecError, match="placement"):
        JobAllocation("a", ExecutionPlan(), {m: 2})
    with pytest.raises(SpecError, match="plan"):
        JobAllocation("a", "dp", {m: Resources(1)})
    with pytest.raises(SpecError, match="assignments"):
        Allocation({"a": {m: Resources(1)}})
    ok = JobAllocation("a", ExecutionPlan(), {})  # shape-valid; whether it makes sense is the verifier's call
    assert pickle.loads(pickle.dumps(Allocation.of([ok]))) == Allocation.of([ok])


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"progress": math.nan}, "progress"), ({"waited": -1.0}, "waited"), ({"preemptions": 1.5}, "preemptions"),
    ({"preemptions": True}, "preemptions"), ({"last_change": math.inf}, "last_change"),
])
def test_job_progress_rejects(kwargs, field):
    with pytest.raises(SpecError) as ei:
        JobProgress(**kwargs)
    assert ei.value.field == field


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"time": math.nan}, "time"), ({"time": -1.0}, "time"), ({"jobs": "ab"}, "jobs"), ({"jobs": (1,)}, "jobs[0]"),
    ({"quotas": {"t": (1, 2)}}, "quotas['t']"), ({"reserved": []}, "reserved"), ({"cluster": "tiresias-60"}, "cluster"),
    ({"progress": {"a": {"progress": 1.0}}}, "progress['a']"),
])
def test_instance_rejects(kwargs, field):
    kw = {"cluster": preset("tiresias-60"), "jobs": (Job("a", Resources(1)),)} | kwargs
    with pytest.raises(SpecError) as ei:
        Instance(**kw)
    assert ei.value.field == field


def test_instance_pickles():
    inst = Instance(preset("tiresias-60"), (Job("a", Resources(1), attrs={"k": 1}),), progress={"a": JobProgress(1.0)})
    again = pickle.loads(pickle.dumps(inst))
    assert again.jobs == inst.jobs and again.progress == inst.progress and again.cluster.name == "tiresias-60"
