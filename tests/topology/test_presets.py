"""Presets have the documented counts, tiers and bandwidths (values from the papers)."""

import math

import pytest

from schedlab.topology import PRESETS, SpecError, Tier, preset


@pytest.mark.parametrize(
    ("name", "racks", "machines", "gpus"),
    [("rubick-64", 1, 8, 64), ("dally-2", 2, 16, 128), ("dally-4", 4, 32, 256), ("dally-8", 8, 64, 512),
     ("dally-16", 16, 128, 1024), ("tiresias-60", 1, 15, 60), ("philly", 15, 350, 2400)],
)
def test_preset_counts(name, racks, machines, gpus):
    c = preset(name)
    s = c.summary()
    assert (s["racks"], s["machines"], s["gpus"]) == (racks, machines, gpus)
    assert len(c.racks) == racks and len(c.machines) == machines and c.total_gpus == gpus
    # the graph holds exactly one node per GPU, machine, rack plus the spine
    kinds = [d["kind"] for _, d in c.graph.nodes(data=True)]
    assert kinds.count("gpu") == gpus and kinds.count("machine") == machines and kinds.count("rack") == racks


def test_rubick_values():
    c = preset("rubick-64")
    m = c.machine(c.machines[0])
    assert (m.gpus, m.gpu_model, m.gpu_memory_gb, m.cpus, m.host_memory_gb) == (8, "A800-80GB", 80, 96, 1600)
    assert m.intra.bandwidth_gbps == 400 and m.uplink.bandwidth_gbps == 100


def test_dally_link_rates_are_converted_from_gbit():
    c = preset("dally-8")
    m = c.machine(c.machines[0])
    assert m.uplink.bandwidth_gbps == 400 / 8  # Quantum 400 Gb/s
    assert c.link(Tier.NETWORK, c.racks[0]).bandwidth_gbps == 800 / 8  # Spectrum 800 Gb/s
    assert all(len(c.machines_in(r)) == 8 for r in c.racks)


def test_tiresias_and_philly_values():
    t = preset("tiresias-60")
    assert {t.machine(m).gpu_model for m in t.machines} == {"P100-16GB"}
    assert t.machine(t.machines[0]).uplink.bandwidth_gbps == 12.5  # 100 Gbps EDR
    p = preset("philly")
    sizes = sorted(p.machine(m).gpus for m in p.machines)
    assert sizes.count(4) == 100 and sizes.count(8) == 250


def test_pai_preset_needs_a_path():
    with pytest.raises(SpecError, match="pai-2020"):
        preset("pai-2020")


def test_unknown_preset_lists_known_names():
    with pytest.raises(SpecError, match="rubick-64"):
        preset("nope")


def test_every_preset_graph_is_frozen():
    import networkx as nx

    for name in PRESETS:
        if name == "pai-2020":
            continue
        assert nx.is_frozen(preset(name).graph)


def test_single_gpu_bandwidth_is_infinite():
    c = preset("rubick-64")
    assert math.isinf(c.bottleneck_bandwidth({c.machines[0]: 1}))
