"""The harness's warm start (issue 20, defect 6): a gap case's ``params.warm_start: POLICY`` offers the
policy's snapshot decision to an exact method that declares the warm-start capability; the record says
which policy and whether the backend took it (``warm_start_used``)."""

from __future__ import annotations

import sqlite3

import pytest

from schedlab.benchmarks.harness import GapCase
from schedlab.benchmarks.harness.gap import run_gap
from schedlab.benchmarks.harness.record import FIELDS, from_row, to_row
from schedlab.benchmarks.harness.store import Store
from schedlab.formulations.backends import get_backend
from schedlab.topology.errors import SpecError

GEN = {"source": "perfmodel", "busy": 0.3}


def case(method: str, backend: str, **params) -> GapCase:
    return GapCase("joint", "rubick-64", 8, method, backend, seed=0, solver_params=params, generator=GEN, time_limit_s=30)


@pytest.mark.parametrize("method", ["joint-machines", "joint-2stage"])
@pytest.mark.parametrize("backend,used", [("highs", True), ("cpsat", True), ("scipy", False)])
def test_a_warm_started_case_records_whether_the_start_was_used(method, backend, used):
    if not get_backend(backend).availability().ok:
        pytest.skip(f"{backend} unavailable")
    out = run_gap(case(method, backend, warm_start="rubick"))
    assert out.warm_start == "rubick" and out.warm_start_used is used, out.extra["notes"]
    assert out.status == "optimal" and out.verified
    plain = run_gap(case(method, backend))
    assert plain.warm_start is None and plain.warm_start_used is None
    assert plain.objective == pytest.approx(out.objective, rel=1e-6)
    if not used:
        assert any("takes no start" in n for n in out.extra["notes"]), out.extra["notes"]


def test_a_method_without_the_capability_gets_no_start_and_says_so():
    out = run_gap(case("pop-joint", "highs", warm_start="rubick"))
    assert out.warm_start_used is False
    assert any("declares no warm-start capability" in n for n in out.extra["notes"]), out.extra["notes"]


def test_an_unknown_warm_start_policy_is_an_error_naming_it():
    with pytest.raises(SpecError, match="rubik"):
        run_gap(case("joint-machines", "highs", warm_start="rubik"))
    with pytest.raises(SpecError, match="warm_start"):
        run_gap(case("joint-machines", "highs", warm_start=3))


def test_the_record_keeps_the_warm_start_fields(tmp_path):
    row = to_row({"key": "k", "warm_start": "rubick", "warm_start_used": True})
    assert row["warm_start_used"] == 1 and from_row(row)["warm_start_used"] is True
    # a store written before the fields existed gains their columns
    old = {k: t for k, t in FIELDS.items() if not k.startswith("warm_start")}
    con = sqlite3.connect(tmp_path / "results.sqlite")
    con.execute("CREATE TABLE records (" + ", ".join(f"{k} {t}" for k, t in old.items()) + ")")
    con.close()
    with Store(tmp_path) as st:
        st.put({"key": "k", "suite": "s", "warm_start": "rubick", "warm_start_used": True})
        rec = st.records("s")[0]
    assert rec["warm_start"] == "rubick" and rec["warm_start_used"] is True


def test_the_gap_table_says_how_many_warm_starts_were_used():
    from schedlab.benchmarks.harness.analysis import frame
    from schedlab.benchmarks.harness.report.tables import gap_table

    def rec(label, params, used, seed):
        return {"suite": "s", "label": label, "case_type": "gap", "role": "exact", "method": "joint-2stage",
                "backend": "scipy" if used is False else "highs", "params": params, "instance": f"I{seed}",
                "kind": "joint", "cluster": "c", "jobs": 4, "gpus": 8, "status": "optimal", "objective": 3.0,
                "bound": 3.0, "sense": "max", "proven": True, "verified": True, "build_s": 0.0, "solve_s": 0.1,
                "finished_at": "t", "time_limit_s": 10.0, "message": "",
                "warm_start": params.get("warm_start"), "warm_start_used": used}

    t = gap_table(frame([rec("a", {"warm_start": "rubick"}, True, 0), rec("b", {"warm_start": "rubick"}, True, 1),
                         rec("c", {"warm_start": "rubick"}, False, 0), rec("d", {}, None, 0)]))
    by = dict(zip(t["method"], t["warm start used"], strict=True))
    assert by == {"joint-2stage@highs[warm_start=rubick]": "2/2", "joint-2stage@scipy[warm_start=rubick]": "0/1",
                  "joint-2stage@highs": ""}


def test_a_suite_case_with_an_unknown_warm_start_policy_is_refused_before_running():
    case("joint-2stage", "highs", warm_start="rubick").check()
    with pytest.raises(SpecError, match="unknown policy 'rubik'") as e:
        case("joint-2stage", "highs", warm_start="rubik").check()
    assert e.value.field == "params.warm_start"
