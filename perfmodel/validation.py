r"""Validation of the iteration-time model against measured placement tables, under three protocols.

Rows, categories and the anomaly rule: :mod:`perfmodel.tables`, :mod:`perfmodel.anomalies`. Every
protocol fits on *pool* rows only (inside our plan space, not anomalies), scores rows it did not fit on
(fit rows are never scored), and scores the artifact's own model (:mod:`perfmodel.artifact`) on the
same rows. Error = ``|predicted - measured| / measured`` throughput.

* ``paper`` — the paper's profiling: fit on ``fit_rows`` (7) single-machine pool rows chosen without
  looking at the measurements (:func:`choose_fit_rows`: 3 ZeRO-Offload rows spread over GPU counts,
  then round robin over the plan kinds), score the other single-machine rows. Tables with fewer than
  ``fit_rows + 1`` single-machine pool rows (the LLaMA tables) are not applicable.
* ``holdout`` — fit on every single-machine pool row plus :data:`HOLDOUT_EXTRA` (2) even-split
  multi-machine pool rows (same GPU count on every machine; not ZeRO-Offload when others exist): the
  one on the fewest machines and the one on the most (ties: fewer GPUs, plan name, line), topped up
  along the same order to 7 fit rows where the table has too few single-machine rows (LLaMA); plus,
  where the fit rows lack them, the even-split pipelines on the fewest and the most machines, two
  odd-count DP-family placements (fewest machines with the most GPUs, most machines: the parity term) and,
  where two or more exist, the even-split ZeRO-Offload row on the most machines (``k_offx``); score every
  other row.
* ``kfold`` — ``k``-fold cross-validation (default 5) over all rows, shuffled with ``seed``: each fold's
  rows are scored by a fit on the pool rows of the other folds (each row scored exactly once); a table
  too small for ``k`` folds of at least 7 fit rows (LLaMA-30B) is left one out instead. The
  report gives the pooled mean and the spread (standard deviation of the per-fold averages); the
  parameters reported are those of one more fit on every pool row.

Forward time (``forward``): ``zoo`` scales the zoo's one-sample forward time linearly to the per-GPU
batch (the paper's rule); ``profiled`` reads the measured ``forward`` column *of the fit rows only*
and interpolates it log-log over the per-GPU batch ``b / d`` (linear extrapolation of the end segments;
3D rows keep the zoo's), as a profiler run on the fit configurations would. :data:`FORWARD_DEFAULT`
says which one each table uses (measured: ``docs/perfmodel-validation.md``).

Optimizer step (``optimizer``, issue 24, third round): ``fitted`` (the default) fits ``k_opt`` with the
others; ``profiled`` sets it from the measured ``optimize`` column of the fit rows only
(:func:`profiled_k_opt`), as the paper profiles the optimizer. Measured and not adopted as the default
(``docs/perfmodel.md``, *Decisions made after seeing errors*).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

from schedlab.perfmodel.anomalies import CATEGORIES
from schedlab.perfmodel.artifact import ARTIFACT_MODELS, artifact_iteration_time
from schedlab.perfmodel.environment import odd_counts
from schedlab.perfmodel.fitting import MIN_OFFLOAD_SAMPLES, MIN_SAMPLES, fit, predict
from schedlab.perfmodel.params import PerfParams, default_params
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode
from schedlab.perfmodel.profiling import (  # noqa: F401 - re-exported (public API of this module)
    OPT_PROFILE_SPREAD,
    profiled_forward,
    profiled_k_opt,
)
from schedlab.perfmodel.tables import (  # noqa: F401 - re-exported (public API of this module)
    OFFLOAD_CPUS_PER_GPU,
    TABLES,
    Row,
    Table,
    TableRow,
    load_table,
    read_samples,
    read_table,
    with_valid_micro_batches,
)
from schedlab.perfmodel.zoo import get_model
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError

PROTOCOLS: tuple[str, ...] = ("paper", "holdout", "kfold")
VALIDATION_START = "artifact"  # the calibration validation fits start from (it never saw the whole tables)
DEFAULT_FIT_ROWS = 7
DEFAULT_FOLDS = 5
HOLDOUT_EXTRA = 2
FORWARD_SOURCES: tuple[str, ...] = ("zoo", "profiled")
OPTIMIZER_SOURCES: tuple[str, ...] = ("fitted", "profiled")
# The tables do not record the 1F1B micro-batch count m of PP rows: "2p" = 2 x PP lowered to divide the
# per-replica batch (tables.with_valid_micro_batches), "1" = no micro-batching (the whole per-replica
# batch at once). Where the fit rows hold PP rows, both are fitted and the lower fit RMSLE (on the fit
# rows only) decides, for every row of that fit.
MICRO_BATCH_RULES: tuple[str, ...] = ("2p", "1")
# Which forward time each table uses (kfold and holdout measurements in docs/perfmodel-validation.md;
# "do not use the measured column where it hurts"). Tables not listed: zoo.
FORWARD_DEFAULT: Mapping[str, str] = MappingProxyType({})


class NotApplicable(SpecError):
    """A protocol cannot run on a table (too few rows of the kind it fits on)."""


@dataclass(frozen=True, slots=True)
class RowResult:
    line: int
    plan: str
    placement: str
    measured: float       # samples/s
    predicted: float      # samples/s
    error: float          # relative
    fitted: bool          # a fit row: its prediction is in-sample and it is never scored
    note: str = ""
    category: str = ""    # report category ("anomaly" overrides the base category)
    base_category: str = ""
    anomaly: str = ""
    artifact: float = math.nan        # samples/s by the artifact's model
    artifact_error: float = math.nan
    fold: int = 0


@dataclass(frozen=True, slots=True)
class Fold:
    fit_lines: tuple[int, ...]
    scored_lines: tuple[int, ...]
    params: PerfParams
    rmsle: float
    seconds: float        # wall time of the fit(s)
    micro_batches: str = "2p"  # the 1F1B micro-batch rule chosen on the fit rows (MICRO_BATCH_RULES)


@dataclass(frozen=True, slots=True)
class ValidationResult:
    name: str
    model: str
    fit_rows: int         # rows fitted (kfold: per fold, the largest)
    predicted_rows: int   # rows scored
    avg_error: float      # percent, scored rows that are not anomalies
    max_error: float      # percent
    fit_rmsle: float      # mean over the fits
    rows: tuple[RowResult, ...] = field(default=())
    inexpressible: tuple[str, ...] = field(default=())
    failed: tuple[str, ...] = field(default=())
    params: Mapping[str, float | None] = field(default_factory=dict)
    protocol: str = "paper"
    folds: tuple[Fold, ...] = field(default=())
    forward: str = "zoo"
    forward_unit: str = "none"

    @property
    def scored(self) -> tuple[RowResult, ...]:
        return tuple(r for r in self.rows if not r.fitted)

    def summary(self, predictor: str = "ours") -> dict:
        """``{"avg_error", "max_error", "categories": {CATEGORY: {"rows", "avg_error", "max_error"}}}``
        (percent; model-level figures over scored rows that are not anomalies). ``kfold`` adds
        ``avg_error_sd`` (standard deviation of the per-fold averages) at both levels."""
        return summarise(self, predictor)


def _err(r: RowResult, predictor: str) -> float:
    if predictor not in ("ours", "artifact"):
        raise SpecError(f"predictor must be 'ours' or 'artifact', got {predictor!r}", source="<summary>",
                        field="predictor")
    return r.error if predictor == "ours" else r.artifact_error


def _pct(errs: Sequence[float], how) -> float | None:
    errs = [e for e in errs if math.isfinite(e)]
    return round(100.0 * float(how(errs)), 2) if errs else None


def _fold_sd(rows: Sequence[RowResult], predictor: str) -> float | None:
    by: dict[int, list[float]] = {}
    for r in rows:
        by.setdefault(r.fold, []).append(_err(r, predictor))
    avgs = [float(np.mean(v)) for v in by.values() if v]
    return round(100.0 * float(np.std(avgs)), 2) if len(avgs) > 1 else None


def summarise(res: ValidationResult, predictor: str = "ours") -> dict:
    scored = res.scored
    main = [r for r in scored if not r.anomaly]
    out: dict = {"avg_error": _pct([_err(r, predictor) for r in main], np.mean),
                 "max_error": _pct([_err(r, predictor) for r in main], np.max), "categories": {}}
    if res.protocol == "kfold":
        out["avg_error_sd"] = _fold_sd(main, predictor)
    for cat in CATEGORIES:
        rows = [r for r in scored if r.category == cat]
        c = {"rows": len(rows), "avg_error": _pct([_err(r, predictor) for r in rows], np.mean),
             "max_error": _pct([_err(r, predictor) for r in rows], np.max)}
        if res.protocol == "kfold":
            c["avg_error_sd"] = _fold_sd(rows, predictor)
        out["categories"][cat] = c
    return out


# ---------------------------------------------------------------------------------- fit-row choice
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
    """One machine, or the same number of GPUs on every machine (one GPU per machine included)."""
    c = [int(x) for x in counts if x]
    return len(set(c)) == 1


def choose_fit_rows(plans: Sequence[ExecutionPlan], n_fit: int,
                    placements: Sequence[Sequence[int]] | None = None,
                    eligible: Sequence[bool] | None = None) -> list[int]:
    """Indices of ``n_fit`` rows to fit on, chosen without looking at the measurements: up to 3
    ZeRO-Offload rows spread over (GPU count, machines), then round robin over the other plan kinds,
    spread likewise within a kind (a kind's single row on the GPU count the rows chosen so far cover
    least, ties to the median). With ``placements`` (GPUs per
    machine of each row), single-machine rows are preferred, then regular placements (same count on
    every machine), then the rest; rows not ``eligible`` (outside the plan space) only when nothing
    else is left."""
    def machines(i: int) -> int:
        return len([c for c in placements[i] if c]) if placements is not None else 1

    def key(i: int) -> tuple:
        return (plans[i].gpus, machines(i), i)

    def preference(i: int) -> int:
        if placements is None or machines(i) == 1:
            return 0
        return 1 if regular_placement(placements[i]) else 2

    def prefer(idx: list[int]) -> list[int]:
        best = min((preference(i) for i in idx), default=0)
        return sorted([i for i in idx if preference(i) == best], key=key)

    def take(items: list[int], k: int, chosen: list[int]) -> list[int]:
        """``k`` of ``items`` spread over (GPUs, machines); a single row goes to the GPU count the rows
        chosen so far cover least (ties: the one nearest the median), so that the few profiling runs
        span the GPU counts across plan kinds (scaling is what the parameters are fitted for)."""
        if k != 1 or placements is None or not items:
            return _spread(items, k)
        seen = [plans[i].gpus for i in chosen]
        mid = len(items) // 2
        return [min(items, key=lambda i: (seen.count(plans[i].gpus), abs(items.index(i) - mid)))]

    order = sorted(range(len(plans)), key=key)
    late = [i for i in order if eligible is not None and not eligible[i]]
    order = [i for i in order if eligible is None or eligible[i]]
    off = prefer([i for i in order if plans[i].zero is ZeroMode.OFFLOAD])
    chosen = take(off, min(MIN_OFFLOAD_SAMPLES, len(off), n_fit), [])
    kinds: dict[str, list[int]] = {}
    for i in order:
        if i not in chosen and plans[i].zero is not ZeroMode.OFFLOAD:
            kinds.setdefault(_kind(plans[i]), []).append(i)
    kinds = {k: prefer(v) for k, v in kinds.items()}
    left = n_fit - len(chosen)
    share = dict.fromkeys(kinds, 0)
    ks = sorted(kinds)
    j = 0
    while left > 0 and any(share[k] < len(kinds[k]) for k in ks):
        k = ks[j % len(ks)]
        if share[k] < len(kinds[k]):
            share[k] += 1
            left -= 1
        j += 1
    for k in ks:
        chosen += take(kinds[k], share[k], chosen)
    rest = sorted((i for i in order if i not in chosen), key=lambda i: (preference(i), key(i))) + late
    chosen += rest[:max(0, n_fit - len(chosen))]
    return sorted(chosen)


# Anomaly kinds the model now has a term for (placement-parity: ``k_parity``, issue 24): their rows stay in
# the ``anomaly`` category of the report, but a protocol may fit on them like any other row.
MODELLED_ANOMALIES: tuple[str, ...] = ("placement-parity",)


def pool_rows(rows: Sequence[TableRow]) -> list[int]:
    """Indices of the rows a protocol may fit on: inside our plan space and not anomalies (but for the
    anomaly kinds the model has a term for, :data:`MODELLED_ANOMALIES`)."""
    return [i for i, r in enumerate(rows)
            if r.eligible and (not r.anomaly or r.anomaly.startswith(MODELLED_ANOMALIES))]


def _odd_dp(r: TableRow) -> bool:
    """A DP-family row whose all-reduce crosses machines with an odd GPU count on some machine."""
    return r.machines > 1 and not r.plan.is_3d and r.plan.dp > 1 and bool(odd_counts(r.counts))


def protocol_folds(table: Table, protocol: str, *, fit_rows: int = DEFAULT_FIT_ROWS, folds: int = DEFAULT_FOLDS,
                   seed: int = 0) -> list[tuple[list[int], list[int]]]:
    """``[(fit row indices, scored row indices), ...]`` of ``protocol`` on ``table`` (one pair, or one
    per fold); raises :class:`NotApplicable` when the table has too few rows for it."""
    rows = table.rows
    pool = pool_rows(rows)
    if protocol == "paper":
        single = [i for i, r in enumerate(rows) if r.machines == 1]
        cand = [i for i in pool if rows[i].machines == 1]
        if len(cand) < fit_rows + 1:
            raise NotApplicable(f"paper protocol: {len(cand)} single-machine rows to fit on (need "
                                f"{fit_rows + 1})", source=table.name)
        local = choose_fit_rows([rows[i].plan for i in cand], fit_rows, [rows[i].counts for i in cand])
        fit_idx = sorted(cand[j] for j in local)
        return [(fit_idx, [i for i in single if i not in fit_idx])]
    if protocol == "holdout":
        fit_idx = [i for i in pool if rows[i].machines == 1]
        even = [i for i in pool if rows[i].machines > 1 and regular_placement(rows[i].counts) and not rows[i].anomaly]
        plain = [i for i in even if rows[i].plan.zero is not ZeroMode.OFFLOAD]
        plain = [i for i in plain if not rows[i].plan.is_3d] or plain  # DP-family rows first
        # fewest machines with the most GPUs each first, most machines last: the two span both the
        # machine count and the per-machine count (what the hierarchical all-reduce term is fitted on)
        order = sorted(plain or even, key=lambda i: (rows[i].machines, -rows[i].plan.gpus, rows[i].plan_name, i))
        need = max(HOLDOUT_EXTRA, MIN_SAMPLES - len(fit_idx))
        extra = _spread(order, need)
        if len(extra) < need:  # still short: the other multi-machine pool rows, same order
            more = sorted((i for i in pool if rows[i].machines > 1 and i not in extra),
                          key=lambda i: (rows[i].machines, rows[i].plan.gpus, rows[i].plan_name, i))
            extra += _spread(more, need - len(extra))
        pipes = sorted((i for i in even if rows[i].plan.pp > 1), key=lambda i: (rows[i].machines, -rows[i].plan.gpus,
                                                                                 rows[i].plan_name, i))
        if pipes and not any(rows[i].plan.pp > 1 for i in fit_idx + extra):
            # the pipelines across the fewest and the most machines: what informs the PP hand-off terms and
            # the micro-batch rule (one PP degree cannot tell "2p" from "1")
            extra += sorted({pipes[0], pipes[-1]})
        odd = sorted((i for i in pool if _odd_dp(rows[i]) and rows[i].plan.zero is not ZeroMode.OFFLOAD),
                     key=lambda i: (rows[i].machines, -rows[i].plan.gpus, rows[i].plan_name, i))
        if odd and not any(_odd_dp(rows[i]) for i in fit_idx + extra):
            # odd-count placements on the fewest machines (most GPUs each) and on the most machines: what
            # informs the parity term, spanning the machine count as the even rows do
            extra += sorted({odd[0], max(odd, key=lambda i: (rows[i].machines, -rows[i].plan.gpus))})
        offs = [i for i in even if rows[i].plan.zero is ZeroMode.OFFLOAD and rows[i].plan.dp > 1]
        offs = sorted(offs, key=lambda i: (rows[i].machines, -rows[i].plan.gpus, rows[i].plan_name, i))
        if len(offs) > 1 and not any(i in offs for i in extra):
            # ZeRO-Offload across the most machines: what informs k_offx (only where another such row stays
            # scored: a protocol never takes a kind's last held-out row)
            extra.append(offs[-1])
        fit_idx = sorted(fit_idx + extra)
        scored = [i for i in range(len(rows)) if i not in fit_idx]
        if len(fit_idx) < MIN_SAMPLES or not scored:
            raise NotApplicable(f"holdout protocol: {len(fit_idx)} rows to fit on and {len(scored)} to score",
                                source=table.name)
        return [(fit_idx, scored)]
    if protocol == "kfold":
        if folds < 2:
            raise SpecError(f"kfold needs >= 2 folds, got {folds}", source="<validate>", field="folds")
        perm = np.random.default_rng(seed).permutation(len(rows))
        k = folds
        if any(len([i for i in pool if i not in perm[j::k]]) < MIN_SAMPLES for j in range(k)):
            k = len(rows)  # a small table: leave one out
        out = []
        for j in range(k):
            test = sorted(int(i) for i in perm[j::k])
            fit_idx = [i for i in pool if i not in test]
            if len(fit_idx) < MIN_SAMPLES:
                raise NotApplicable(f"kfold: {len(pool)} rows to fit on; leaving one out leaves {len(fit_idx)} "
                                    f"(need {MIN_SAMPLES})", source=table.name)
            out.append((fit_idx, test))
        return out
    raise SpecError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}", source="<validate>",
                    field="protocol")


# ---------------------------------------------------------------------------------- running
def with_micro_batch_rule(plan: ExecutionPlan, rule: str) -> ExecutionPlan:
    """``plan`` under a micro-batch rule of :data:`MICRO_BATCH_RULES` (``"1"``: one micro-batch per PP)."""
    return replace(plan, micro_batches=1) if rule == "1" and plan.pp > 1 else plan


def _artifact_times(table: Table) -> list[float]:
    if table.model not in ARTIFACT_MODELS:
        return [math.nan] * len(table.rows)
    entry = TABLES.get(table.name)
    batch = entry[1] if entry else None  # the artifact's own local batch unless the table records one
    return [artifact_iteration_time(table.model, r.plan, r.counts, cpu_threads=r.cpu_threads, global_batch=batch)
            for r in table.rows]


def run_protocol(table: Table, cluster: Cluster, protocol: str = "paper", *, fit_rows: int = DEFAULT_FIT_ROWS,
                 folds: int = DEFAULT_FOLDS, seed: int = 0, starts: int = 8, forward: str | None = None,
                 initial: PerfParams | None = None, hierarchical: bool = True, final_fit: bool = True,
                 optimizer: str = "fitted") -> ValidationResult:
    """Run ``protocol`` on a loaded table (module docstring). Every fit starts from ``initial`` (default:
    the artifact's calibration, :data:`VALIDATION_START`, never the shipped measured fits, which saw
    every row), which also supplies the parameters a fit's rows do not inform. ``hierarchical`` False
    validates the flat model (calibration ``flat``): no per-machine counts, and no anomaly row is fitted
    (it has no parity term); the scored rows are the same. ``final_fit`` False skips ``kfold``'s extra fit
    on every pool row (``params`` are then the last fold's; the scored rows do not change). ``optimizer``:
    ``fitted`` (the default) fits ``k_opt``; ``profiled`` holds it at :func:`profiled_k_opt` of each fit's
    rows where that exists (else fitted)."""
    initial = initial or default_params(table.model, VALIDATION_START)
    forward = forward or FORWARD_DEFAULT.get(table.name, "zoo")
    if forward not in FORWARD_SOURCES:
        raise SpecError(f"forward must be one of {FORWARD_SOURCES}, got {forward!r}", source="<validate>",
                        field="forward")
    if optimizer not in OPTIMIZER_SOURCES:
        raise SpecError(f"optimizer must be one of {OPTIMIZER_SOURCES}, got {optimizer!r}", source="<validate>",
                        field="optimizer")
    spec = get_model(table.model)
    rows = table.rows
    plan = protocol_folds(table, protocol, fit_rows=fit_rows, folds=folds, seed=seed)
    art = _artifact_times(table)
    results: dict[int, RowResult] = {}
    out_folds: list[Fold] = []

    def fit_on(idx: Sequence[int]):
        if not hierarchical:
            idx = [i for i in idx if not rows[i].anomaly]
        fwd = profiled_forward(rows, idx, table.global_batch) if forward == "profiled" else [None] * len(rows)
        n_off = sum(rows[i].plan.zero is ZeroMode.OFFLOAD for i in idx)
        rules = MICRO_BATCH_RULES if any(rows[i].plan.pp > 1 for i in idx) else MICRO_BATCH_RULES[:1]
        t0 = time.perf_counter()
        k_opt = profiled_k_opt(rows, idx, spec.params) if optimizer == "profiled" else None
        start, hold = (initial, ()) if k_opt is None else (replace(initial, k_opt=k_opt), ("k_opt",))
        best = None
        for rule in rules:
            samples = [replace(r.sample, fwd_time_s=f, plan=with_micro_batch_rule(r.plan, rule))
                       for r, f in zip(rows, fwd, strict=True)]
            res = fit(spec, [samples[i] for i in idx], cluster, seed=seed, starts=starts,
                      require_offload=n_off >= MIN_OFFLOAD_SAMPLES, initial=start, hierarchical=hierarchical,
                      hold=hold)
            if best is None or res.rmsle < best[0].rmsle - 1e-12:
                best = (res, samples, rule)
        return (*best, time.perf_counter() - t0)

    for j, (fit_idx, scored) in enumerate(plan):
        res, samples, rule, secs = fit_on(fit_idx)
        keep = sorted(set(scored) | (set(fit_idx) if protocol != "kfold" else set()))
        pred = predict(spec, res.params, [samples[i] for i in keep], cluster, hierarchical=hierarchical)
        for i, p in zip(keep, pred, strict=True):
            r = rows[i]
            meas = r.sample.throughput
            a = table.global_batch / art[i]
            results[i] = RowResult(r.line, r.plan_name, r.placement, meas, float(p), abs(float(p) - meas) / meas,
                                   i in fit_idx, r.note, r.report_category, r.category, r.anomaly, a,
                                   abs(a - meas) / meas, j)
        out_folds.append(Fold(tuple(rows[i].line for i in fit_idx), tuple(rows[i].line for i in scored),
                              res.params, res.rmsle, secs, rule))
    final = fit_on(pool_rows(rows))[0].params if protocol == "kfold" and final_fit else out_folds[-1].params
    ordered = tuple(results[i] for i in sorted(results))
    main = [r.error for r in ordered if not r.fitted and not r.anomaly]
    return ValidationResult(
        name=table.name, model=table.model, fit_rows=max(len(f.fit_lines) for f in out_folds),
        predicted_rows=sum(not r.fitted for r in ordered),
        avg_error=100 * float(np.mean(main)) if main else math.nan,
        max_error=100 * float(np.max(main)) if main else math.nan,
        fit_rmsle=float(np.mean([f.rmsle for f in out_folds])), rows=ordered, inexpressible=table.inexpressible,
        failed=table.failed, params=final.to_dict(), protocol=protocol, folds=tuple(out_folds), forward=forward,
        forward_unit=table.forward_unit)


def validate_table(path: str | Path, cluster: Cluster, *, name: str | None = None, model: str | None = None,
                   global_batch: int | None = None, fit_rows: int = DEFAULT_FIT_ROWS, seed: int = 0,
                   starts: int = 8, profiled_forward: bool = False, protocol: str = "paper",
                   folds: int = DEFAULT_FOLDS, forward: str | None = None, initial: PerfParams | None = None,
                   hierarchical: bool = True, final_fit: bool = True, optimizer: str = "fitted") -> ValidationResult:
    """Load the table at ``path`` and run ``protocol`` on it (module docstring). ``profiled_forward``
    = ``forward="profiled"``."""
    table = load_table(path, cluster, name=name, model=model, global_batch=global_batch)
    return run_protocol(table, cluster, protocol, fit_rows=fit_rows, folds=folds, seed=seed, starts=starts,
                        forward=forward or ("profiled" if profiled_forward else None), initial=initial,
                        hierarchical=hierarchical, final_fit=final_fit, optimizer=optimizer)


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


__all__ = ["DEFAULT_FIT_ROWS", "DEFAULT_FOLDS", "FORWARD_DEFAULT", "FORWARD_SOURCES", "Fold", "HOLDOUT_EXTRA",
           "MICRO_BATCH_RULES", "MODELLED_ANOMALIES", "NotApplicable", "OPTIMIZER_SOURCES", "OPT_PROFILE_SPREAD", "PROTOCOLS", "RowResult",
           "VALIDATION_START", "ValidationResult", "choose_fit_rows", "pool_rows", "profiled_forward", "profiled_k_opt",
           "protocol_folds", "regular_placement", "run_protocol", "summarise", "validate_directory",
           "validate_table", "with_micro_batch_rule"]
