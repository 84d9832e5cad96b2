"""Fuzz instance files (``schedlab solve --instance``): broken JSON, odd encodings, keys missing or
added, nasty values. Only ``SchedlabError`` escapes ``load_instance``; ``schedlab solve`` answers with
a verified result or one ``error:`` line; valid instances round-trip and solve to the same objective."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from fuzz.strategies import (
    as_file_bytes,
    assert_clean_cli,
    base_instances,
    fuzz,
    instance_documents,
    run_cli,
    watchdog,
)
from hypothesis import given
from hypothesis import strategies as st

from schedlab.formulations import METHODS, SolveParams, load_instance, save_instance
from schedlab.topology import SchedlabError


def _json(doc) -> str:
    return json.dumps(doc, ensure_ascii=False)


@fuzz(150)
@given(doc=instance_documents(), data=st.data())
def test_instance_files_api(doc, data):
    raw = data.draw(as_file_bytes(_json(doc)))
    with tempfile.TemporaryDirectory() as d, watchdog(20):
        p = Path(d) / "inst.json"
        p.write_bytes(raw)
        try:
            inst = load_instance(p)
        except SchedlabError as e:
            assert str(p) in str(e), f"the error names the file: {e}"
            return
        q = Path(d) / "again.json"
        save_instance(inst, q)
        assert load_instance(q).to_dict() == inst.to_dict()  # what loads, saves and loads back the same


@fuzz(12)
@given(doc=instance_documents(), data=st.data())
def test_solve_fuzzed_instances(doc, data):
    """Whatever loads also solves (exit 0, verified) or is refused with one error line."""
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "inst.json"
        p.write_text(_json(doc), encoding="utf-8")
        try:
            kind = load_instance(p).KIND
        except SchedlabError:
            kind = doc.get("kind") if isinstance(doc, dict) else None
        methods = sorted(m for m, meth in METHODS.items() if meth.kind == kind) or ["joint"]
        argv = ("solve", "--instance", str(p), "--method", data.draw(st.sampled_from(methods)), "--backend", "cpsat",
                "--time-limit", "2", "--format", "json")
        code, out, err = run_cli(*argv, budget=90)
    assert_clean_cli(code, out, err, argv=argv)
    if code == 0:
        assert json.loads(out)["verified"] is not False


DIRECT = {"joint": "joint", "tiresias-placement": "tiresias-ilp", "tier-placement": "tier-ilp",
          "offline": "offline-nonpreemptive", "horizon-wait": "horizon-wait", "offline-ti": "offline-preemptive-ti",
          "offline-resizable": "offline-resizable-ti"}


@pytest.mark.parametrize("doc", base_instances(), ids=lambda d: d["kind"])
def test_valid_instance_round_trip_solves_the_same(doc, tmp_path):
    """A valid instance saved and loaded back is the same instance and solves to the same objective."""
    p = tmp_path / "a.json"
    p.write_text(_json(doc), encoding="utf-8")
    a = load_instance(p)
    save_instance(a, tmp_path / "b.json")
    b = load_instance(tmp_path / "b.json")
    assert a.to_dict() == b.to_dict()
    solver = METHODS[DIRECT[doc["kind"]]].solve
    params = SolveParams(time_limit_s=30, threads=1, seed=0)
    ra, rb = solver(a, "cpsat", params), solver(b, "cpsat", params)
    assert ra.status.value == rb.status.value == "optimal", (ra.termination, rb.termination)
    assert ra.objective == pytest.approx(rb.objective)
