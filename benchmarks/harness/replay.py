"""The replay case, and THE replay of a workload under a policy.

:func:`replay_policy` is the one way a workload is replayed (``schedlab simulate`` and
:class:`ReplayCase` both use it): the policy built through the merged registry, the simulator given the
workload's own arguments (:meth:`~schedlab.benchmarks.workloads.trace.Workload.simulator_args`: tenant
quotas, Tiresias bins), every decision verified, the metrics with what was run."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from schedlab.benchmarks.harness.casebase import (
    CaseInfo,
    ReproRow,
    Suite,
    case_key,
    frozen,
    plain,
    with_params,
)
from schedlab.benchmarks.harness.record import Outcome, Status
from schedlab.benchmarks.harness.validate import bad, check_cluster, check_policy
from schedlab.benchmarks.merged import all_policies, policies_for
from schedlab.benchmarks.simulator import COSTS, SEMANTICS, Recorder, SimResult, Simulator
from schedlab.benchmarks.simulator import semantics as get_semantics
from schedlab.benchmarks.simulator.costs import cost_model
from schedlab.benchmarks.workloads import WORKLOADS
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.perfmodel.params import CALIBRATIONS, DEFAULT_CALIBRATION
from schedlab.topology.errors import SpecError

#: hard wall-clock limit of a replay (no solver limit of its own) unless ``--time-limit`` is given
REPLAY_LIMIT_S = 1800.0


def finite(x: Any) -> Any:
    """``x`` with every non-finite float (in a mapping, too) as ``None``: JSON has no infinity."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, Mapping):
        return {k: finite(v) for k, v in x.items()}
    return x


def replay_policy(w: Any, cluster: Any, policy: str, params: Mapping[str, Any] | None, *, seed: int,
                  semantics: str = "realistic", costs: str | None = None, recorder: Recorder | None = None,
                  progress: Any = None, source: str = "<replay>",
                  calibration: str = DEFAULT_CALIBRATION) -> tuple[SimResult, dict[str, Any]]:
    """Replay workload ``w`` (a built :class:`~schedlab.benchmarks.workloads.trace.Workload`) on ``cluster``
    under ``policy`` with ``params``: the simulator's result and the metrics with what was run
    (workload, cluster, semantics, validated parameters, seed, event counts, wall time). ``calibration``
    is the perf model's (``perfmodel.params.CALIBRATIONS``), for the simulator's rates and the policy
    alike (the view carries it); the metrics name it when it is not the default."""
    check_calibration(calibration)
    registry = policies_for([policy])
    pol = registry.build(policy, params, seed=seed, source=source)
    sem = get_semantics(semantics)
    sim = Simulator(cluster, w.jobs, pol, semantics=sem, costs=cost_model(costs) if costs else None,
                    recorder=recorder, progress=progress, calibration=calibration, **w.simulator_args())
    res = sim.run()
    m = dict(res.metrics)
    m.update(workload=w.name, cluster=cluster.name, semantics=sem.name, seed=seed, events=res.events,
             params=registry.spec(policy).validate(params), passes=res.passes, wall_s=res.wall_s,
             interrupted=res.interrupted, skipped_rows=w.skipped, rate_sources=res.rate_sources)
    if calibration != DEFAULT_CALIBRATION:  # the default's records stay as they were
        m["calibration"] = calibration
    return res, m


def check_calibration(calibration: Any) -> None:
    """An unknown perf-model calibration is an error naming the known ones."""
    if calibration not in CALIBRATIONS:
        raise bad("calibration", f"unknown calibration {calibration!r}; known: {', '.join(CALIBRATIONS)}")


@dataclass(frozen=True)
class ReplayCase:
    """One trace replay: a workload source under one registered policy (with parameters), semantics and
    seed. ``seed`` seeds the policy (the workload's seed is ``source.seed``); ``hard_limit_s`` is its
    hard wall-clock limit in the harness (None: :data:`REPLAY_LIMIT_S`; a ``--time-limit`` given to the
    run overrides both). ``calibration`` is the perf model's for the simulator and the policy (default
    ``flat``: the spec, hence the store key, leaves the default out, so stores from before still match)."""

    TYPE: ClassVar[str] = "replay"

    source: WorkloadSource
    policy: str
    params: Mapping[str, Any] = field(default_factory=dict)
    semantics: str = "realistic"
    costs: str | None = None
    seed: int = 0
    label: str = ""
    hard_limit_s: float | None = None
    calibration: str = DEFAULT_CALIBRATION

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", frozen(self.params))
        if not self.label:
            object.__setattr__(self, "label", with_params(self.policy, self.params))
        if self.calibration not in CALIBRATIONS:
            raise SpecError(f"unknown calibration {self.calibration!r}; known: {', '.join(CALIBRATIONS)}",
                            source=f"<case {self.label}>", field="calibration")
        if self.hard_limit_s is not None and not (isinstance(self.hard_limit_s, int | float) and self.hard_limit_s > 0):
            raise SpecError(f"replay limit must be > 0 seconds, got {self.hard_limit_s!r}",
                            source=f"<case {self.label}>", field="hard_limit_s")

    def spec(self) -> dict[str, Any]:
        d = plain(self)
        if d.get("calibration") == DEFAULT_CALIBRATION:
            del d["calibration"]
        if d["source"].get("resample") == "none":  # as calibration: stores from before keep their keys
            del d["source"]["resample"]
        return d

    @classmethod
    def from_spec(cls, d: Mapping[str, Any]) -> ReplayCase:
        d = dict(d)
        if "limit_s" in d:  # stored before the process limit was named hard_limit_s
            d["hard_limit_s"] = d.pop("limit_s")
        return cls(**{**d, "source": WorkloadSource(**d["source"])})

    def key(self) -> str:
        return case_key("replay", self.spec())

    def instance_id(self) -> str:
        s = self.source
        default, mine = plain(WorkloadSource()), plain(s)
        extra = ",".join(f"{k}={v}" for k, v in sorted(mine.items())
                         if k not in ("workload", "trace", "seed") and v != default.get(k))
        return f"{s.label}/s={s.seed}" + (f"/{extra}" if extra else "")

    def info(self) -> CaseInfo:
        return CaseInfo(self.policy, None, self.params, "replay", self.source.cluster_ref(), None, self.seed, None)

    def shifted(self, seed: int, time_limit_s: float | None) -> ReplayCase:
        return replace(self, seed=self.seed + seed, source=replace(self.source, seed=self.source.seed + seed))

    def process_limit_s(self, grace_s: float, override_s: float | None) -> float:
        return override_s or self.hard_limit_s or REPLAY_LIMIT_S

    def ladder(self) -> tuple | None:
        return None

    def check(self) -> None:
        check_replay(self)

    def run(self, *, threads: int = 1, out_dir: str | None = None) -> Outcome:
        """The replay as a record's outcome; with ``out_dir``, its per-job records come back as files."""
        m = run_replay(self, out_dir=out_dir).metrics
        files = {f.name: f.read_bytes() for f in sorted(Path(out_dir).iterdir()) if f.is_file()} if out_dir else {}
        status = Status.INTERRUPTED if m.get("interrupted") else (Status.INCOMPLETE if m.get("unfinished")
                                                                  else Status.OK)
        return Outcome(status, role="replay", metrics=m, jobs=m.get("jobs"), gpus=m.get("total_gpus"),
                       cluster=m.get("cluster"), solve_s=m.get("wall_s"), threads=1, verified=True,
                       objective=m.get("avg_jct"), sense="min", files=files)


def check_replay(case: ReplayCase) -> None:
    check_policy(case.policy, case.params)
    check_calibration(case.calibration)
    if case.semantics not in SEMANTICS:
        raise bad("semantics", f"unknown semantics {case.semantics!r}; known: {', '.join(SEMANTICS)}")
    if case.costs is not None and case.costs not in COSTS:
        raise bad("costs", f"unknown cost model {case.costs!r}; known: {', '.join(COSTS)}")
    src = case.source
    src.check()
    if (src.workload is None) == (src.trace is None):
        raise bad("workload", "give exactly one of a named workload or a trace file")
    if src.workload is not None and src.workload not in WORKLOADS:
        raise bad("workload", f"unknown workload {src.workload!r}; known: {', '.join(WORKLOADS)}")
    if src.trace is not None and not Path(src.trace).is_file():
        raise bad("trace", f"trace file not found: {src.trace}")
    if not src.load > 0:
        raise bad("load", f"load must be > 0, got {src.load}")
    check_cluster(src.cluster)


@dataclass
class ReplayOutcome:
    case: ReplayCase
    metrics: dict[str, Any]
    result: SimResult


SEGMENT_FIELDS = ("job_id", "start", "end", "placement", "iter_time")


def write_segments(path: Path, segments) -> None:
    """``segments.csv``: one row per stretch a job held GPUs (``placement`` = ``machine:gpus|...``;
    ``iter_time`` 0 = checkpoint/restore/reconfiguration overhead). The Gantt chart reads it."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SEGMENT_FIELDS)
        for s in segments:
            w.writerow((s.job_id, s.start, s.end, "|".join(f"{m}:{g}" for m, g in s.placement), s.iter_time))


def run_replay(case: ReplayCase, *, out_dir: str | Path | None = None) -> ReplayOutcome:
    """Run one replay; with ``out_dir``, stream ``jobs.csv``/``series.csv`` there and write
    ``segments.csv`` and ``metrics.json``."""
    w, cluster = case.source.build()
    out = Path(out_dir) if out_dir is not None else None
    res, m = replay_policy(w, cluster, case.policy, case.params, seed=case.seed, semantics=case.semantics,
                           costs=case.costs, recorder=Recorder(out, keep_segments=out is not None),
                           source=f"<case {case.label}>", calibration=case.calibration)
    spec = all_policies().spec(case.policy)
    m.update(policy=case.policy, oracle=spec.oracle, family=spec.family.value, total_gpus=cluster.total_gpus)
    if case.source.resample != "none":  # the workload is one seeded draw from the trace, not the trace
        m["resampled"] = f"{case.source.resample}, seed {case.source.seed}"
    m = finite(m)
    if out is not None:
        write_segments(out / "segments.csv", res.recorder.segments or ())
        (out / "metrics.json").write_text(json.dumps(m, indent=2, sort_keys=True, default=str))
    return ReplayOutcome(case, m, res)


def run_suite_replays(suite: Suite) -> tuple[dict[str, dict[str, Any]], list[ReproRow]]:
    """Every replay case of ``suite``, one after the other (the harness's runner adds processes,
    timeouts, the store and executors), and its reproduction rows."""
    results = {c.label: run_replay(c).metrics for c in suite.cases if c.TYPE == ReplayCase.TYPE}
    rows = suite.reproduce(results) if suite.reproduce is not None else []
    return results, rows


__all__ = ["REPLAY_LIMIT_S", "SEGMENT_FIELDS", "ReplayCase", "ReplayOutcome", "check_calibration", "check_replay", "finite",
           "replay_policy", "run_replay", "run_suite_replays", "write_segments"]
