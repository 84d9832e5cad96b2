"""The fresh-pass fast paths of the consolidating placements: ``fifo.place_consolidated`` and Dally's
``Offer._place`` at the machine level, with nothing taken yet in the pass, read the view's free map (and
the machines' GPU memory) directly. A probe policy drives a replay on a cluster that mixes GPU memory
sizes (random jobs with CPUs and memory, random GPU-memory needs) and, at every decision, compares
both with the general code they skip (copied here as it was), then starts a random subset."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.simulator import simulate
from schedlab.heuristics.dally.delay import Levels, Offer
from schedlab.heuristics.fifo import PassState, place_consolidated
from schedlab.scheduling import Job, JobAllocation, Resources
from schedlab.scheduling.policy import ClusterView, Decision, Timer
from schedlab.topology import preset

CLUSTER = preset("philly")  # 16 and 24 GB GPUs
MEMS = (0.0, 8.0, 16.0, 20.0, 24.0, 30.0)


def _fifo_general(view: ClusterView, job: Job, ps: PassState, min_gpu_mem: float):
    """``place_consolidated``'s one-machine branch with ``ps`` untouched, as it was."""
    g, need, idx, cluster = job.requested.gpus, job.requested, view.index, view.cluster
    simple = need.cpus == 0 and need.mem_gb == 0 and not min_gpu_mem

    def fits(m: str) -> bool:
        return need <= ps.free(m) and (not min_gpu_mem or cluster.machine(m).gpu_memory_gb >= min_gpu_mem)

    best = idx.best_fit(g) if simple else idx.best_fit(g, accept=fits)
    return {best: need} if best is not None else None


def _dally_general(offer: Offer, job: Job, mem: float):
    """``Offer._place`` at level 0, as it was (the untouched machines' best fit, then the touched ones)."""
    ps, need, g = offer.ps, job.requested, job.requested.gpus

    def ok(m: str) -> bool:
        return offer._usable(m, mem) and need <= ps.free(m)

    idx = offer.view.index
    best = idx.best_fit(g, accept=lambda m: m not in ps and ok(m))
    touched = ps.best_touched(g, ok, idx.machine(best) if best is not None else None)
    m = touched if touched is not None else best
    return {m: need} if m is not None else None


class _Probe:
    name = "probe"
    oracle = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.levels = Levels.from_cluster(CLUSTER)
        self.checked = 0
        self.timer_at = -1.0

    def schedule(self, view: ClusterView) -> Decision:
        rng = self.rng
        start, used = {}, {}
        for i, jv in enumerate(view.queue()):
            job = jv.job
            for mem in MEMS if i < 8 else ():  # (the first few queued jobs: the check is the slow part)
                fast = place_consolidated(view, job, PassState(view), min_gpu_mem=mem)
                assert fast == _fifo_general(view, job, PassState(view), mem)
                offer = Offer(view, self.levels, min_gpu_mem=lambda j, mem=mem: mem)
                assert offer._place(job, 0, mem, 1) == _dally_general(Offer(view, self.levels), job, mem)
                self.checked += 1
            p = place_consolidated(view, job, PassState(view))
            if p is not None and rng.random() < 0.7 and all(
                    used.get(m, Resources()) + r <= view.free(m) for m, r in p.items()):
                start[jv.id] = JobAllocation(jv.id, job.requested_plan, p)
                for m, r in p.items():
                    used[m] = used.get(m, Resources()) + r
        timers = ()
        if view.queue_length and self.timer_at <= view.now:
            self.timer_at = view.now + float(rng.uniform(1, 30))
            timers = (Timer(self.timer_at, "tick"),)
        return Decision(start=start, timers=timers)


jobs_strategy = st.lists(st.tuples(st.sampled_from([1, 2, 4, 8]), st.integers(0, 24), st.floats(0, 200),
                                   st.floats(1, 300), st.floats(0, 500)), min_size=1, max_size=40)


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(spec=jobs_strategy, seed=st.integers(0, 1000))
def test_fresh_pass_fast_paths_match_the_general_code(spec, seed):
    rng = np.random.default_rng(seed)
    # fillers: most machines busy and fragmented, so the best fit has to skip machines
    fillers = [Job(f"f{i}", Resources(int(rng.choice([4, 6, 7, 8]))), iterations=float(rng.uniform(20, 400)),
                   arrival=0.0, attrs={"iter_time": 1.0}) for i in range(250)]
    jobs = fillers + [Job(f"j{i}", Resources(g, c, mem), iterations=it, arrival=arr, attrs={"iter_time": 1.0})
                      for i, (g, c, mem, it, arr) in enumerate(spec)]
    probe = _Probe(seed)
    res = simulate(CLUSTER, jobs, probe, semantics="reference")
    assert not res.unfinished
    assert probe.checked >= len(spec) * len(MEMS)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(ops=st.lists(st.tuples(st.integers(0, 349), st.integers(-4, 8), st.booleans()), max_size=30))
def test_offer_deferred_takes_leave_the_pass_state_as_immediate_takes(ops):
    """``Offer.take`` defers the pass state's takes to its next read: the state read is the one the
    takes applied at once give (effective free resources, buckets in order, racks' taken GPUs)."""
    from schedlab.benchmarks.simulator import Simulator
    from schedlab.heuristics.fifo import FifoPolicy

    sim = Simulator(CLUSTER, [Job("x", Resources(1), iterations=1.0, arrival=0.0, attrs={"iter_time": 1.0})],
                    FifoPolicy(), semantics="reference")
    view = sim.view
    offer, ref = Offer(view, Levels.from_cluster(CLUSTER)), PassState(view)
    machines = CLUSTER.machines
    held: dict[str, int] = {}
    total = 0
    for i, g, read in ops:
        m = machines[i]
        left = view.index.machine(m) - held.get(m, 0)
        g = min(g, left) if g >= 0 else -min(-g, held.get(m, 0))  # within the machine; give back what was taken
        held[m] = held.get(m, 0) + g
        total += g
        r = Resources(g) if g >= 0 else Resources(-g).scale(-1)  # (negative: resources given back)
        offer.take({m: r})
        ref.take(m, r)
        if read:
            ps = offer.ps
            assert (ps.eff, ps.rack_taken, ps._gain) == (ref.eff, ref.rack_taken, ref._gain)
            assert {k: list(v) for k, v in ps.buckets.items()} == {k: list(v) for k, v in ref.buckets.items()}
    ps = offer.ps
    assert (ps.eff, ps.rack_taken, ps._gain) == (ref.eff, ref.rack_taken, ref._gain)
    assert offer.taken == total
