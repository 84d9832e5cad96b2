"""Where a replay's jobs come from: a named workload or a trace file, with every knob that shapes it.

:class:`WorkloadSource` is the one path from "what the user asked for" (CLI flags, a suite file, a
harness case) to a simulator-ready :class:`~schedlab.benchmarks.workloads.trace.Workload` and its
cluster; ``schedlab simulate`` and the benchmark harness both use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from schedlab.benchmarks.workloads.trace import Workload
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError

#: trace format -> the cluster a replay uses when none is given (``None``: ``--cluster`` is required)
DEFAULT_CLUSTER = {"philly": "philly", "tiresias": "tiresias-60", "rubick": "rubick-64", "pollux": "rubick-64",
                   "sia": "rubick-64", "helios": "dally-8", "generic": None, "pai": None}
#: ``models`` option -> the model pool drawn from (``None``: the trace's own model names)
MODEL_POOLS = {"trace": None, "tiresias": "TIRESIAS_MODELS", "dally": "DALLY_MODELS", "rubick": "RUBICK_MODELS"}


@dataclass(frozen=True)
class WorkloadSource:
    """A named workload (``workload``) or a trace (``trace`` + ``trace_format`` + options).

    ``params`` are named-workload knobs (``large_share``); ``load`` compresses arrival times (> 1: more
    load); ``window`` (hours) keeps a trace's busiest window and ``sample`` down-samples it (seeded);
    ``models`` picks a model pool for traces that name none (or overrides theirs).
    """

    workload: str | None = None
    trace: str | None = None
    trace_format: str = "philly"
    cluster: str | None = None
    vc: str | None = None
    start: str | None = None
    end: str | None = None
    columns: str | None = None
    lenient: bool = False
    models: str = "trace"
    seed: int = 0
    load: float = 1.0
    default_duration: float | None = None
    window: float | None = None
    sample: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def label(self) -> str:
        return self.workload if self.workload is not None else f"{self.trace_format}:{self.trace}"

    def cluster_ref(self) -> str | None:
        """The cluster this source replays on (explicit, else the workload's / the format's default)."""
        if self.cluster is not None:
            return self.cluster
        if self.workload is not None:
            from schedlab.benchmarks.workloads.named import get_workload

            return get_workload(self.workload).cluster
        return DEFAULT_CLUSTER.get(self.trace_format)

    def build(self) -> tuple[Workload, Cluster]:
        """The workload and its cluster; every error names the flag or field at fault."""
        from schedlab.benchmarks import workloads as wl
        from schedlab.topology.presets import load_cluster

        src = "<workload>"
        if (self.workload is None) == (self.trace is None):
            raise SpecError("give exactly one of a named workload or a trace file", source=src, field="workload")
        if self.workload is not None:
            trace_only = [name for name, v in (("vc", self.vc), ("start", self.start), ("end", self.end),
                                               ("columns", self.columns), ("default_duration", self.default_duration),
                                               ("window", self.window), ("sample", self.sample))
                          if v is not None] + (["lenient"] if self.lenient else [])
            if trace_only:
                raise SpecError(f"{trace_only[0]} applies to trace files, not to the named workload "
                                f"{self.workload!r}", source=src, field=trace_only[0])
            spec = wl.get_workload(self.workload)
            cluster = load_cluster(self.cluster or spec.cluster)
            return spec.build(cluster, seed=self.seed, load=self.load, **self.params), cluster
        if self.params:
            raise SpecError(f"{next(iter(self.params))} applies to named workloads, not to trace files", source=src,
                            field=next(iter(self.params)))
        fmt = self.trace_format
        ref = self.cluster_ref()
        if ref is None:
            raise SpecError(f"a cluster is required for the {fmt} trace format", source=src, field="cluster")
        cluster = load_cluster(ref)
        options: dict = {"lenient": self.lenient}
        if fmt in ("philly", "helios") and self.vc is not None:
            options["vc"] = self.vc
        elif self.vc is not None:
            raise SpecError(f"vc applies to the philly and helios formats, not {fmt}", source=src, field="vc")
        if fmt == "philly":
            options.update(start=self.start, end=self.end)
        if fmt == "generic":
            options["mapping"] = self.columns
        if fmt in ("pollux", "sia") and self.default_duration is not None:
            options["default_duration"] = self.default_duration
        tr = wl.load_trace(self.trace, fmt, **options)
        from schedlab.benchmarks.workloads import generators as gen

        if self.window is not None:
            tr = gen.busiest_window(tr, self.window)
        if self.sample is not None:
            tr = gen.downsample(tr, self.sample, seed=self.seed)
        if self.load != 1.0:
            tr = gen.scale_load(tr, self.load)
        pool_attr = MODEL_POOLS.get(self.models, "missing")
        if pool_attr == "missing":
            raise SpecError(f"unknown model pool {self.models!r}; known: {', '.join(MODEL_POOLS)}", source=src,
                            field="models")
        pool = getattr(wl, pool_attr) if pool_attr else None
        if pool is None and fmt in ("philly", "helios", "pai", "generic"):
            pool = wl.TIRESIAS_MODELS  # these traces name no model: draw CNNs, as Tiresias did
        w = wl.trace_workload(tr, cluster, seed=self.seed, model_pool=pool, override_models=self.models != "trace",
                              reconfigurable=fmt == "rubick", cluster_name=ref)
        if fmt == "tiresias":
            w = replace(w, short_s=800.0)  # Tiresias' testbed bins
        if fmt == "rubick":
            from schedlab.scheduling.resources import Resources

            if any(j.guaranteed for j in w.jobs):
                w = replace(w, quotas={"A": Resources(cluster.total_gpus)})
        return w, cluster


__all__ = ["DEFAULT_CLUSTER", "MODEL_POOLS", "WorkloadSource"]
