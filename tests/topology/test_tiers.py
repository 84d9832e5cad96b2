"""tier_of and bottleneck_bandwidth on hand-made placements."""

import pytest

from schedlab.topology import Cluster, Tier, TopologyError, gpu_node, preset, spec_from_dict


@pytest.fixture(scope="module")
def dally():
    return preset("dally-4")


def test_tier_of_counts(dally):
    r0 = dally.machines_in("rack0")
    r1 = dally.machines_in("rack1")
    assert dally.tier_of({r0[0]: 8}) is Tier.MACHINE
    assert dally.tier_of({r0[0]: 4, r0[1]: 4}) is Tier.RACK
    assert dally.tier_of({r0[0]: 4, r1[0]: 4}) is Tier.NETWORK
    assert dally.tier_of({r0[0]: 2, r0[1]: 0}) is Tier.MACHINE  # zero entries ignored


def test_tier_of_gpu_sets(dally):
    r0 = dally.machines_in("rack0")
    assert dally.tier_of({gpu_node(r0[0], 0), gpu_node(r0[0], 5)}) is Tier.MACHINE
    assert dally.tier_of([gpu_node(r0[0], 0), gpu_node(r0[3], 1)]) is Tier.RACK
    assert dally.tier_of([gpu_node(r0[0], 0), gpu_node(dally.machines_in("rack3")[7], 7)]) is Tier.NETWORK


def test_bottleneck_bandwidth(dally):
    r0, r1 = dally.machines_in("rack0"), dally.machines_in("rack1")
    assert dally.bottleneck_bandwidth({r0[0]: 8}) == 900 / 8  # NVSwitch
    assert dally.bottleneck_bandwidth({r0[0]: 4, r0[1]: 4}) == 400 / 8  # rack switch
    assert dally.bottleneck_bandwidth({r0[0]: 4, r1[0]: 4}) == 400 / 8  # rack uplink slower than spine


def _two_rack(spine_gbps: float) -> Cluster:
    return Cluster(spec_from_dict({
        "name": "t", "defaults": {"gpus": 4, "gpu_model": "X", "gpu_memory_gb": 16, "cpus": 8, "host_memory_gb": 64},
        "links": {"machine": {"bandwidth_gbps": 300}, "rack": {"bandwidth_gbps": 50},
                  "network": {"bandwidth_gbps": spine_gbps}},
        "racks": 2, "machines_per_rack": 2}))


def test_spine_is_the_bottleneck_when_slowest():
    c = _two_rack(10)
    a, b = c.machines_in("rack0")[0], c.machines_in("rack1")[0]
    assert c.bottleneck_bandwidth({a: 1, b: 1}) == 10
    assert c.bottleneck_bandwidth({a: 2, c.machines_in("rack0")[1]: 2}) == 50


def test_heterogeneous_machines_take_the_slowest_fabric():
    c = Cluster(spec_from_dict({
        "name": "h", "defaults": {"gpu_model": "X", "gpu_memory_gb": 16, "cpus": 8, "host_memory_gb": 64},
        "links": {"machine": {"bandwidth_gbps": 300}, "rack": {"bandwidth_gbps": 50}},
        "racks": [{"name": "r", "machines": [{"name": "big", "gpus": 8}, {"name": "small", "gpus": 2}]}]}))
    assert c.tier_of({"big": 8, "small": 2}) is Tier.RACK
    assert c.machine("small").gpus == 2


def test_bad_placements(dally):
    m = dally.machines[0]
    with pytest.raises(TopologyError, match="nope"):
        dally.tier_of({"nope": 1})
    with pytest.raises(TopologyError, match="which has 8"):
        dally.tier_of({m: 9})
    with pytest.raises(TopologyError, match="empty"):
        dally.tier_of({})
    with pytest.raises(TopologyError, match="twice"):
        dally.tier_of([gpu_node(m, 0), gpu_node(m, 0)])


def test_latency_grows_with_tier(dally):
    r0, r1 = dally.machines_in("rack0"), dally.machines_in("rack1")
    lm = dally.latency({r0[0]: 2})
    lr = dally.latency({r0[0]: 1, r0[1]: 1})
    ln = dally.latency({r0[0]: 1, r1[0]: 1})
    assert lm < lr < ln
    assert lr == 2 * (1 + 2)  # two GPU->machine hops + two machine->rack hops


def test_tier_parse():
    assert Tier.parse("rack") is Tier.RACK
    assert Tier.parse(3) is Tier.NETWORK
    assert Tier.MACHINE < Tier.RACK < Tier.NETWORK
