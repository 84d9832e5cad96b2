"""Measured placement tables (the Rubick artifact's ``placements/<model>.csv``) and fitting samples.

A table has columns ``exec_plan, placement, iter_time`` (seconds) and optionally ``cpu_threads`` (per
GPU worker), ``forward`` (measured forward time) and ``optimize`` (measured optimizer step; in ms where
its median ratio to the iteration time exceeds 1, :func:`optimize_scale`). ``placement`` has one digit per machine = GPUs on
it (``44`` = 2 machines x 4). A row with ``iter_time <= 0`` is a failed run (the artifact records OOM
that way). CPUs per job when the table does not say: 8 per GPU with ZeRO-Offload, else 1 per GPU (the
artifact's allocation rule).

**The ``forward`` column** (measured per table, documented in ``docs/perfmodel-validation.md``): in
milliseconds in the BERT, GPT-2 and T5 tables, in seconds in the ViT, RoBERTa and LLaMA-7B tables
(decided per table: a forward time cannot exceed the iteration, so a table whose median ``forward``
exceeds its median ``iter_time`` is in ms); 0 = not measured (every 3D row, LLaMA-30B). It is the
forward time of one iteration (all GA steps) of one GPU in BERT, GPT-2, T5 and LLaMA-7B, but not in
ViT and RoBERTa, where it barely changes with the per-GPU batch (RoBERTa: 20-23 ms on 1 to 8 GPUs).

:func:`load_table` reads a table into :class:`TableRow` records: the fitting sample, the category and
the anomaly verdict (:mod:`perfmodel.anomalies`), whether the row lies inside our plan space.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from schedlab.perfmodel.anomalies import Measured, base_category, find_anomalies
from schedlab.perfmodel.environment import reference_machines
from schedlab.perfmodel.fitting import Sample
from schedlab.perfmodel.memory import plan_memory_violation
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode, parse_plan
from schedlab.perfmodel.search import structural_problem
from schedlab.perfmodel.zoo import get_model, resolve_name
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import PlanError, SpecError
from schedlab.topology.tables import read_table as read_csv_table

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
    optimize_s: float | None = None  # measured optimizer-step time (s) when the table has it and it is > 0


def read_table(path: str | Path) -> list[Row]:
    """Rows of a placements table; raises :class:`SpecError` naming the file, line and column. The
    ``forward`` column is converted to seconds (its unit is decided per table, module docstring)."""
    return _read(path)[0]


def _read(path: str | Path) -> tuple[list[Row], str]:
    """Rows (forward in seconds) and the unit of the file's ``forward`` column (``ms``, ``s``, ``none``)."""
    p = Path(path)
    table = read_csv_table(p, what="placements table", error=SpecError)
    missing = {"exec_plan", "placement", "iter_time"} - set(table.columns)
    if missing:
        raise SpecError(f"missing columns {sorted(missing)}", source=str(p), line=1)
    raw = []
    for i, r in table.records():
        try:
            t = float(r["iter_time"])
        except (TypeError, ValueError):
            raise SpecError(f"iter_time must be a number, got {r['iter_time']!r}", source=str(p), line=i,
                            column="iter_time") from None
        ct = r.get("cpu_threads")
        try:
            fwd = float(r["forward"]) if r.get("forward") not in (None, "") else 0.0
        except ValueError:
            raise SpecError(f"forward must be a number, got {r['forward']!r}", source=str(p), line=i,
                            column="forward") from None
        try:
            opt = float(r["optimize"]) if r.get("optimize") not in (None, "") else 0.0
        except ValueError:
            raise SpecError(f"optimize must be a number, got {r['optimize']!r}", source=str(p), line=i,
                            column="optimize") from None
        raw.append((Row(i, r["exec_plan"].strip(), r["placement"].strip(), t,
                        int(ct) if ct not in (None, "") else None), fwd, opt))
    scale = forward_scale([f for _, f, _ in raw], [r.iter_time for r, _, _ in raw])
    oscale = optimize_scale([o for _, _, o in raw], [r.iter_time for r, _, _ in raw])
    rows = [replace(r, forward_s=f * scale if f > 0 and r.iter_time > 0 else None,
                    optimize_s=o * oscale if o > 0 and r.iter_time > 0 else None) for r, f, o in raw]
    unit = "none" if not any(r.forward_s for r in rows) else ("ms" if scale < 1 else "s")
    return rows, unit


def optimize_scale(optimize: list[float], iter_times: list[float]) -> float:
    """Seconds per unit of a table's ``optimize`` column: 1e-3 when the median ratio of ``optimize`` to
    the iteration time exceeds 1 (a step cannot outlast its iteration: the column is in ms), else 1."""
    ratios = [o / t for o, t in zip(optimize, iter_times, strict=True) if o > 0 and t > 0]
    if not ratios:
        return 1.0
    return 1e-3 if statistics.median(ratios) > 1.0 else 1.0


def forward_scale(forward: list[float], iter_times: list[float]) -> float:
    """Seconds per unit of a table's ``forward`` column: 1e-3 when its median (over measured rows)
    exceeds the median iteration time (the column is in ms), else 1."""
    pairs = [(f, t) for f, t in zip(forward, iter_times, strict=True) if f > 0 and t > 0]
    if not pairs:
        return 1.0
    return 1e-3 if statistics.median(f for f, _ in pairs) > statistics.median(t for _, t in pairs) else 1.0


def placement_counts(placement: str, cluster: Cluster) -> dict[str, int]:
    """``{machine: gpus}`` of a digit string on the cluster's reference machines."""
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


def default_cpus(plan: ExecutionPlan, cpu_threads: int | None) -> int:
    """CPU cores of the job: the table's threads per GPU, else 8 per GPU with ZeRO-Offload, else 1."""
    per = cpu_threads or (OFFLOAD_CPUS_PER_GPU if plan.zero is ZeroMode.OFFLOAD else 1)
    return per * plan.gpus


@dataclass(frozen=True, slots=True)
class TableRow:
    """One usable row: the table's values, the fitting sample, category and anomaly verdict."""

    line: int
    plan_name: str
    placement: str
    counts: tuple[int, ...]
    sample: Sample
    iter_time: float
    forward_s: float | None
    cpu_threads: int | None
    category: str          # base category (anomalies.base_category)
    anomaly: str = ""      # the anomaly rule's verdict ("" = none)
    eligible: bool = True  # inside our plan space (structure; memory is only noted)
    note: str = ""
    optimize_s: float | None = None  # measured optimizer step (s), when the table has it

    @property
    def plan(self) -> ExecutionPlan:
        return self.sample.plan

    @property
    def report_category(self) -> str:
        return "anomaly" if self.anomaly else self.category

    @property
    def machines(self) -> int:
        return len(self.counts)


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    model: str
    global_batch: int
    rows: tuple[TableRow, ...]
    forward_unit: str  # "ms", "s" or "none"
    inexpressible: tuple[str, ...] = field(default=())
    failed: tuple[str, ...] = field(default=())


def resolve_table(name: str, source: str) -> tuple[str, int | None]:
    """Zoo model and global batch override of a table stem (known tables, else the zoo name)."""
    entry = TABLES.get(name)
    if entry is None:
        key = resolve_name(name) if name not in TABLES else None
        if key is None:
            raise SpecError(f"table {name!r} is not of a zoo model", source=source)
        entry = (key, None)
    return entry


def load_table(path: str | Path, cluster: Cluster, *, name: str | None = None, model: str | None = None,
               global_batch: int | None = None) -> Table:
    """Read a placements table into :class:`TableRow` records (module docstring)."""
    p = Path(path)
    name = name or p.stem
    if model is None:
        model, gb = resolve_table(name, str(p))
        global_batch = global_batch or gb
    spec = get_model(model)
    batch = int(global_batch or spec.global_batch)
    raw, unit = _read(p)
    inexpressible: list[str] = []
    failed: list[str] = []
    rows: list[TableRow] = []
    for r in raw:
        try:
            counts = placement_counts(r.placement, cluster)
            plan = with_valid_micro_batches(parse_plan(r.plan_name, sum(counts.values())), batch)
        except PlanError as e:
            inexpressible.append(f"line {r.line}: {r.plan_name} @ {r.placement}: {e}")
            continue
        mem = plan_memory_violation(spec.name, batch, plan, min(cluster.machine(m).gpu_memory_gb for m in counts))
        if r.iter_time <= 0:
            failed.append(f"line {r.line}: {r.plan_name} @ {r.placement} failed in the measurement; "
                          f"our memory model: {'does not fit' if mem else 'fits'}")
            continue
        c = tuple(counts.values())
        note = structural_problem(spec, plan, c, batch) or ""
        eligible = not note
        if mem:
            note = (note + "; " if note else "") + "memory model: does not fit"
        sample = Sample(plan, counts, default_cpus(plan, r.cpu_threads), batch / r.iter_time, batch)
        rows.append(TableRow(r.line, r.plan_name, r.placement, c, sample, r.iter_time, r.forward_s, r.cpu_threads,
                             base_category(plan.is_3d, c), eligible=eligible, note=note, optimize_s=r.optimize_s))
    measured = [Measured(x.plan_name, x.counts, x.plan.is_3d, x.iter_time, x.cpu_threads) for x in rows]
    for a in find_anomalies(measured):
        rows[a.index] = replace(rows[a.index], anomaly=a.describe())
    return Table(name, spec.name, batch, tuple(rows), unit, tuple(inexpressible), tuple(failed))


def read_samples(path: str | Path, cluster: Cluster, *, model: str | None = None) -> tuple[str, list[Sample]]:
    """Fitting samples from a CSV: ``exec_plan`` (or ``plan``), ``placement`` (digits per machine),
    ``throughput`` (samples/s) or ``iter_time`` (s), optional ``cpus`` (job total) or ``cpu_threads``
    (per GPU), ``global_batch``, and ``model`` (unless given). One model per file.
    Rows with a non-positive measurement are skipped (failed runs)."""
    p = Path(path)
    table = read_csv_table(p, what="samples file", error=SpecError)
    cols = set(table.columns)
    plan_col = "exec_plan" if "exec_plan" in cols else "plan"
    if plan_col not in cols or "placement" not in cols or not ({"throughput", "iter_time"} & cols):
        raise SpecError("need columns exec_plan (or plan), placement and throughput or iter_time", source=str(p),
                        line=1)
    if model is None and "model" not in cols:
        raise SpecError("no model column: give the model", source=str(p), line=1, column="model")
    names: set[str] = set()
    samples: list[Sample] = []
    for i, r in table.records():
        name = model or r["model"]
        spec = get_model(name)
        names.add(spec.name)
        try:
            counts = placement_counts(r["placement"].strip(), cluster)
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
        cpus = int(r["cpus"]) if r.get("cpus") else default_cpus(plan, int(r["cpu_threads"]) if r.get(
            "cpu_threads") else None)
        samples.append(Sample(plan, counts, cpus, tput, b))
    if len(names) > 1:
        raise SpecError(f"samples of several models {sorted(names)}: one model per file", source=str(p),
                        column="model")
    if not names:
        raise SpecError("no samples", source=str(p))
    return names.pop(), samples


__all__ = ["OFFLOAD_CPUS_PER_GPU", "Row", "TABLES", "Table", "TableRow", "default_cpus", "forward_scale",
           "load_table", "placement_counts", "read_samples", "read_table", "resolve_table",
           "with_valid_micro_batches"]
