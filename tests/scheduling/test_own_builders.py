"""The builders that skip a frozen dataclass's constructor on internal paths give the constructor's
value: ``Job.sibling``, ``own_allocation``, ``start_decision``, ``plain_trace_job``."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.workloads.trace import TraceJob, plain_trace_job
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import JobAllocation, own_allocation
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.policy import NO_DECISION, Decision, Timer, start_decision
from schedlab.scheduling.resources import Resources
from schedlab.topology.errors import SpecError

_TEMPLATE = Job("t", Resources(4, 8, 32.0), iterations=10.0, arrival=1.0, model="resnet50", tenant="a",
                plan=ExecutionPlan(dp=4), job_class=JobClass.GUARANTEED, reconfigurable=True, global_batch=128,
                duration=50.0, attrs={"k": 1}, min_resources=Resources(2))

_floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5))


def _same(a: Job, b: Job) -> None:
    assert a == b
    for f in Job.__dataclass_fields__:
        x, y = getattr(a, f), getattr(b, f)
        assert type(x) is type(y), f
    assert dict(a.attrs) == dict(b.attrs) and type(a.attrs) is type(b.attrs)


@settings(max_examples=300, deadline=None)
@given(jid=st.sampled_from(["j1", "", "x"]), it=_floats, arr=_floats, tenant=st.sampled_from(["b", ""]),
       dur=st.one_of(st.none(), _floats))
def test_sibling_is_the_constructors_job_or_error(jid, it, arr, tenant, dur):
    t = _TEMPLATE
    def build():
        return Job(jid, t.requested, iterations=it, arrival=arr, model=t.model, tenant=tenant, plan=t.plan,
                   job_class=t.job_class, reconfigurable=t.reconfigurable, global_batch=t.global_batch,
                   duration=dur, attrs={"rates": "tier"}, min_resources=t.min_resources)
    try:
        want = build()
    except SpecError as e:
        with pytest.raises(SpecError) as got:
            t.sibling(jid, it, arr, tenant, dur, {"rates": "tier"})
        assert str(got.value) == str(e)
        return
    _same(t.sibling(jid, it, arr, tenant, dur, {"rates": "tier"}), want)


def test_sibling_checks_like_the_constructor():
    with pytest.raises(SpecError):
        _TEMPLATE.sibling("j", math.inf, 0.0, "a", None, {})
    j = _TEMPLATE.sibling("j", 3, 2, "a", None, {})  # ints: the constructor's normalisation
    assert type(j.iterations) is float and type(j.arrival) is float


def test_own_allocation_and_start_decision_equal_the_constructors():
    p = {"m1": Resources(2, 4, 8.0), "m0": Resources(1)}
    ja = own_allocation("j", ExecutionPlan(dp=3), dict(p))
    ref = JobAllocation("j", ExecutionPlan(dp=3), dict(p))
    assert ja == ref and list(ja.placement.items()) == list(ref.placement.items())
    assert type(ja.placement) is type(ref.placement)
    d, rd = start_decision({"j": ja}), Decision(start={"j": ref})
    assert d == rd and not d.empty and type(d.start) is type(rd.start)
    e = start_decision({})
    assert e == Decision() == NO_DECISION and e.empty and e.start is Decision().start
    tm = (Timer(5.0, "x"),)
    for kw in ({"preempt": ("a", "b")}, {"timers": tm}, {"preempt": ("a",), "timers": tm}):
        d, rd = start_decision({"j": ja}, **kw), Decision(start={"j": ref}, **kw)
        assert d == rd and d.preempt == rd.preempt and d.timers == rd.timers and type(d.start) is type(rd.start)
        e, re_ = start_decision({}, **kw), Decision(**kw)
        assert e == re_ and e.start is re_.start and not e.empty


def test_plain_trace_job_equals_the_constructor():
    a = plain_trace_job("r1", 3.5, 2, None, "vc", 7)
    b = TraceJob("r1", 3.5, 2, None, tenant="vc", line=7)
    assert a == b and type(a.attrs) is type(b.attrs)
    assert plain_trace_job("r2", 0.0, 1, 9.0, "default", 1) == TraceJob("r2", 0.0, 1, 9.0, line=1)
