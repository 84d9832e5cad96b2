"""``ClusterState.allocate``'s one-pass fast path gives exactly what the checked path gives: the same
free resources (the same floats), the same free-GPU counter, and, for a placement that does not fit,
the same error with nothing changed. Hypothesis drives random placements, including negative and
oversized shares, unknown machines and repeated job ids."""

from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.scheduling import ClusterState, Resources
from schedlab.topology import Cluster, spec_from_dict
from schedlab.topology.errors import AllocationError, CapacityError, TopologyError


def _cluster(machines: int, gpus: int, cpus: int, mem: float) -> Cluster:
    return Cluster(spec_from_dict({
        "name": "h", "defaults": {"gpus": gpus, "gpu_model": "X", "gpu_memory_gb": 16, "cpus": cpus,
                                  "host_memory_gb": mem},
        "links": {"machine": {"bandwidth_gbps": 100}, "rack": {"bandwidth_gbps": 10},
                  "network": {"bandwidth_gbps": 5}},
        "racks": 1, "machines_per_rack": machines}))


def _reference_allocate(s: ClusterState, job_id: str, placement) -> None:
    """The checked path as it was before the fast path (validate everything, then apply)."""
    if job_id in s._placements:
        raise AllocationError(f"job {job_id!r} already holds resources; release it first")
    if not placement:
        raise AllocationError(f"job {job_id!r}: empty placement")
    for m, r in placement.items():
        if m not in s._free:
            raise TopologyError(m)
        if not r.is_nonnegative():
            raise AllocationError(m)
        if r.exceeded(s._free[m]):
            raise CapacityError(m)
    for m, r in placement.items():
        s._free[m] = s._free[m] - r
    s._free_gpus -= sum(r.gpus for r in placement.values())
    s._placements[job_id] = dict(placement)


def _neg_ok(g: int, c: int, m: float) -> Resources:
    # arithmetic builds unchecked amounts: a negative share is reachable only this way
    return Resources(max(g, 0), max(c, 0), max(m, 0.0)) - Resources(max(-g, 0), max(-c, 0), max(-m, 0.0))


shares = st.tuples(st.integers(0, 4), st.integers(-1, 9), st.integers(-1, 17), st.floats(-1.0, 70.0))
steps = st.lists(st.tuples(st.integers(0, 5), st.booleans(), st.lists(shares, min_size=0, max_size=3)), max_size=40)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(seq=steps)
def test_fast_allocate_matches_the_checked_path(seq):
    c = _cluster(4, 8, 16, 64.0)
    fast, ref = ClusterState(c), ClusterState(c)
    names = [*c.machines, "nowhere"]
    for job, release, parts in seq:
        jid = f"j{job}"
        if release:
            outcomes = []
            for s in (fast, ref):
                try:
                    s.release(jid)
                    outcomes.append(None)
                except AllocationError as e:
                    outcomes.append(type(e))
            assert outcomes[0] == outcomes[1]
            continue
        placement = {names[m]: _neg_ok(g, cp, mem) for m, g, cp, mem in parts}
        got = want = None
        try:
            fast.allocate(jid, placement)
        except (AllocationError, CapacityError, TopologyError) as e:
            got = type(e)
        try:
            _reference_allocate(ref, jid, placement)
        except (AllocationError, CapacityError, TopologyError) as e:
            want = type(e)
        assert got == want
        for m in c.machines:
            a, b = fast.free(m), ref.free(m)
            assert (a.gpus, a.cpus, a.mem_gb) == (b.gpus, b.cpus, b.mem_gb)  # the same floats, not close ones
        assert fast.free_gpus == ref.free_gpus
        assert set(fast.jobs) == set(ref._placements)
    fast.check_invariants()
