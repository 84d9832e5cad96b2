"""The profiled optimizer step (issue 24, third round): the ``optimize`` column's unit, ``profiled_k_opt``
from the fit rows only (hand-computed), ``fit(hold=...)`` and ``--optimizer profiled`` end to end."""

import json

import pytest

from schedlab.perfmodel import PerfModel, PerfParams, parse_plan
from schedlab.perfmodel.fitting import Sample, fit
from schedlab.perfmodel.profiling import OPT_PROFILE_SPREAD, profiled_k_opt
from schedlab.perfmodel.tables import load_table, optimize_scale, read_table
from schedlab.perfmodel.validation import run_protocol
from schedlab.perfmodel.zoo import get_model
from schedlab.topology.errors import SpecError

TRUE = PerfParams(k_bwd=1.6, k_sync=2.0, k_opt=1e-4, k_opt_off=6e-3, k_off=3.0, k_swap=2.0, k_const=0.05,
                  b_intra=40.0, b_inter=6.0)


def _table(path, rows):
    """rows: (plan, placement, iter_time, optimize)."""
    path.write_text("exec_plan,placement,iter_time,forward,overlap_sync,optimize\n"
                    + "".join(f"{p},{pl},{t},0,0,{o}\n" for p, pl, t, o in rows))
    return path


def test_optimize_column_unit_is_decided_per_table(tmp_path):
    assert optimize_scale([83.0, 84.0], [0.3, 0.4]) == 1e-3      # 83 "units" in a 0.3 s iteration: ms
    assert optimize_scale([0.018, 0.03], [0.05, 0.06]) == 1.0    # seconds
    assert optimize_scale([0.0, 0.0], [0.05, 0.06]) == 1.0       # not measured
    rows = read_table(_table(tmp_path / "t.csv", [("ga", "2", 0.6, 83.0), ("ga", "4", 0.4, 84.0),
                                                  ("gc", "8", 0.3, 0)]))
    assert [r.optimize_s for r in rows] == [pytest.approx(0.083), pytest.approx(0.084), None]
    with pytest.raises(SpecError, match="optimize must be a number"):
        read_table(_table(tmp_path / "bad.csv", [("ga", "2", 0.6, "x")]))


def test_profiled_k_opt_hand_computed(tmp_path, rubick):
    """Plain-DP fit rows on one machine at two DP degrees, 0.083 s and 0.085 s: k_opt = median / P' =
    0.084 s / (P / 10^6). ZeRO rows, multi-machine rows and rows not fitted never enter."""
    P = get_model("bert").params
    t = load_table(_table(tmp_path / "bert.csv", [
        ("ga", "2", 0.6, 83.0), ("gc", "4", 0.4, 85.0), ("zero-dp", "2", 0.5, 500.0),
        ("ga", "44", 0.3, 900.0), ("ga", "8", 0.3, 10.0)]), rubick)
    fit_idx = [0, 1, 2, 3]  # row 4 (ga @ 8, 10 ms) is not a fit row: it never shapes k_opt
    assert profiled_k_opt(t.rows, fit_idx, P) == pytest.approx(0.084 / (P / 1e6))
    # one DP degree only: nothing to check the profile against
    assert profiled_k_opt(t.rows, [0, 2, 3], P) is None
    # steps that differ by more than OPT_PROFILE_SPREAD across d (the column holds something else)
    assert profiled_k_opt(t.rows, [0, 4], P) is None and 83.0 / 10.0 > OPT_PROFILE_SPREAD


def test_fit_holds_the_named_parameters(rubick):
    """``hold``: k_opt stays at its value in ``initial`` and is not among the fitted parameters."""
    spec = get_model("bert")
    pm = PerfModel(rubick, {"bert": TRUE}, calibration="fitted")
    samples = []
    for plan, g in [(p, g) for p in ("ga", "gc", "zero-dp", "zero-offload") for g in (1, 2, 4, 8)]:
        pl = parse_plan(plan, g)
        place = {"rack0-m0": g}
        cpus = (8 if plan == "zero-offload" else 1) * g
        samples.append(Sample(pl, place, cpus, spec.global_batch / pm.iteration_time("bert", pl, place, cpus)))
    start = PerfParams(**{**TRUE.to_dict(), "k_opt": 3e-4})
    res = fit(spec, samples, rubick, starts=3, initial=start, hold=("k_opt",))
    assert "k_opt" not in res.free and res.params.k_opt == 3e-4
    free = fit(spec, samples, rubick, starts=3, initial=start)
    assert "k_opt" in free.free and free.rmsle < res.rmsle


def _bert_rows(rubick) -> list[tuple[str, str, str, float]]:
    """Single-machine BERT rows (ga, gc, zero-dp, zero-offload on 1-8 GPUs) timed by the model at ``TRUE``,
    each with an ``optimize`` profile of 0.05 s."""
    pm = PerfModel(rubick, {"bert": TRUE}, calibration="fitted")
    rows = []
    for plan in ("ga", "gc", "zero-dp", "zero-offload"):
        for g in ("1", "2", "4", "8"):
            p = parse_plan(plan, int(g))
            cpus = (8 if plan == "zero-offload" else 1) * p.gpus
            rows.append((plan, g, f"{pm.iteration_time('bert', p, {'rack0-m0': int(g)}, cpus):.12g}", 0.05))
    return rows


def test_optimizer_option_of_the_protocols(tmp_path, rubick):
    """``optimizer="profiled"`` holds k_opt at the fit rows' profile (here every plain-DP single-machine
    row records 0.05 s: k_opt = 0.05 / P'); ``fitted`` (the default) fits it; unknown names are refused."""
    P = get_model("bert").params
    rows = _bert_rows(rubick)
    table = load_table(_table(tmp_path / "bert.csv", rows), rubick)
    prof = run_protocol(table, rubick, "paper", starts=3, optimizer="profiled")
    assert prof.params["k_opt"] == pytest.approx(0.05 / (P / 1e6))
    fitted = run_protocol(table, rubick, "paper", starts=3)
    assert fitted.params["k_opt"] != pytest.approx(0.05 / (P / 1e6))
    with pytest.raises(SpecError, match="optimizer must be one of"):
        run_protocol(table, rubick, "paper", optimizer="nope")


def test_cli_optimizer_option(tmp_path, rubick, cli):
    rows = _bert_rows(rubick)
    _table(tmp_path / "bert.csv", rows)
    code, out, _ = cli("perf", "validate", "--dir", str(tmp_path), "--optimizer", "profiled", "--format", "json")
    assert code == 0, out
    assert json.loads(out)["models"]["bert"]["avg_error"] is not None
