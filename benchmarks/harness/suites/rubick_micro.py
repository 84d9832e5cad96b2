"""Rubick Fig. 8 from the artifact's measured tables: RoBERTa and T5-3B share one 4-GPU A800 server.

The paper's micro-benchmark runs T5 **3B** (the artifact's ``placements/t5_3B.csv``: ``zero-offload`` on
1, 2, 4 GPUs and ``tp+ga`` on 2, 3, 4) beside RoBERTa (``placements/roberta.csv``). Each job's
throughput is normalised to its rigid plan on the 4 GPUs (RoBERTa ``ga``, T5-3B ``tp+ga``, as in
:func:`~schedlab.benchmarks.harness.suites.rubick.micro_benchmark`); on ``g`` GPUs a job runs its fastest
measured plan on one machine with at most ``g`` GPUs (placement = one digit). The total normalised speedup
of every split ``t5 + roberta = 4`` is computed; *equal split* is 2 + 2, the paper's Rubick allocation
3 + 1, *best split* the split with the largest total (what an allocator maximising it picks).

T5-3B is not in our model zoo (its T5 is the 1.2B model, with no 3-GPU plan), so the ``measured``
perf-model calibration, which answers only zoo models from the tables, cannot run it: the tables are
read directly here. Deterministic: no seed.
"""

from __future__ import annotations

import csv
from pathlib import Path

from schedlab.topology.errors import SpecError

RIGID = {"roberta": "ga", "t5_3B": "tp+ga"}
TABLES = {"roberta": "roberta.csv", "t5_3B": "t5_3B.csv"}


def _times(path: Path) -> dict[tuple[str, int], float]:
    """``(plan, gpus) -> iteration time`` of the single-machine rows (placement one digit)."""
    out: dict[tuple[str, int], float] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            p = row["placement"].strip()
            if len(p) == 1 and p.isdigit():
                key = (row["exec_plan"].strip(), int(p))
                out[key] = min(out.get(key, float("inf")), float(row["iter_time"]))
    return out


def measured_micro(placements: str | Path) -> dict[str, float | str]:
    """Normalised speedups by split (``"t5=3,roberta=1"``: total), ``equal split``, ``paper split``,
    ``best split`` (total) and ``best split allocation`` (its name)."""
    d = Path(placements)
    missing = [n for n in TABLES.values() if not (d / n).is_file()]
    if missing:
        raise SpecError(f"placement tables missing in {d}: {', '.join(missing)}", source=str(d), field="placements")
    times = {k: _times(d / n) for k, n in TABLES.items()}
    ref = {k: times[k][(RIGID[k], 4)] for k in TABLES}

    def norm(job: str, g: int) -> float:
        best = min((t for (_, n), t in times[job].items() if n <= g), default=None)
        return 0.0 if best is None or g == 0 else ref[job] / best

    out: dict[str, float | str] = {}
    for g in range(0, 5):
        out[f"t5_3B={g},roberta={4 - g}"] = norm("t5_3B", g) + norm("roberta", 4 - g)
    splits = {k: v for k, v in out.items() if isinstance(v, float)}
    best = max(splits, key=lambda k: splits[k])
    out.update({"equal split": splits["t5_3B=2,roberta=2"], "paper split": splits["t5_3B=3,roberta=1"],
                "best split": splits[best], "best split allocation": best})
    return out


__all__ = ["measured_micro"]
