"""The generated reproduction tables (issue 23): intervals, verdict rules, seeds, ``--option``, and the
whole report regenerated from a small committed store (``tests/data/reproduction/records.json``: the
``avg_jct``/``median_jct``/``makespan`` of real records of ``schedlab bench tiresias --option
parts=testbed --option seeds=5`` and ``schedlab bench dally --option seeds=5``, 8 racks, batch) against
the committed expected output (``expected.md``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from schedlab.benchmarks.cli.suite_options import parse_suite_options
from schedlab.benchmarks.harness.report.reproduction import (
    Interval,
    fmt_interval,
    ratios,
    render,
    runs_from_records,
    t_interval,
    trend_verdict,
    verdict,
)
from schedlab.benchmarks.harness.store import Store
from schedlab.benchmarks.harness.suites import SUITES
from schedlab.benchmarks.harness.suites.seeds import seed_label, seed_values, split_seed
from schedlab.topology.errors import SpecError

DATA = Path(__file__).resolve().parents[1] / "data" / "reproduction"


def test_t_interval_by_hand():
    # mean 2, sd 1, n 4: half-width t(0.975, 3) = 3.1824463 times 1 / 2
    iv = t_interval([1.0, 2.0, 2.0, 3.0])
    sd = math.sqrt(2 / 3)
    assert iv.mean == pytest.approx(2.0) and iv.n == 4
    assert iv.hi - iv.mean == pytest.approx(3.1824463 * sd / 2, rel=1e-6)
    one = t_interval([5.0])
    assert (one.lo, one.hi, one.n) == (5.0, 5.0, 1)


def test_verdict_rules():
    band = (4.58, 6.6)  # 5.5x within a factor 1.2
    assert verdict(Interval(5.0, 4.0, 6.0, 5), band) == "held"
    assert verdict(Interval(2.2, 2.0, 2.4, 5), band) == "direction only"   # same winner, smaller
    assert verdict(Interval(0.9, 0.8, 1.0, 5), band) == "not held"         # no winner shown
    assert verdict(Interval(1.5, 0.9, 5.0, 5), band) == "inconclusive"     # overlaps, but contains 1
    assert verdict(Interval(0.7, 0.65, 0.75, 5), (0.62, 0.89)) == "held"
    assert verdict(Interval(1.2, 1.1, 1.3, 5), (0.62, 0.89)) == "not held"  # the other winner
    assert verdict(Interval(1.02, 0.99, 1.05, 5), (0.95, 1.05)) == "held"   # "about 1": no winner to show
    assert verdict(Interval(2.0, 2.0, 2.0, 1), band) == "n = 1"
    assert verdict(Interval(2.0, 2.0, 2.0, 1), band, exact=True) == "direction only"
    assert trend_verdict(Interval(0.5, 0.1, 0.9, 5), grows=True) == "trend held"
    assert trend_verdict(Interval(0.5, -0.1, 0.9, 5), grows=True) == "no trend shown"
    assert trend_verdict(Interval(-0.5, -0.9, -0.1, 5), grows=True) == "reversed"


def test_improvement_format_flips_the_interval():
    # Dally / base = 0.7 [0.6, 0.8] -> improvement +30 % [+20, +40]
    assert fmt_interval(Interval(0.7, 0.6, 0.8, 5), "improvement") == "+30.0 % [+20.0, +40.0]"
    assert fmt_interval(Interval(2.0, 1.5, 2.5, 5)) == "2x [1.5, 2.5]"


def test_ratios_pair_by_seed():
    runs = {"a": {None: {"avg_jct": 4.0}, 1: {"avg_jct": 6.0}, 2: {"avg_jct": 1.0}},
            "b": {None: {"avg_jct": 2.0}, 1: {"avg_jct": 3.0}, 3: {"avg_jct": 1.0}}}
    assert ratios(runs, "a", "b", "avg_jct") == {None: 2.0, 1: 2.0}


def test_seed_labels_round_trip():
    assert seed_values(3, 2, suite="x") == (2, 3, 4)
    assert seed_label("t/a", 0, 0) == "t/a" and seed_label("t/a", 3, 0) == "t/a@seed=3"
    assert split_seed("t/a@seed=3") == ("t/a", 3) and split_seed("t/a") == ("t/a", None)
    with pytest.raises(SpecError):
        seed_values(0, 0, suite="x")
    with pytest.raises(SpecError):
        seed_values([1, 1], 0, suite="x")


@pytest.mark.parametrize("name,options", [("tiresias", {"parts": ("testbed",)}), ("dally", {"racks": (2,)}),
                                          ("rubick", {"traces": None})])
def test_suites_run_every_case_over_seeds(name, options):
    one, five = SUITES[name](**options), SUITES[name](seeds=5, **options)
    assert len(five.cases) == 5 * len(one.cases) - (4 * sum(c.label.startswith("reference/") for c in one.cases))
    labels = {split_seed(c.label) for c in five.cases}
    assert {s for _, s in labels} == {None, 1, 2, 3, 4}
    by_seed = {s: sorted(lab for lab, t in labels if t == s) for s in (None, 1, 2, 3, 4)}
    assert all(v == by_seed[None] for v in by_seed.values())
    assert {c.source.seed for c in five.cases} == {0, 1, 2, 3, 4}


def test_suite_options_typed_and_validated():
    opts = parse_suite_options(SUITES["tiresias"], "tiresias",
                               ["parts=testbed,reference", "seeds=5", "load=2.5", "semantics=tiresias"])
    assert opts == {"parts": ("testbed", "reference"), "seeds": 5, "load": 2.5, "semantics": ("tiresias",)}
    assert parse_suite_options(SUITES["dally"], "dally", ["racks=2,8", "sweep=false", "seeds=0,3"]) == {
        "racks": (2, 8), "sweep": False, "seeds": (0, 3)}
    with pytest.raises(SpecError, match="valid: .*load.*parts.*seeds"):
        parse_suite_options(SUITES["tiresias"], "tiresias", ["bogus=1"])
    with pytest.raises(SpecError, match="wants a float"):
        parse_suite_options(SUITES["tiresias"], "tiresias", ["load=high"])
    with pytest.raises(SpecError, match="KEY=VALUE"):
        parse_suite_options(SUITES["tiresias"], "tiresias", ["load"])


def test_bench_option_refuses_an_unknown_key(cli, tmp_path):
    r = cli("bench", "tiresias", "--option", "nope=1", "--out", str(tmp_path / "o"))
    assert r.code == 2 and "valid:" in r.err and "seeds" in r.err


def _records() -> list[dict]:
    return json.loads((DATA / "records.json").read_text())


def test_report_regenerates_the_committed_tables():
    assert render(runs_from_records(_records())) == (DATA / "expected.md").read_text()


def test_report_cli_reads_a_store(cli, tmp_path):
    with Store(tmp_path) as store:
        for i, r in enumerate(_records()):
            store.put({**r, "key": f"k{i}", "case_type": "replay"})
    r = cli("report", str(tmp_path), "--reproduction", "--no-micro")
    assert r.code == 0, r.err
    assert r.out == (DATA / "expected.md").read_text()


def test_tiresias_paper_setting_parts():
    s = SUITES["tiresias"](parts=("philly-vc", "loaded-paper", "testbed-philly"), policies=("yarn-cs", "2d-las"),
                           semantics=("tiresias",), paper_load=3.0)
    labels = {c.label for c in s.cases}
    assert {"philly-vc/0e4a51/2d-las", "philly-paper-load-rs/tiresias/yarn-cs", "testbed-philly/tiresias/2d-las"} <= labels
    assert all(c.source.load == 3.0 and c.source.resample == "bootstrap" for c in s.cases
               if c.label.startswith("philly-paper-load-rs/"))
    assert not any("best-effort" in x for x in labels if not x.startswith("philly-vc/"))
    with pytest.raises(SpecError, match="policies"):
        SUITES["tiresias"](parts=("testbed",), policies=("fifo",))


def test_tiresias_480_philly_keeps_the_testbed_bins(traces_dir):
    from collections import Counter

    from schedlab.benchmarks.workloads.named import WORKLOADS
    from schedlab.topology.presets import load_cluster

    table = str(traces_dir / "philly" / "sia_philly_jobs.csv")
    w = WORKLOADS["tiresias-480-philly"].build(load_cluster("tiresias-60"), seed=1, duration_scale=0.01, table=table)
    assert Counter(j.requested.gpus for j in w.jobs) == {1: 240, 2: 40, 4: 80, 8: 90, 16: 25, 32: 5}


def test_fig8_from_the_measured_tables(traces_dir):
    from schedlab.benchmarks.harness.suites.rubick_micro import measured_micro

    m = measured_micro(traces_dir / "rubick" / "placements")
    # by hand from the tables: T5-3B tp+ga 4 GPUs 0.8233 s, 3 GPUs 0.9301 s, <= 2 GPUs best zero-offload 3.2757 s;
    # RoBERTa ga 4 GPUs 0.372841222 s, <= 1 GPU best zero-dp 0.68361435 s, <= 2 GPUs the same
    assert m["paper split"] == pytest.approx(0.8233 / 0.9301 + 0.372841222 / 0.68361435)
    assert m["equal split"] == pytest.approx(0.8233 / 3.2757 + 0.372841222 / 0.68361435)
    assert m["best split allocation"] == "t5_3B=3,roberta=1"


def test_one_replay_under_two_labels_is_found_under_both():
    # the store keeps Rubick's load=1 sweep point and its Base trace case as one record (the same case key)
    recs = [{"suite": "rubick", "label": "load=1/rubick", "status": "ok", "metrics": {"avg_jct": 2.0}},
            {"suite": "rubick", "label": "base-trace/sia", "status": "ok", "metrics": {"avg_jct": 5.0}}]
    runs = runs_from_records(recs)["rubick"]
    assert runs["base-trace/rubick"] == runs["load=1/rubick"]
    assert ratios(runs, "base-trace/sia", "base-trace/rubick", "avg_jct") == {None: 2.5}


def test_artifact_section_matches_within_the_tolerance():
    from schedlab.benchmarks.harness.report.reproduction import artifact_section
    from schedlab.benchmarks.harness.suites.tiresias import REFERENCE

    fig = REFERENCE["2869ce"][1]["dlas-gpu"]
    have = {"reference/2869ce/dlas-gpu": {None: {"avg_jct": fig}},
            "reference/2869ce/fifo": {None: {"avg_jct": REFERENCE["2869ce"][1]["fifo"] * 1.01}}}
    rows = [r for r in artifact_section(have) if r.startswith("| VC")]
    assert len(rows) == 2  # only the stored cases
    assert rows[0].startswith("| VC 2869ce: avg JCT `fifo` (s)") and "| +1.0000 % | exact | not held |" in rows[0]
    assert "| +0.0000 % | exact | held |" in rows[1]
    assert artifact_section({}) == []


def test_fixed_trace_replicas_and_the_resampled_row():
    from schedlab.benchmarks.harness.report.reproduction import figure_row
    from schedlab.benchmarks.harness.suites import paper_figures as pf

    figs = [f for f in pf.figures() if f.table.startswith("Philly table, arrivals compressed 5x (ours), tiresias")
            and f.quantity.startswith("avg JCT YARN-CS / 2D-LAS")]
    rs, rec = figs  # the resampled figure (the verdict) first, then the table as recorded
    assert rs.num == "philly-x5-rs/tiresias/yarn-cs" and not rs.as_recorded
    assert rec.num == "philly-x5/tiresias/yarn-cs" and rec.as_recorded
    seeds = (None, 1, 2, 3, 4)
    runs = {"philly-x5/tiresias/yarn-cs": {s: {"avg_jct": 3000.0} for s in seeds},  # one replay, five times
            "philly-x5/tiresias/2d-las": {s: {"avg_jct": 1000.0} for s in seeds},
            "philly-x5-rs/tiresias/yarn-cs": {s: {"avg_jct": 2000.0 + 100 * i} for i, s in enumerate(seeds)},
            "philly-x5-rs/tiresias/2d-las": {s: {"avg_jct": 1000.0 + 10 * i} for i, s in enumerate(seeds)}}
    row = figure_row(rec, runs)
    assert row[3] == "3x" and row[4] == "1 (5 identical: deterministic)" and row[5] == "as recorded: direction only"
    row = figure_row(rs, runs)
    assert row[3].startswith("2.") and "[" in row[3] and row[4] == "5" and row[5] == "held"
    # equal ratios on different workloads are a tie measured five times, not replicas
    tie = {"philly-x5-rs/tiresias/yarn-cs": {s: {"avg_jct": 100.0 * (i + 1)} for i, s in enumerate(seeds)},
           "philly-x5-rs/tiresias/2d-las": {s: {"avg_jct": 100.0 * (i + 1)} for i, s in enumerate(seeds)}}
    assert figure_row(rs, tie)[4] == "5"


def test_free_preemption_table_beside_the_measured_cost():
    """The tiresias suite's ``costs=free`` experiment: its table appears after the measured-cost one once it has
    runs, with the paper's ratios (verdicts) and, per policy, the measured cost over free preemption (ours only)."""
    from schedlab.benchmarks.harness.report.reproduction import NO_PAPER_FIGURE, figure_row
    from schedlab.benchmarks.harness.suites import paper_figures as pf

    seeds = (None, 1, 2, 3, 4)
    runs = {f"philly-x5-rs/{sem}/{pol}": {s: {"avg_jct": base * (1 + 0.01 * i) * (1.5 if sem == "realistic" else 1.0),
                                               "preemptions": 10.0 + i}
                                           for i, s in enumerate(seeds)}
            for sem in ("realistic", "realistic-free") for pol, base in (("2d-las", 1000.0), ("srsf", 900.0))}
    title = f"Philly table, arrivals compressed 5x (ours), {pf.FREE_TITLE}"
    mine = [f for f in pf.figures() if f.table == title]
    cost = next(f for f in mine if f.quantity.startswith("avg JCT 2D-LAS, measured cost"))
    assert cost.num == "philly-x5-rs/realistic/2d-las" and cost.den == "philly-x5-rs/realistic-free/2d-las"
    row = figure_row(cost, runs)
    assert row[3].startswith("1.5x [") and row[4] == "5" and row[5] == NO_PAPER_FIGURE and row[1] == "—"
    gittins = next(f for f in mine if f.quantity == "avg JCT 2D-Gittins / SRSF, free preemption")
    assert gittins.num == "philly-x5-rs/realistic-free/2d-gittins" and gittins.band == pf.point(1.1, 0.1)
    ratio = figure_row(next(f for f in mine if f.quantity == "avg JCT YARN-CS / 2D-LAS, free preemption"), runs)
    assert ratio[5] == "no run"
    store = [{"suite": "tiresias", "label": f"{lab}@seed={s}" if s else lab, "status": "ok", "metrics": m,
              "finished_at": "t"} for lab, per in runs.items() for s, m in per.items()]
    text = render(runs_from_records(store), suites=("tiresias",))
    measured = text.index("### Philly table, arrivals compressed 5x (ours), realistic semantics\n")
    free = text.index(f"### {title}")
    assert measured < free < text.index("### Philly table, arrivals compressed 5x (ours), tiresias semantics")
    assert f"| {NO_PAPER_FIGURE} |" in text[free:]
    # without a free-preemption record the table is left out (the stores before the experiment render as before)
    assert title not in render(runs_from_records([r for r in store if "realistic-free" not in r["label"]]),
                               suites=("tiresias",))


def test_resampled_sensitivity_rows_over_the_same_draw():
    from schedlab.benchmarks.harness.report.reproduction import RUN_OPTIONS
    from schedlab.benchmarks.harness.suites import paper_figures as pf

    rs = [f for f in pf.figures() if f.table.startswith("Sensitivity (sensitivity-x5-rs)")]
    assert len(rs) == 18 and all(f.optional and not f.exact for f in rs)
    assert all(f.num.startswith("sensitivity-x5-rs/") and f.den == f"philly-x5-rs/tiresias/{f.num.split('/')[1]}"
               for f in rs)
    # every case of those rows is one the suite makes (the part resampled, as the loaded part)
    labels = {split_seed(c.label)[0] for c in SUITES["tiresias"](parts=("loaded", "sensitivity"), semantics=("tiresias",),
                                                                 policies=("2d-las", "2d-gittins")).cases}
    assert {f.num for f in rs} | {f.den for f in rs} <= labels
    as_recorded = next(o for s, p, o in RUN_OPTIONS if "Sensitivity (sensitivity-x5) ...".startswith(p))
    assert "resample=none" in as_recorded
