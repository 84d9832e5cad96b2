"""What a trace asks of a cluster, before any replay: jobs, span, GPU-size and duration histograms,
GPU-hours, the GPU demand over time if nothing queued, and the cluster size for a stated load.

*Demand if nothing queued*: every job holds its GPUs from its submit time for its recorded duration,
``D(t) = sum of g_i over jobs with s_i <= t < s_i + d_i``; peak, time-weighted mean and P95 are over
``[first submit, last end)``. *Offered load* of a cluster of ``G`` GPUs: ``rho = mean demand / G =
sum_i g_i d_i / (G x T)`` with ``T`` = last end - first submit, so the cluster for a load ``rho`` has
``G = mean demand / rho`` GPUs, rounded up to whole machines and to at least the largest job. Jobs without a duration (Pollux/Sia without ``--default-duration``,
iterations-only traces) are counted but left out of demand and sizing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from schedlab.benchmarks.workloads.trace import Trace
from schedlab.topology.errors import SpecError

PLOT_POINTS = 2000  # time bins of the demand plot (peak per bin) for long traces

#: duration histogram bins (upper edges, s) and their labels
DURATION_BINS: tuple[tuple[float, str], ...] = (
    (60.0, "< 1 min"), (600.0, "1-10 min"), (3600.0, "10 min-1 h"), (4 * 3600.0, "1-4 h"),
    (24 * 3600.0, "4 h-1 d"), (7 * 86400.0, "1-7 d"), (math.inf, ">= 7 d"))


def check_load(load: float, *, field: str = "load") -> float:
    """A target load must be in (0, 1]."""
    if isinstance(load, bool) or not isinstance(load, int | float) or not (0 < load <= 1):
        raise SpecError(f"load must be in (0, 1] (share of the cluster's GPUs busy on average), got {load!r}",
                        source="<cluster sizing>", field=field)
    return float(load)


@dataclass(frozen=True)
class Sizing:
    """A cluster of ``machines`` machines x ``gpus_per_machine`` GPUs in ``racks`` racks of at most
    ``machines_per_rack`` machines, for offered ``load``; ``raised`` says why it is larger than the load
    alone asks for (the largest job)."""

    load: float
    gpus: int
    machines: int
    racks: int
    gpus_per_machine: int
    machines_per_rack: int
    needed_gpus: float
    raised: str = ""

    def cluster(self, name: str | None = None):
        """The :class:`~schedlab.topology.cluster.Cluster`: machines of ``gpus_per_machine`` A100-80GB GPUs
        with 12 cores and 128 GB of host memory per GPU, NVSwitch 900 Gb/s inside a machine, 400 Gb/s
        InfiniBand in a rack, an 800 Gb/s spine (Dally's three-tier cluster, ``dally-R``); the last rack
        holds the remainder."""
        from schedlab.topology.cluster import Cluster
        from schedlab.topology.loaders import spec_from_dict

        g = self.gpus_per_machine
        racks = []
        left = self.machines
        for r in range(self.racks):
            k = min(self.machines_per_rack, left)
            racks.append({"name": f"rack{r}", "machine_count": k})
            left -= k
        links = {"machine": {"bandwidth_gbit": 900, "latency_us": 1}, "rack": {"bandwidth_gbit": 400, "latency_us": 2}}
        if self.racks > 1:
            links["network"] = {"bandwidth_gbit": 800, "latency_us": 10}
        return Cluster(spec_from_dict({
            "name": name or f"auto-{self.gpus}",
            "defaults": {"gpus": g, "gpu_model": "A100-80GB", "gpu_memory_gb": 80, "cpus": 12 * g,
                         "host_memory_gb": 128 * g, "pcie_gbps": 32},
            "links": links, "racks": racks}, source="<cluster auto>"))

    @property
    def real_load(self) -> float:
        """The offered load on the cluster as built: ``mean demand / GPUs`` (= ``load`` unless the
        cluster was enlarged to hold the largest job, then lower)."""
        return self.needed_gpus * self.load / self.gpus if self.gpus else math.nan

    def headline(self) -> str:
        """``load 70%`` or, when enlarged, ``load 31% (asked 70%, enlarged to hold the largest job)``."""
        if not self.raised:
            return f"load {self.load:.0%}"
        return f"load {self.real_load:.0%} (asked {self.load:.0%}; enlarged to hold the largest job)"

    def describe(self) -> str:
        s = (f"{self.machines} machines x {self.gpus_per_machine} GPUs = {self.gpus:,} GPUs in {self.racks} "
             f"rack{'s' if self.racks != 1 else ''} (at most {self.machines_per_rack} machines each), sized for "
             f"offered load {self.load:.0%} ({self.needed_gpus:,.1f} GPUs needed)")
        return s + (f"; {self.raised}: the offered load on it is {self.real_load:.0%}, not {self.load:.0%}"
                    if self.raised else "")


@dataclass(frozen=True)
class TraceStats:
    """Statistics of one trace (see the module docstring); times in seconds."""

    source: str
    jobs: int
    timed_jobs: int
    span_s: float
    arrival_span_s: float
    gpu_hours: float
    gpu_sizes: Mapping[int, int]
    durations: Mapping[str, int]
    duration_mean_s: float
    duration_median_s: float
    peak_demand: int
    mean_demand: float
    p95_demand: float
    max_job_gpus: int
    demand_t: np.ndarray = field(repr=False)
    demand_g: np.ndarray = field(repr=False)

    def gpus_for_load(self, load: float) -> float:
        """GPUs for offered ``load`` (fractional; see the module docstring)."""
        return self.mean_demand / check_load(load)

    def size(self, load: float = 0.7, *, gpus_per_machine: int = 8, machines_per_rack: int = 8) -> Sizing:
        """The usual-shape cluster for ``load`` (whole machines, at least the largest job)."""
        if not self.timed_jobs:
            raise SpecError("cannot size a cluster: no job of the trace has a duration (Pollux/Sia traces: give "
                            "--default-duration)", source=self.source, field="duration")
        if gpus_per_machine < 1 or machines_per_rack < 1:
            raise SpecError("gpus per machine and machines per rack must be >= 1", source="<cluster sizing>",
                            field="gpus_per_machine" if gpus_per_machine < 1 else "machines_per_rack")
        need = self.gpus_for_load(load)
        machines = max(1, math.ceil(need / gpus_per_machine - 1e-9))
        raised = ""
        least = math.ceil(self.max_job_gpus / gpus_per_machine)
        if machines < least:
            machines = least
            raised = f"raised to hold the largest job ({self.max_job_gpus} GPUs)"
        racks = math.ceil(machines / machines_per_rack)
        return Sizing(load, machines * gpus_per_machine, machines, racks, gpus_per_machine, machines_per_rack,
                      need, raised)

    def to_dict(self, load: float | None = None, **shape) -> dict:
        out = {"source": self.source, "jobs": self.jobs, "jobs_with_duration": self.timed_jobs,
               "span_s": self.span_s, "arrival_span_s": self.arrival_span_s, "gpu_hours": self.gpu_hours,
               "gpu_sizes": {str(k): v for k, v in self.gpu_sizes.items()}, "durations": dict(self.durations),
               "duration_mean_s": self.duration_mean_s, "duration_median_s": self.duration_median_s,
               "demand_if_nothing_queued": {"peak_gpus": self.peak_demand, "mean_gpus": self.mean_demand,
                                            "p95_gpus": self.p95_demand}, "max_job_gpus": self.max_job_gpus}
        if load is not None and self.timed_jobs:
            s = self.size(load, **shape)
            out["sizing"] = {"load": s.load, "gpus_needed": s.needed_gpus, "gpus": s.gpus, "machines": s.machines,
                             "racks": s.racks, "gpus_per_machine": s.gpus_per_machine,
                             "machines_per_rack": s.machines_per_rack, "raised": s.raised,
                             "real_load": s.real_load}
        return out

    def plot(self, path: str | Path, *, sizing: Sizing | None = None) -> Path:
        """A PNG of the demand over time (matplotlib, Agg backend), with mean, P95, peak and the sized
        cluster's capacity."""
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt

        p = Path(path)
        fig, ax = plt.subplots(figsize=(10, 4), dpi=100)
        try:
            t, g = self.demand_t, self.demand_g
            label = "demand if nothing queued"
            if t.size > PLOT_POINTS:  # the peak of each of PLOT_POINTS time bins (keeps every spike visible)
                edges = np.searchsorted(t, np.linspace(t[0], t[-1], PLOT_POINTS + 1)[:-1], side="left")
                edges = np.unique(edges)
                g = np.maximum.reduceat(g, edges)
                t = t[edges]
                label += f" (peak per {(self.demand_t[-1] - self.demand_t[0]) / PLOT_POINTS / 60:,.0f} min)"
            t0 = t[0] if t.size else 0.0
            ax.step((t - t0) / 3600.0, g, where="post", lw=0.6, color="tab:blue", label=label)
            for y, lab, c in ((self.mean_demand, "mean", "tab:green"), (self.p95_demand, "P95", "tab:orange"),
                              (self.peak_demand, "peak", "tab:red")):
                ax.axhline(y, ls="--", lw=0.8, color=c, label=f"{lab} {y:,.0f} GPUs")
            if sizing is not None:
                ax.axhline(sizing.gpus, lw=1.2, color="black",
                           label=f"cluster {sizing.gpus:,} GPUs (load {sizing.load:.0%})")
            ax.set_xlabel("hours since the first submit")
            ax.set_ylabel("GPUs")
            ax.set_title(f"GPU demand over time: {Path(self.source).name}")
            ax.legend(loc="upper right", fontsize=8)
            fig.tight_layout()
            fig.savefig(p, format="png")
        finally:
            plt.close(fig)
        return p


def _weighted_percentile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    if not values.size or weights.sum() <= 0:
        return 0.0
    order = np.argsort(values, kind="stable")
    cw = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cw, q * cw[-1], side="left")])


def trace_stats(trace: Trace) -> TraceStats:
    """:class:`TraceStats` of ``trace`` (vectorised; the Philly table takes well under a second)."""
    jobs = trace.jobs
    n = len(jobs)
    if not n:
        raise SpecError("the trace has no jobs", source=trace.source)
    sub = np.fromiter((j.submit for j in jobs), float, n)
    g = np.fromiter((j.gpus for j in jobs), np.int64, n)
    d = np.fromiter((math.nan if j.duration is None else j.duration for j in jobs), float, n)
    timed = ~np.isnan(d)
    sizes, counts = np.unique(g, return_counts=True)
    gpu_sizes = {int(k): int(c) for k, c in zip(sizes, counts, strict=True)}
    dt = d[timed]
    hist: dict[str, int] = {}
    lo = 0.0
    for hi, label in DURATION_BINS:
        hist[label] = int(((dt >= lo) & (dt < hi)).sum())
        lo = hi
    gs, ss, ds = g[timed], sub[timed], dt
    first = float(sub.min())
    if ds.size:
        ends = ss + ds
        times = np.concatenate([ss, ends])
        delta = np.concatenate([gs, -gs])
        order = np.argsort(times, kind="stable")
        times, delta = times[order], delta[order]
        level = np.cumsum(delta)
        # one sample per distinct time (the level after every change at that time)
        last = np.r_[times[1:] != times[:-1], True]
        t_u, lvl = times[last], level[last]
        width = np.diff(t_u)
        held = lvl[:-1]
        horizon = float(t_u[-1] - t_u[0])
        mean = float((held * width).sum() / horizon) if horizon > 0 else float(lvl.max())
        p95 = _weighted_percentile(held.astype(float), width, 0.95) if horizon > 0 else float(lvl.max())
        peak = int(lvl.max())
        span = float(ends.max() - first)
        gpu_h = float((gs * ds).sum() / 3600.0)
        demand_t, demand_g = t_u, lvl
    else:
        mean = p95 = 0.0
        peak = 0
        span = float(sub.max() - first)
        gpu_h = 0.0
        demand_t = demand_g = np.zeros(0)
    return TraceStats(trace.source, n, int(timed.sum()), span, float(sub.max() - first), gpu_h, gpu_sizes, hist,
                      float(dt.mean()) if dt.size else math.nan, float(np.median(dt)) if dt.size else math.nan,
                      peak, mean, p95, int(g.max()), demand_t, demand_g)


__all__ = ["DURATION_BINS", "Sizing", "TraceStats", "check_load", "trace_stats"]
