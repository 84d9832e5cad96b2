"""Where a replay's jobs come from: a named workload or a trace file, with every knob that shapes it.

:class:`WorkloadSource` is the one path from "what the user asked for" (CLI flags, a suite file, a
harness case) to a simulator-ready :class:`~schedlab.benchmarks.workloads.trace.Workload` and its
cluster; ``schedlab simulate`` and the benchmark harness both use it. Every option is checked before
the trace is read; the workload's ``assumptions`` report what the load assumed (``strict`` turns each
assumption into an error) and ``setting`` what it set up (a cluster sized with ``cluster="auto[:LOAD]"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from schedlab.benchmarks.workloads.trace import Workload
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError

#: trace format -> the cluster a replay uses when none is given (``None``: ``--cluster`` is required)
DEFAULT_CLUSTER = {"philly": "philly", "tiresias": "tiresias-60", "rubick": "rubick-64", "pollux": "rubick-64",
                   "sia": "rubick-64", "helios": "dally-8", "generic": None, "pai": None, "alibaba": None}
#: ``models`` option -> the model pool drawn from (``None``: the trace's own model names)
MODEL_POOLS = {"trace": None, "tiresias": "TIRESIAS_MODELS", "dally": "DALLY_MODELS", "rubick": "RUBICK_MODELS"}
#: formats whose rows name no model: jobs draw CNNs from the Tiresias pool (as Tiresias did), reported
POOL_BY_DEFAULT = ("philly", "helios", "pai", "alibaba", "generic")
AUTO_LOAD = 0.7
#: ``resample`` values: ``none`` (the trace as recorded) or ``bootstrap`` (:func:`~schedlab.benchmarks.
#: workloads.generators.bootstrap`: arrivals kept, each arrival's job drawn with replacement, seeded)
RESAMPLE = ("none", "bootstrap")


def parse_auto(ref: str) -> float | None:
    """``auto`` -> 0.7, ``auto:0.5`` -> 0.5, anything else -> ``None``; a load outside (0, 1] is an error."""
    from schedlab.benchmarks.workloads.stats import check_load

    if ref != "auto" and not ref.startswith("auto:"):
        return None
    if ref == "auto":
        return AUTO_LOAD
    text = ref.split(":", 1)[1]
    try:
        load = float(text)
    except ValueError:
        raise SpecError(f"--cluster {ref}: the load after 'auto:' must be a number in (0, 1], e.g. auto:0.7",
                        source="<cluster auto>", field="cluster") from None
    return check_load(load, field="cluster")


@dataclass(frozen=True)
class WorkloadSource:
    """A named workload (``workload``) or a trace (``trace`` + ``trace_format`` + options).

    ``trace_format=None`` detects the format from the header (``generic`` when ``columns`` are given).
    ``params`` are named-workload knobs (``large_share``); ``load`` compresses arrival times (> 1: more
    load); ``window`` (hours) keeps a trace's busiest window and ``sample`` down-samples it (seeded);
    ``models`` picks a model pool for traces that name none (or overrides theirs). ``resample="bootstrap"``
    keeps the trace's arrival times and draws each arrival's job (GPU count, duration, model: the whole
    row but arrival and id) with replacement from the trace's jobs, seeded by ``seed``: a fixed trace
    then gives one workload per seed from the same population, at the same load (noted as a selection). ``time_unit`` /
    ``time_origin`` say how to read the trace's numbers; ``strict`` rejects every assumption, ``lenient``
    drops bad rows (reported). ``cluster="auto[:LOAD]"`` sizes a cluster of ``gpus_per_machine``-GPU
    machines in racks of ``machines_per_rack`` for that offered load (default 0.7).
    """

    workload: str | None = None
    trace: str | None = None
    trace_format: str | None = None
    cluster: str | None = None
    vc: str | None = None
    start: str | None = None
    end: str | None = None
    columns: str | None = None
    lenient: bool = False
    strict: bool = False
    models: str = "trace"
    seed: int = 0
    load: float = 1.0
    default_duration: float | None = None
    window: float | None = None
    sample: int | None = None
    time_unit: str = "s"
    time_origin: str | None = None
    gpus_per_machine: int | None = None
    machines_per_rack: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    resample: str = "none"

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def label(self) -> str:
        return self.workload if self.workload is not None else f"{self.trace_format or 'auto'}:{self.trace}"

    def cluster_ref(self, fmt: str | None = None) -> str | None:
        """The cluster this source replays on (explicit, else the workload's / the format's default)."""
        if self.cluster is not None:
            return self.cluster
        if self.workload is not None:
            from schedlab.benchmarks.workloads.named import get_workload

            return get_workload(self.workload).cluster
        return DEFAULT_CLUSTER.get(fmt or self.trace_format or "")

    def check(self) -> None:
        """Every option, before anything is read or built; errors name the option."""
        src = "<workload>"
        if (self.workload is None) == (self.trace is None):
            raise SpecError("give exactly one of a named workload or a trace file", source=src, field="workload")
        if not (isinstance(self.load, int | float) and math.isfinite(self.load) and self.load > 0):
            raise SpecError(f"load must be a finite number > 0, got {self.load!r}", source=src, field="load")
        if self.window is not None and not (math.isfinite(self.window) and self.window > 0):
            raise SpecError(f"window must be > 0 hours, got {self.window!r}: a window of no time selects no job",
                            source=src, field="window")
        if self.resample not in RESAMPLE:
            raise SpecError(f"resample must be one of {', '.join(RESAMPLE)}, got {self.resample!r}", source=src,
                            field="resample")
        if self.sample is not None and self.sample < 1:
            raise SpecError(f"sample must be >= 1 job, got {self.sample!r}", source=src, field="sample")
        if self.lenient and self.strict:
            raise SpecError("lenient (drop bad rows) and strict (reject every assumption) exclude each other",
                            source=src, field="strict")
        for name, v in (("gpus_per_machine", self.gpus_per_machine), ("machines_per_rack", self.machines_per_rack)):
            if v is not None and not (isinstance(v, int) and 1 <= v <= 100_000):
                raise SpecError(f"{name} must be a whole number in [1, 100000], got {v!r}", source=src, field=name)
        auto = parse_auto(self.cluster) if self.cluster is not None else None
        if auto is None and (self.gpus_per_machine is not None or self.machines_per_rack is not None):
            raise SpecError("gpus_per_machine / machines_per_rack shape a cluster sized with --cluster auto",
                            source=src, field="gpus_per_machine" if self.gpus_per_machine else "machines_per_rack")
        if MODEL_POOLS.get(self.models, "missing") == "missing":
            raise SpecError(f"unknown model pool {self.models!r}; known: {', '.join(MODEL_POOLS)}", source=src,
                            field="models")
        from schedlab.benchmarks.workloads.csvio import time_unit
        from schedlab.benchmarks.workloads.loadcore import parse_origin

        parse_origin(self.time_origin, time_unit(self.time_unit))
        if self.workload is not None:
            trace_only = [name for name, v in (("vc", self.vc), ("start", self.start), ("end", self.end),
                                               ("columns", self.columns), ("default_duration", self.default_duration),
                                               ("window", self.window), ("sample", self.sample),
                                               ("trace_format", self.trace_format),
                                               ("time_origin", self.time_origin))
                          if v is not None] + [n for n, v in (("lenient", self.lenient), ("strict", self.strict),
                                                              ("time_unit", self.time_unit != "s"),
                                                              ("resample", self.resample != "none")) if v]
            if trace_only:
                raise SpecError(f"{trace_only[0]} applies to trace files, not to the named workload "
                                f"{self.workload!r}", source=src, field=trace_only[0])
            if auto is not None:
                raise SpecError("cluster auto sizes a cluster for a trace; named workloads have their own",
                                source=src, field="cluster")
        elif self.params:
            raise SpecError(f"{next(iter(self.params))} applies to named workloads, not to trace files", source=src,
                            field=next(iter(self.params)))

    def format(self) -> str:
        """The trace's format: given, else detected from its header."""
        if self.trace_format is not None:
            from schedlab.benchmarks.workloads.loaders import LOADERS

            if self.trace_format not in LOADERS:
                raise SpecError(f"unknown trace format {self.trace_format!r}; known: {', '.join(LOADERS)}",
                                source=str(self.trace), field="trace_format")
            return self.trace_format
        from schedlab.benchmarks.workloads.detect import detect_format

        return detect_format(self.trace, mapping=self.columns)

    def load_trace(self):
        """The selected trace rows (after window / sample / load scaling) and the format."""
        from schedlab.benchmarks import workloads as wl
        from schedlab.benchmarks.workloads import generators as gen

        self.check()
        src = "<workload>"
        fmt = self.format()
        options: dict = {"lenient": self.lenient, "strict": self.strict, "time_unit": self.time_unit,
                         "time_origin": self.time_origin}
        if fmt in ("philly", "helios") and self.vc is not None:
            options["vc"] = self.vc
        elif self.vc is not None:
            raise SpecError(f"vc applies to the philly and helios formats, not {fmt}", source=src, field="vc")
        if fmt == "philly":
            options.update(start=self.start, end=self.end)
        elif self.start is not None or self.end is not None:
            raise SpecError(f"start/end apply to the philly format, not {fmt}", source=src,
                            field="start" if self.start is not None else "end")
        if fmt == "generic":
            options["mapping"] = self.columns
        elif self.columns is not None:
            raise SpecError(f"columns map a generic trace; this file is {fmt} (drop --trace-format to use "
                            "--columns)", source=src, field="columns")
        if fmt in ("pollux", "sia"):
            options["default_duration"] = self.default_duration
        elif self.default_duration is not None:
            raise SpecError(f"default_duration applies to the pollux/sia formats, not {fmt}", source=src,
                            field="default_duration")
        tr = wl.load_trace(self.trace, fmt, **options)
        n0 = len(tr.jobs)
        if self.window is not None:
            tr = gen.busiest_window(tr, self.window)
        if self.sample is not None:
            tr = gen.downsample(tr, self.sample, seed=self.seed)
        if len(tr.jobs) < n0:
            from schedlab.benchmarks.workloads.assumptions import Note

            what = " then ".join(x for x in (f"--window {self.window:g} h (busiest)" if self.window else "",
                                             f"--sample {self.sample} (seed {self.seed})" if self.sample else "") if x)
            tr = replace(tr, notes=(*tr.notes, Note("selection", f"jobs left out by {what}", n0 - len(tr.jobs),
                                                    assumption=False)))
        if self.resample == "bootstrap":
            from schedlab.benchmarks.workloads.assumptions import Note

            tr = gen.bootstrap(tr, seed=self.seed)
            tr = replace(tr, notes=(*tr.notes, Note("resample", f"jobs resampled: bootstrap, seed {self.seed} (arrivals "
                                                    "kept, each job drawn with replacement from the trace's jobs)",
                                                    len(tr.jobs), assumption=False)))
        if self.load != 1.0:
            tr = gen.scale_load(tr, self.load)
        return tr, fmt

    def build(self) -> tuple[Workload, Cluster]:
        """The workload and its cluster; every error names the flag or field at fault."""
        from schedlab.benchmarks.simulator.gcpause import PausedGC

        with PausedGC():  # tens of thousands of long-lived jobs: no cycle collection while they are built
            return self._build()

    def _build(self) -> tuple[Workload, Cluster]:
        from schedlab.benchmarks import workloads as wl
        from schedlab.topology.presets import load_cluster

        self.check()
        if self.workload is not None:
            spec = wl.get_workload(self.workload)
            cluster = load_cluster(self.cluster or spec.cluster)
            return spec.build(cluster, seed=self.seed, load=self.load, **self.params), cluster
        tr, fmt = self.load_trace()
        ref = self.cluster_ref(fmt)
        if ref is None:
            raise SpecError(f"a cluster is required for the {fmt} trace format (a preset, a spec file, or "
                            f"auto[:LOAD] to size one for the trace)", source="<workload>", field="cluster")
        setting: dict[str, Any] = {"format": fmt}
        if self.resample != "none":
            setting["resample"] = f"{self.resample}, seed {self.seed}"
        auto = parse_auto(ref)
        if auto is not None:
            from schedlab.benchmarks.workloads.stats import trace_stats

            sizing = trace_stats(tr).size(auto, gpus_per_machine=self.gpus_per_machine or 8,
                                          machines_per_rack=self.machines_per_rack or 8)
            cluster = sizing.cluster()
            ref = cluster.name
            setting["cluster_auto"] = sizing.describe()
        else:
            cluster = load_cluster(ref)
        pool_attr = MODEL_POOLS[self.models]
        pool = getattr(wl, pool_attr) if pool_attr else None
        pool_name = self.models if pool_attr else None
        if pool is None and fmt in POOL_BY_DEFAULT:
            pool, pool_name = wl.TIRESIAS_MODELS, "tiresias (default for traces without models)"
        w = wl.trace_workload(tr, cluster, seed=self.seed, model_pool=pool, pool_name=pool_name,
                              override_models=self.models != "trace", reconfigurable=fmt == "rubick",
                              cluster_name=ref, strict=self.strict, lenient=self.lenient)
        if fmt == "tiresias":
            w = replace(w, short_s=800.0)  # Tiresias' testbed bins
        if fmt == "rubick":
            from schedlab.scheduling.resources import Resources

            if any(j.guaranteed for j in w.jobs):
                w = replace(w, quotas={"A": Resources(cluster.total_gpus)})
        return replace(w, setting=setting), cluster


__all__ = ["AUTO_LOAD", "DEFAULT_CLUSTER", "MODEL_POOLS", "RESAMPLE", "WorkloadSource", "parse_auto"]
