"""The report's plots (matplotlib, drawn on ``Figure`` objects with the Agg canvas: no pyplot state).
Every plot has a title, axis labels with units and a legend; multi-panel figures share one legend below
the panels (never over the data), and titles wrap to the figure's width."""

from __future__ import annotations

import contextlib
import math
import textwrap
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from schedlab.benchmarks.harness.analysis import POOR_R2, fit_admissible, fit_power_law, measured

DPI = 110


def colours(names: Iterable[str]) -> dict[str, tuple]:
    """A stable colour per name (tab10, then tab20)."""
    from matplotlib import colormaps

    names = sorted(set(names))
    cmap = colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {n: cmap(i % cmap.N) for i, n in enumerate(names)}


MARKERS = "osD^v<>ph*"


def _size_axis(ax, sizes, log_y: bool = False) -> None:
    """Log-2 x axis with the sizes themselves as tick labels."""
    from matplotlib.ticker import NullFormatter

    ticks = sorted({int(v) for v in sizes})
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    if log_y:
        ax.set_yscale("log")


def _save(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=DPI)
    return path


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Matplotlib's "Glyph ... missing from font" warnings (a label character the font lacks, drawn as a
    box) are not the user's business on stderr: silenced while the report draws."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        yield


def wrap(title: str, fig: Figure, points: float = 12.0) -> str:
    """``title`` wrapped to the figure's width (at most 0.65 em per character at ``points``, with a margin)."""
    width_pt = 0.95 * fig.get_figwidth() * 72
    return textwrap.fill(title, max(20, int(width_pt / (0.65 * points))))


def _shared_legend(fig: Figure, axes: list, title: str) -> None:
    """One legend for every panel, below them: the union of the panels' lines, each name once."""
    seen: dict[str, object] = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, h)
    if seen:
        ncol = max(1, min(len(seen), int(fig.get_figwidth() // 2.4)))
        fig.legend(list(seen.values()), list(seen), loc="outside lower center", ncol=ncol, fontsize=7,
                   title=title, title_fontsize=7, frameon=False)


def _panels(n: int, width: float = 5.2, height: float = 3.8) -> tuple[Figure, list]:
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(width * cols, height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def gap_vs_size(df: pd.DataFrame, path: Path) -> Path | None:
    """Mean gap to the best proven bound vs jobs, one panel per (kind, cluster), a line per method; the
    bars span the seeds' min..max; hollow markers: the bound is not a proven optimum."""
    g = df[(df["case_type"] == "gap") & df["current"] & df["gap"].notna()]
    if g.empty:
        return None
    groups = list(g.groupby(["kind", "cluster"]))
    col = colours(g["who"])
    mark = {w: MARKERS[i % len(MARKERS)] for i, w in enumerate(sorted(g["who"].unique()))}
    fig, axes = _panels(len(groups))
    for ax, ((kind, cluster), d) in zip(axes, groups, strict=True):
        top = 1.0
        for who, w in d.groupby("who"):
            s = w.groupby("jobs").agg(mean=("gap", "mean"), lo=("gap", "min"), hi=("gap", "max"),
                                      proven=("bound_optimal", "all")).reset_index()
            y = 100 * s["mean"]
            top = max(top, float((100 * s["hi"]).max()))
            err = [100 * (s["mean"] - s["lo"]), 100 * (s["hi"] - s["mean"])]
            ax.errorbar(s["jobs"], y, yerr=err, color=col[who], marker=mark[who], ms=6, capsize=3, lw=1.5, alpha=0.85,
                        label=who)
            open_ = s[~s["proven"].astype(bool)]
            ax.scatter(open_["jobs"], 100 * open_["mean"], marker=mark[who], s=36, zorder=3, facecolors="white",
                       edgecolors=col[who])
        _size_axis(ax, d["jobs"])
        ax.set_ylim(-0.04 * top, top * 1.1)
        ax.set_xlabel("jobs in the instance")
        ax.set_ylabel("gap to best proven bound [%]")
        ax.set_title(f"{kind} on {cluster}")
        ax.grid(True, alpha=0.3)
    _shared_legend(fig, axes, "method@backend")
    fig.suptitle(wrap("Optimality gap vs instance size (filled: bound proven optimal; hollow: not proven)", fig))
    return _save(fig, path)


def runtime_vs_size(df: pd.DataFrame, path: Path, axis: str = "jobs") -> Path | None:
    """Build + solve time vs ``axis`` (jobs or GPUs), log-log, a line per method@backend with its fitted
    exponent; runs cut by their limit or killed are crosses at their time."""
    g = df[(df["case_type"] == "gap") & df["current"] & (df["method"] != "lp-bound")]
    if g.empty:
        return None
    other = "gpus" if axis == "jobs" else "jobs"
    panels = []
    for (kind), d in g.groupby("kind"):
        fixed = d[other].mode().iloc[0]
        sweep = d[d[other] == fixed]
        if sweep[axis].nunique() >= 2:
            panels.append((kind, fixed, sweep))
    if not panels:
        return None
    col = colours(g["who"])
    fig, axes = _panels(len(panels))
    for ax, (kind, fixed, d) in zip(axes, panels, strict=True):
        for who, w in d.groupby("who"):
            fin = w[measured(w)]
            s = fin.groupby(axis)["time_s"].median()
            f = fit_power_law(fin[axis], fin["time_s"])
            # an exponent only from >= 4 sizes spanning >= 8x; a poor fit (R^2 < 0.8) says so
            ok = fit_admissible(f) is None and np.isfinite(f["exponent"])
            lab = who + (f" (b={f['exponent']:.2f}" + (", poor fit" if f["r2"] < POOR_R2 else "") + ")" if ok else "")
            ax.plot(s.index, s.values, marker="o", color=col[who], label=lab)
            cut = w[~measured(w)]
            if len(cut):
                ax.scatter(cut[axis], cut[["time_s", "wall_s"]].max(axis=1), marker="x", color=col[who], s=40)
        lim = d["time_limit_s"].dropna()
        if len(lim):
            ax.axhline(float(lim.max()), ls="--", color="grey", lw=1, label="time limit")
        _size_axis(ax, d[axis], log_y=True)
        ax.set_xlabel("jobs in the instance" if axis == "jobs" else "GPUs in the cluster")
        ax.set_ylabel("build + solve time [s]")
        ax.set_title(f"{kind} ({fixed} GPUs)" if other == "gpus" else f"{kind} ({fixed} jobs)")
        ax.grid(True, which="both", alpha=0.3)
        if len(panels) == 1:
            ax.legend(fontsize=7, title="method@backend (t ~ n^b)", title_fontsize=7, loc="upper left",
                      bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        else:  # the fitted exponent differs per panel: each panel keeps its own legend, outside the data
            ax.legend(fontsize=6, title="method@backend (t ~ n^b)", title_fontsize=6, loc="upper center",
                      bbox_to_anchor=(0.5, -0.18), ncol=2, frameon=False)
    fig.suptitle(wrap(f"Runtime vs {'instance size' if axis == 'jobs' else 'cluster size'} (log-log; x: limit-cut "
                      "or killed runs)", fig))
    return _save(fig, path)


def _read(d: Path, name: str) -> pd.DataFrame | None:
    f = d / name
    if not f.is_file():
        return None
    try:
        return pd.read_csv(f)
    except (pd.errors.EmptyDataError, pd.errors.ParserError):
        return None


def _each(runs: list[tuple[str, pd.Series]], root: Path, name: str):
    """``(label, record, table)`` for the runs whose records directory has a non-empty ``name``."""
    for label, x in runs:
        table = _read(root / x["records_dir"], name)
        if table is not None and not table.empty:
            yield label, x, table


def replay_groups(df: pd.DataFrame, root: Path) -> dict[str, list[tuple[str, pd.Series]]]:
    """workload instance -> [(policy label, record)] for replays with stored per-job records."""
    r = df[(df["case_type"] == "replay") & df["current"] & df["records_dir"].notna()]
    out: dict[str, list[tuple[str, pd.Series]]] = {}
    for _, x in r.iterrows():
        if (root / x["records_dir"]).is_dir():
            params = x["params"] if isinstance(x["params"], dict) else {}
            who = str(x["method"]) + (f"[{','.join(f'{k}={v}' for k, v in sorted(params.items()))}]" if params else "")
            out.setdefault(f"{x['instance']} on {x['cluster']}", []).append((who, x))
    return out


def jct_cdf(group: str, runs: list[tuple[str, pd.Series]], root: Path, path: Path) -> Path | None:
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.subplots()
    col = colours(label for label, _ in runs)
    drawn = False
    for label, _x, jobs in _each(runs, root, "jobs.csv"):
        v = np.sort(jobs["jct"].to_numpy(float))
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", color=col[label],
                label=f"{label} (avg {v.mean():,.0f} s)")
        drawn = True
    if not drawn:
        return None
    ax.set_xscale("log")
    ax.set_xlabel("job completion time [s] (log)")
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, title="policy", title_fontsize=7)
    ax.set_title(wrap(f"JCT CDF per policy: {group}", fig, 11))
    return _save(fig, path)


#: most points a timeline line is drawn with; longer step series are binned (time-weighted means)
TIMELINE_POINTS = 2000


def binned_step(t: np.ndarray, y: np.ndarray, n: int = TIMELINE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """A right-continuous step function ``y`` (value ``y[i]`` on ``[t[i], t[i+1])``) as at most ``n``
    equal-width bins over ``[t[0], t[-1]]``, each holding the time-weighted mean
    ``(1/w) * integral of y over the bin``; series with at most ``n`` points are returned as they are.
    Exact integrals (cumulative sums at the breakpoints), so no peak is lost to sampling: it is averaged."""
    if len(t) <= n or t[-1] <= t[0]:
        return t, y
    cum = np.concatenate(([0.0], np.cumsum(y[:-1] * np.diff(t))))
    edges = np.linspace(t[0], t[-1], n + 1)
    i = np.clip(np.searchsorted(t, edges, side="right") - 1, 0, len(t) - 1)
    area = cum[i] + y[i] * (edges - t[i])
    return edges[:-1], np.diff(area) / np.diff(edges)


def last_end(records_dir: Path, metrics: dict, series: pd.DataFrame) -> float | None:
    """When the last job ended: the latest ``end`` of ``jobs.csv``, else the series' start plus the
    makespan (``last end - first arrival``); ``None`` when neither is known."""
    jobs = _read(records_dir, "jobs.csv")
    if jobs is not None and "end" in jobs and jobs["end"].notna().any():
        return float(jobs["end"].max())
    m = metrics.get("makespan")
    if m is not None and m == m and not series.empty:
        return float(series["time"].min()) + float(m)
    return None


def until_makespan(s: pd.DataFrame, end: float | None) -> pd.DataFrame:
    """The series up to ``end`` (the last job's end): timer events after it (a policy's periodic tick on
    an empty cluster) are not activity; the state at ``end`` closes the series."""
    if end is None or not end == end or s.empty:
        return s
    t = s["time"].to_numpy(float)
    cut = s[t <= end]
    if len(cut) == len(s) or (len(cut) and float(cut["time"].iloc[-1]) == end):
        return cut
    last = (cut.iloc[[-1]] if len(cut) else s.iloc[[0]]).copy()
    last["time"] = end
    return pd.concat([cut, last], ignore_index=True)


def timeline(group: str, runs: list[tuple[str, pd.Series]], root: Path, path: Path) -> Path | None:
    """GPU utilisation and queue length over time (hours) until the latest makespan, a line per policy
    (series longer than :data:`TIMELINE_POINTS` drawn as time-weighted bin means, :func:`binned_step`)."""
    fig = Figure(figsize=(7.5, 5.2), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    col = colours(label for label, _ in runs)
    drawn = False
    end = 0.0
    for label, x, s in _each(runs, root, "series.csv"):
        metrics = x["metrics"] if isinstance(x["metrics"], dict) else {}
        stop = last_end(root / x["records_dir"], metrics, s)
        s = until_makespan(s, stop)
        total = metrics.get("total_gpus") or x["gpus"] or max(1, int(s["used_gpus"].max()))
        end = max(end, float(s["time"].max()))
        t = s["time"].to_numpy(float) / 3600.0
        tu, used = binned_step(t, 100 * s["used_gpus"].to_numpy(float) / float(total))
        tq, queued = binned_step(t, s["queued"].to_numpy(float))
        top.step(tu, used, where="post", color=col[label], label=label, lw=1.2)
        bottom.step(tq, queued, where="post", color=col[label], label=label, lw=1.2)
        drawn = True
    if not drawn:
        return None
    top.set_ylabel("GPUs in use [%]")
    top.set_ylim(0, 105)
    if end > 0:
        top.set_xlim(0, end / 3600.0)
    bottom.set_ylabel("queued jobs")
    bottom.set_ylim(bottom=0)
    bottom.set_xlabel("simulated time [h]")
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    _shared_legend(fig, [top], "policy")
    top.set_title(wrap(f"Utilisation and queue length over time (to the makespan): {group}", fig, 11))
    return _save(fig, path)


def online_vs_bound(table: pd.DataFrame, path: Path) -> Path | None:
    if table.empty:
        return None
    fig = Figure(figsize=(max(5.0, 1.3 * len(table) + 2), 4.0), layout="constrained")
    ax = fig.subplots()
    x = np.arange(len(table))
    ax.bar(x - 0.2, table["online avg JCT [s]"], width=0.4, label="online (simulated)", color="tab:blue")
    ax.bar(x + 0.2, table["offline bound [s]"], width=0.4, label="offline bound (proven lower bound)",
           color="tab:grey")
    ax.set_xlim(-0.8, len(table) - 0.2)
    for i, (on, bound, ratio) in enumerate(zip(table["online avg JCT [s]"], table["offline bound [s]"],
                                                table["online / bound"], strict=True)):
        top = max(v for v in (on, bound, 0.0) if v == v)
        ax.text(i, top * 1.02, f"x{ratio:.2f}" if ratio == ratio else "n/a", ha="center", fontsize=8)
    ax.set_xticks(x, [f"{p}\n{i.split('/')[1]} n={i.split('/')[2][2:]}" for p, i in
                      zip(table["policy"], table["instance"], strict=True)], fontsize=7)
    ax.set_ylabel("average JCT [s]")
    ax.set_title("Online policies vs the offline bound valid for them (label: online / bound)")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return _save(fig, path)


__all__ = ["colours", "gap_vs_size", "jct_cdf", "online_vs_bound", "quiet", "replay_groups", "runtime_vs_size",
           "timeline", "until_makespan", "wrap"]
