"""``tiresias-480-philly``: the Tiresias testbed workload (480 jobs on ``tiresias-60``) with durations drawn
from the Philly table, jointly with the GPU count.

The paper's testbed GPU-count bins are kept exactly (240x1, 40x2, 80x4, 90x8, 25x16, 5x32, as
``tiresias-480``); each job's duration is drawn (seeded) from the Philly table's jobs **with the same
GPU count** (so the (GPU count, duration) pairs follow the table's joint distribution), then multiplied
by ``duration_scale``; arrivals are Poisson with mean 30 s (as ``tiresias-480``, ours). The table's
durations run to weeks, so ``duration_scale`` calibrates the work volume: the suite's
``testbed-philly`` part uses the scale at which 2D-LAS's makespan is the paper's 27,400 s
(``python -m schedlab.benchmarks.harness.suites.calibrate scale``). The table is read from ``table``
(the public Philly table; the package never ships it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from schedlab.benchmarks.workloads import generators as gen
from schedlab.benchmarks.workloads.convert import TIRESIAS_MODELS, trace_to_jobs
from schedlab.benchmarks.workloads.trace import Workload
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError

DEFAULT_TABLE = "../shared/traces/philly/sia_philly_jobs.csv"


def _durations_by_gpus(table: str) -> dict[int, np.ndarray]:
    import pandas as pd

    p = Path(table)
    if not p.is_file():
        raise SpecError(f"Philly table not found: {table}", source="<workload tiresias-480-philly>", field="table")
    df = pd.read_csv(p, usecols=["duration", "num_gpus"])
    df = df[(df["duration"] > 0) & (df["num_gpus"] > 0)]
    return {int(g): np.sort(d["duration"].to_numpy(dtype=float)) for g, d in df.groupby("num_gpus")}


def tiresias_480_philly(cluster: Cluster, *, seed: int = 0, load: float = 1.0, duration_scale: float = 1.0,
                        table: str = DEFAULT_TABLE) -> Workload:
    if not (duration_scale > 0 and np.isfinite(duration_scale)):
        raise SpecError(f"duration_scale must be > 0, got {duration_scale!r}", source="<workload tiresias-480-philly>",
                        field="duration_scale")
    by_gpus = _durations_by_gpus(table)
    gpus = gen.exact_mix(gen.TIRESIAS_MIX, seed=seed)
    rng = np.random.default_rng(seed + 5)
    durations = []
    for g in gpus:
        pool = by_gpus.get(int(g))
        if pool is None or not len(pool):
            raise SpecError(f"the Philly table has no {g}-GPU job", source="<workload tiresias-480-philly>",
                            field="table")
        durations.append(max(1.0, float(pool[int(rng.integers(len(pool)))]) * duration_scale))
    n = len(gpus)
    trace = gen.synthetic_trace("tiresias-480-philly", gen.poisson_arrivals(n, 30.0, seed=seed + 1), gpus, durations)
    if load != 1.0:
        trace = gen.scale_load(trace, load, method="compress")
    jobs = trace_to_jobs(trace, cluster, seed=seed + 3, model_pool=TIRESIAS_MODELS)
    return Workload("tiresias-480-philly", jobs, cluster="tiresias-60", small_gpus=4, short_s=800.0,
                    description=__doc__ or "")


__all__ = ["DEFAULT_TABLE", "tiresias_480_philly"]
