"""Calibrations behind the Tiresias suite's paper-setting cases, as experiments one can rerun.

``python -m schedlab.benchmarks.harness.suites.calibrate load`` finds the arrival compression of the
Philly table at which YARN-CS's average queueing delay (first start - arrival) is the paper's 4,102 s
(Tiresias Appendix A), by bisection on ``log(load)`` (the delay grows with load): one YARN-CS replay of
the 82,247 jobs per step under ``tiresias`` semantics, each step printed (load, average queueing delay,
wall seconds). Its result is :data:`~schedlab.benchmarks.harness.suites.tiresias.PAPER_LOAD`, the load of
the suite's ``loaded-paper`` part (the table as recorded, seed 0). ``--resample bootstrap --seed S``
calibrates on the suite's draw of seed ``S`` instead (``WorkloadSource.resample``: the table's arrivals,
each job drawn with replacement; what ``loaded-paper`` replays by default), which queues longer than the
table at the same compression (``docs/REPRODUCTION.md`` § Every "not held", Tiresias Philly 2.4x).

``... calibrate scale`` finds the ``duration_scale`` of ``tiresias-480-philly`` at which 2D-LAS's makespan
on the testbed is the paper's 27,400 s (§5.2), by bisection on ``log(scale)`` (seed 0); its result is
:data:`~schedlab.benchmarks.harness.suites.tiresias.PHILLY_TESTBED_SCALE`.

``... calibrate dally`` finds the ``duration_scale`` of ``dally-batch`` at which Dally's average JCT on
``dally-8`` is the paper's Table 2 figure (2,828,955 s: the paper's contention; our Helios-like
generator is much lighter), by bisection on ``log(scale)`` (seed 0); its result is
:data:`~schedlab.benchmarks.harness.suites.dally.PAPER_CONTENTION_SCALE`.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from schedlab.benchmarks.harness.cases import ReplayCase
from schedlab.benchmarks.harness.replay import run_replay
from schedlab.benchmarks.harness.suites.tiresias import PHILLY_TABLE, TESTBED_THRESHOLD
from schedlab.benchmarks.workloads.source import RESAMPLE, WorkloadSource
from schedlab.topology.errors import SpecError

PAPER_YARN_QUEUE_S = 4102.0  # Tiresias Appendix A: YARN-CS average queueing delay in the Philly simulation
PAPER_TESTBED_MAKESPAN_S = 27400.0  # Tiresias §5.2: 2D-LAS's makespan on the testbed


def las_makespan(scale: float, *, seed: int = 0) -> float:
    """2D-LAS's makespan (s) on ``tiresias-480-philly`` at ``duration_scale`` (the testbed part's setting:
    K = 2, 3,200 GPU-s, ``realistic`` semantics with the measured preemption cost)."""
    src = WorkloadSource(workload="tiresias-480-philly", seed=seed, params={"duration_scale": scale})
    case = ReplayCase(src, "2d-las", {"threshold": TESTBED_THRESHOLD}, semantics="realistic", costs="tiresias",
                      seed=seed)
    return float(run_replay(case).metrics["makespan"])


def yarn_queue(load: float, *, traces: str = "../shared/traces", seed: int = 0, resample: str = "none") -> float:
    """YARN-CS's average queueing delay (s) on the Philly table compressed ``load``-fold (``resample``: the
    table as recorded, ``none``, or the seed's bootstrap draw, ``bootstrap``, as the suite's ``-rs`` cases)."""
    src = WorkloadSource(trace=str(Path(traces) / PHILLY_TABLE), trace_format="philly", cluster="philly", seed=seed,
                         load=load, resample=resample)
    return float(run_replay(ReplayCase(src, "yarn-cs", semantics="tiresias", seed=seed)).metrics["avg_queue"])


def calibrate_load(target: float = PAPER_YARN_QUEUE_S, lo: float = 1.0, hi: float = 5.0, steps: int = 6, *,
                   traces: str = "../shared/traces", seed: int = 0, resample: str = "none", log=print) -> float:
    """Bisection on ``log(load)`` in ``[lo, hi]``: the load whose YARN-CS queueing delay is nearest
    ``target`` among the steps tried (on the table as recorded, or on seed ``seed``'s draw: ``resample``)."""
    if resample not in RESAMPLE:
        raise SpecError(f"resample must be one of {', '.join(RESAMPLE)}, got {resample!r}", source="<calibrate load>",
                        field="resample")
    return _bisect(lambda x: yarn_queue(x, traces=traces, seed=seed, resample=resample), target, lo, hi, steps, "load",
                   "YARN-CS average queueing", log)


PAPER_DALLY_AVG_JCT_S = 2828955.0  # Dally Table 2: Dally's average JCT, 8 racks, batch


def dally_avg_jct(scale: float, *, seed: int = 0) -> float:
    """Dally's average JCT (s) on ``dally-batch`` at ``duration_scale`` on ``dally-8`` (the paper's algorithm)."""
    src = WorkloadSource(workload="dally-batch", cluster="dally-8", seed=seed, params={"duration_scale": scale})
    return float(run_replay(ReplayCase(src, "dally", seed=seed)).metrics["avg_jct"])


def calibrate_dally(target: float = PAPER_DALLY_AVG_JCT_S, lo: float = 5.0, hi: float = 500.0, steps: int = 7, *,
                    seed: int = 0, log=print) -> float:
    """Bisection on ``log(duration_scale)``: the scale whose Dally average JCT (8 racks, batch) is nearest
    ``target`` (the paper's contention)."""
    return _bisect(lambda x: dally_avg_jct(x, seed=seed), target, lo, hi, steps, "duration_scale",
                   "Dally average JCT", log)


def calibrate_scale(target: float = PAPER_TESTBED_MAKESPAN_S, lo: float = 0.001, hi: float = 0.1, steps: int = 10, *,
                    seed: int = 0, log=print) -> float:
    """Bisection on ``log(duration_scale)``: the scale whose 2D-LAS makespan is nearest ``target``."""
    return _bisect(lambda x: las_makespan(x, seed=seed), target, lo, hi, steps, "duration_scale",
                   "2D-LAS makespan", log)


def _bisect(f, target: float, lo: float, hi: float, steps: int, name: str, what: str, log) -> float:
    tried: list[tuple[float, float]] = []
    a, b = math.log(lo), math.log(hi)
    for _ in range(steps):
        mid = math.exp((a + b) / 2)
        t0 = time.perf_counter()
        q = f(mid)
        log(f"{name} {mid:.5g}: {what} {q:,.0f} s (target {target:,.0f}), {time.perf_counter() - t0:.0f} s wall")
        tried.append((mid, q))
        if q < target:
            a = math.log(mid)
        else:
            b = math.log(mid)
    return min(tried, key=lambda lq: abs(lq[1] - target))[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("what", choices=["load", "scale", "dally"])
    ap.add_argument("--target", type=float)
    ap.add_argument("--lo", type=float)
    ap.add_argument("--hi", type=float)
    ap.add_argument("--steps", type=int)
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--seed", type=int, default=0, help="load: the workload's seed (the draw's, with --resample)")
    ap.add_argument("--resample", choices=RESAMPLE, default="none",
                    help="load: calibrate on the table as recorded (none) or on the seed's bootstrap draw")
    a = ap.parse_args(argv)
    given = {k: v for k, v in (("target", a.target), ("lo", a.lo), ("hi", a.hi), ("steps", a.steps)) if v is not None}
    if a.what == "load":
        print(f"chosen load {calibrate_load(**given, traces=a.traces, seed=a.seed, resample=a.resample):.5g} "
              f"(seed {a.seed}, resample {a.resample})")
    elif a.what == "scale":
        print(f"chosen duration_scale {calibrate_scale(**given):.5g}")
    else:
        print(f"chosen duration_scale {calibrate_dally(**given):.5g}")
    return 0


__all__ = ["PAPER_DALLY_AVG_JCT_S", "PAPER_TESTBED_MAKESPAN_S", "calibrate_dally", "dally_avg_jct", "PAPER_YARN_QUEUE_S", "calibrate_load", "calibrate_scale", "las_makespan",
           "yarn_queue"]

if __name__ == "__main__":
    sys.exit(main())
