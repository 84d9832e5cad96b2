"""SRTF/SRSF's incremental decisions equal the artifact's loop taken literally: sort every active job
(stably, by its integer remaining time or service, :mod:`srtf_keys`) at every event and refill the pool in that order.

``Resort`` below is that literal loop (schedlab's SRTF before the incremental form); Hypothesis
draws workloads full of ties (whole-second durations and arrivals), both semantics, with and without
tenants' quotas, and the two must give the same schedule to the job.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import Recorder, simulate
from schedlab.benchmarks.workloads import get_workload
from schedlab.heuristics import POLICIES
from schedlab.heuristics.baselines.srtf import ShortestRemaining
from schedlab.heuristics.baselines.srtf_keys import anchor, clock, key_at
from schedlab.heuristics.fifo import QuotaLedger, fill_pool
from schedlab.scheduling import Job, Resources
from schedlab.scheduling.policy import ClusterView, Decision, EventKind, JobStatus
from schedlab.topology.presets import preset

from .conftest import cluster as mk_cluster


class Resort(ShortestRemaining):
    """The literal loop: keys of running jobs refreshed and every active job re-sorted at every event."""

    def schedule(self, view: ClusterView) -> Decision:
        if view is not self._view:
            self._view = view
            self.order = [jv.id for jv in view.running()] + [jv.id for jv in view.queue()]
            self.rem, self.gpus, self.stale = {}, {}, False
            for jid in self.order:
                self._add(view, jid)
        else:
            done = {e.job_id for e in view.events if e.kind is EventKind.COMPLETION}
            self.order = [j for j in self.order if j not in done]
            for e in view.events:
                if e.kind is EventKind.ARRIVAL:
                    self.order.append(e.job_id)
                    self._add(view, e.job_id)
        active = {j: self.gpus[j] for j in self.order}
        if not view.quotas and sum(active.values()) <= view.cluster.total_gpus:
            self.stale = True
            return self._start_all(view)
        for jid in (self.order if self.stale else [jv.id for jv in view.running()]):
            self.rem[jid] = self._key(view, jid)
        self.stale = False
        self.order.sort(key=self.rem.__getitem__)
        ckpt = {jv.id: jv.job.requested.gpus for jv in view.running() if jv.status is JobStatus.CHECKPOINTING}
        free = view.cluster.total_gpus - sum(ckpt.values())
        quota = QuotaLedger(view, (view.job(j).job for j in ckpt)) if view.quotas else None
        chosen = fill_pool(view, self.order, active, free, ckpt, quota)
        keep = set(chosen)
        preempt = tuple(jv.id for jv in view.running() if jv.id not in keep and jv.status is not JobStatus.CHECKPOINTING)
        ps = self.starter.pass_state(view, preempt)
        hold = QuotaLedger.after_preemption(view, preempt) if quota is not None else None
        starts = {}
        for jid in chosen:
            if view.job(jid).status is JobStatus.QUEUED:
                job = view.job(jid).job
                if hold is not None and not hold.admits(job):
                    continue
                ja = self.starter.start(view, ps, job, consolidate=True)
                if ja is not None:
                    starts[jid] = ja
                    if hold is not None:
                        hold.take(job)
        return Decision(start=starts, preempt=preempt)

    def _add(self, view, jid):
        self.rem[jid] = self._key(view, jid)
        self.gpus[jid] = view.job(jid).job.requested.gpus

    def _key(self, view, jid):
        """The integer key now (:func:`srtf_keys.key_at` of the job's motion now), job by job."""
        job = view.job(jid).job
        p, r, m, st = view.motion_of([jid])[0]
        a, s = anchor(p, r, m, st is JobStatus.RUNNING, job.iterations, job.duration)
        return key_at(a, s, clock(view.now), job.requested.gpus, self.gpu_weighted)


def _schedule(res):
    return sorted((r.job_id, r.first_start, r.end, r.preemptions) for r in res.jobs)


def _both(cluster, jobs, weighted, semantics, **kw):
    out = []
    for cls in (ShortestRemaining, Resort):
        rec = Recorder(keep_segments=True)
        res = simulate(cluster, jobs, cls(gpu_weighted=weighted), semantics=semantics, recorder=rec, **kw)
        out.append((_schedule(res), sorted((s.job_id, s.start, s.end) for s in rec.segments)))
    return out


_jobs = st.lists(st.tuples(st.sampled_from((1, 1, 1, 2, 2, 4, 8)), st.integers(1, 60), st.one_of(st.integers(0, 4), st.integers(0, 80)),
                           st.booleans()), min_size=2, max_size=30)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(spec=_jobs, machines=st.integers(1, 3), gpus=st.sampled_from((2, 4, 8)), weighted=st.booleans(),
       semantics=st.sampled_from(("tiresias", "realistic")))
def test_incremental_equals_resort_every_event(spec, machines, gpus, weighted, semantics):
    cluster = mk_cluster(machines, gpus)
    jobs = [Job(f"j{i}", Resources(min(g, cluster.total_gpus)), iterations=float(d) + (0.5 if frac else 0.0),
                arrival=float(a), duration=float(d) + (0.5 if frac else 0.0), attrs={"iter_time": 1.0, "rates": "reference"})
            for i, (g, d, a, frac) in enumerate(spec)]
    new, old = _both(cluster, jobs, weighted, semantics)
    assert new == old


def test_incremental_equals_resort_with_quotas():
    """Multi-tenant ``smoke-mt`` (guaranteed jobs under quotas): the merged walk with the quota ledger."""
    spec = get_workload("smoke-mt")
    cluster = preset(spec.cluster)
    w = spec.build(cluster, seed=0)
    jobs = sorted(w.jobs, key=lambda j: (j.arrival, j.id))[:60]
    for weighted in (False, True):
        for semantics in ("tiresias", "realistic"):
            new, old = _both(cluster, jobs, weighted, semantics, quotas=w.quotas)
            assert new == old, (weighted, semantics)


def test_registered_presets_are_the_incremental_form():
    assert all(type(POLICIES.build(n)) is ShortestRemaining for n in ("srtf", "srsf", "shortest", "shortest-gpu"))
