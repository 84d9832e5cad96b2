"""Performance benchmark of the perf model (targets: full GPU x CPU curves of the 7 Rubick models on
rubick-64 < 1 s; one throughput prediction < 20 us amortised, vectorised; with ``--validation``: fitting
one model < 2 s, the whole validation (three protocols, every Rubick table) < 60 s).

    .venv/bin/python -m schedlab.benchmarks.bench_perfmodel [--repeat 5] [--json] [--validation]

Every figure is the median over ``--repeat`` runs, each from a cold :class:`PerfModel` (empty caches);
the validation figures are single runs (``--repeat`` does not apply): the fit of each table on all its
pool rows (the largest reported), and the wall time of ``schedlab perf validate`` for each protocol.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

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


def bench_validation(directory: Path) -> dict[str, float]:
    """Seconds to fit each Rubick table on all its pool rows, and to run each protocol on every table."""
    from schedlab.perfmodel.fitting import fit
    from schedlab.perfmodel.params import default_params
    from schedlab.perfmodel.validation import PROTOCOLS, load_table, pool_rows, validate_directory
    from schedlab.perfmodel.zoo import get_model

    cluster = preset("rubick-64")
    res: dict[str, float] = {}
    for f in sorted(directory.glob("*.csv")):
        try:
            table = load_table(f, cluster)
        except Exception:  # noqa: BLE001 - tables outside the zoo (T5-3B) are not fitted
            continue
        samples = [table.rows[i].sample for i in pool_rows(table.rows)]
        t, c = time.perf_counter(), time.process_time()
        fit(get_model(table.model), samples, cluster, require_offload=False,
            initial=default_params(table.model, "artifact"))
        res[f"fit_{f.stem}_{len(samples)}_rows_s"] = time.perf_counter() - t
        res[f"fit_{f.stem}_cpu_s"] = time.process_time() - c
    res["fit_one_model_max_s"] = max(v for k, v in res.items() if k.startswith("fit_") and k.endswith("rows_s"))
    total = cpu = 0.0
    for p in PROTOCOLS:
        t, c = time.perf_counter(), time.process_time()
        validate_directory(directory, cluster, protocol=p)
        res[f"validate_{p}_s"] = time.perf_counter() - t
        total += res[f"validate_{p}_s"]
        cpu += time.process_time() - c
    res["validate_all_protocols_s"] = total
    res["validate_all_protocols_cpu_s"] = cpu  # CPU time of this process: the figure on an idle machine
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--validation", action="store_true", help="time fitting and the validation instead")
    ap.add_argument("--dir", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "traces"
                    / "rubick" / "placements")
    args = ap.parse_args(argv)
    if args.validation and not args.dir.is_dir():
        print(f"skipped: the Rubick placement tables are not present at {args.dir}")
        return 0
    res = bench_validation(args.dir) if args.validation else bench(args.repeat)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        for k, v in res.items():
            print(f"{k:55s} {v:10.4f}")
    return 0


__all__ = ["bench", "bench_validation", "main"]


if __name__ == "__main__":
    sys.exit(main())
