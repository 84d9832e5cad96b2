"""ClusterState keeps its invariants; Hypothesis drives random allocate/release sequences."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.scheduling import ClusterState, Resources
from schedlab.topology import Cluster, TopologyError, spec_from_dict
from schedlab.topology.errors import AllocationError, CapacityError


def _cluster(racks: int, per_rack: int, gpus: int, cpus: int, mem: float) -> Cluster:
    return Cluster(spec_from_dict({
        "name": "h", "defaults": {"gpus": gpus, "gpu_model": "X", "gpu_memory_gb": 16, "cpus": cpus,
                                  "host_memory_gb": mem},
        "links": {"machine": {"bandwidth_gbps": 100}, "rack": {"bandwidth_gbps": 10},
                  "network": {"bandwidth_gbps": 5}},
        "racks": racks, "machines_per_rack": per_rack}))


def test_allocate_release_and_errors():
    c = _cluster(1, 2, 4, 8, 64.0)
    s = ClusterState(c)
    m0, m1 = c.machines
    s.allocate("a", {m0: Resources(3, 2, 10.0)})
    assert s.free(m0) == Resources(1, 6, 54.0) and s.free_gpus == 5
    with pytest.raises(CapacityError, match=r"job 'b'.*machine '.*m0'.*gpus"):
        s.allocate("b", {m0: Resources(2, 1, 1.0), m1: Resources(1, 1, 1.0)})
    assert s.free(m1) == Resources(4, 8, 64.0)  # all or nothing: m1 untouched
    with pytest.raises(AllocationError, match="already"):
        s.allocate("a", {m1: Resources(1, 0, 0.0)})
    with pytest.raises(TopologyError, match="zz"):
        s.allocate("c", {"zz": Resources(1, 0, 0.0)})
    assert s.release("a") == {m0: Resources(3, 2, 10.0)}
    with pytest.raises(AllocationError, match="no resources"):
        s.release("a")
    s.check_invariants()


def test_reserved_capacity():
    c = _cluster(1, 1, 4, 8, 64.0)
    m = c.machines[0]
    s = ClusterState(c, reserved={m: Resources(2, 0, 0.0)})
    assert s.free(m).gpus == 2
    with pytest.raises(CapacityError):
        ClusterState(c, reserved={m: Resources(5, 0, 0.0)})


topologies = st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 8), st.integers(1, 16))
ops = st.lists(st.tuples(st.booleans(), st.integers(0, 9), st.integers(0, 11), st.integers(0, 8),
                         st.integers(0, 16), st.integers(1, 3)), max_size=60)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(topo=topologies, seq=ops)
def test_random_sequences_keep_capacity_and_return_to_initial(topo, seq):
    racks, per_rack, gpus, cpus = topo
    c = _cluster(racks, per_rack, gpus, cpus, 32.0)
    s = ClusterState(c)
    initial = dict(s.free_map)
    live: list[str] = []
    for n, (is_alloc, jid, midx, g, cp, span) in enumerate(seq):
        if is_alloc or not live:
            machines = [c.machines[(midx + k) % len(c.machines)] for k in range(span)]
            placement = {m: Resources(g, cp, 4.0) for m in dict.fromkeys(machines)}
            name = f"j{n}"
            before = dict(s.free_map)
            try:
                s.allocate(name, placement)
                live.append(name)
            except CapacityError:
                assert dict(s.free_map) == before  # a refused allocation changes nothing
        else:
            s.release(live.pop(jid % len(live)))
        for m in c.machines:
            f, cap = s.free(m), s.capacity(m)
            assert f.is_nonnegative() and f <= cap
        s.check_invariants()
    for name in live:
        s.release(name)
    assert dict(s.free_map) == initial and s.free_gpus == c.total_gpus
