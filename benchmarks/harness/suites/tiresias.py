"""The Tiresias reproduction suite (``schedlab bench tiresias``; ``docs/REPRODUCTION.md`` § Tiresias).

Parts (option ``parts``, all by default):

* ``reference`` — the Tiresias artifact's own figures (``../shared/docs/tiresias-reference.md``):
  three Philly virtual clusters x ``fifo``, ``dlas-gpu``, ``shortest``, ``dlas-gpu-gittins`` under
  ``--semantics tiresias`` on the artifact's cluster specs (shipped here as ``tiresias_*.csv``), plus
  VC 103959 (``dlas-gpu``'s demotion-time rounding). Ours must be within 0.5 % (we get them exactly).
* ``testbed`` — the paper's 480-job testbed workload (``tiresias-480``) on ``tiresias-60``: 2D-LAS and
  2D-Gittins (K = 2, 3,200 GPU-s, knob off, as the testbed) vs YARN-CS, Best-effort, SRTF, SRSF,
  Gandiva-like, under ``realistic`` semantics (with the cost of a preemption Tiresias measured,
  ``--costs tiresias``) and ``tiresias`` semantics; under ``realistic`` also 2D-LAS with PACKLIMIT
  learned from the measured slowdowns (``2d-las-learned``).
* ``philly`` — the whole Philly table (82,247 jobs) on the ``philly`` preset, same policies (2D-LAS /
  2D-Gittins with the paper's simulation defaults: K = 2, 1 GPU-hour), both semantics.
* ``loaded`` — the same with arrivals compressed ``load``-fold (default 5: offered load about 0.78 of
  the cluster's GPUs; the table's own arrivals offer 0.16, so FIFO never queues there). The trace is
  fixed and, under ``tiresias`` semantics, every policy deterministic, so its seeds would be replicas:
  with ``resample="bootstrap"`` (the default) each seed keeps the table's arrivals and draws every
  arrival's job with replacement from the table's jobs (``WorkloadSource.resample``), labels
  ``philly-x5-rs/...``; ``resample="none"`` runs the table as recorded (``philly-x5/...``). The same
  holds for ``loaded-paper`` (``philly-paper-load-rs/...`` / ``philly-paper-load/...``) and
  ``sensitivity`` (``sensitivity-x5-rs/...`` / ``sensitivity-x5/...``); ``philly`` (own arrivals: no
  contention, every policy ties) always replays the table as recorded. Option ``costs``: the preemption
  cost of the compared policies' ``realistic`` cases, ``tiresias`` (the measured cost, the default) and/or
  ``free`` (labels ``.../realistic-free/...``: the same cases with free preemption, to measure what the
  cost does to each policy).
* ``sensitivity`` — 2D-LAS and 2D-Gittins on the loaded replay (``tiresias`` semantics; resampled per seed
  as the ``loaded`` part, over its ``philly-x5-rs/tiresias/POLICY``): K = 2, 3, 4 (thresholds 1 h, then
  doubling), the threshold 0.5 / 1 / 2 / 4 GPU-hours, PROMOTEKNOB 1, 2, 4, 8.
* ``sensitivity-testbed`` — the same variants on the testbed workload (seconds instead of the loaded
  replay's tens of minutes per run), with its own base (K = 2, 1 h, no knob), and for 2D-Gittins the
  knob again with our same-queue preemption margin 0.5 (``margin=0.5``, ``margin=0.5,knob=K``: does the
  knob hurt through same-queue swaps?); under ``tiresias``
  semantics, and (when ``semantics`` includes it) again under ``realistic`` with ``--costs tiresias``
  (``sensitivity-testbed-realistic/...``).

``traces`` is the folder of the public traces (``philly/sia_philly_jobs.csv``,
``tiresias/yarn-gput1000.csv``); the package never needs it, the suite's trace parts do.

Run it: ``schedlab bench tiresias`` (the harness runner), or from Python::

    from schedlab.benchmarks.harness import run_suite_replays
    from schedlab.benchmarks.harness.suites.tiresias import tiresias_suite
    results, rows = run_suite_replays(tiresias_suite(parts=("reference", "testbed")))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.cases import ReplayCase, ReproRow, Suite
from schedlab.benchmarks.harness.suites.seeds import SEED_TAG, over_seeds, seed_values
from schedlab.benchmarks.workloads.source import RESAMPLE, WorkloadSource
from schedlab.topology.errors import SpecError

HERE = Path(__file__).resolve().parent
SPEC_8x4 = "tiresias_1x8x4.csv"   # 1 switch x 8 nodes x 4 GPUs
SPEC_2x4x8 = "tiresias_2x4x8.csv"  # 2 switches x 4 nodes x 8 GPUs
#: avg JCT (s) measured with the artifact (tiresias-reference.md): VC -> (cluster spec, {schedule: avg JCT})
REFERENCE: Mapping[str, tuple[str, Mapping[str, float]]] = {
    "0e4a51": (SPEC_8x4, {"fifo": 3_179_904.35, "dlas-gpu": 800_816.83, "shortest": 375_894.94,
                          "dlas-gpu-gittins": 777_458.94}),
    "7f04ca": (SPEC_2x4x8, {"fifo": 3_361_484.11, "dlas-gpu": 845_972.73, "shortest": 300_789.53,
                            "dlas-gpu-gittins": 472_929.37}),
    "2869ce": (SPEC_2x4x8, {"fifo": 220_700.31, "dlas-gpu": 143_913.24, "shortest": 123_130.22,
                            "dlas-gpu-gittins": 211_614.63}),
    "103959": (SPEC_8x4, {"dlas-gpu": 43_239.01}),
}
REFERENCE_TOLERANCE = 0.005
#: the artifact's ``gandiva`` (gandiva-reference.md): trace -> (cluster spec, avg JCT, median JCT, jobs
#: finished, makespan); 60_job is the artifact's own trace on its cluster_spec.csv
GANDIVA_REFERENCE: Mapping[str, tuple[str, float, float, int, float]] = {
    "2869ce": (SPEC_2x4x8, 202_897.30, 54_879.0, 422, 7_658_751.0),
    "0e4a51": (SPEC_8x4, 1_403_027.49, 900_480.0, 1_435, 11_788_388.0),
    "60_job": ("cluster_spec.csv", 185.87, 131.5, 60, 3_289.0),
}
PHILLY_TABLE = "philly/sia_philly_jobs.csv"
YARN_GPUT = "tiresias/yarn-gput1000.csv"
POLICIES_COMPARED = ("2d-las", "2d-gittins", "yarn-cs", "best-effort", "srtf", "srsf", "gandiva-like")
PARTS = ("reference", "testbed", "philly", "loaded", "sensitivity", "sensitivity-testbed", "testbed-philly",
         "philly-vc", "loaded-paper")
#: ``tiresias-480-philly``'s duration scale at which 2D-LAS's testbed makespan is the paper's 27,400 s
#: (``python -m schedlab.benchmarks.harness.suites.calibrate scale``: 0.0076351 -> 27,357 s, seed 0)
PHILLY_TESTBED_SCALE = 0.0076351
#: the Philly table's arrival compression at which YARN-CS's average queueing delay is the paper's 4,102 s
#: (Appendix A; ``python -m schedlab.benchmarks.harness.suites.calibrate load``, 6 bisection steps in [1, 5]:
#: 4.193 -> 3,534 s, the nearest; 4.2997 -> 4,914 s; seed 0)
PAPER_LOAD = 4.193
#: the same calibration on the suite's bootstrap draws (``calibrate load --resample bootstrap --seed S --steps 8``),
#: seeds 0-4: 3.1797 (4,055 s), 2.9859 (4,009 s), 2.9302 (4,122 s), 3.3019 (4,021 s), 3.2607 (4,018 s): the draws
#: queue longer than the table, so ``loaded-paper``'s resampled cases (at ``PAPER_LOAD``) are more contended than
#: the paper's; the default is kept (its records were made at it; docs/REPRODUCTION.md § Every "not held")
#: the per-VC part's policies (the artifact's VCs and cluster specs, ``tiresias`` semantics)
VC_POLICIES = ("yarn-cs", "best-effort", "2d-las", "2d-gittins")
#: the label suffix of a resampled trace part (``philly-x5-rs/...``): one bootstrap draw of the table per seed
RESAMPLED_SUFFIX = "-rs"
#: the ``costs`` option: the preemption cost models the ``realistic`` cases run under, and the suffix each
#: adds to the semantics in a label: the cost Tiresias measured (``PREFIX/realistic/...``, the default) and
#: free preemption (``PREFIX/realistic-free/...``: what the measured cost does to each policy)
MEASURED_COST = "tiresias"
COST_LABELS: Mapping[str, str] = {MEASURED_COST: "", "free": "-free"}
TESTBED_THRESHOLD = 3200.0  # GPU-s, the paper's testbed (§5.2)
HOUR = 3600.0
#: the loaded replay's SRTF/SRSF refresh every running job's key at every event (about 1,000 running):
#: 19-60 minutes each on one core (docs/REPRODUCTION.md), past the harness's 30-minute default
ORACLE_HARD_LIMIT_S = 4 * HOUR


def spec_path(name: str) -> str:
    return str(HERE / name)


def vc_source(traces: str | Path, vc: str, spec: str) -> WorkloadSource:
    """One Philly virtual cluster as the artifact reads it (its trace, its cluster spec)."""
    return WorkloadSource(trace=str(Path(traces) / PHILLY_TABLE), trace_format="philly", vc=vc,
                          cluster=spec_path(spec))


def reference_params(schedule: str, traces: str | Path) -> dict[str, Any]:
    return {"distribution": str(Path(traces) / YARN_GPUT)} if schedule == "dlas-gpu-gittins" else {}


def _reference_cases(traces: str | Path) -> list[ReplayCase]:
    return [ReplayCase(vc_source(traces, vc, spec), sched, reference_params(sched, traces), semantics="tiresias",
                       label=f"reference/{vc}/{sched}")
            for vc, (spec, figs) in REFERENCE.items() for sched in figs] + [
        ReplayCase(vc_source(traces, vc, ref[0]), "gandiva", semantics="tiresias", label=f"reference/{vc}/gandiva")
        for vc, ref in GANDIVA_REFERENCE.items() if vc in REFERENCE]


def _compared(source: WorkloadSource, prefix: str, semantics: Iterable[str], las_params: Mapping[str, Any],
              costs: str | None, oracle_hard_limit_s: float | None = None,
              policies: Iterable[str] = POLICIES_COMPARED,
              cost_models: Iterable[str] = (MEASURED_COST,)) -> list[ReplayCase]:
    """The compared policies on ``source`` under each of ``semantics``; under ``realistic`` once per cost
    model of ``cost_models``: the measured one (``costs``, labels ``PREFIX/realistic/...``) and/or
    ``free`` (labels ``PREFIX/realistic-free/...``: the same cases with preemption free)."""
    out = []
    policies = tuple(policies)
    for sem in semantics:
        runs = [(sem, None)] if sem != "realistic" else [
            (sem + COST_LABELS[m], costs if m == MEASURED_COST else m) for m in cost_models]
        for tag, cost in runs:
            for pol in (p for p in POLICIES_COMPARED if p in policies):
                params = dict(las_params) if pol in ("2d-las", "2d-gittins") else {}
                out.append(ReplayCase(source, pol, params, semantics=sem, costs=cost, label=f"{prefix}/{tag}/{pol}",
                                      hard_limit_s=oracle_hard_limit_s if pol in ("srtf", "srsf") else None))
            # placement matters only under realistic: PACKLIMIT learned (the measured cost only)
            if tag == "realistic" and "2d-las" in policies:
                out.append(ReplayCase(source, "2d-las", {**las_params, "learn_packlimit": True}, semantics=sem,
                                      costs=cost, label=f"{prefix}/{tag}/2d-las-learned"))
    return out


def _sensitivity_cases(source: WorkloadSource, prefix: str, *, with_base: bool = False,
                       semantics: str = "tiresias", costs: str | None = None) -> list[ReplayCase]:
    out = []
    for pol in ("2d-las", "2d-gittins"):
        variants: list[tuple[str, dict[str, Any]]] = [("K=2", {"threshold": HOUR})] if with_base else []
        variants += [("K=3", {"queues": 3, "threshold": HOUR}), ("K=4", {"queues": 4, "threshold": HOUR})]
        variants += [(f"threshold={h:g}h", {"threshold": h * HOUR}) for h in (0.5, 2.0, 4.0)]
        variants += [(f"knob={k}", {"knob": float(k)}) for k in (1, 2, 4, 8)]
        if with_base and pol == "2d-gittins":  # PROMOTEKNOB with our same-queue margin (tests why it hurts)
            variants += [("margin=0.5", {"threshold": HOUR, "preempt_margin": 0.5})]
            variants += [(f"margin=0.5,knob={k}", {"knob": float(k), "preempt_margin": 0.5}) for k in (1, 2, 4, 8)]
        out += [ReplayCase(source, pol, p, semantics=semantics, costs=costs, label=f"{prefix}/{pol}/{name}")
                for name, p in variants]
    return out


def tiresias_suite(*, traces: str = "../shared/traces", parts: Iterable[str] = PARTS,
                   semantics: Iterable[str] = ("realistic", "tiresias"), load: float = 5.0, seed: int = 0,
                   seeds: int | Sequence[int] = 1, policies: Iterable[str] = POLICIES_COMPARED,
                   paper_load: float = PAPER_LOAD, resample: str = "bootstrap",
                   costs: Iterable[str] = (MEASURED_COST,)) -> Suite:
    """The suite (see the module docstring); ``parts`` selects experiments, ``load`` the loaded replay's
    time compression, ``seeds`` the seeds every non-artifact case runs under (a count from ``seed`` or
    the seeds; the workload's and the policy's seed move together; the ``reference`` part, the
    artifact's deterministic figures, runs once), ``policies`` the compared policies of the
    ``testbed``/``philly``/``loaded``/``testbed-philly``/``loaded-paper`` parts, ``paper_load`` the
    compression of ``loaded-paper``, ``resample`` how ``loaded``, ``loaded-paper`` and ``sensitivity`` draw a
    seed's workload from the table (``bootstrap``: arrivals kept, jobs drawn with replacement, labels
    ``...-rs/``; ``none``: the table as recorded), ``costs`` the preemption cost models of the compared
    policies' ``realistic`` cases (``tiresias``: the cost Tiresias measured, labels ``.../realistic/...``;
    ``free``: none, labels ``.../realistic-free/...``; either or both).

    The paper's own settings, each its own part: ``testbed-philly`` (the testbed's 480 jobs with
    durations drawn from the Philly table by GPU count, scaled to the paper's 27,400 s makespan),
    ``philly-vc`` (the Philly table per virtual cluster, as the paper simulates it: the artifact's VCs
    and cluster specs, ``VC_POLICIES`` under ``tiresias`` semantics) and ``loaded-paper`` (the table at
    the compression where YARN-CS queues 4,102 s on average)."""
    parts = tuple(parts)
    semantics = tuple(semantics)
    bad = [p for p in parts if p not in PARTS]
    if bad:
        raise SpecError(f"unknown part {bad[0]!r}; known: {', '.join(PARTS)}", source="<suite tiresias>",
                        field="parts")
    bad = [s for s in semantics if s not in ("realistic", "tiresias")]
    if bad or not semantics:
        raise SpecError(f"semantics must be among realistic, tiresias; got {semantics!r}",
                        source="<suite tiresias>", field="semantics")
    if not load > 0 or not paper_load > 0:
        raise SpecError(f"load and paper_load must be > 0, got {load!r}, {paper_load!r}", source="<suite tiresias>",
                        field="load")
    policies = tuple(policies)
    bad = [p for p in policies if p not in POLICIES_COMPARED]
    if bad or not policies:
        raise SpecError(f"policies must be among {', '.join(POLICIES_COMPARED)}; got {policies!r}",
                        source="<suite tiresias>", field="policies")
    if resample not in RESAMPLE:
        raise SpecError(f"resample must be one of {', '.join(RESAMPLE)}, got {resample!r}", source="<suite tiresias>",
                        field="resample")
    costs = tuple(costs)
    bad = [c for c in costs if c not in COST_LABELS]
    if bad or not costs or len(set(costs)) != len(costs):
        raise SpecError(f"costs must be distinct among {', '.join(COST_LABELS)}; got {costs!r}",
                        source="<suite tiresias>", field="costs")
    seed_list = seed_values(seeds, seed, suite="tiresias")
    cases: list[ReplayCase] = _reference_cases(traces) if "reference" in parts else []
    cases += over_seeds(lambda s: _seeded_cases(traces, parts, semantics, load, s, policies, paper_load, resample,
                                                costs), seed_list)
    return Suite("tiresias", "Tiresias (NSDI'19): the artifact's figures, the testbed and Philly comparisons, "
                 "sensitivity", tuple(cases), reproduce=lambda r: reproduce(r, load=load), paper=PAPER)


def resampled_prefix(prefix: str, resample: str) -> str:
    """The label prefix of a trace part under ``resample`` (the table as recorded keeps the plain one)."""
    return prefix if resample == "none" else f"{prefix}{RESAMPLED_SUFFIX}"


def _seeded_cases(traces: str, parts: tuple[str, ...], semantics: tuple[str, ...], load: float,
                  seed: int, policies: tuple[str, ...], paper_load: float, resample: str,
                  costs: tuple[str, ...] = (MEASURED_COST,)) -> list[ReplayCase]:
    cases: list[ReplayCase] = []
    table = str(Path(traces) / PHILLY_TABLE)
    philly = WorkloadSource(trace=table, trace_format="philly", cluster="philly", seed=seed)
    loaded = WorkloadSource(trace=table, trace_format="philly", cluster="philly", seed=seed, load=load)
    loaded_rs = dataclasses.replace(loaded, resample=resample)
    sim_defaults = {"threshold": HOUR}
    if "testbed" in parts:
        testbed = WorkloadSource(workload="tiresias-480", seed=seed)
        cases += _compared(testbed, "testbed", semantics, {"threshold": TESTBED_THRESHOLD}, "tiresias",
                           policies=policies, cost_models=costs)
        if "tiresias" in semantics:  # the artifact's Gandiva (it models no placement: tiresias semantics only)
            cases.append(ReplayCase(testbed, "gandiva", semantics="tiresias", label="testbed/tiresias/gandiva"))
    if "testbed-philly" in parts:
        src = WorkloadSource(workload="tiresias-480-philly", seed=seed,
                             params={"duration_scale": PHILLY_TESTBED_SCALE, "table": table})
        cases += _compared(src, "testbed-philly", semantics, {"threshold": TESTBED_THRESHOLD}, "tiresias",
                           policies=policies, cost_models=costs)
    if "philly" in parts:
        cases += _compared(philly, "philly", semantics, sim_defaults, "tiresias", policies=policies,
                           cost_models=costs)
    if "loaded" in parts:
        cases += _compared(loaded_rs, resampled_prefix(f"philly-x{load:g}", resample), semantics, sim_defaults,
                           "tiresias", ORACLE_HARD_LIMIT_S, policies=policies, cost_models=costs)
    if "loaded-paper" in parts:
        paper = WorkloadSource(trace=table, trace_format="philly", cluster="philly", seed=seed, load=paper_load,
                               resample=resample)
        cases += _compared(paper, resampled_prefix("philly-paper-load", resample), semantics, sim_defaults, "tiresias",
                           ORACLE_HARD_LIMIT_S, policies=policies, cost_models=costs)
    if "philly-vc" in parts:
        for vc, (spec, _) in REFERENCE.items():
            src = dataclasses.replace(vc_source(traces, vc, spec), seed=seed)
            cases += [ReplayCase(src, pol, sim_defaults if pol.startswith("2d-") else {}, semantics="tiresias",
                                 label=f"philly-vc/{vc}/{pol}") for pol in VC_POLICIES]
    if "sensitivity" in parts:
        cases += _sensitivity_cases(loaded_rs, resampled_prefix(f"sensitivity-x{load:g}", resample))
    if "sensitivity-testbed" in parts:
        testbed = WorkloadSource(workload="tiresias-480", seed=seed)
        cases += _sensitivity_cases(testbed, "sensitivity-testbed", with_base=True)
        if "realistic" in semantics:  # placement-dependent speed and the measured preemption cost
            cases += _sensitivity_cases(testbed, "sensitivity-testbed-realistic", with_base=True,
                                        semantics="realistic", costs="tiresias")
    return [dataclasses.replace(c, seed=seed) for c in cases]


PAPER = ("Tiresias: A GPU Cluster Manager for Distributed Deep Learning (NSDI'19) §5.2-5.4; the artifact's "
         "figures from docs/tiresias-reference.md")


# ------------------------------------------------------------------ reproduction rows
def _get(results: Mapping[str, Mapping[str, Any]], label: str, key: str) -> float | None:
    m = results.get(label)
    v = m.get(key) if m is not None else None
    return float(v) if v is not None else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b not in (None, 0.0) else None


def reproduce(results: Mapping[str, Mapping[str, Any]], *, load: float = 5.0) -> list[ReproRow]:
    """Our figures beside the paper's / the artifact's (rows only for the parts that ran)."""
    rows: list[ReproRow] = []
    for vc, (_, figs) in REFERENCE.items():
        for sched, fig in figs.items():
            ours = _get(results, f"reference/{vc}/{sched}", "avg_jct")
            if ours is not None:
                off = abs(ours / fig - 1)
                rows.append(ReproRow(f"artifact avg JCT, VC {vc}, {sched}", fig, ours, "s",
                                     f"{off:.4%} off (tolerance {REFERENCE_TOLERANCE:.1%})"))
    for vc, ref in GANDIVA_REFERENCE.items():
        ours = _get(results, f"reference/{vc}/gandiva", "avg_jct") if vc in REFERENCE else None
        if ours is not None:
            rows.append(ReproRow(f"artifact avg JCT, VC {vc}, gandiva", ref[1], ours, "s",
                                 f"{abs(ours / ref[1] - 1):.4%} off (tolerance {REFERENCE_TOLERANCE:.1%})"))
    for sem in ("realistic", "realistic-free", "tiresias"):
        rows += _compare_rows(results, f"testbed/{sem}", f"testbed, {sem}", TESTBED_PAPER)
        rows += _compare_rows(results, f"philly/{sem}", f"Philly table, {sem}", PHILLY_PAPER)
        rows += _compare_rows(results, f"philly-x{load:g}/{sem}", f"Philly x{load:g} load, {sem}", PHILLY_PAPER)
        rows += _compare_rows(results, f"philly-x{load:g}{RESAMPLED_SUFFIX}/{sem}",
                              f"Philly x{load:g} load, resampled, {sem}", PHILLY_PAPER)
    loaded_base = {rs: f"philly-x{load:g}{rs}/tiresias" for rs in ("", RESAMPLED_SUFFIX)}  # the loaded part's cases
    for prefix in (f"sensitivity-x{load:g}", f"sensitivity-x{load:g}{RESAMPLED_SUFFIX}", "sensitivity-testbed",
                   "sensitivity-testbed-realistic"):
        if prefix.startswith("sensitivity-testbed"):
            base = {pol: _get(results, f"{prefix}/{pol}/K=2", "avg_jct") for pol in ("2d-las", "2d-gittins")}
        else:
            of = loaded_base[RESAMPLED_SUFFIX if prefix.endswith(RESAMPLED_SUFFIX) else ""]
            base = {pol: _get(results, f"{of}/{pol}", "avg_jct") for pol in ("2d-las", "2d-gittins")}
        for label in sorted(k for k in results if k.startswith(prefix + "/") and SEED_TAG not in k):
            _, pol, var = label.split("/")
            paper = {"K=3": 0.99, "K=4": 0.99, "threshold=0.5h": "slightly > 1"}.get(var, "about 1")
            rows.append(ReproRow(f"{prefix}, {pol} {var}: avg JCT / (K=2, 1 h, no knob)", paper,
                                 _ratio(_get(results, label, "avg_jct"), base.get(pol)), "x",
                                 f"p95 {_get(results, label, 'p95_jct')}, "
                                 f"preemptions {_get(results, label, 'preemptions')}"))
    return rows


#: paper figures: quantity -> (numerator policy, denominator policy, metric, paper value)
TESTBED_PAPER = (
    ("avg JCT YARN-CS / 2D-LAS", "yarn-cs", "2d-las", "avg_jct", 5.5),
    ("median JCT YARN-CS / 2D-LAS", "yarn-cs", "2d-las", "median_jct", 27.0),
    ("avg JCT 2D-Gittins / 2D-LAS", "2d-gittins", "2d-las", "avg_jct", 1.06),
    ("avg JCT SRTF / 2D-LAS", "srtf", "2d-las", "avg_jct", 0.74),
    ("makespan YARN-CS / 2D-LAS", "yarn-cs", "2d-las", "makespan", 33270 / 27400),
)
PHILLY_PAPER = (
    ("avg JCT YARN-CS / 2D-LAS", "yarn-cs", "2d-las", "avg_jct", 2.4),
    ("avg JCT Best-effort / 2D-LAS", "best-effort", "2d-las", "avg_jct", 1.5),
    ("avg JCT Gandiva-like / 2D-LAS", "gandiva-like", "2d-las", "avg_jct", 2.0),
    ("median JCT YARN-CS / 2D-LAS", "yarn-cs", "2d-las", "median_jct", 30.8),
    ("median JCT Best-effort / 2D-LAS", "best-effort", "2d-las", "median_jct", 9.0),
    ("avg JCT 2D-Gittins / 2D-LAS", "2d-gittins", "2d-las", "avg_jct", "<= 1"),
    ("avg JCT 2D-Gittins / SRSF", "2d-gittins", "srsf", "avg_jct", "about 1.1"),
)
ABSOLUTE = {"testbed": {"2d-las": {"makespan": 27400.0, "preemptions": 221.0, "avg_queue": "about 1000"},
                        "2d-gittins": {"makespan": 27510.0, "preemptions": 297.0},
                        "srtf": {"makespan": 28070.0, "preemptions": 316.0},
                        "yarn-cs": {"makespan": 33270.0, "avg_queue": "> 8000"}}}


def _compare_rows(results, prefix: str, what: str, paper) -> list[ReproRow]:
    if not any(k.startswith(prefix + "/") for k in results):
        return []
    rows = []
    for quantity, num, den, metric, fig in paper:
        rows.append(ReproRow(f"{what}: {quantity}", fig,
                             _ratio(_get(results, f"{prefix}/{num}", metric), _get(results, f"{prefix}/{den}", metric)),
                             "x"))
    part = prefix.split("/")[0]
    for pol in POLICIES_COMPARED:
        label = f"{prefix}/{pol}"
        if label not in results:
            continue
        for metric in ("avg_jct", "median_jct", "p95_jct", "makespan", "avg_queue", "preemptions"):
            fig = ABSOLUTE.get(part, {}).get(pol, {}).get(metric)
            rows.append(ReproRow(f"{what}: {pol} {metric}", fig, _get(results, label, metric),
                                 "" if metric == "preemptions" else "s"))
    return rows


__all__ = ["COST_LABELS", "GANDIVA_REFERENCE", "MEASURED_COST", "PARTS", "POLICIES_COMPARED", "REFERENCE", "REFERENCE_TOLERANCE", "RESAMPLED_SUFFIX", "reference_params", "reproduce", "resampled_prefix",
           "spec_path", "tiresias_suite", "vc_source"]
