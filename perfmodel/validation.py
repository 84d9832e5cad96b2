"""Validation against measured iteration times (the Rubick artifact's ``placements/<model>.csv``).

A table has columns ``exec_plan, placement, iter_time`` (seconds) and optionally ``cpu_threads``
(per GPU worker). ``placement`` has one digit per machine = GPUs on it (``44`` = 2 machines x 4).
A row with ``iter_time <= 0`` is a failed run (the artifact records OOM that way).

:func:`validate_table` fits the 7 parameters on ``fit_rows`` rows chosen deterministically without
looking at the measurements (:func:`choose_fit_rows`: only rows inside our plan space, on regular
placements, i.e. one machine or the same GPU count on every machine, as profiling runs would be; up
to 3 ZeRO-Offload rows spread over (GPUs, machines), then round robin over the other plan kinds,
spread likewise) and predicts the others; errors are relative throughput errors
``|pred - meas| / meas``.
Rows the model cannot express (unknown plan names, placements the cluster cannot hold) are listed,
not predicted. CPUs per job when the table does not say: 8 per GPU with ZeRO-Offload, else 1 per GPU
(the artifact's allocation rule).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

from schedlab.perfmodel.environment import reference_machines
from schedlab.perfmodel.fitting import MIN_OFFLOAD_SAMPLES, Sample, fit, predict
from schedlab.perfmodel.memory import plan_memory_violation
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode, parse_plan
from schedlab.perfmodel.search import structural_problem
from schedlab.perfmodel.zoo import get_model, resolve_name
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import PlanError, SpecError
from schedlab.topology.files import read_text

DEFAULT_FIT_ROWS = 7
OFFLOAD_CPUS_PER_GPU = 8

# Artifact table stem -> (zoo model, global batch override). Tables of models outside the zoo: None.
TABLES: Mapping[str, tuple[str, int | None] | None] = MappingProxyType({
    "vit": ("vit", None), "roberta": ("roberta", None), "bert": ("bert", None), "t5": ("t5", None),
    "gpt2": ("gpt2", None), "llama7": ("llama7", None), "llama30": ("llama30", None),
    "llama7b_bsz16": ("llama7", 16), "t5_3B": None,
})


@dataclass(frozen=True, slots=True)
class Row:
    line: int
    plan_name: str
    placement: str
    iter_time: float
    cpu_threads: int | None
    forward_s: float | None = None  # measured forward time (s) when the table has it and it is > 0


@dataclass(frozen=True, slots=True)
class RowResult:
    line: int
    plan: str
    placement: str
    measured: float       # samples/s
    predicted: float      # samples/s
    error: float          # relative
    fitted: bool
    note: str = ""


@dataclass(frozen=True, slots=True)
class ValidationResult:
    name: str
    model: str
    fit_rows: int
    predicted_rows: int
    avg_error: float      # percent, over predicted rows
    max_error: float      # percent
    fit_rmsle: float
    rows: tuple[RowResult, ...] = field(default=())
    inexpressible: tuple[str, ...] = field(default=())
    failed: tuple[str, ...] = field(default=())
    params: Mapping[str, float] = field(default_factory=dict)

    def summary(self) -> dict:
        return {"avg_error": round(self.avg_error, 2), "max_error": round(self.max_error, 2),
                "fit_rows": self.fit_rows, "predicted_rows": self.predicted_rows}


def read_table(path: str | Path) -> list[Row]:
    """Rows of a placements table; raises :class:`SpecError` naming the file, line and column."""
    p = Path(path)
    text = read_text(p, what="placements table")
    reader = csv.DictReader(text.splitlines())
    missing = {"exec_plan", "placement", "iter_time"} - set(reader.fieldnames or ())
    if missing:
        raise SpecError(f"missing columns {sorted(missing)}", source=str(p), line=1)
    rows = []
    for i, r in enumerate(reader, start=2):
        try:
            t = float(r["iter_time"])
        except (TypeError, ValueError):
            raise SpecError(f"iter_time must be a number, got {r['iter_time']!r}", source=str(p), line=i,
                            column="iter_time") from None
        ct = r.get("cpu_threads")
        rows.append(Row(i, r["exec_plan"].strip(), r["placement"].strip(), t,
                        int(ct) if ct not in (None, "") else None, _forward_seconds(r.get("forward"), t)))
    return rows


def _forward_seconds(value: str | None, iter_time: float) -> float | None:
    """The artifact's ``forward`` column is in ms in some tables and in s in others: a forward time
    larger than the whole iteration (s) must be in ms. 0 / missing = not measured."""
    try:
        f = float(value) if value not in (None, "") else 0.0
    except ValueError:
        return None
    if f <= 0 or iter_time <= 0:
        return None
    return f / 1000.0 if f > iter_time else f


def _counts(placement: str, cluster: Cluster) -> dict[str, int]:
    ms = reference_machines(cluster)
    digits = [int(c) for c in placement if c.isdigit()]
    if not digits or len(digits) != len(placement) or any(d < 1 for d in digits):
        raise PlanError(f"placement {placement!r} is not one digit (>= 1) per machine")
    if len(digits) > len(ms):
        raise PlanError(f"placement {placement!r} needs {len(digits)} machines, the cluster has {len(ms)}")
    per = cluster.max_gpus_per_machine
    if max(digits) > per:
        raise PlanError(f"placement {placement!r} puts more than {per} GPUs on a machine")
    return {ms[i]: d for i, d in enumerate(digits)}


def with_valid_micro_batches(plan: ExecutionPlan, global_batch: int) -> ExecutionPlan:
    """A 3-digit code does not record the 1F1B micro-batch count ``m`` (:func:`parse_plan` assumes
    ``2 p``). A micro-batch has at least one sample, so ``m`` must divide the per-replica batch
    ``b / d``: take the largest such divisor not above ``2 p`` (unchanged when ``d`` does not divide
    ``b``: that row is flagged as outside the plan space anyway)."""
    if plan.pp == 1 or global_batch % plan.dp:
        return plan
    per_replica = global_batch // plan.dp
    if per_replica % plan.micro_batches == 0:
        return plan
    m = max(k for k in range(1, min(per_replica, 2 * plan.pp) + 1) if per_replica % k == 0)
    return replace(plan, micro_batches=m)


def _kind(plan: ExecutionPlan) -> str:
    return "3d" if plan.is_3d else plan.name


def _spread(items: Sequence[int], k: int) -> list[int]:
    """``k`` items evenly spread over ``items`` (deterministic)."""
    if k >= len(items):
        return list(items)
    if k <= 0:
        return []
    pos = np.linspace(0, len(items) - 1, k)
    return [items[int(round(x))] for x in pos]


def regular_placement(counts: Sequence[int]) -> bool:
    """One machine, or the same number of GPUs on every machine (1 or an even number): the
    placements a profiling run would use (``35`` or ``111113`` would not)."""
    c = [int(x) for x in counts if x]
    return len(c) == 1 or (len(set(c)) == 1 and (c[0] == 1 or c[0] % 2 == 0))


def choose_fit_rows(plans: Sequence[ExecutionPlan], n_fit: int,
                    placements: Sequence[Sequence[int]] | None = None,
                    eligible: Sequence[bool] | None = None) -> list[int]:
    """Indices of the rows to fit on (see the module docstring). With ``placements`` (GPUs per
    machine of each row), rows on regular placements (:func:`regular_placement`) are preferred, as
    the few profiling runs of a real deployment would be; within a plan kind, rows are spread over
    (GPU count, machines), a single row being the median one. Rows not ``eligible`` (outside the plan
    space: the model cannot express them) are taken only when nothing else is left. The measured
    values are never looked at."""
    def key(i: int) -> tuple:
        m = len([c for c in placements[i] if c]) if placements is not None else 0
        return (plans[i].gpus, m, i)

    def prefer_regular(idx: list[int]) -> list[int]:
        if placements is None:
            return idx
        return sorted([i for i in idx if regular_placement(placements[i])] or idx, key=key)

    def take(items: list[int], k: int) -> list[int]:
        return [items[len(items) // 2]] if k == 1 and placements is not None and items else _spread(items, k)

    order = sorted(range(len(plans)), key=key)
    if eligible is not None:
        late = [i for i in order if not eligible[i]]
        order = [i for i in order if eligible[i]]
    else:
        late = []
    off = [i for i in order if plans[i].zero is ZeroMode.OFFLOAD]
    off_pool = prefer_regular(off)
    chosen = take(off_pool, min(MIN_OFFLOAD_SAMPLES, len(off_pool), n_fit))
    kinds: dict[str, list[int]] = {}
    for i in order:
        if i not in chosen and plans[i].zero is not ZeroMode.OFFLOAD:
            kinds.setdefault(_kind(plans[i]), []).append(i)
    kinds = {k: prefer_regular(v) for k, v in kinds.items()}
    left = n_fit - len(chosen)
    if left > 0 and kinds:
        share = {k: 0 for k in kinds}
        ks = sorted(kinds)
        j = 0
        while left > 0 and any(share[k] < len(kinds[k]) for k in ks):
            k = ks[j % len(ks)]
            if share[k] < len(kinds[k]):
                share[k] += 1
                left -= 1
            j += 1
        for k in ks:
            chosen += take(kinds[k], share[k])
    rest = [i for i in order if i not in chosen]  # still short: take the others (regular first)
    rest = [i for i in rest if placements is None or regular_placement(placements[i])] + \
        [i for i in rest if placements is not None and not regular_placement(placements[i])]
    rest += late
    chosen += rest[:max(0, n_fit - len(chosen))]
    return sorted(chosen)


def validate_table(path: str | Path, cluster: Cluster, *, name: str | None = None, model: str | None = None,
                   global_batch: int | None = None, fit_rows: int = DEFAULT_FIT_ROWS, seed: int = 0,
                   starts: int = 8, profiled_forward: bool = False) -> ValidationResult:
    """Fit on ``fit_rows`` rows of the table at ``path`` and predict the rest (see module docstring).

    ``profiled_forward``: use each row's measured ``forward`` time instead of the zoo's linearly scaled
    one where the table has it (the artifact's own validation feeds profiled forward times), to
    separate the forward-scaling error from the rest of the model."""
    p = Path(path)
    name = name or p.stem
    if model is None:
        entry = TABLES.get(name)
        if entry is None:
            key = resolve_name(name)
            if key is None:
                raise SpecError(f"table {name!r} is not of a zoo model", source=str(p))
            entry = (key, None)
        model, gb = entry
        global_batch = global_batch or gb
    spec = get_model(model)
    batch = int(global_batch or spec.global_batch)
    samples: list[Sample] = []
    meta: list[tuple[Row, str]] = []
    expressible: list[bool] = []
    inexpressible: list[str] = []
    failed: list[str] = []
    for r in read_table(p):
        try:
            counts = _counts(r.placement, cluster)
            plan = with_valid_micro_batches(parse_plan(r.plan_name, sum(counts.values())), batch)
        except PlanError as e:
            inexpressible.append(f"line {r.line}: {r.plan_name} @ {r.placement}: {e}")
            continue
        mem = plan_memory_violation(spec.name, batch, plan, min(cluster.machine(m).gpu_memory_gb for m in counts))
        if r.iter_time <= 0:
            failed.append(f"line {r.line}: {r.plan_name} @ {r.placement} failed in the measurement; "
                          f"our memory model: {'does not fit' if mem else 'fits'}")
            continue
        cpus = (r.cpu_threads * plan.gpus if r.cpu_threads else
                (OFFLOAD_CPUS_PER_GPU if plan.zero is ZeroMode.OFFLOAD else 1) * plan.gpus)
        note = structural_problem(spec, plan, tuple(counts.values()), batch) or ""
        expressible.append(not note)
        if mem:
            note = (note + "; " if note else "") + "memory model: does not fit"
        samples.append(Sample(plan, counts, cpus, batch / r.iter_time, batch,
                              r.forward_s if profiled_forward else None))
        meta.append((r, note))
    if len(samples) < 2:
        raise SpecError(f"table {name!r} has {len(samples)} usable rows; need at least 2", source=str(p))
    n_fit = min(fit_rows, len(samples) - 1)
    fit_idx = choose_fit_rows([s.plan for s in samples], n_fit,
                              [tuple(s.placement.values()) for s in samples], expressible)
    fit_set = [samples[i] for i in fit_idx]
    n_off = sum(s.plan.zero is ZeroMode.OFFLOAD for s in fit_set)
    res = fit(spec, fit_set, cluster, seed=seed, starts=starts, require_offload=n_off >= MIN_OFFLOAD_SAMPLES) \
        if len(fit_set) >= 7 else None
    if res is None:
        raise SpecError(f"table {name!r}: {len(fit_set)} rows to fit on; need 7", source=str(p))
    pred = predict(spec, res.params, samples, cluster)
    rows = []
    for i, (s, (r, note)) in enumerate(zip(samples, meta, strict=True)):
        err = abs(pred[i] - s.throughput) / s.throughput
        rows.append(RowResult(r.line, r.plan_name, r.placement, s.throughput, float(pred[i]), float(err),
                              i in fit_idx, note))
    test = [x.error for x in rows if not x.fitted]
    return ValidationResult(name=name, model=spec.name, fit_rows=len(fit_idx), predicted_rows=len(test),
                            avg_error=100 * float(np.mean(test)), max_error=100 * float(np.max(test)),
                            fit_rmsle=res.rmsle, rows=tuple(rows), inexpressible=tuple(inexpressible),
                            failed=tuple(failed), params=res.params.to_dict())


def validate_directory(directory: str | Path, cluster: Cluster, **kw) -> tuple[dict[str, ValidationResult],
                                                                               dict[str, str]]:
    """Validate every known table in ``directory``; returns (results, skipped {name: reason})."""
    d = Path(directory)
    if not d.is_dir():
        raise SpecError("placements directory not found (the Rubick traces are not present)", source=str(d))
    results: dict[str, ValidationResult] = {}
    skipped: dict[str, str] = {}
    for f in sorted(d.glob("*.csv")):
        if f.stem in TABLES and TABLES[f.stem] is None:
            skipped[f.stem] = "model not in the zoo (T5-3B has no dimensions in the sources)"
            continue
        try:
            results[f.stem] = validate_table(f, cluster, **kw)
        except SpecError as e:
            skipped[f.stem] = str(e)
    if not results:
        raise SpecError("no placements table could be validated", source=str(d))
    return results, skipped


def read_samples(path: str | Path, cluster: Cluster, *, model: str | None = None) -> tuple[str, list[Sample]]:
    """Fitting samples from a CSV: ``exec_plan`` (or ``plan``), ``placement`` (digits per machine),
    ``throughput`` (samples/s) or ``iter_time`` (s), optional ``cpus`` (job total) or ``cpu_threads``
    (per GPU), ``global_batch``, and ``model`` (unless given). One model per file.
    Rows with a non-positive measurement are skipped (failed runs)."""
    p = Path(path)
    text = read_text(p, what="fit samples")
    reader = csv.DictReader(text.splitlines())
    cols = set(reader.fieldnames or ())
    plan_col = "exec_plan" if "exec_plan" in cols else "plan"
    if plan_col not in cols or "placement" not in cols or not ({"throughput", "iter_time"} & cols):
        raise SpecError("need columns exec_plan (or plan), placement and throughput or iter_time", source=str(p),
                        line=1)
    if model is None and "model" not in cols:
        raise SpecError("no model column: give the model", source=str(p), line=1, column="model")
    names: set[str] = set()
    samples: list[Sample] = []
    for i, r in enumerate(reader, start=2):
        name = model or r["model"]
        spec = get_model(name)
        names.add(spec.name)
        try:
            counts = _counts(r["placement"].strip(), cluster)
            plan = parse_plan(r[plan_col], sum(counts.values()))
        except PlanError as e:
            raise SpecError(str(e), source=str(p), line=i, column="placement/plan") from None
        b = int(r["global_batch"]) if r.get("global_batch") else spec.global_batch
        plan = with_valid_micro_batches(plan, b)
        try:
            tput = float(r["throughput"]) if r.get("throughput") else b / float(r["iter_time"]) \
                if float(r["iter_time"]) > 0 else 0.0
        except (ValueError, ZeroDivisionError):
            raise SpecError("throughput / iter_time must be numbers", source=str(p), line=i,
                            column="throughput") from None
        if tput <= 0:
            continue
        if r.get("cpus"):
            cpus = int(r["cpus"])
        elif r.get("cpu_threads"):
            cpus = int(r["cpu_threads"]) * plan.gpus
        else:
            cpus = (OFFLOAD_CPUS_PER_GPU if plan.zero is ZeroMode.OFFLOAD else 1) * plan.gpus
        samples.append(Sample(plan, counts, cpus, tput, b))
    if len(names) > 1:
        raise SpecError(f"samples of several models {sorted(names)}: one model per file", source=str(p),
                        column="model")
    if not names:
        raise SpecError("no samples", source=str(p))
    return names.pop(), samples
