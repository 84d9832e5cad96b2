"""Cluster specs: stated size limits checked before anything is built, values that are not numbers
refused (no truncation, no infinities), linear naming, progress, a graph built only when used.
Regression tests for issue 9's spec examples."""

import math
import subprocess
import sys

import pytest
import yaml

from schedlab.topology import (
    MAX_GPUS_PER_MACHINE,
    MAX_TOTAL_GPUS,
    Cluster,
    LinkSpec,
    SpecError,
    TopologyError,
    gpu_node,
    load_cluster,
    preset,
    spec_from_dict,
)
from schedlab.topology.loaders import PROGRESS_EVERY
from schedlab.topology.spec import MachineSpec

BASE = {"name": "c", "defaults": {"gpus": 8, "gpu_model": "A100", "gpu_memory_gb": 80, "cpus": 64,
                                  "host_memory_gb": 512},
        "links": {"machine": {"bandwidth_gbps": 300}, "rack": {"bandwidth_gbit": 400},
                  "network": {"bandwidth_gbit": 800}},
        "racks": 2, "machines_per_rack": 2}


def spec(**changes):
    d = yaml.safe_load(yaml.safe_dump(BASE))
    for k, v in changes.items():
        d[k] = v
    return d


TIRESIAS = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n{}\n"


def test_billion_gpus_per_machine_is_refused_before_building(tmp_path):
    # issue 9: MemoryError after 35 s; now the entry is refused before a single machine exists
    with pytest.raises(SpecError, match="at most 10,000") as ei:
        spec_from_dict(spec(defaults=dict(BASE["defaults"], gpus=10**9)))
    assert ei.value.field == "racks.gpus"
    p = tmp_path / "n.csv"
    p.write_text(TIRESIAS.format("1,2,1000000000,8,64"))
    with pytest.raises(SpecError, match="at most 10,000") as ei:
        load_cluster(p)
    assert (ei.value.line, ei.value.column) == (2, "num_gpu_p_node")
    with pytest.raises(SpecError, match="at most 10,000"):
        MachineSpec("m", "r", 10**9, "x", 16.0, 1, 1.0, LinkSpec(1.0), LinkSpec(1.0))


@pytest.mark.parametrize(("changes", "match"), [
    ({"racks": 10**4, "machines_per_rack": 10**3}, "machines is more than"),
    ({"racks": 10**9, "machines_per_rack": 1}, "racks is more than"),
    ({"racks": 1000, "machines_per_rack": 1000}, "GPUs in total"),
])
def test_totals_beyond_the_limits_are_refused_at_once(changes, match):
    with pytest.raises(SpecError, match=match):
        spec_from_dict(spec(**changes))


def test_the_largest_cluster_is_accepted():
    s = spec_from_dict(spec(racks=1, machines_per_rack=MAX_TOTAL_GPUS // MAX_GPUS_PER_MACHINE,
                            defaults=dict(BASE["defaults"], gpus=MAX_GPUS_PER_MACHINE)))
    assert sum(m.gpus for m in s.machines) == MAX_TOTAL_GPUS


@pytest.mark.parametrize("row", ["1,2.5,4,8,64", "1.5,2,4,8,64", "1,2,4.5,8,64", "1,2,4,8.5,64"])
def test_fractional_tiresias_counts_are_errors(tmp_path, row):  # issue 9: they were truncated
    p = tmp_path / "f.csv"
    p.write_text(TIRESIAS.format(row))
    with pytest.raises(SpecError, match="whole number") as ei:
        load_cluster(p)
    assert ei.value.line == 2 and ei.value.column in ("num_switch", "num_node_p_switch", "num_gpu_p_node",
                                                       "num_cpu_p_node")


@pytest.mark.parametrize("cell", ["inf", "-inf", "nan", "1e400"])
def test_tiresias_infinity_is_a_clean_error(tmp_path, cell):  # issue 9: OverflowError traceback
    p = tmp_path / "i.csv"
    p.write_text(TIRESIAS.format(f"{cell},2,4,8,64"))
    with pytest.raises(SpecError, match="finite") as ei:
        load_cluster(p)
    assert ei.value.column == "num_switch"


def test_integral_spellings_and_fractional_memory_are_read_exactly(tmp_path):
    p = tmp_path / "ok.csv"
    p.write_text(TIRESIAS.format("1,2.0,4,8,63.5"))
    c = load_cluster(p)
    assert (c.total_gpus, c.machine(c.machines[0]).host_memory_gb) == (8, 63.5)


@pytest.mark.parametrize("bad", [math.inf, math.nan, True, "300", 0, -1])
def test_link_bandwidth_must_be_a_finite_positive_number(bad):  # issue 9: bandwidth_gbps: .inf was accepted
    d = spec()
    d["links"]["machine"] = {"bandwidth_gbps": bad}
    with pytest.raises(SpecError) as ei:
        spec_from_dict(d)
    assert ei.value.field == "links.machine.bandwidth_gbps"
    with pytest.raises(SpecError):
        LinkSpec(bad)


def test_yaml_inf_is_refused_from_a_file(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(spec()).replace("bandwidth_gbps: 300", "bandwidth_gbps: .inf"))
    with pytest.raises(SpecError, match="finite"):
        load_cluster(p)


@pytest.mark.parametrize(("field", "value"), [("gpus", True), ("gpus", 8.5), ("cpus", -1), ("host_memory_gb", math.nan),
                                              ("gpu_memory_gb", "80")])
def test_machine_values_strict(field, value):
    with pytest.raises(SpecError) as ei:
        spec_from_dict(spec(defaults=dict(BASE["defaults"], **{field: value})))
    assert ei.value.field == f"defaults.{field}"


@pytest.mark.parametrize("data", [b"\x00\x01binary", "name: x\n".encode("utf-16-le"), b"", b"  \n"])
def test_unreadable_spec_files_are_spec_errors(tmp_path, data):
    p = tmp_path / "c.yaml"
    p.write_bytes(data)
    with pytest.raises(SpecError) as ei:
        load_cluster(p)
    assert str(p) in str(ei.value)


def test_bom_encoded_specs_are_read(tmp_path):
    for enc in ("utf-8-sig", "utf-16", "utf-32"):
        p = tmp_path / f"c-{enc}.yaml"
        p.write_bytes(yaml.safe_dump(spec()).encode(enc))
        assert load_cluster(p).total_gpus == 32


def test_names_are_per_rack_and_progress_is_reported():
    d = spec(racks=[{"name": "a", "machines": [{"name": "x"}, {"count": 2}]}, {"name": "b", "machine_count": 2}])
    d.pop("machines_per_rack")
    calls = []
    s = spec_from_dict(d, progress=lambda *a: calls.append(a))
    assert [m.name for m in s.machines] == ["x", "a-m1", "a-m2", "b-m0", "b-m1"]
    assert calls == [("machines", 5, 5)]
    big = []
    spec_from_dict(spec(racks=3, machines_per_rack=PROGRESS_EVERY // 2, defaults=dict(BASE["defaults"], gpus=1)),
                   progress=lambda *a: big.append(a))
    n = 3 * (PROGRESS_EVERY // 2)
    assert len(big) >= 2 and [b[1] for b in big] == sorted(b[1] for b in big) and big[-1] == ("machines", n, n)


def test_cluster_needs_no_graph_until_asked():
    code = ("import sys; from schedlab.topology import load_cluster; c = load_cluster('dally-4'); c.summary(); "
            "c.tier_of({c.machines[0]: 2}); assert 'networkx' not in sys.modules; c.graph; "
            "assert 'networkx' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_gpu_id_placements_match_the_graph():
    c = preset("dally-2")
    m = c.machines[3]
    ids = [gpu_node(m, 0), gpu_node(m, 7), gpu_node(c.machines[9], 2)]
    assert c.machine_counts(ids) == {m: 2, c.machines[9]: 1}
    assert all(c.graph.nodes[g]["machine"] in (m, c.machines[9]) for g in ids)
    for bad in (f"{m}/gpu8", f"{m}/gpu01", f"{m}/gpu-1", f"{m}/gpu\u00b2", "nowhere/gpu0", m, 5):
        with pytest.raises(TopologyError):
            c.machine_counts([bad])
    with pytest.raises(TopologyError, match="not an integer"):
        c.machine_counts({m: 1.5})


def test_specs_and_clusters_pickle():
    import pickle

    c = preset("philly")
    again = pickle.loads(pickle.dumps(c))
    assert again.spec == c.spec and again.summary() == c.summary() and isinstance(again, Cluster)
