"""Round 6 fast paths of 2D-LAS / 2D-Gittins against the code they replaced (issue 25): the pass and the
placement loop of main fa0b900 are kept below verbatim (``OldPath``) and replayed beside the policy on
random small workloads (Hypothesis) and on a compressed Philly window, records compared to the bit. The
replaced pieces: a claim whose shape failed since the pass state last changed is not searched again
(``failed`` in ``_place``); same-queue victims from a list with a pointer past the ones already taken and
``bisect_left`` instead of ``np.searchsorted`` (``same`` in ``_pass``); no ``take`` after the last
placement; deadline heaps read only when a head is due; reserved claims kept sorted (``resv_keys``);
one-machine consolidated searches resumed from per-pass cursors (``PassCursors``). Round 7 (branch las7)
is checked against the same reference: spread placements resumed from the cursors too (``OldPath`` turns the
cursors off), the GPU bound read before a claim's search, the skew kept with the shape, the start's
bookkeeping inline in ``_place`` (now in ``passes.py``)."""

from __future__ import annotations

import heapq
from bisect import bisect_left

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import Recorder, Simulator
from schedlab.benchmarks.simulator.digest import records_digest
from schedlab.heuristics import POLICIES
from schedlab.heuristics.tiresias.las import TiresiasPolicy
from schedlab.heuristics.tiresias.passes import _Quota
from schedlab.heuristics.tiresias.queues import RESV, RUN, QJob
from schedlab.scheduling import Job, Resources
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import ClusterView

from ..formulations.conftest import tiny_cluster


class OldPath(TiresiasPolicy):
    """``_pass`` and ``_place`` as main fa0b900 had them."""

    def _pass(self, view: ClusterView) -> tuple[dict[str, JobAllocation], tuple[str, ...]]:
        st = self.st
        instant = view.checkpoint_s == 0
        free = view.cluster.total_gpus - self._outside - sum(st.held) - st.ckpt_gpus
        quota = _Quota(view, st) if view.quotas else None
        preempted: list[QJob] = []
        for q in range(self.k):
            below = st.below(q)
            # 2D-Gittins: a waiting job may also preempt running jobs of its own queue with a lower index
            gq = self._gittins_queue(q)
            same: list[QJob] | None = None  # their indices, computed once when first needed
            same_g = same_order = np.empty(0)
            cap = [free + below + (st.run_gpus[q] if gq else 0)]
            if cap[0] <= 0:
                break
            claimed: list[QJob] = []
            back: list[QJob] = []  # same-queue victims: back to waiting once the walk is over
            for s, _, key in st.walk(q, cap):
                j = st.jobs[key[3]]
                if quota is not None and not quota.ok(j):
                    continue
                if s > free:
                    mine: list[QJob] = []
                    if s > free + below:
                        if same is None:
                            same_g, same_order, same = self._running_index(view, q)
                            same_g = same_g * (1.0 + self.margin)
                        # low enough to be preempted: (1 + margin) x index below the claimant's; index 0
                        # (no sample above the job's service) is the lowest priority and preemptible too
                        n = int(np.searchsorted(same_g, -key[0], side="left"))
                        short, got = s - free - below, 0  # GPUs its own queue must give
                        for i in same_order[:n]:
                            v = same[i]
                            if v.state == RUN:
                                mine.append(v)
                                got += v.g
                                if got >= short:
                                    break
                        if got < short:
                            cap[0] = min(cap[0], s - 1)  # later jobs have lower indices: none of size >= s fits
                            continue
                    got, lower = self._evict(view, q, s - free, instant, preempted, quota, mine, back)
                    free += got
                    below -= lower
                claimed.append(j)
                free -= s
                cap[0] = min(cap[0], free + below + (st.run_gpus[q] if gq else 0))
                if quota is not None:
                    quota.add(j)
            for j in claimed:
                st.remove_waiting(j)
                st.add_reserved(j)
            for v in back:
                self._to_waiting(view, v)
        return self._place(view, preempted, instant)


    def _place(self, view: ClusterView, preempted: list[QJob], instant: bool
               ) -> tuple[dict[str, JobAllocation], tuple[str, ...]]:
        self.starter.cursors = False  # (the one line main had not: placement searches as main made them)
        st = self.st
        if instant and preempted:
            # a victim that a later queue's walk claimed again (GPUs a larger victim left over) keeps
            # running where it is: neither preempted nor restarted in the same decision
            again = [v for v in preempted if v.state == RESV]
            for v in again:
                st.remove_reserved(v)
                v.k0, v.ver = 0.0, v.ver + 1
                v.pack_deadline, v.pack_expired = None, False
                self._set_running(view, v)
                self._push_demotion(view, v)
            if again:
                preempted = [v for v in preempted if v.state != RUN]
        ps = self.starter.pass_state(view, [v.id for v in preempted])
        starts: dict[str, JobAllocation] = {}
        now = view.now
        limit = self.packlimit
        stuck = self._stuck
        if preempted and instant:
            stuck.clear()  # GPUs given back in this decision: every claim may fit now
        for j in sorted((st.jobs[jid] for jid in st.resv if jid not in stuck), key=lambda x: (x.q, x.key)):
            job = j.job
            skew = self.traits.skew(job)
            skewed = skew > limit
            ja = self.starter.start(view, ps, job, consolidate=skewed,
                                    allow_spread=not skewed or j.pack_expired or self.pack_wait_s == 0)
            if ja is None:
                stuck.add(j.id)  # retried once GPUs are given back (or its consolidation wait ends)
                if skewed and not j.pack_expired and j.pack_deadline is None:
                    j.pack_deadline = now + self.pack_wait_s
                    heapq.heappush(self._pack, (j.pack_deadline, j.ver, j.id))
                continue
            st.remove_reserved(j)
            j.k0 = 0.0
            if j.band == 1:
                j.band, j.stamp = 0, st.next_stamp()
            j.ver += 1
            j.pack_deadline, j.pack_expired = None, False
            self._set_running(view, j)
            jv = view.job(j.id)
            if j.wait0 is None:
                j.wait0 = jv.waiting_time
            self._push_demotion(view, j)
            starts[j.id] = ja
            if self.learner is not None:
                self.learner.observe(view, job, ja.placement, skew)
        return starts, tuple(v.id for v in preempted)



def _replay(pol, cluster, jobs, costs) -> str:
    sim = Simulator(cluster, jobs, pol, semantics="realistic", costs=costs, recorder=Recorder(keep_segments=True))
    sim.run()
    return records_digest(sim.recorder)


def _pair(gittins: bool, **kw) -> tuple[TiresiasPolicy, OldPath]:
    return TiresiasPolicy(gittins=gittins, **kw), OldPath(gittins=gittins, **kw)


jobs_st = st.lists(st.tuples(st.sampled_from([1, 1, 2, 3, 4, 4, 8, 12]), st.floats(0.0, 3000.0),
                             st.floats(20.0, 20000.0), st.sampled_from(["resnet50", "skewed", "flat"])),
                   min_size=1, max_size=60)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(spec=jobs_st, gittins=st.booleans(), machines=st.integers(2, 5), racks=st.integers(1, 2),
       instant=st.booleans(), threshold=st.sampled_from([200.0, 3600.0]), knob=st.sampled_from([None, 2.0]),
       pack_wait=st.sampled_from([0.0, 300.0]), packlimit=st.sampled_from([0.0, 0.5, 1.0]))
def test_policy_replays_as_the_old_pass(spec, gittins, machines, racks, instant, threshold, knob, pack_wait,
                                        packlimit):
    from schedlab.benchmarks.simulator.costs import CostModel

    cluster = tiny_cluster(machines=machines, gpus=4, racks=racks)
    cap = cluster.total_gpus
    skews = {"skewed": {"skew": 0.8}, "flat": {"skew": 0.1}}  # (unknown models: the skew from attrs)
    jobs = tuple(Job(f"j{i}", Resources(min(g, cap)), iterations=d, model=m, duration=d, arrival=a,
                     attrs=skews.get(m, {})) for i, (g, a, d, m) in enumerate(spec))
    costs = CostModel(0.0, 0.0, 0.0) if instant else CostModel()
    new, old = _pair(gittins, threshold=threshold, knob=knob, pack_wait_s=pack_wait, min_history=3,
                     packlimit=packlimit)
    assert _replay(new, cluster, jobs, costs) == _replay(old, cluster, jobs, costs)


@pytest.mark.parametrize("gittins", [False, True])
def test_compressed_philly_window_replays_as_the_old_pass(gittins, traces_dir):
    """3,000 Philly jobs with arrivals compressed 2,000-fold (23,000 preemptions under 2D-Gittins): claims
    that cannot be placed while their victims checkpoint, same-queue Gittins preemptions (the ``gittins-p99`` replay's regime)."""
    # (``traces_dir``: the philly workload is drawn from the Philly table, skipped where it is absent)
    from schedlab.benchmarks.workloads import get_workload
    from schedlab.topology.presets import preset

    cluster = preset("philly")
    w = get_workload("philly").build(cluster, seed=0, load=2000.0, n=3000)
    digests = []
    for old in (False, True):
        pol = POLICIES.build("2d-gittins" if gittins else "2d-las")
        if old:
            pol.__class__ = OldPath  # the registry's policy, its pass as main had it
        sim = Simulator(cluster, w.jobs, pol, semantics="realistic", recorder=Recorder(keep_segments=True),
                        **w.simulator_args())
        sim.run()
        digests.append(records_digest(sim.recorder))
    assert digests[0] == digests[1]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(xs=st.lists(st.floats(0.0, 1e3, allow_nan=False), max_size=40), margin=st.sampled_from([0.0, 0.05, 0.3]),
       q=st.floats(0.0, 1e3, allow_nan=False))
def test_bisect_on_the_list_is_searchsorted(xs, margin, q):
    """The same-queue cut: ``bisect_left`` on the scaled indices as Python floats, as ``np.searchsorted``
    (side left) on the numpy array gave."""
    g = np.sort(np.array(xs, dtype=float)) * (1.0 + margin)
    assert bisect_left(g.tolist(), q) == int(np.searchsorted(g, q, side="left"))


class _J:
    def __init__(self, jid: str, g: int) -> None:
        self.requested = Resources(g)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(ops=st.lists(st.tuples(st.integers(0, 29), st.integers(0, 2), st.sampled_from([0.0, -0.0, -1.5, -2.0]),
                              st.integers(0, 1)), max_size=80))
def test_reserved_keys_are_the_sorted_reserved_jobs(ops):
    """``MLFQ.resv_keys`` (kept by insort / bisect on every add / remove) lists the reserved jobs as sorting
    ``resv`` by ``(q, key)`` did, and ``victims`` yields each queue's reserved jobs last key first, as the
    per-call ``sorted(..., reverse=True)`` did."""
    from schedlab.heuristics.tiresias.queues import MLFQ

    mq = MLFQ(3, arrays=False)
    for n, (i, q, k0, band) in enumerate(ops):
        jid = f"j{i}"
        j = mq.jobs.get(jid)
        if j is not None and j.state == RESV:
            mq.remove_reserved(j)
            j.state = RUN
            continue
        if j is None:
            j = mq.jobs[jid] = QJob(jid, _J(jid, 1 + i % 4), n)
        j.q, j.k0, j.band, j.stamp = q, k0, band, mq.next_stamp()
        mq.add_reserved(j)
    want = sorted((mq.jobs[jid] for jid in mq.resv), key=lambda x: (x.q, x.key))
    assert mq.reserved_in_order() == want
    for q_from in (-1, 0, 1):
        got = list(mq.victims(q_from, lambda q: iter(())))
        old = [v for q in range(2, q_from, -1)
               for v in sorted((mq.jobs[j] for j in mq.resv_q[q]), key=lambda x: x.key, reverse=True)]
        assert got == old
