"""Running a :class:`~schedlab.benchmarks.harness.cases.ReplayCase`: build its workload, build its policy
through the merged registry, simulate with every decision verified, return the metrics."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.cases import ReplayCase, ReproRow, Suite
from schedlab.benchmarks.simulator import Recorder, SimResult, Simulator
from schedlab.benchmarks.simulator import semantics as get_semantics
from schedlab.benchmarks.simulator.costs import cost_model


def _finite(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, Mapping):
        return {k: _finite(v) for k, v in x.items()}
    return x


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
    from schedlab.benchmarks.registry import all_policies

    registry = all_policies()
    policy = registry.build(case.policy, case.params, seed=case.seed, source=f"<case {case.label}>")
    w, cluster = case.source.build()
    sem = get_semantics(case.semantics)
    out = Path(out_dir) if out_dir is not None else None
    sim = Simulator(cluster, w.jobs, policy, semantics=sem, costs=cost_model(case.costs) if case.costs else None,
                    quotas=w.quotas, recorder=Recorder(out, keep_segments=out is not None), small_gpus=w.small_gpus, short_s=w.short_s)
    res = sim.run()
    m = dict(res.metrics)
    m.update(workload=w.name, cluster=cluster.name, semantics=sem.name, policy=case.policy,
             params=registry.spec(case.policy).validate(case.params), seed=case.seed, events=res.events,
             passes=res.passes, wall_s=res.wall_s, interrupted=res.interrupted, skipped_rows=w.skipped,
             rate_sources=res.rate_sources, oracle=registry.spec(case.policy).oracle,
             family=registry.spec(case.policy).family.value,
             total_gpus=cluster.total_gpus)
    m = _finite(m)
    if out is not None:
        write_segments(out / "segments.csv", res.recorder.segments or ())
        (out / "metrics.json").write_text(json.dumps(m, indent=2, sort_keys=True, default=str))
    return ReplayOutcome(case, m, res)


def run_suite_replays(suite: Suite) -> tuple[dict[str, dict[str, Any]], list[ReproRow]]:
    """Every replay case of ``suite``, one after the other (the harness's runner adds processes,
    timeouts, the store and executors), and its reproduction rows."""
    results = {c.label: run_replay(c).metrics for c in suite.cases if isinstance(c, ReplayCase)}
    rows = suite.reproduce(results) if suite.reproduce is not None else []
    return results, rows


__all__ = ["SEGMENT_FIELDS", "ReplayOutcome", "run_replay", "run_suite_replays", "write_segments"]
