"""A schedule picture per trace replay, from its ``segments.csv`` (a job holding GPUs over time).

* **Small runs** (at most :data:`DETAIL_GPUS` GPUs and :data:`DETAIL_JOBS` jobs): a Gantt chart with
  one row per GPU, grouped by machine; a bar per job stretch (colour = job), hatched grey while the job
  checkpoints, restores or reconfigures (no progress), a red ``v`` where a job was preempted (it left its
  GPUs with work left) and a black diamond where it was reconfigured (new placement without leaving).
* **Big runs**: aggregated, a heat map of the share of each machine's GPUs in use per time bin, with
  the preemptions and reconfigurations per bin on top.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from schedlab.benchmarks.harness.report.plots import wrap
from schedlab.topology.presets import load_cluster

DETAIL_GPUS = 128
DETAIL_JOBS = 80
BINS = 120


def _placement(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in str(text).split("|"):
        m, _, g = part.rpartition(":")
        if m:
            out[m] = out.get(m, 0) + int(g)
    return out


def _events(seg: pd.DataFrame, jobs: pd.DataFrame | None) -> tuple[list[tuple[float, str]], list[tuple[float, str]]]:
    """``(preemptions, reconfigurations)`` as (time, first machine) from consecutive segments of a job."""
    ends = {} if jobs is None else dict(zip(jobs["job_id"], jobs["end"], strict=True))
    pre, rec = [], []
    for jid, d in seg.sort_values("start").groupby("job_id"):
        rows = list(d.itertuples())
        for a, b in zip(rows, rows[1:], strict=False):
            if b.start > a.end + 1e-9:
                pre.append((a.end, next(iter(_placement(a.placement)), "")))
            elif b.placement != a.placement:
                rec.append((b.start, next(iter(_placement(b.placement)), "")))
        last = rows[-1]
        if jid in ends and ends[jid] > last.end + 1e-6:
            pre.append((last.end, next(iter(_placement(last.placement)), "")))
    return pre, rec


def natural(name: str) -> tuple:
    """``rack0-m2`` before ``rack0-m10``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _slots(seg: pd.DataFrame, capacity: dict[str, int]) -> tuple[list[tuple], list[str], dict[str, int]]:
    """GPU rows: per machine, each stretch takes the lowest GPU slots free at its start. Rows:
    ``(row, start, end, job, overhead, segment)``; machines of the cluster (when known) all get their rows."""
    machines = sorted({m for p in seg["placement"] for m in _placement(p)} | set(capacity), key=natural)
    gpus = defaultdict(int, capacity)
    bars = []
    free_at: dict[str, list[float]] = defaultdict(list)  # machine -> slot -> time it frees up
    for k, r in enumerate(seg.sort_values(["start", "job_id"]).itertuples()):
        for m, g in _placement(r.placement).items():
            slots = free_at[m]
            chosen = [i for i, t in enumerate(slots) if t <= r.start + 1e-9][:g]
            while len(chosen) < g:
                slots.append(0.0)
                chosen.append(len(slots) - 1)
            for i in chosen:
                slots[i] = r.end
                bars.append((m, i, r.start, r.end, r.job_id, r.iter_time == 0, k))
            gpus[m] = max(gpus[m], len(slots))
    base, off = {}, 0
    for m in machines:
        base[m] = off
        off += gpus[m]
    rows = [(base[m] + i, s, e, j, o, k) for m, i, s, e, j, o, k in bars]
    return rows, machines, {m: base[m] for m in machines} | {"__total__": off}


def _capacity(cluster: str | None) -> dict[str, int]:
    if not cluster:
        return {}
    try:

        cl = load_cluster(cluster)
    except Exception:  # noqa: BLE001 - a report draws what it can; the share falls back to the peak
        return {}
    return {m: cl.machine(m).gpus for m in cl.machines}


def gantt(records_dir: Path, title: str, path: Path, cluster: str | None = None) -> Path | None:
    seg_file = records_dir / "segments.csv"
    if not seg_file.is_file():
        return None
    seg = pd.read_csv(seg_file)
    if seg.empty:
        return None
    jobs = pd.read_csv(records_dir / "jobs.csv") if (records_dir / "jobs.csv").is_file() else None
    n_jobs = seg["job_id"].nunique()
    capacity = _capacity(cluster)
    rows, machines, base = _slots(seg, capacity)
    if base["__total__"] <= DETAIL_GPUS and n_jobs <= DETAIL_JOBS:
        return _detailed(seg, jobs, rows, machines, base, title, path)
    return _aggregated(seg, jobs, machines, title, path, capacity)


def _detailed(seg, jobs, rows, machines, base, title: str, path: Path) -> Path:
    from matplotlib import colormaps  # lazy: start-up (matplotlib)

    n = base["__total__"]
    fig = Figure(figsize=(11, max(3.5, 0.12 * n + 1.8)), layout="constrained")
    ax = fig.subplots()
    cmap = colormaps["tab20"]
    ids = sorted(seg["job_id"].unique())
    colour = {j: cmap(i % 20) for i, j in enumerate(ids)}
    scale = 3600.0
    span = max(e for _, _, e, _, _, _ in rows) / scale
    first_row: dict[int, tuple] = {}
    by_job: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    overhead_bars: list[tuple[float, float, float]] = []
    for y, s, e, j, overhead, k in rows:
        if not overhead and (k not in first_row or y < first_row[k][0]):
            first_row[k] = (y, s, e, j)
        (overhead_bars if overhead else by_job[j]).append((y, s / scale, (e - s) / scale))
    for j, bars in by_job.items():  # one call per job: fast for hundreds of GPU stretches
        y, left, width = zip(*bars, strict=True)
        ax.barh(y, width, left=left, height=0.85, color=colour[j], edgecolor="none")
    if overhead_bars:
        y, left, width = zip(*overhead_bars, strict=True)
        ax.barh(y, width, left=left, height=0.85, color="lightgrey", hatch="////", edgecolor="dimgrey", lw=0.3)
    for y, s, e, j in first_row.values():
        if (e - s) / scale > 0.04 * span:
            ax.text((s + e) / 2 / scale, y, str(j), ha="center", va="center", fontsize=5.5, color="black")
    pre, rec = _events(seg, jobs)
    if pre:
        ax.scatter([t / scale for t, _ in pre], [base.get(m, 0) - 0.6 for _, m in pre], marker="v", color="red",
                   s=28, zorder=4)
    if rec:
        ax.scatter([t / scale for t, _ in rec], [base.get(m, 0) - 0.6 for _, m in rec], marker="D", color="black",
                   s=18, zorder=4)
    for m in machines[1:]:
        ax.axhline(base[m] - 0.5, color="black", lw=0.4, alpha=0.5)
    step = max(1, len(machines) // 30)
    ax.set_yticks([base[m] for m in machines[::step]], machines[::step], fontsize=6)
    ax.set_ylim(n - 0.5, -1.5)
    ax.set_xlabel("simulated time [h]")
    ax.set_ylabel("GPUs, grouped by machine")
    ax.set_title(wrap(f"Schedule: {title} ({len(ids)} jobs, {n} GPU rows)", fig))
    handles = [Patch(color=cmap(0), label="running (colour = job)"),
               Patch(facecolor="lightgrey", hatch="////", edgecolor="dimgrey", label="checkpoint / restore / reconfigure"),
               ax.scatter([], [], marker="v", color="red", label=f"preemption ({len(pre)})"),
               ax.scatter([], [], marker="D", color="black", label=f"reconfiguration ({len(rec)})")]
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=4, frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    fig.savefig(path, dpi=110)
    return path


def _aggregated(seg, jobs, machines, title: str, path: Path, capacity: dict[str, int]) -> Path:
    t_end = float(seg["end"].max())
    edges = np.linspace(0.0, t_end if t_end > 0 else 1.0, BINS + 1)
    width = edges[1] - edges[0]
    index = {m: i for i, m in enumerate(machines)}
    busy = np.zeros((len(machines), BINS))
    cap = np.zeros(len(machines))
    for r in seg.itertuples():
        lo = np.clip(edges[:-1], r.start, r.end)
        hi = np.clip(edges[1:], r.start, r.end)
        frac = (hi - lo) / width
        for m, g in _placement(r.placement).items():
            busy[index[m]] += g * frac
    for i, m in enumerate(machines):
        cap[i] = capacity.get(m) or max(1.0, busy[i].max())
    share = busy / cap[:, None]
    pre, rec = _events(seg, jobs)
    fig = Figure(figsize=(11, 6), layout="constrained")
    top, ax = fig.subplots(2, 1, sharex=True, height_ratios=(1, 4))
    im = ax.imshow(share, aspect="auto", origin="upper", cmap="viridis", vmin=0, vmax=1,
                   extent=(0, t_end / 3600.0, len(machines), 0), interpolation="nearest")
    ax.set_xlabel("simulated time [h]")
    ax.set_ylabel(f"machines ({len(machines)})")
    fig.colorbar(im, ax=ax, label="share of the machine's GPUs in use" + ("" if capacity else " (of its peak)"))
    centers = (edges[:-1] + edges[1:]) / 2 / 3600.0
    top.bar(centers, np.histogram([t for t, _ in pre], edges)[0], width=width / 3600.0, color="red",
            label=f"preemptions ({len(pre)})")
    top.bar(centers, np.histogram([t for t, _ in rec], edges)[0], width=width / 3600.0, color="black", alpha=0.6,
            label=f"reconfigurations ({len(rec)})")
    top.set_ylabel("events / bin")
    top.set_ylim(bottom=0)
    if not pre and not rec:
        top.text(0.5, 0.5, "no preemptions or reconfigurations", transform=top.transAxes, ha="center",
                 va="center", fontsize=8, color="grey")
    top.legend(fontsize=7, loc="upper right")
    if len(machines) <= 40:
        ax.set_yticks([i + 0.5 for i in range(len(machines))], machines, fontsize=6)
    top.set_title(wrap(f"Schedule (aggregated): {title} ({seg['job_id'].nunique()} jobs, {len(machines)} machines)",
                       fig))
    fig.savefig(path, dpi=110)
    return path


__all__ = ["BINS", "DETAIL_GPUS", "DETAIL_JOBS", "gantt"]
