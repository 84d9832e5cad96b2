"""Fuzz cluster specs (YAML, JSON, Tiresias CSV, PAI machine lists) through the Python API and
``schedlab topology``: only ``SchedlabError`` escapes, the CLI answers with output or one ``error:``
line, every run stays within its budget, and valid specs give the same cluster whichever way they come."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from fuzz.strategies import (
    assert_clean_cli,
    dump,
    fuzz,
    pai_csv,
    run_cli,
    spec_documents,
    spec_gpus,
    tiresias_csv,
    valid_specs,
    watchdog,
)
from hypothesis import given
from hypothesis import strategies as st

from schedlab.topology import (
    MAX_GPUS_PER_MACHINE,
    MAX_TOTAL_GPUS,
    SchedlabError,
    load_cluster,
    spec_from_dict,
)
from schedlab.topology.loaders import load_spec_file, spec_from_pai_machines


def _write(folder: str, suffix: str, data: bytes) -> Path:
    p = Path(folder) / f"spec{suffix}"
    p.write_bytes(data)
    return p


def _check_cluster(c) -> None:
    assert 0 < c.total_gpus <= MAX_TOTAL_GPUS
    assert all(0 <= c.machine(m).gpus <= MAX_GPUS_PER_MACHINE for m in c.machines)
    assert c.summary()["gpus"] == c.total_gpus


@fuzz(120)
@given(doc=spec_documents())
def test_spec_files_api(doc):
    suffix, data = doc
    with tempfile.TemporaryDirectory() as d, watchdog(20):
        try:
            c = load_cluster(_write(d, suffix, data))
        except SchedlabError as e:
            assert "spec" in str(e), f"the error names the file: {e}"
            return
    _check_cluster(c)


@fuzz(40)
@given(doc=spec_documents())
def test_spec_files_cli(doc):
    suffix, data = doc
    with tempfile.TemporaryDirectory() as d:
        p = _write(d, suffix, data)
        argv = ("topology", str(p), "--format", "json")
        code, out, err = run_cli(*argv, budget=20)
    assert_clean_cli(code, out, err, argv=argv)
    if code == 0:
        assert json.loads(out)["gpus"] > 0


@fuzz(60)
@given(text=tiresias_csv())
def test_tiresias_csv(text):
    """Counts are whole numbers or an error naming line and column: never truncated, never a crash."""
    with tempfile.TemporaryDirectory() as d, watchdog(20):
        p = _write(d, ".csv", text.encode())
        try:
            c = load_cluster(p)
        except SchedlabError as e:
            assert str(p) in str(e)
            return
    _check_cluster(c)
    row = dict(zip(text.splitlines()[0].split(","), text.splitlines()[1].split(","), strict=False))
    # what loaded is exactly what the file says (no truncation of "4.5" into 4)
    assert float(row["num_switch"]) * float(row["num_node_p_switch"]) * float(row["num_gpu_p_node"]) == c.total_gpus


@fuzz(40)
@given(text=pai_csv())
def test_pai_machine_list(text):
    with tempfile.TemporaryDirectory() as d, watchdog(20):
        p = _write(d, ".csv", text.encode())
        try:
            c = spec_from_pai_machines(p, machines_per_rack=2)
        except SchedlabError as e:
            assert str(p) in str(e)
            return
    assert sum(m.gpus for m in c.machines) >= 0


@fuzz(40)
@given(spec=valid_specs(), fmt=st.sampled_from(("yaml", "json")))
def test_valid_specs_same_cluster_every_way(spec, fmt):
    """A valid spec gives the same cluster from a dict, a YAML file and a JSON file, with the GPU count
    computed by hand from the document."""
    from_dict = spec_from_dict(spec)
    with tempfile.TemporaryDirectory() as d:
        p = _write(d, "." + fmt, dump(spec, fmt).encode("utf-8"))
        from_file = load_spec_file(p)
        code, out, err = run_cli("topology", str(p), "--format", "json")
    assert from_dict.machines == from_file.machines and dict(from_dict.rack_uplinks) == dict(from_file.rack_uplinks)
    assert sum(m.gpus for m in from_file.machines) == spec_gpus(spec)
    assert code == 0 and json.loads(out)["gpus"] == spec_gpus(spec), err
