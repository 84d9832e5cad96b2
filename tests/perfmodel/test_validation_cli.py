"""Validation protocols on small tables written by the tests (never /work/shared), and the `schedlab perf` CLI."""

import json

import pytest

from schedlab.perfmodel import PerfModel, PerfParams, parse_plan
from schedlab.perfmodel.anomalies import CATEGORIES, base_category
from schedlab.perfmodel.validation import (
    NotApplicable,
    choose_fit_rows,
    load_table,
    protocol_folds,
    read_table,
    validate_directory,
    validate_table,
)
from schedlab.topology.errors import SpecError

TRUE = PerfParams(k_bwd=1.6, k_sync=2.0, k_opt=1e-4, k_opt_off=6e-3, k_off=3.0, k_swap=2.0, k_const=0.05,
                  b_intra=40.0, b_inter=6.0)
SINGLE = [(p, g) for p in ("ga", "gc", "zero-dp", "zero-offload") for g in ("1", "2", "4", "8")]
MULTI = [("ga", "44"), ("ga", "1111"), ("ga", "35"), ("gc", "22"), ("gc", "11111111"), ("zero-dp", "2222"),
         ("zero-dp", "224"), ("zero-offload", "44"), ("zero-offload", "11"), ("zero-offload", "1111112")]
ROWS = SINGLE + MULTI


def write_table(path, rubick, params=TRUE, model="bert", rows=ROWS, extra=()):
    pm = PerfModel(rubick, {model: params}, calibration="fitted")  # the form validation and `perf fit` fit
    lines = ["exec_plan,placement,iter_time,forward,overlap_sync,optimize"]
    for plan, place in rows:
        counts = {f"rack0-m{i}": int(c) for i, c in enumerate(place)}
        p = parse_plan(plan, sum(counts.values()))
        cpus = (8 if plan == "zero-offload" else 1) * p.gpus
        lines.append(f"{plan},{place},{pm.iteration_time(model, p, counts, cpus):.12g},0,0,0")
    lines += list(extra)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_categories_one_gpu_per_machine_is_multi_machine():
    assert base_category(False, (8,)) == "single-machine"
    assert base_category(False, (1, 1, 1, 1)) == "multi-machine-even"
    assert base_category(False, (1, 1, 1, 1, 1, 1, 1, 1)) == "multi-machine-even"
    assert base_category(False, (3, 5)) == "multi-machine-uneven"
    assert base_category(True, (4,)) == "3d" and base_category(True, (8, 8)) == "3d"


def test_paper_fit_rows_are_single_machine(tmp_path, rubick):
    table = load_table(write_table(tmp_path / "bert.csv", rubick), rubick)
    [(fit, scored)] = protocol_folds(table, "paper")
    rows = table.rows
    assert len(fit) == 7 and all(rows[i].machines == 1 for i in fit)
    assert sum(rows[i].plan.zero.value == "zero-offload" for i in fit) == 3
    # scored: the other single-machine rows; '1111' / '11111111' are neither fitted nor scored here
    assert {rows[i].placement for i in scored} <= {"1", "2", "4", "8"} and len(scored) == 16 - 7
    assert not {rows[i].placement for i in fit} & {"1111", "11111111", "11"}


def test_holdout_fit_rows_single_machine_plus_two_even_splits(tmp_path, rubick):
    table = load_table(write_table(tmp_path / "bert.csv", rubick), rubick)
    [(fit, scored)] = protocol_folds(table, "holdout")
    rows = table.rows
    multi = [rows[i] for i in fit if rows[i].machines > 1]
    even = [r for r in multi if len(set(r.counts)) == 1]
    offload = [r for r in even if r.plan.zero.value == "zero-offload"]
    assert len(even) == 3 and len(offload) == 1  # DP-family pair + the k_offx row
    # the fewest machines with the most GPUs each (ga@44, not gc@22: the pair spans the per-machine count
    # the hierarchical all-reduce is fitted on) and the most machines (gc@11111111: 8 machines), the odd-count
    # placements on the fewest and the most machines for the parity term (here one: ga@35, 2 machines, 8
    # GPUs), and the even-split ZeRO-Offload row on the most machines, fewest GPUs last, for k_offx
    # (zero-offload@11; the table's other such row, 44, stays scored)
    assert {(r.plan_name, r.placement) for r in multi} == {("ga", "44"), ("gc", "11111111"), ("ga", "35"),
                                                           ("zero-offload", "11")}
    others = [r for r in rows if r.plan.zero.value == "zero-offload" and r.machines > 1 and len(set(r.counts)) == 1]
    assert len(others) >= 2  # never the kind's last held-out row
    assert sum(rows[i].machines == 1 for i in fit) == 16 and set(fit).isdisjoint(scored)
    assert len(fit) + len(scored) == len(rows)


@pytest.mark.parametrize("protocol", ["paper", "holdout", "kfold"])
def test_fit_rows_are_never_scored(tmp_path, rubick, protocol):
    t = write_table(tmp_path / "bert.csv", rubick)
    v = validate_table(t, rubick, protocol=protocol, starts=2, folds=3)
    scored = [r for r in v.rows if not r.fitted]
    assert scored and v.predicted_rows == len(scored)
    for f in v.folds:
        assert set(f.fit_lines).isdisjoint(f.scored_lines)
    for r in scored:  # a scored row is never in the fit that predicted it
        assert r.line not in v.folds[r.fold].fit_lines and r.line in v.folds[r.fold].scored_lines
    if protocol == "kfold":
        assert sorted(r.line for r in scored) == sorted(x.line for x in load_table(t, rubick).rows)
        assert not any(r.fitted for r in v.rows) and len(v.folds) == 3


def test_model_generated_table_is_recovered(tmp_path, rubick):
    """A table generated from known parameters, effective bandwidths included: held-out rows are
    predicted exactly and the fit recovers the parameters within 1 %."""
    v = validate_table(write_table(tmp_path / "bert.csv", rubick), rubick, protocol="holdout", starts=3)
    assert v.max_error < 0.1  # percent
    for name in ("k_bwd", "k_sync", "k_const", "b_intra", "b_inter"):
        assert v.params[name] == pytest.approx(getattr(TRUE, name), rel=0.01), name
    s = v.summary()
    assert set(s["categories"]) == set(CATEGORIES)
    assert s["categories"]["multi-machine-even"]["rows"] == 7 - 3 and s["categories"]["3d"]["rows"] == 0
    assert s["categories"]["3d"]["avg_error"] is None


def test_anomalies_are_scored_listed_and_never_fitted(tmp_path, rubick):
    # ga on 2 GPUs measured at the 1-GPU time: the pair is an anomaly (no-speedup)
    pm = PerfModel(rubick, {"bert": TRUE})
    t1 = pm.iteration_time("bert", parse_plan("ga", 1), {"rack0-m0": 1}, 1)
    rows = [r for r in ROWS if r != ("ga", "2")]
    t = write_table(tmp_path / "bert.csv", rubick, rows=rows, extra=[f"ga,2,{t1:.12g},0,0,0"])
    table = load_table(t, rubick)
    marked = {(r.plan_name, r.placement) for r in table.rows if r.anomaly}
    assert marked == {("ga", "1"), ("ga", "2")}
    for protocol in ("paper", "holdout", "kfold"):
        v = validate_table(t, rubick, protocol=protocol, starts=2, folds=3)
        anomalous = [r for r in v.rows if r.anomaly]
        assert anomalous and all(not r.fitted and r.category == "anomaly" for r in anomalous)
        assert v.summary()["categories"]["anomaly"]["rows"] == len(anomalous)


def test_protocol_not_applicable_and_unknown(tmp_path, rubick):
    t = write_table(tmp_path / "bert.csv", rubick, rows=SINGLE[:6] + MULTI)
    with pytest.raises(NotApplicable, match="single-machine rows"):
        validate_table(t, rubick, protocol="paper")
    with pytest.raises(SpecError, match="unknown protocol"):
        protocol_folds(load_table(t, rubick), "bogus")


def test_fit_rows_choice_is_deterministic_and_spread():
    plans = [parse_plan(p, int(g)) for p, g in SINGLE]
    idx = choose_fit_rows(plans, 7)
    chosen = [plans[i] for i in idx]
    assert len(idx) == 7 and sum(p.zero.value == "zero-offload" for p in chosen) == 3
    assert {p.name for p in chosen} == {"ga", "gc", "zero-dp", "zero-offload"}
    assert choose_fit_rows(plans, 7) == idx
    # with placements: single-machine rows first, then equal splits, never the ineligible ones
    rows = [("ga", "1"), ("ga", "35"), ("ga", "1111"), ("ga", "8"), ("gc", "2"), ("zero-dp", "4"),
            ("zero-offload", "1"), ("zero-offload", "2"), ("zero-offload", "8"), ("zero-offload", "11111111")]
    places = [tuple(int(c) for c in pl) for _, pl in rows]
    plans = [parse_plan(p, sum(pl)) for (p, _), pl in zip(rows, places, strict=True)]
    idx = choose_fit_rows(plans, 6, places, [i != 3 for i in range(len(rows))])
    assert 3 not in idx and 1 not in idx and 2 not in idx and 9 not in idx and len(idx) == 6


def test_read_table_errors_and_forward_units(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("exec_plan,placement\nga,1\n")
    with pytest.raises(SpecError, match="missing columns"):
        read_table(bad)
    bad.write_text("exec_plan,placement,iter_time\nga,1,0.3\nga,2,fast\n")
    with pytest.raises(SpecError) as ei:
        read_table(bad)
    assert ei.value.line == 3 and ei.value.column == "iter_time"
    ms = tmp_path / "ms.csv"  # forward larger than the iteration: the column is in ms
    ms.write_text("exec_plan,placement,iter_time,forward\nga,1,0.6,200\nga,2,0.35,110\n")
    assert [r.forward_s for r in read_table(ms)] == [pytest.approx(0.2), pytest.approx(0.11)]
    s = tmp_path / "s.csv"
    s.write_text("exec_plan,placement,iter_time,forward\nga,1,0.6,0.2\n141,4,0.8,0\n")
    assert [r.forward_s for r in read_table(s)] == [pytest.approx(0.2), None]


def test_validate_directory_skips_unknown_tables(tmp_path, rubick):
    write_table(tmp_path / "bert.csv", rubick)
    (tmp_path / "t5_3B.csv").write_text("exec_plan,placement,iter_time\nzero-offload,1,4.0\n")
    res, skipped = validate_directory(tmp_path, rubick, starts=2)
    assert set(res) == {"bert"} and "t5_3B" in skipped
    with pytest.raises(SpecError, match="not present"):
        validate_directory(tmp_path / "nope", rubick)


def test_cli_validate_json_shape(tmp_path, rubick, cli):
    write_table(tmp_path / "bert.csv", rubick)
    code, out, _ = cli("perf", "validate", "--dir", str(tmp_path), "--format", "json", "--protocol", "holdout")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"protocol", "models"} and data["protocol"] == "holdout"
    m = data["models"]["bert"]
    assert set(m) == {"avg_error", "max_error", "categories"} and m["max_error"] < 0.1
    assert set(m["categories"]) == set(CATEGORIES)
    assert all(set(c) == {"rows", "avg_error", "max_error"} for c in m["categories"].values())
    code, out, _ = cli("perf", "validate", "--dir", str(tmp_path), "--format", "json", "--protocol", "kfold",
                       "--folds", "3", "--predictor", "artifact")
    m = json.loads(out)["models"]["bert"]
    assert code == 0 and "avg_error_sd" in m and m["avg_error"] > 1  # the artifact's model is off here
    code, out, _ = cli("perf", "validate", "--dir", str(tmp_path), "--protocol", "paper")
    assert code == 0 and "single-machine" in out and "artifact" in out


def test_cli_validate_without_traces_fails_clearly(tmp_path, cli):
    code, _, err = cli("perf", "validate", "--dir", str(tmp_path / "missing"), "--format", "json")
    assert code == 2 and "not present" in err


def test_cli_fit(tmp_path, rubick, cli):
    t = write_table(tmp_path / "samples.csv", rubick)
    code, out, _ = cli("perf", "fit", str(t), "--model", "bert", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["samples"] == len(ROWS) and data["rmsle"] < 1e-3
    assert data["params"]["k_bwd"] == pytest.approx(1.6, rel=0.01)
    assert data["params"]["b_inter"] == pytest.approx(6.0, rel=0.01)
    code, out, _ = cli("perf", "fit", str(t), "--model", "bert")
    assert code == 0 and "RMSLE" in out


def test_cli_curve(cli):
    code, out, _ = cli("perf", "curve", "bert", "--cluster", "rubick-64", "--format", "json")
    assert code == 0
    data = json.loads(out)
    pts = data["points"]
    assert len(pts) == 64 and data["resource"] == "gpu"
    assert all(b["throughput"] >= a["throughput"] for a, b in zip(pts, pts[1:], strict=False))
    code, out, _ = cli("perf", "curve", "llama7", "--resource", "cpu", "--gpus", "1", "--max", "16")
    assert code == 0 and "zero-offload" in out
    code, _, err = cli("perf", "curve", "gpt-5")
    assert code == 2 and "unknown model" in err


@pytest.mark.parametrize("code,batch,m", [("418", 32, 4), ("242", 32, 4), ("344", 32, 4), ("611", 16, 8),
                                          ("211", 3, 3), ("148", 32, 1), ("358", 32, 4), ("224", 30, 4)])
def test_micro_batches_fit_the_per_replica_batch(code, batch, m):
    from schedlab.perfmodel.validation import with_valid_micro_batches

    # 418 (d = 8) at b = 32: 4 samples per replica; the default 2p = 8 micro-batches would be half a
    # sample each -> 4. 242: 16 per replica, 2p = 4 divides -> kept. 611: 16 samples, 12 does not
    # divide -> 8. 211 at b = 3: largest divisor of 3 not above 4 -> 3. 148: no PP -> 1.
    # 224 at b = 30: d = 4 does not divide 30 -> left alone (flagged as outside the plan space).
    assert with_valid_micro_batches(parse_plan(code), batch).micro_batches == m


def test_cli_curve_under_the_measured_calibration(cli, traces_dir):
    """``perf curve --calibration measured``: on 8 GPUs of one machine BERT's best is the measured
    ``zero-dp @ 8`` (0.15499 s for 32 samples), above the fitted model's figure."""
    code, out, _ = cli("perf", "curve", "bert", "--max", "8", "--calibration", "measured", "--format", "json")
    assert code == 0
    point = json.loads(out)["points"][7]
    assert point["amount"] == 8 and point["throughput"] == pytest.approx(32 / 0.15498947368421054)
    code, out, _ = cli("perf", "curve", "bert", "--max", "8", "--format", "json")
    assert code == 0 and json.loads(out)["points"][7]["throughput"] < point["throughput"]


def test_cli_curve_default_calibration_is_flat(cli):
    """``perf curve`` without ``--calibration`` is ``flat`` (the schedulers' model), not ``fitted``."""
    runs = {}
    for extra in ((), ("--calibration", "flat"), ("--calibration", "fitted")):
        code, out, _ = cli("perf", "curve", "bert", "--max", "16", *extra, "--format", "json")
        assert code == 0
        runs[extra[1] if extra else "default"] = [p["throughput"] for p in json.loads(out)["points"]]
    assert runs["default"] == runs["flat"] != runs["fitted"]
