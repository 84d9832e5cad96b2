"""2D-LAS / 2D-Gittins bulk paths (round 8): victims back from their checkpoint re-enter the waiting lists
in bulk (one numpy Gittins index per queue), started claims run in bulk, and a long stale run of a
deadline heap ends in one filter. Each must leave exactly the state the one-by-one path leaves."""

import heapq
import random

import numpy as np

from schedlab.heuristics.tiresias.queues import MLFQ, RUN, WAIT, QJob, drop_stale


class _Req:
    def __init__(self, gpus: int) -> None:
        self.gpus = gpus


class _Job:
    def __init__(self, gpus: int) -> None:
        self.requested = _Req(gpus)


def _jobs(rng: random.Random, n: int, k: int) -> list[QJob]:
    out = []
    for i in range(n):
        j = QJob(f"j{i}", _Job(rng.choice([1, 1, 2, 4, 8])), i)
        j.q = rng.randrange(k)
        j.band = rng.randrange(2)
        j.stamp = rng.randrange(1, 10 * n)
        j.k0 = rng.choice([0.0, -0.0, -rng.random(), -1e-3 * rng.random()])
        j.a_ref, j.t_ref = rng.random() * 1e5, rng.choice([rng.random() * 1e4, float("inf")])
        j.svc0 = rng.random() * 1e3
        out.append(j)
    return out


def _state(st: MLFQ) -> tuple:
    cols = [(c.n, c.cols[:, :c.n].tobytes(), [j.id for j in c.jobs], dict(c.pos)) for c in st.run_cols]
    return (st.wait, st.run, st.held, st.run_gpus, st.n_wait, cols)


def test_add_waiting_all_and_add_running_all_equal_one_by_one():
    for seed in range(30):
        rng = random.Random(seed)
        k = rng.choice([2, 3])
        a, b = MLFQ(k), MLFQ(k)
        n_old = rng.randrange(0, 80)
        for st in (a, b):  # the same jobs already there (a later bulk joins non-empty lists)
            for j in _jobs(random.Random(1000 + seed), n_old, k):
                j.id = "old" + j.id
                st.add_waiting(j) if j.stamp % 2 else st.add_running(j)
        ws, rs = _jobs(rng, rng.randrange(1, 120), k), _jobs(rng, rng.randrange(1, 120), k)
        for j in rs:
            j.id = "r" + j.id
        for j in ws:
            a.add_waiting(j)
        for j in rs:
            a.add_running(j)
        b.add_waiting_all(ws)
        b.add_running_all(rs)
        assert _state(a) == _state(b), seed
        assert all(j.state == WAIT for j in ws) and all(j.state == RUN for j in rs)


def test_drop_stale_keeps_the_valid_entries_in_pop_order():
    for seed in range(30):
        rng = random.Random(seed)
        jobs = {f"j{i}": QJob(f"j{i}", _Job(1), i) for i in range(50)}
        heap: list[tuple] = []
        for _ in range(400):
            jid = rng.choice(list(jobs))
            j = jobs[jid]
            if rng.random() < 0.5:
                j.ver += 1
            heapq.heappush(heap, (rng.choice([1.0, 2.0, rng.random() * 10]), j.ver, jid))
        for j in jobs.values():
            j.state = rng.choice([RUN, RUN, WAIT])
        for jid in rng.sample(list(jobs), 5):
            del jobs[jid]
        want = [e for e in sorted(heap) if (j := jobs.get(e[2])) is not None and j.ver == e[1] and j.state == RUN]
        drop_stale(heap, jobs, RUN)
        assert [heapq.heappop(heap) for _ in range(len(heap))] == want


def test_bulk_return_equals_scalar_return_in_a_replay():
    """A 3,000-job Philly replay compressed 2,000-fold under 2D-Gittins: every bulk re-entry gives each job
    the scalar path's Gittins key (bit for bit, sign of zero included) and the waiting lists the
    one-by-one insertion's; the bulk path must have run with hundreds of jobs."""
    import math

    from schedlab.benchmarks.simulator import Simulator
    from schedlab.benchmarks.workloads import get_workload
    from schedlab.heuristics import POLICIES
    from schedlab.heuristics.tiresias.las import TiresiasPolicy
    from schedlab.topology.presets import preset

    cluster = preset("philly")
    w = get_workload("philly").build(cluster, seed=0, load=2000.0, n=3000)
    sizes: list[int] = []

    class Checked(TiresiasPolicy):
        def _to_waiting_all(self, view, js):
            want = {j.id: self._k0(view, j) for j in js}
            ref = {q: {g: list(lst) for g, lst in self.st.wait[q].items()} for q in range(self.k)}
            n0 = self.st.n_wait
            super()._to_waiting_all(view, js)
            for j in js:
                assert j.k0 == want[j.id] and math.copysign(1.0, j.k0) == math.copysign(1.0, want[j.id])
                assert j.state == WAIT
                ref[j.q].setdefault(j.g, []).append((j.k0, j.band, j.stamp, j.id))
            for q in range(self.k):
                assert {g: sorted(v) for g, v in ref[q].items() if v} == self.st.wait[q]
            assert self.st.n_wait == n0 + len(js)
            sizes.append(len(js))

    pol = POLICIES.build("2d-gittins")
    pol.__class__ = Checked
    Simulator(cluster, w.jobs, pol, semantics="realistic", **w.simulator_args()).run()
    assert sizes and max(sizes) >= 100 and pol.dist is not None
    assert np.mean([s >= 8 for s in sizes]) > 0.1


def test_bounded_starts_are_within_the_pass_free_gpus():
    """``_place`` passes ``bounded=True`` (placement skips its free-GPU bound) only for a job whose GPUs are
    within the pass's free GPUs at that moment: a stale bound would not change a record (the search fails
    anyway) but would search in vain. 2D-Gittins, 2,000 Philly jobs compressed 2,000-fold."""
    from schedlab.benchmarks.simulator import Simulator
    from schedlab.benchmarks.workloads import get_workload
    from schedlab.heuristics import POLICIES
    from schedlab.heuristics.tiresias.placement import Starter
    from schedlab.topology.presets import preset

    seen = [0, 0]

    class CheckedStarter(Starter):
        __slots__ = ()

        def start(self, view, ps, job, **kw):
            if kw.get("bounded"):
                seen[0] += 1
                assert job.requested.gpus <= ps.free_gpus
            ja = super().start(view, ps, job, **kw)
            seen[1] += ja is None
            return ja

    cluster = preset("philly")
    w = get_workload("philly").build(cluster, seed=0, load=2000.0, n=2000)
    pol = POLICIES.build("2d-gittins")
    pol.starter.__class__ = CheckedStarter
    Simulator(cluster, w.jobs, pol, semantics="realistic", **w.simulator_args()).run()
    assert seen[0] > 100
