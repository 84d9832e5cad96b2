"""Reports (HTML, Markdown, PNG plots, exports), ``schedlab compare`` (noise bands worked by hand), the
runtime fit and the best-bound rule on hand-made records."""

from __future__ import annotations

import math
import shutil
import sqlite3

import numpy as np
import pandas as pd
import pytest

from schedlab.benchmarks.harness.analysis import fit_exponent, with_best_bound
from schedlab.benchmarks.harness.compare import compare


def test_report_writes_every_section_and_plot(small_run, cli):
    d, _ = small_run
    code, out, err = cli("report", d, "--format", "json")
    assert code == 0, err
    names = {p.split("/")[-1] for p in __import__("json").loads(out)["plots"]}
    assert {"gap_vs_size.png", "runtime_vs_jobs.png", "online_vs_bound.png"} <= names
    assert any(n.startswith("jct_cdf_") for n in names) and any(n.startswith("timeline_") for n in names)
    assert sum(n.startswith("gantt_") for n in names) == 2  # a schedule picture per replay
    for n in names:
        assert (d / "plots" / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (d / "report.md").read_text()
    for section in ("## Summary", "## Optimality gap", "## Runtime", "## Online vs offline bound", "## Trace replays"):
        assert section in md
    assert "bound is the proven optimum" in md
    assert "## Reproduction (paper vs ours)" in md and "| avg JCT, yarn-cs / fifo | 1 | 1 | x |" in md
    html = (d / "report.html").read_text()
    assert html.count("<img") == len(names) and "<table>" in html


def test_compare_same_directory_has_no_difference(small_run):
    d, _ = small_run
    df = compare(d, d)
    assert len(df) and (df["verdict"] == "within noise").all()


def test_compare_highlights_a_changed_result(small_run, tmp_path, cli):
    d, _ = small_run
    b = tmp_path / "b"
    shutil.copytree(d, b)
    with sqlite3.connect(b / "results.sqlite") as c:
        # FIFO places all 4 (8) jobs at their request: objective 4 (8) on every seed, in A.
        # B: n=4 objective 10 % higher on both seeds; n=8 (one seed) unchanged
        c.execute("UPDATE records SET objective = objective * 1.1 WHERE method = 'fifo' AND label LIKE '%/n=4/%'")
    df = compare(d, b).set_index(["series", "metric"])
    row = df.loc[("joint/rubick-64/n=4/fifo", "objective")]
    # A = (4, 4), B = (4.4, 4.4): delta 0.4, no spread on either side -> SE 0 -> deterministic, beyond
    assert (row["n_a"], row["mean_a"], row["mean_b"]) == (2, 4.0, pytest.approx(4.4))
    assert row["noise"] == 0.0 and row["verdict"] == "BEYOND NOISE"
    assert df.loc[("joint/rubick-64/n=8/fifo", "objective"), "verdict"] == "within noise"
    assert df.loc[("joint/rubick-64/n=4/joint@highs", "objective"), "verdict"] == "within noise"
    code, out, err = cli("compare", d, b, "--strict")
    assert code == 1 and "BEYOND NOISE" in out


def test_noise_band_by_hand(tmp_path, monkeypatch):
    import schedlab.benchmarks.harness.compare as cmp

    rows = lambda vals: pd.DataFrame([{"suite": "s", "type": "gap", "series": "x", "seed": i, "metric": "objective",  # noqa: E731
                                       "value": v} for i, v in enumerate(vals)])
    sides = {"A": rows([10.0, 12.0]), "B": rows([11.0, 13.0])}
    monkeypatch.setattr(cmp, "_load", lambda d, time=False: sides[d])
    r = cmp.compare("A", "B").iloc[0]
    # delta 1; s_a = s_b = sqrt(2); s_p = sqrt(2); SE = sqrt(2) * sqrt(1/2 + 1/2) = 1.414; 2 SE = 2.83 > 1
    assert r["delta"] == pytest.approx(1.0) and r["noise"] == pytest.approx(2 * math.sqrt(2))
    assert r["verdict"] == "within noise"
    sides["B"] = rows([16.0, 18.0])  # delta 6 > 2.83
    assert cmp.compare("A", "B").iloc[0]["verdict"] == "BEYOND NOISE"


def test_fit_exponent_recovers_a_power_law():
    n = np.array([8, 16, 32, 64, 128])
    b, a, r2, points = fit_exponent(n, 0.002 * n**1.5)
    assert (b, a, r2, points) == (pytest.approx(1.5), pytest.approx(0.002), pytest.approx(1.0), 5)
    assert math.isnan(fit_exponent([8, 8], [1, 2])[0])


def _rec(**kw):
    base = {"case_type": "gap", "current": True, "instance": "i", "objective": None, "bound": None,
            "proven": None, "who": kw.get("method", "m"), "sense": None, "verified": None, "status": "ok",
            "message": "", "role": "exact" if kw.get("bound") is not None else "policy"}
    return base | kw


def test_best_bound_is_the_tightest_proven_bound():
    # maximisation: bounds 12 (exact at its limit, not proven), 11.5 (LP), 10 = best primal (no proof)
    df = pd.DataFrame([_rec(method="h", objective=9.0), _rec(method="e", objective=10.0, bound=12.0, sense="max",
                                                           proven=False),
                       _rec(method="lp", bound=11.5, sense="max")])
    out = with_best_bound(df).set_index("method")
    assert out.loc["h", "best_bound"] == 11.5 and not out.loc["h", "bound_optimal"]
    assert out.loc["h", "gap"] == pytest.approx((11.5 - 9) / 11.5)
    assert "not proven optimal" in out.loc["h", "gap_note"] and "lp" in out.loc["h", "gap_note"]
    # minimisation with a proof: bound 7 from an optimal run whose objective is 7
    df = pd.DataFrame([_rec(method="h", objective=8.0), _rec(method="e", objective=7.0, bound=7.0, sense="min",
                                                           proven=True), _rec(method="p", objective=9.0, bound=5.0,
                                                                              sense="min")])
    out = with_best_bound(df).set_index("method")
    assert out.loc["h", "best_bound"] == 7.0 and out.loc["h", "bound_optimal"]
    assert out.loc["h", "gap"] == pytest.approx(1 / 8) and out.loc["e", "gap"] == 0.0


def test_timeline_bins_are_time_weighted_means_by_hand():
    from schedlab.benchmarks.harness.report.plots import binned_step

    # y = 2 on [0,1), 0 on [1,3), 4 on [3,4): two bins of width 2 over [0, 4]
    t, y = np.array([0.0, 1.0, 3.0, 4.0]), np.array([2.0, 0.0, 4.0, 9.0])
    tb, yb = binned_step(t, y, n=2)
    assert tb.tolist() == [0.0, 2.0]
    assert yb.tolist() == [(2 * 1 + 0 * 1) / 2, (0 * 1 + 4 * 1) / 2]
    # short series are drawn as they are; the area under a long one is kept
    assert binned_step(t, y, n=10)[1] is y
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.1, 2.0, 50_000))
    y = rng.integers(0, 64, t.size).astype(float)
    tb, yb = binned_step(t, y, n=1000)
    assert len(tb) == 1000
    assert np.sum(yb * (t[-1] - t[0]) / 1000) == pytest.approx(np.sum(y[:-1] * np.diff(t)), rel=1e-9)


def _copy_with(d, dest, *sql: str):
    shutil.copytree(d, dest)
    with sqlite3.connect(dest / "results.sqlite") as c:
        for q in sql:
            c.execute(q)
    return dest


def test_compare_strict_ignores_time_unless_asked(small_run, tmp_path, cli):
    """Issue 26 item 6: same code and seeds, only the machine's load moved the times (x3 + 1 s): --strict
    passes; --time compares them (and --strict then fails); gaps in percent, as in the report."""
    d, _ = small_run
    b = _copy_with(d, tmp_path / "b", "UPDATE records SET solve_s = solve_s * 3 + 1 WHERE case_type = 'gap'")
    code, out, err = cli("compare", d, b, "--strict")
    assert code == 0 and "no difference beyond seed-to-seed noise" in out, out + err
    assert "warning" not in err
    df = compare(d, b)
    assert "time_s" not in set(df["metric"]) and "gap [%]" in set(df["metric"]) and "gap" not in set(df["metric"])
    code, out, _ = cli("compare", d, b, "--strict", "--time")
    assert code == 1 and "time_s" in out
    # the FIFO gap of joint n=4 in percent: the report's figure
    g = compare(d, d).set_index(["series", "metric"]).loc[("joint/rubick-64/n=4/fifo", "gap [%]")]
    from schedlab.benchmarks.harness.analysis import frame
    from schedlab.benchmarks.harness.store import Store

    with Store(d, create=False) as s:
        f = frame(s.records())
    fr = f[f["label"].str.startswith("joint/rubick-64/n=4/") & f["label"].str.endswith("/fifo")]["gap"]
    assert g["mean_a"] == pytest.approx(100 * fr.mean()) and g["mean_a"] > 1.0


def test_compare_warns_on_different_seeds(small_run, tmp_path, cli):
    d, _ = small_run
    b = _copy_with(d, tmp_path / "b", "UPDATE records SET seed = seed + 5")
    code, out, err = cli("compare", d, b)
    assert code == 0
    # 8 series (13 runs: 4 joint n=4 series on seeds 0 and 1, 2 of n=8, 2 replays and the bound case)
    assert err.startswith("warning: 8 of 8 series ran on different seeds") and "A seeds 0, B seeds 5" in err


def test_compare_never_cuts_series_names(small_run, tmp_path, cli, monkeypatch):
    """``rubick-e``, ``rubick-n`` and ``rubick-r`` all read ``rubick…`` in a narrow table before: names fold."""
    from rich.console import Console

    import schedlab.benchmarks.cli.compare_cmd as cc

    d, _ = small_run
    names = ("rubick-e", "rubick-n", "rubick-r")
    sql = [f"UPDATE records SET label = replace(label, '/{w}', '/{n}'), method = '{n}' WHERE label LIKE '%/{w}'"
           for w, n in zip(("fifo", "joint@highs", "joint@cpsat"), names, strict=True)]
    b = _copy_with(d, tmp_path / "b", *sql)
    monkeypatch.setattr(cc, "console", lambda: Console(width=100))
    code, out, _ = cli("compare", b, b, "--all")
    assert code == 0 and "…" not in out
    series, current = [], None
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) != 11:
            continue
        if cells[3]:  # n_a: a row starts
            current = [cells[1]]
            series.append(current)
        elif current is not None:
            current.append(cells[1])
    full = {"".join(parts) for parts in series}
    for n in names:
        assert f"joint/rubick-64/n=4/{n}" in full, sorted(full)
