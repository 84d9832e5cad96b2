"""Plausibility checks of a loaded trace: values every row accepts one by one but that, taken together,
say the columns were mapped wrongly. Each finding is an *assumption* note (kind ``implausible``,
counted in the assumption report with examples; ``--strict`` makes it an error naming the job and line):

* **GPU requests beyond any cluster**: a job asking for more than :data:`MAX_PLAUSIBLE_GPUS` GPUs
  (swapped ``gpus`` and ``duration`` columns build a 211,432-GPU cluster);
* **swapped shape**: the median GPU request is at least :data:`SWAP_GPUS` while the median duration is at
  most :data:`SWAP_SECONDS` s (durations read as GPU counts and GPU counts as seconds);
* **times in milliseconds read as seconds**: arrivals spanning more than :data:`MAX_SPAN_S` (5 years),
  or a median duration above :data:`MAX_MEDIAN_DURATION_S` (30 days).

Durations that disagree with iterations x the perf model's iteration time are checked where jobs are
converted (:mod:`~schedlab.benchmarks.workloads.convert`, ``DURATION_RATIO``); a CSV whose columns are
not separated by commas is refused by :func:`delimiter_problem` (the header names one column holding
``;`` or tabs).
"""

from __future__ import annotations

import numpy as np

from schedlab.benchmarks.workloads.assumptions import AssumptionLog

MAX_PLAUSIBLE_GPUS = 4096
SWAP_GPUS = 64
SWAP_SECONDS = 64.0
YEAR_S = 365.25 * 86400.0
MAX_SPAN_S = 5 * YEAR_S
MAX_MEDIAN_DURATION_S = 30 * 86400.0
KIND = "implausible"


def _span(seconds: float) -> str:
    return f"{seconds / YEAR_S:,.1f} years" if seconds >= YEAR_S else f"{seconds / 86400:,.1f} days"


def check(log: AssumptionLog, ids: np.ndarray, lines: np.ndarray, submit: np.ndarray, gpus: np.ndarray,
          duration: np.ndarray | None, unit_name: str = "") -> None:
    """Add a note to ``log`` for each implausible pattern (see the module docstring). Arrays are per job,
    in any order; ``duration`` holds NaN where a job has none; times in seconds."""
    if not len(gpus):
        return
    gpus = np.asarray(gpus, dtype=float)
    big = gpus > MAX_PLAUSIBLE_GPUS
    if big.any():
        log.add_rows(KIND, f"implausible: GPU requests above {MAX_PLAUSIBLE_GPUS:,} (largest {int(gpus.max()):,}); "
                     "are the gpus and duration columns swapped? (check --columns)", big, lines=lines, ids=ids,
                     field="gpus", details=[f"{int(g):,} GPUs" for g in gpus[big][:5]])
    d = None if duration is None else np.asarray(duration, dtype=float)
    timed = d[np.isfinite(d)] if d is not None else np.array([])
    unit = unit_name.strip() or "s"
    if timed.size:
        med_g, med_d = float(np.median(gpus)), float(np.median(timed))
        if med_g >= SWAP_GPUS and med_d <= SWAP_SECONDS:
            log.add_rows(KIND, f"implausible: median GPU request {med_g:,.0f} with a median duration of {med_d:g} s "
                         "looks like durations read as GPU counts and GPU counts as durations (check --columns)",
                         np.ones(len(gpus), dtype=bool), lines=lines, ids=ids, field="gpus")
        if med_d > MAX_MEDIAN_DURATION_S:
            long = np.isfinite(d) & (d > MAX_MEDIAN_DURATION_S)
            log.add_rows(KIND, f"implausible: median duration {_span(med_d)} (times read in {unit}; are they in "
                         "milliseconds? --time-unit ms)", long, lines=lines, ids=ids, field="duration",
                         details=[_span(x) for x in d[long][:5]])
    span = float(np.max(submit) - np.min(submit)) if len(submit) else 0.0
    if span > MAX_SPAN_S:
        last = np.zeros(len(submit), dtype=bool)
        last[int(np.argmax(submit))] = True
        log.add_rows(KIND, f"implausible: arrivals span {_span(span)} (times read in {unit}; are they in "
                     "milliseconds? --time-unit ms)", last, lines=lines, ids=ids, field="submit",
                     details=[f"last arrival at {_span(span)}"])


def delimiter_problem(header_line: str) -> str | None:
    """Why a header line is not comma-separated (``None`` when it is): one column whose name holds
    semicolons or tabs."""
    cells = header_line.split(",")
    for sep, name in ((";", "semicolons"), ("\t", "tabs")):
        if len(cells) <= 1 and header_line.count(sep) >= 1:
            return (f"the header separates its columns with {name} ({header_line.count(sep) + 1} columns), not "
                    "commas: schedlab reads comma-separated traces; convert the file first, e.g. with pandas: "
                    f"pd.read_csv(path, sep={sep!r}).to_csv(new_path, index=False)")
    return None


__all__ = ["KIND", "MAX_MEDIAN_DURATION_S", "MAX_PLAUSIBLE_GPUS", "MAX_SPAN_S", "SWAP_GPUS", "SWAP_SECONDS", "check",
           "delimiter_problem"]
