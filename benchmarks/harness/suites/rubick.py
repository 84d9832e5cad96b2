"""The Rubick paper's experiments (MLSys'25 Sec. 7.2-7.4) as a suite: ``schedlab`` runs the replays,
:func:`reproduce` puts our figures beside the paper's.

* **Table 4** on ``rubick-64`` (8 x 8 A800): the *Base*, *BP* and *MT* workloads, each both from the
  artifact's trace files (``<traces>/rubick/workloads/workload-{base,bp,mt}.csv``, when present) and
  from our generator (``rubick-base``/``-bp``/``-mt``): Rubick vs Sia-like, Synergy-like and
  Rubick-E/R/N (Base), Sia-like and Synergy-like (BP), AntMan-like (MT); average and P99 JCT and
  makespan, for all, guaranteed and best-effort jobs.
* **Micro-benchmark** (Fig. 8): RoBERTa + T5 on one 4-GPU A800 server, equal split vs Rubick's
  decision, total speedup normalised to each job's rigid plan on 4 GPUs (computed, not replayed).
* **Sweeps** (Fig. 10, 11): Rubick vs Synergy-like average JCT under load scaling of the Base
  workload, and with a growing share of large models (generator ``large_share``).

Case labels: ``<workload>/<policy>`` (``base-trace/rubick``, ``mt-gen/antman``), ``load=<f>/<policy>``,
``large=<s>/<policy>``; Table 4 under a perf-model calibration other than the default ``flat`` (option
``calibrations``): ``cal=<name>/<workload>/<policy>`` (``cal=fitted/base-trace/rubick``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.cases import ReplayCase, ReproRow, Suite
from schedlab.benchmarks.harness.replay import check_calibration
from schedlab.benchmarks.harness.suites.paper_figures import MICRO_PAPER, TABLE4, TABLE4_MT_CLASSES
from schedlab.benchmarks.harness.suites.seeds import over_seeds, seed_values
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.heuristics import POLICIES
from schedlab.perfmodel import PerfModel, parse_plan
from schedlab.perfmodel.params import DEFAULT_CALIBRATION
from schedlab.scheduling import Instance, Job, Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.loaders import spec_from_dict

H = 3600.0
LOADS = (0.5, 1.0, 2.0, 3.0)
LARGE_SHARES = (0.25, 0.5, 0.75)


def rubick_suite(*, traces: str | None = "../shared/traces", sweeps: bool = True, seed: int = 0,
                 seeds: int | Sequence[int] = 1, paper_settings: bool = True,
                 calibrations: Sequence[str] = (DEFAULT_CALIBRATION,), variants: Sequence[str] = tuple(TABLE4),
                 sources: Sequence[str] = ("trace", "gen")) -> Suite:
    """The suite; trace cases are included when ``<traces>/rubick/workloads/`` exists (the package never
    needs the traces: without them only the generator's workloads run). ``seeds``: a count from
    ``seed`` or the seeds (workload and policy seed together; the artifact's trace files are fixed, so
    their cases vary only the policy seed). ``paper_settings``: also the paper's own definition of
    "large" in Fig. 11 (the LLaMA models only: ``large-llama=<s>/<policy>``). ``calibrations``: the
    perf-model calibrations Table 4 runs under (simulator and policies alike; the sweeps run under the
    default, ``flat``); ``variants`` (``base``, ``bp``, ``mt``) and ``sources`` (``trace``, ``gen``): the
    Table 4 workloads to run."""
    for c in calibrations:
        check_calibration(c)
    if not calibrations or len(set(calibrations)) != len(calibrations):
        raise SpecError(f"calibrations wants distinct names, got {list(calibrations)!r}", source="<rubick>",
                        field="calibrations")
    for v in variants:
        if v not in TABLE4:
            raise SpecError(f"unknown Table 4 variant {v!r}; known: {', '.join(TABLE4)}", source="<rubick>",
                            field="variants")
    for w in sources:
        if w not in ("trace", "gen"):
            raise SpecError(f"unknown Table 4 source {w!r}; known: trace, gen", source="<rubick>", field="sources")
    seed_list = seed_values(seeds, seed, suite="rubick")
    folder = Path(traces) / "rubick" / "workloads" if traces else None
    have_trace = folder is not None and all((folder / f"workload-{v}.csv").is_file() for v in TABLE4)
    cases = over_seeds(lambda s: _seeded_cases(folder, sweeps, paper_settings, s, tuple(calibrations),
                                               tuple(variants), tuple(sources)), seed_list)
    note = "" if have_trace else " (trace files not found: generator workloads only)"
    return Suite("rubick", "Rubick (MLSys'25): Table 4 on rubick-64, the two-job micro-benchmark, load and "
                 "large-model sweeps" + note, tuple(cases), reproduce=reproduce,
                 paper="Rubick: Exploiting Job Reconfigurability for Deep Learning Cluster Scheduling (MLSys'25)")


def _seeded_cases(folder: Path | None, sweeps: bool, paper_settings: bool, seed: int,
                  calibrations: tuple[str, ...] = (DEFAULT_CALIBRATION,), variants: tuple[str, ...] = tuple(TABLE4),
                  kinds: tuple[str, ...] = ("trace", "gen")) -> list[ReplayCase]:
    cases: list[ReplayCase] = []
    sources: dict[str, WorkloadSource] = {}
    for variant in TABLE4:
        if folder is not None and (folder / f"workload-{variant}.csv").is_file():
            sources[f"{variant}-trace"] = WorkloadSource(trace=str(folder / f"workload-{variant}.csv"),
                                                         trace_format="rubick", seed=seed)
        sources[f"{variant}-gen"] = WorkloadSource(workload=f"rubick-{variant}", seed=seed)
    for cal in calibrations:
        prefix = "" if cal == DEFAULT_CALIBRATION else f"cal={cal}/"
        for label, src in sources.items():
            variant, kind = label.split("-")
            if variant not in variants or kind not in kinds:
                continue
            for policy in TABLE4[variant]:
                cases.append(ReplayCase(src, policy, seed=seed, label=f"{prefix}{label}/{policy}",
                                        calibration=cal))
    if sweeps:
        base = sources.get("base-trace", sources["base-gen"])
        for f in LOADS:
            src = WorkloadSource(**{**_fields(base), "load": f})
            cases += [ReplayCase(src, p, seed=seed, label=f"load={f:g}/{p}") for p in ("rubick", "synergy")]
        for share in LARGE_SHARES:
            src = WorkloadSource(workload="rubick-base", seed=seed, params={"large_share": share})
            cases += [ReplayCase(src, p, seed=seed, label=f"large={share:g}/{p}") for p in ("rubick", "synergy")]
            if paper_settings:  # Fig. 11's "large": the LLaMA models only (the paper's definition)
                src = WorkloadSource(workload="rubick-base", seed=seed,
                                     params={"large_share": share, "large_models": "llama"})
                cases += [ReplayCase(src, p, seed=seed, label=f"large-llama={share:g}/{p}")
                          for p in ("rubick", "synergy")]
    return cases


def _fields(src: WorkloadSource) -> dict[str, Any]:
    return {k: getattr(src, k) for k in ("workload", "trace", "trace_format", "seed", "params")}


def reproduce(results: Mapping[str, Mapping[str, Any]]) -> list[ReproRow]:
    """Our figures beside the paper's (see ``docs/REPRODUCTION.md`` for why they differ)."""
    rows: list[ReproRow] = []
    for label in sorted({k.rsplit("/", 1)[0] for k in results if k.split("/")[0].split("-")[0] in TABLE4}):
        variant = label.split("-")[0]
        what = "trace" if label.endswith("trace") else "generator"
        for policy, (avg, p99, mk) in TABLE4[variant].items():
            m = results.get(f"{label}/{policy}")
            if m is None:
                continue
            for name, paper, ours in (("avg JCT", avg, m["avg_jct"]), ("P99 JCT", p99, m["p99_jct"]),
                                      ("makespan", mk, m["makespan"])):
                rows.append(ReproRow(f"{variant.upper()} ({what}) {policy} {name}", paper, ours / H, "h",
                                     _note(m)))
            for cls in ("guaranteed", "best-effort") if variant == "mt" else ():
                c = m.get("classes", {}).get(cls)
                paper_c = TABLE4_MT_CLASSES.get((policy, cls))
                if c is not None and paper_c is not None:
                    rows.append(ReproRow(f"MT ({what}) {policy} {cls} avg JCT", paper_c[0], c["avg_jct"] / H, "h"))
                    rows.append(ReproRow(f"MT ({what}) {policy} {cls} P99 JCT", paper_c[1], c["p99_jct"] / H, "h"))
        rub = results.get(f"{label}/rubick")
        for policy in TABLE4[variant]:
            m = results.get(f"{label}/{policy}")
            if policy != "rubick" and m is not None and rub is not None and rub["avg_jct"] > 0:
                rows.append(ReproRow(f"{variant.upper()} ({what}) avg JCT {policy} / Rubick",
                                     round(TABLE4[variant][policy][0] / TABLE4[variant]["rubick"][0], 2),
                                     m["avg_jct"] / rub["avg_jct"], "x"))
    for prefix, points, paper in (("load", LOADS, "grows with load, up to 3.5"),
                                  ("large", LARGE_SHARES, "2.6 -> 3.4 as the share grows")):
        for x in points:
            r, s = results.get(f"{prefix}={x:g}/rubick"), results.get(f"{prefix}={x:g}/synergy")
            if r is not None and s is not None and r["avg_jct"] > 0:
                rows.append(ReproRow(f"avg JCT Synergy / Rubick, {prefix} = {x:g}", paper,
                                     s["avg_jct"] / r["avg_jct"], "x"))
    micro = micro_benchmark()
    for name, paper in MICRO_PAPER.items():
        rows.append(ReproRow(f"micro-benchmark total normalised speedup, {name}", paper, micro[name], "",
                             micro["allocation " + name]))
    rows.append(ReproRow("micro-benchmark: the paper's allocation (T5 3 GPUs, RoBERTa 1) in our model",
                         1.44, micro["paper allocation"], "", "T5 has no 3-GPU plan in our model: it runs on 2"))
    return rows


def _note(m: Mapping[str, Any]) -> str:
    g = m.get("guarantee_violations")
    return "" if not g else f"{g} guarantee violation(s)"


def micro_benchmark() -> dict[str, Any]:
    """Fig. 8: RoBERTa and T5 (each requesting 4 GPUs, 24 CPUs) on one 4-GPU A800 server. Each job's
    throughput is normalised to its rigid plan on the 4 GPUs (RoBERTa ``ga``, T5 ``tp+ga``, the
    artifact's baselines). *Equal split*: 2 GPUs each with its best plan (the paper's simple scheduler
    also re-plans); *rubick*: Rubick's snapshot decision on the two queued jobs; *paper allocation*:
    T5 on 3 GPUs + RoBERTa on 1, each with its best plan."""
    cluster = Cluster(spec_from_dict({
        "name": "a800-1x4", "defaults": {"gpus": 4, "gpu_model": "A800-80GB", "gpu_memory_gb": 80, "cpus": 48,
                                         "host_memory_gb": 800, "pcie_gbps": 32},
        "links": {"machine": {"bandwidth_gbps": 400, "latency_us": 1}, "rack": {"bandwidth_gbps": 100, "latency_us": 2}},
        "racks": 1, "machines_per_rack": 1}, source="<micro-benchmark>"))
    m = cluster.machines[0]
    pm = PerfModel(cluster)
    rigid = {"roberta": parse_plan("ga", 4), "t5": parse_plan("tp+ga", 4)}
    ref = {k: pm.throughput(k, p, {m: 4}, 24) for k, p in rigid.items()}

    def best(model: str, g: int) -> float:
        for k in range(g, 0, -1):  # a curve: the best plan on at most g GPUs
            hit = pm.best_plan(model, {m: k}, 12 * k)
            if hit is not None:
                return hit[1] / ref[model]
        return 0.0

    jobs = tuple(Job(k, Resources(4, 24), iterations=1e6, model=k, plan=p, reconfigurable=True)
                 for k, p in rigid.items())
    alloc = POLICIES["rubick"].decide(Instance(cluster, jobs), seed=0)
    ours = sum(pm.throughput(ja.job_id, ja.plan, ja.gpu_counts, ja.resources.cpus) / ref[ja.job_id] for ja in alloc)
    desc = ", ".join(f"{ja.job_id} {ja.gpus} GPUs {ja.plan.name}" for ja in alloc)
    return {"equal split": best("roberta", 2) + best("t5", 2), "rubick": ours,
            "paper allocation": best("roberta", 1) + best("t5", 3),
            "allocation equal split": "2 GPUs each, best plans", "allocation rubick": desc}


__all__ = ["LARGE_SHARES", "LOADS", "TABLE4", "micro_benchmark", "reproduce", "rubick_suite"]
