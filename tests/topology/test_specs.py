"""Spec files: the YAML/JSON schema, the Tiresias CSV, the PAI machine list; every error names the
file and the field, and nothing is half-built."""

import json

import pytest

from schedlab.topology import Cluster, SpecError, load_cluster, load_spec_file, spec_from_pai_machines

GOOD = {
    "name": "lab",
    "defaults": {"gpus": 8, "gpu_model": "A100-80GB", "gpu_memory_gb": 80, "cpus": 64, "host_memory_gb": 512},
    "links": {"machine": {"bandwidth_gbps": 300, "latency_us": 1}, "rack": {"bandwidth_gbit": 200},
              "network": {"bandwidth_gbit": 400, "latency_us": 5}},
    "racks": 3, "machines_per_rack": 4,
}


def _write(tmp_path, data, name="c.yaml"):
    p = tmp_path / name
    p.write_text(json.dumps(data) if name.endswith(".json") else __import__("yaml").safe_dump(data))
    return p


def test_homogeneous_yaml_and_json(tmp_path):
    for fname in ("c.yaml", "c.json"):
        c = Cluster(load_spec_file(_write(tmp_path, GOOD, fname)))
        assert (len(c.racks), len(c.machines), c.total_gpus) == (3, 12, 96)
        assert c.machine(c.machines[0]).uplink.bandwidth_gbps == 25.0


def test_explicit_machine_list_with_counts(tmp_path):
    data = dict(GOOD, racks=[
        {"name": "ra", "machines": [{"name": "a", "gpus": 4}, {"name": "b", "count": 2, "gpus": 2}]},
        {"name": "rb", "defaults": {"gpu_model": "V100", "gpu_memory_gb": 32}, "machine_count": 2},
    ])
    data.pop("machines_per_rack")
    c = load_cluster(_write(tmp_path, data))
    assert c.machines == ("a", "b-0", "b-1", "rb-m0", "rb-m1")
    assert c.total_gpus == 4 + 2 + 2 + 8 + 8
    assert c.machine("rb-m0").gpu_model == "V100"


@pytest.mark.parametrize(
    ("mutate", "field", "text"),
    [
        (lambda d: d["defaults"].update(gpus=-1), "defaults.gpus", "greater than or equal"),
        (lambda d: d["links"].update(fabric={"bandwidth_gbps": 1}), "links.fabric", "unknown tier"),
        (lambda d: d["links"].pop("rack"), "links.rack", "missing bandwidth"),
        (lambda d: d["links"].pop("network"), "links.network", "missing bandwidth"),
        (lambda d: d["links"]["machine"].pop("bandwidth_gbps"), "links.machine", "exactly one"),
        (lambda d: d.update(racks=[{"name": "r", "machines": []}], machines_per_rack=None), "racks[0].machines",
         "no machines"),
        (lambda d: d.update(racks=[{"name": "r", "machines": [{"name": "x"}, {"name": "x"}]}],
                            machines_per_rack=None), "machines[1].name", "duplicate machine"),
        (lambda d: d.update(racks=[{"name": "r", "machine_count": 1}, {"name": "r", "machine_count": 1}],
                            machines_per_rack=None), "racks[1].name", "duplicate rack"),
        (lambda d: d["defaults"].pop("gpu_model"), "racks.gpu_model", "missing gpu_model"),
        (lambda d: d.update(extra=1), "extra", "Extra inputs"),
    ],
)
def test_spec_errors_name_file_and_field(tmp_path, mutate, field, text):
    data = json.loads(json.dumps(GOOD))
    mutate(data)
    data = {k: v for k, v in data.items() if v is not None}
    p = _write(tmp_path, data)
    with pytest.raises(SpecError) as ei:
        load_spec_file(p)
    msg = str(ei.value)
    assert str(p) in msg
    assert field in msg, msg
    assert text in msg, msg


def test_unparseable_yaml_names_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("name: x\nlinks: [\n  racks: 2\n")
    with pytest.raises(SpecError) as ei:
        load_spec_file(p)
    assert "bad.yaml" in str(ei.value) and ei.value.line is not None


def test_tiresias_csv(tmp_path):
    p = tmp_path / "n32g4.csv"
    p.write_text("num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n2,16,4,40,256\n")
    c = load_cluster(p)
    assert (len(c.racks), len(c.machines), c.total_gpus, c.total_cpus) == (2, 32, 128, 32 * 40)


def test_tiresias_csv_errors(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node\n1,1,4,40\n")
    with pytest.raises(SpecError, match="mem_p_node"):
        load_spec_file(p)
    p.write_text("num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n1,abc,4,40,256\n")
    with pytest.raises(SpecError) as ei:
        load_spec_file(p)
    assert ei.value.line == 2 and ei.value.column == "num_node_p_switch"


def test_pai_machine_list(tmp_path):
    p = tmp_path / "pai.csv"
    rows = ["m1,V100M32,96,512,8", "m2,T4,96,512,2", "m3,CPU,96,512,0"]
    p.write_text("\n".join(rows * 1) + "\n")
    c = Cluster(spec_from_pai_machines(p, machines_per_rack=2))
    assert c.total_gpus == 10 and len(c.racks) == 2
    assert c.machine("m1").gpu_memory_gb == 32 and c.machine("m3").gpus == 0
    p.write_text("m1,H100,96,512,8\n")
    with pytest.raises(SpecError) as ei:
        spec_from_pai_machines(p)
    assert ei.value.line == 1 and ei.value.column == "gpu_type"


def test_graphml_roundtrip(tmp_path):
    import networkx as nx

    c = load_cluster("tiresias-60")
    out = tmp_path / "g.graphml"
    c.to_graphml(out)
    g = nx.read_graphml(out)
    assert g.number_of_nodes() == c.graph.number_of_nodes()
    assert sum(1 for _, d in g.nodes(data=True) if d["kind"] == "gpu") == 60
