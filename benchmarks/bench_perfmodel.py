"""Performance benchmark of the perf model (targets: full GPU x CPU curves of the 7 Rubick models on
rubick-64 < 1 s; one throughput prediction < 20 us amortised, vectorised).

    .venv/bin/python -m schedlab.benchmarks.bench_perfmodel [--repeat 5] [--json]

Every figure is the median over ``--repeat`` runs, each from a cold :class:`PerfModel` (empty caches).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

from schedlab.perfmodel import PerfModel
from schedlab.perfmodel.zoo import RUBICK_MODELS
from schedlab.topology.presets import preset


def _median(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def bench(repeat: int = 5) -> dict[str, float]:
    cluster = preset("rubick-64")
    res: dict[str, float] = {}

    def surfaces() -> None:
        pm = PerfModel(cluster)
        for m in RUBICK_MODELS:
            pm.surface(m)  # best throughput for every (GPUs 1..64, CPUs 1..768)

    def curves() -> None:
        pm = PerfModel(cluster)
        for m in RUBICK_MODELS:
            pm.curve(m, "gpu")
            for g in range(1, cluster.total_gpus + 1):
                pm.curve(m, "cpu", gpus=g)

    res["surfaces_7_models_s"] = _median(surfaces, repeat)
    res["gpu_and_all_cpu_curves_7_models_s"] = _median(curves, repeat)

    pm = PerfModel(cluster)
    placement = {"rack0-m0": 8, "rack0-m1": 8}
    plans = pm.enumerate_plans("llama7", placement)
    batch = (plans * (10_000 // len(plans) + 1))[:10_000]
    pm.throughputs("llama7", batch[:10], placement, 16)
    t = _median(lambda: pm.throughputs("llama7", batch, placement, 16), repeat)
    res["throughput_vectorised_us_per_prediction"] = 1e6 * t / len(batch)
    cpus = np.arange(16, 16 + len(batch))
    t = _median(lambda: pm.throughputs("llama7", batch, placement, cpus), repeat)
    res["throughput_vectorised_varying_cpus_us_per_prediction"] = 1e6 * t / len(batch)
    n = 2000
    t = _median(lambda: [pm.throughput("llama7", batch[i], placement, 16) for i in range(n)], repeat)
    res["throughput_scalar_call_us"] = 1e6 * t / n
    pm.best_plan("llama7", placement, 16)
    t = _median(lambda: [pm.best_plan("llama7", placement, 16) for _ in range(n)], repeat)
    res["best_plan_cached_us"] = 1e6 * t / n
    pm.slope("llama7", "gpu", 8)
    t = _median(lambda: [pm.slope("llama7", "gpu", 8) for _ in range(n)], repeat)
    res["slope_cached_curve_us"] = 1e6 * t / n
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    res = bench(args.repeat)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        for k, v in res.items():
            print(f"{k:55s} {v:10.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
