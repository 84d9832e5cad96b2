r"""Measured iteration times of the Rubick artifact's placement tables, for ``PerfModel(calibration="measured")``.

Where the tables hold the exact (model, plan, placement, global batch), the ``measured`` calibration
answers with the measured time, as the artifact's simulator does; everywhere else with the fitted model
(``FITTED_PARAMS``). The key of a row:

* the model (the table's zoo model: ``llama7b_bsz16`` is LLaMA-7B at global batch 16);
* the plan's ``(d, t, p, a, gc, zero)``: the 1F1B micro-batch count ``m`` is not part of it (the tables
  do not record it; :func:`perfmodel.tables.with_valid_micro_batches`);
* the placement as its GPU counts per machine, sorted (machines of one kind: ``242`` = ``224``);
* the global batch;
* for ZeRO-Offload only, the CPU cores per GPU (the other plans do not depend on the CPUs in the model,
  and the tables measure them at one or two thread counts).

Every measured row counts, the anomaly rule's included (they are what a scheduler meets); failed runs
(``iter_time <= 0``) are left out. Repeated keys: the median. A ZeRO-Offload query at a CPU count the
table lacks takes the measured time at the nearest measured count scaled by the fitted model,
``T = T_meas(c0) x T_fit(c) / T_fit(c0)`` (so CPU curves stay continuous).

The times belong to the testbed's machines (8 x A800-80GB): on a placement with any other machine the
fitted model answers (counted as a miss like any other).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from schedlab.perfmodel.iteration import overlap
from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode
from schedlab.perfmodel.search import row_to_plan
from schedlab.topology.errors import SpecError

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "traces" / "rubick" / "placements"
TESTBED_MACHINE = ("A800-80GB", 8)  # (GPU model, GPUs per machine) of the machines the tables were measured on

Key = tuple  # (model, (d, t, p, a, gc, zero), sorted counts, global batch)


def plan_key(plan: ExecutionPlan) -> tuple:
    return (plan.dp, plan.tp, plan.pp, plan.ga_steps, bool(plan.gc), plan.zero.value)


def counts_key(counts) -> tuple[int, ...]:
    return tuple(sorted((int(c) for c in counts if c), reverse=True))


@dataclass(frozen=True, slots=True)
class MeasuredTimes:
    """``times[key] = {cpus per GPU (None for non-offload plans): seconds}`` (module docstring)."""

    times: Mapping[Key, Mapping[int | None, float]]
    source: str

    def lookup(self, model: str, plan: ExecutionPlan, counts, global_batch: int, cpus: float
               ) -> tuple[float, float | None] | None:
        """``(seconds, cpus of the measurement)`` for the query, or None when the tables lack it. The cpus
        are ``None`` where they are the query's (exact, or a plan that does not depend on them)."""
        hit = self.times.get((model, plan_key(plan), counts_key(counts), int(global_batch)))
        if not hit:
            return None
        if plan.zero is not ZeroMode.OFFLOAD:
            return hit[None], None
        per = cpus / plan.gpus
        c0 = min(hit, key=lambda c: (abs(c - per), c))
        return hit[c0], (None if c0 == per else float(c0 * plan.gpus))

    def __len__(self) -> int:
        return sum(len(v) for v in self.times.values())


def measured_columns(mt: MeasuredTimes, model: str, b: int, counts, rows, t_fixed, off_idx, base, off_t, off_k,
                     k_swap: float):
    """A shape's columns (:class:`perfmodel.curves.ShapeEval`) with the measured times: a fixed-time row
    takes its measured time; a ZeRO-Offload row ``T(c) = base + f_kswap(K / c, T_off)`` is scaled as a
    whole (``f`` is homogeneous of degree 1) by ``T_meas(c0) / T_fit(c0)`` at the smallest measured CPU
    count ``c0``. Returns new arrays."""
    t_fixed, base, off_t, off_k = t_fixed.copy(), base.copy(), off_t.copy(), off_k.copy()
    pos = {int(i): j for j, i in enumerate(off_idx)}
    ck = counts_key(counts)
    for i, r in enumerate(rows):
        plan = row_to_plan(r)
        hit = mt.times.get((model, plan_key(plan), ck, int(b)))
        if not hit:
            continue
        if i in pos:
            j = pos[i]
            c = min(hit)
            c0 = float(c * plan.gpus)
            fit0 = base[j] + float(overlap(np.array(off_k[j] / c0), np.array(off_t[j]), k_swap))
            f = hit[c] / fit0
            base[j], off_t[j], off_k[j] = base[j] * f, off_t[j] * f, off_k[j] * f
        elif np.isfinite(t_fixed[i]) and None in hit:
            t_fixed[i] = hit[None]
    return t_fixed, base, off_t, off_k


def load_measured(directory: str | Path | None = None) -> MeasuredTimes:
    """Every measured row of the known tables in ``directory`` (default: ``../shared/traces/rubick/
    placements`` beside the repository). Raises :class:`SpecError` naming the directory when absent."""
    from schedlab.perfmodel.tables import TABLES, load_table  # scipy (fitting): only when loading
    from schedlab.topology.presets import preset

    d = Path(directory) if directory is not None else DEFAULT_DIR
    if not d.is_dir():
        raise SpecError("the measured calibration needs the Rubick placement tables; directory not found",
                        source=str(d))
    cluster = preset("rubick-64")
    acc: dict[Key, dict[int | None, list[float]]] = {}
    for f in sorted(d.glob("*.csv")):
        if f.stem in TABLES and TABLES[f.stem] is None:
            continue  # a model outside the zoo (T5-3B)
        table = load_table(f, cluster)
        for r in table.rows:
            off = r.plan.zero is ZeroMode.OFFLOAD
            cpg = (r.sample.cpus // r.plan.gpus) if off else None
            key = (table.model, plan_key(r.plan), counts_key(r.counts), table.global_batch)
            acc.setdefault(key, {}).setdefault(cpg, []).append(r.iter_time)
    if not acc:
        raise SpecError("no measured rows in the placement tables", source=str(d))
    times = {k: MappingProxyType({c: statistics.median(v) for c, v in per.items()}) for k, per in acc.items()}
    return MeasuredTimes(MappingProxyType(times), str(d))


__all__ = ["DEFAULT_DIR", "TESTBED_MACHINE", "MeasuredTimes", "counts_key", "load_measured", "measured_columns",
           "plan_key"]
