"""`schedlab topology` and `schedlab list` through the real entry point."""

import json


def test_topology_dally_8_json(cli):
    code, out, _ = cli("topology", "dally-8", "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert (data["gpus"], data["machines"], data["racks"]) == (512, 64, 8)
    assert data["bandwidth_gb_per_s"]["rack"] == {"min": 50.0, "max": 50.0}


def test_topology_rubick_text(cli):
    code, out, _ = cli("topology", "rubick-64")
    assert code == 0 and "64 GPUs" in out and "400 GB/s" in out


def test_topology_file_and_graphml(cli, tmp_path):
    spec = tmp_path / "c.csv"
    spec.write_text("num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n1,2,4,8,64\n")
    g = tmp_path / "c.graphml"
    code, out, _ = cli("topology", str(spec), "--format", "json", "--graphml", str(g))
    assert code == 0 and json.loads(out)["gpus"] == 8 and g.stat().st_size > 0


def test_bad_input_is_one_clear_line_and_exit_2(cli):
    code, _, err = cli("topology", "no-such-cluster")
    assert code == 2 and err.startswith("error:") and "no-such-cluster" in err


def test_list_shows_presets(cli):
    code, out, _ = cli("list", "--format", "json")
    assert code == 0 and "rubick-64" in json.loads(out)["clusters"]
