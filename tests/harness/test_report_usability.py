"""Issue 26 items 3-5: timelines end at the makespan, every parameter variant is its own row and plot
file, the HTML carries its plots, the code version names its git commit, legends sit outside the data,
titles wrap, no matplotlib glyph warnings reach the user."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from schedlab.benchmarks.harness.analysis import frame, who
from schedlab.benchmarks.harness.report import _slug, plots
from schedlab.benchmarks.harness.store import Store


def _figures(monkeypatch) -> list:
    """Figures the plots would save, drawn on an Agg canvas (text laid out, glyphs looked up)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figs: list = []

    def save(fig, path):
        FigureCanvasAgg(fig).draw()
        figs.append(fig)
        return path

    monkeypatch.setattr(plots, "_save", save)
    return figs


def test_timeline_ends_at_the_last_job_not_the_last_timer(tmp_path, monkeypatch):
    """Dally's series ran to 88,868 s for a 5,203 s makespan: all activity in the first 5 % of the plot."""
    rec = tmp_path / "rec"
    rec.mkdir()
    pd.DataFrame({"time": [0.0, 100.0, 5203.0, 40000.0, 88868.0], "used_gpus": [4, 8, 0, 0, 0],
                  "queued": [1, 0, 0, 0, 0]}).to_csv(rec / "series.csv", index=False)
    pd.DataFrame({"job_id": ["a", "b"], "arrival": [0.0, 50.0], "end": [3000.0, 5203.0],
                  "jct": [3000.0, 5153.0]}).to_csv(rec / "jobs.csv", index=False)
    run = pd.Series({"records_dir": "rec", "metrics": {"makespan": 5203.0, "total_gpus": 8}, "gpus": 8})
    figs = _figures(monkeypatch)
    assert plots.timeline("w", [("dally", run)], tmp_path, tmp_path / "t.png") is not None
    top = figs[0].axes[0]
    assert top.get_xlim() == pytest.approx((0.0, 5203.0 / 3600))
    cut = plots.until_makespan(pd.read_csv(rec / "series.csv"), 5203.0)
    assert cut["time"].tolist() == [0.0, 100.0, 5203.0]
    # a series whose last event is before the end is kept as it is; no jobs.csv: start + makespan
    s = pd.DataFrame({"time": [10.0, 20.0, 90.0], "used_gpus": [1, 0, 0], "queued": [0, 0, 0]})
    assert plots.last_end(tmp_path / "none", {"makespan": 50.0}, s) == 60.0
    assert plots.until_makespan(s, 60.0)["time"].tolist() == [10.0, 20.0, 60.0]


def test_parameter_variants_are_their_own_series():
    assert who("fifo", None, {"blocking": False}) == "fifo[blocking=False]"
    assert who("joint", "highs", {}) == "joint@highs" and who("fifo", float("nan"), None) == "fifo"
    recs = [{"key": k, "suite": "s", "label": f"joint/c/n=4/s=0/{lab}", "case_type": "gap", "method": "fifo",
             "role": "policy", "kind": "joint", "backend": None, "params": p, "build_s": 0.0, "solve_s": 0.1, "finished_at": "t", "instance": "i",
             "sense": "max", "bound": None, "objective": 1.0, "proven": None, "status": "ok",
             "verified": True}
            for k, lab, p in (("a", "fifo", {}), ("b", "fifo[blocking=False]", {"blocking": False}))]
    from schedlab.benchmarks.harness.report.tables import summary

    assert summary(frame(recs))["method"].tolist() == ["fifo", "fifo[blocking=False]"]


def test_long_labels_differing_in_their_tails_get_different_plot_files():
    head = "suite-" + "x" * 90 + "/trace/s=0/"
    a, b = _slug(head + "fifo"), _slug(head + "fifo-backfill")
    assert a != b and len(a) <= 80 and len(b) <= 80
    assert _slug("smoke/s=0/fifo") == "smoke-s-0-fifo"  # short labels stay readable


def test_report_of_variants_embeds_every_plot_and_names_the_commit(small_run, tmp_path, cli):
    """Replays of one long-named trace under fifo and yarn-cs (fifo with a preset): two Gantt files
    before the cut they shared one; the HTML moved alone keeps its plots."""
    d, _ = small_run
    copy = tmp_path / "copy"
    shutil.copytree(d, copy)
    with sqlite3.connect(copy / "results.sqlite") as c:
        c.execute("UPDATE records SET label = 'a-very-long-trace-name-' || hex(zeroblob(30)) || '/' || label "
                  "WHERE case_type = 'replay'")
    code, out, err = cli("report", copy, "--format", "json")
    assert code == 0, err
    gantts = sorted(p.name for p in (copy / "plots").glob("gantt_*.png"))
    assert len(gantts) == 2 and len(set(gantts)) == 2
    moved = tmp_path / "elsewhere" / "report.html"
    moved.parent.mkdir()
    shutil.move(copy / "report.html", moved)
    page = moved.read_text()
    n_plots = len(list((copy / "plots").glob("*.png")))
    assert page.count('src="data:image/png;base64,') == n_plots and 'src="plots/' not in page
    head = subprocess.run(["git", "-C", str(Path(__file__).parent), "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode == 0:
        assert re.search(rf"\(git {head.stdout.strip()[:12]}(\+dirty)?\)", page)


def test_multi_panel_legends_sit_outside_the_panels(small_run, tmp_path, monkeypatch):
    d, _ = small_run
    with Store(d, create=False) as s:
        df = frame(s.records())
    extra = df[df["case_type"] == "gap"].copy()
    extra["kind"], extra["instance"] = "tier-placement", extra["instance"] + "/t"
    figs = _figures(monkeypatch)
    plots.gap_vs_size(pd.concat([df, extra], ignore_index=True), tmp_path / "g.png")
    fig = figs[0]
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 2
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1
    box = fig.legends[0].get_window_extent()
    for ax in fig.axes:
        assert not box.overlaps(ax.get_window_extent())


def test_single_panel_title_fits_and_no_glyph_warning(small_run, tmp_path, monkeypatch):
    d, _ = small_run
    with Store(d, create=False) as s:
        df = frame(s.records())
    df = df.copy()
    df.loc[df["method"] == "fifo", "who"] = "fifo \u4e2d\u6587"  # CJK: missing from DejaVu Sans
    figs = _figures(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with plots.quiet():
            plots.gap_vs_size(df[df["jobs"] == 4], tmp_path / "g.png")
    assert not [w for w in caught if "Glyph" in str(w.message)], [str(w.message) for w in caught]
    fig = figs[0]
    title = fig._suptitle.get_window_extent()
    assert title.x0 >= 0 and title.x1 <= fig.bbox.width
    assert np.isfinite(title.width)
