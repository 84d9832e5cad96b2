"""Rubick's pass on random states (Hypothesis, hand-written tables from ``_rubick_tables.py``): every
decision is valid and never over-commits a machine, and the pass's speed shortcuts (issue 25) give the
decision of the plain pass. The hand-worked scenarios are in ``test_rubick_by_hand.py``, the decisions
that must hold (issue 22) in ``test_rubick_decisions.py``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.heuristics.rubick import RubickPolicy
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Instance, validate_allocation
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import JobProgress
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.snapshot import snapshot_view

from ._rubick_tables import TableBook, a800_cluster, table_job, table_policy

# ------------------------------------------------------------------------- property
CURVES = {"c1": [0, 10, 19, 27, 34, 40, 45, 49, 52, 54, 56, 58, 60, 61, 62, 63, 64],
          "c2": [0, 10, 20, 30, 40, 50, 60, 70, 80, 88, 96, 104, 112, 118, 124, 130, 136],
          "c3": [0, 5, 12, 0, 30, 0, 0, 0, 70, 0, 0, 0, 0, 0, 0, 0, 130]}


@st.composite
def passes(draw):
    """A 2 x 8-GPU cluster with 2-8 jobs of three curve shapes, some running (placed first fit at their
    request), some guaranteed (tenant A, quota 8), with random restart histories."""
    n = draw(st.integers(2, 8))
    jobs, current, progress = [], {}, {}
    free = [8, 8]
    for i in range(n):
        model = draw(st.sampled_from(sorted(CURVES)))
        valid = [g for g in range(1, 9) if CURVES[model][g] > 0]
        g = draw(st.sampled_from(valid))
        guar = draw(st.booleans()) and g <= 4
        job = table_job(f"j{i}", model, g, guaranteed=guar, tenant="A" if guar else "B", min_gpus=g if guar else None)
        jobs.append(job)
        m = next((k for k in (0, 1) if free[k] >= g), None)
        if m is not None and draw(st.booleans()):
            free[m] -= g
            current[job.id] = JobAllocation(job.id, ExecutionPlan(dp=g), {CLUSTER2.machines[m]: Resources(g, g)})
            progress[job.id] = JobProgress(executed=draw(st.sampled_from([0.0, 100.0, 5000.0])),
                                           preemptions=draw(st.integers(0, 2)))
    quota = {"A": Resources(8)}
    usage = sum(j.requested.gpus for j in jobs if j.guaranteed and j.id in current)
    if usage > 8:
        return None
    return Instance(CLUSTER2, tuple(jobs), current=Allocation(current), quotas=quota, time=6000.0, progress=progress)


CLUSTER2 = a800_cluster(2)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(passes())
def test_every_decision_is_valid_and_never_over_commits(inst):
    """Whatever the state: the decision's allocation passes the verifier; applying it to the machines
    (reconfigured jobs release first, preempted ones keep their GPUs until their checkpoint) never
    over-commits a machine; guaranteed jobs are never preempted and never run below minRes."""
    if inst is None:
        return
    pol = table_policy(CLUSTER2, CURVES)
    d = pol.schedule(snapshot_view(inst))
    alloc = Allocation({**{j: ja for j, ja in inst.current.assignments.items() if j not in d.preempt},
                        **dict(d.start)})
    assert validate_allocation(inst, alloc) == []
    for m in CLUSTER2.machines:
        held = sum(ja.placement[m].gpus for j, ja in inst.current.assignments.items()
                   if m in ja.placement and j not in d.start)
        new = sum(ja.placement[m].gpus for ja in d.start.values() if m in ja.placement)
        assert held + new <= 8, (m, held, new)
    for j in d.preempt:
        assert not inst.job(j).guaranteed


# ------------------------------------------------------------- issue 25: speed shortcuts change nothing
class _EagerRubick(RubickPolicy):
    """Rubick without its pass shortcuts: every running job's entry built up front, and a queued job's
    failed ScheduleJob never taken as the answer for an alike job."""

    incremental = False  # every pass built from every job (the kept-across-passes records are in
    # tests/heuristics/test_rubick_residents.py)

    def _running_entry(self, st, jv, view, seq, *, lazy=False):
        return super()._running_entry(st, jv, view, seq, lazy=False)

    @staticmethod
    def _signature(e):
        return (e.jid,)

    def _two_lowest(self, st):  # a scan of every entry per state instead of the pass's heap
        return self._scan_two_lowest(st)

    def _active(self, st, e, sat):  # every machine visited by _take_gpus
        return set(st.machines)


class _CheckedRubick(RubickPolicy):
    """Rubick whose heap of lowest losses is compared with a scan at every state it answers for, and whose
    passed-over machines are checked to be ones where ``_take_gpus`` changes nothing."""

    def _two_lowest(self, st):
        got = super()._two_lowest(st)
        assert got == self._scan_two_lowest(st)
        return got

    def _active(self, st, e, sat):
        act = super()._active(st, e, sat)
        for m in st.machines:
            if act is not None and m not in act:
                mark, version = st.mark(), st.version
                self._take_gpus(st, e, m, sat, [])
                assert (len(st.log), st.version) == (mark, version), m
        return act


@settings(max_examples=60, deadline=None, derandomize=True)
@given(passes(), st.booleans(), st.integers(0, 6))
def test_pass_shortcuts_do_not_change_the_decision(inst, rigid, alike):
    """Lazily built entries of running jobs and the shared failure of alike queued jobs give the decision
    of the plain pass, with elastic or rigid jobs and extra queued copies of one job."""
    if inst is None:
        return
    from dataclasses import replace

    jobs = list(inst.jobs)
    jobs += [replace(jobs[-1], id=f"copy{i}") for i in range(alike)]
    if rigid:
        jobs = [replace(j, reconfigurable=False) for j in jobs]
    inst = replace(inst, jobs=tuple(jobs))
    for starving in (None, 1000.0):
        got = table_policy(CLUSTER2, CURVES, starvation_s=starving).schedule(snapshot_view(inst))
        eager = _EagerRubick(starvation_s=starving)
        eager.use_curves(TableBook(CLUSTER2, CURVES))
        want = eager.schedule(snapshot_view(inst))
        assert (got.start, got.preempt, got.timers) == (want.start, want.preempt, want.timers)
        checked = _CheckedRubick(starvation_s=starving)
        checked.use_curves(TableBook(CLUSTER2, CURVES))
        again = checked.schedule(snapshot_view(inst))
        assert (again.start, again.preempt, again.timers) == (want.start, want.preempt, want.timers)


def test_pass_shortcuts_on_the_rubick_mix():
    """The lowest-loss heap and the passed-over machines on a busy 64-GPU cluster of the Rubick mix (200
    jobs, Rubick's own decision running, the rest queued): checked at every state, and the decision is
    the plain pass's."""
    from schedlab.benchmarks.workloads.convert import trace_to_jobs
    from schedlab.benchmarks.workloads.named import rubick_trace
    from schedlab.topology import preset

    cluster = preset("rubick-64")
    trace, quotas = rubick_trace("base", cluster, seed=0, n=200)
    jobs = trace_to_jobs(trace, cluster, seed=0, reconfigurable=True)
    running = RubickPolicy().decide(Instance(cluster, jobs, quotas=quotas))
    busy = Instance(cluster, jobs, current=running, quotas=quotas, time=600.0)
    got = _CheckedRubick().schedule(snapshot_view(busy))
    want = _EagerRubick().schedule(snapshot_view(busy))
    assert got.start and (got.start, got.preempt, got.timers) == (want.start, want.preempt, want.timers)
