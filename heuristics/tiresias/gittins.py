r"""Gittins index of a job's remaining service, from an empirical distribution of job service.

Service ``S`` is a job's total attained service in GPU-seconds (GPUs x running time). For a job with
attained service ``a`` in a queue whose upper threshold is ``hi`` the quantum is what the job may still
receive in that queue, ``Δ = hi - a``, and its index (Tiresias §3.2, the Gittins index with the
quantum discretised to the queue) is

.. math::

    G(a) = \frac{P(S - a \le Δ \mid S > a)}{E[\min(S - a, Δ) \mid S > a]}
         = \frac{\#\{a < s_i \le hi\}}{\sum_{s_i > a} \min(s_i, hi) - a\,\#\{s_i > a\}}

over the samples ``s_i``: the probability of finishing within the queue per unit of service it will
take there. Sorted samples and prefix sums make one evaluation O(log n) (vectorised with numpy). A
job whose attained service is beyond every sample (the distribution has no mass above ``a``) or that
no sample finishes within the queue gets index 0 (lowest priority in its queue).

:class:`ArtifactGittins` is the Tiresias artifact's table (``run_sim.py``, ``cal_r_gittins_index``),
kept for ``--semantics tiresias`` reproductions: a fixed ``Δ`` (3250), *whole* sample durations in the
expectation instead of the remaining service (its defect), Python 2 integer division and rounding,
``p * 10^6 / e`` looked up by the first sample above the attained service.

Samples come from a file (``load_samples``: a CSV with a ``duration`` column of GPU-seconds, as
``yarn-gput1000.csv``) or from the jobs that finished so far (:class:`History`).
"""

from __future__ import annotations

import csv
import io
import math
from bisect import bisect_right
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np

from schedlab.topology.errors import SpecError
from schedlab.topology.files import read_text


class ServiceDistribution:
    """Sorted service samples (GPU-seconds) with prefix sums; :meth:`index` evaluates ``G``."""

    __slots__ = ("samples", "_prefix", "n", "_list", "_plist")

    def __init__(self, samples: Sequence[float] | np.ndarray) -> None:
        s = np.sort(np.asarray(samples, dtype=float))
        self.samples = s
        self.n = int(s.size)
        self._prefix = np.concatenate(([0.0], np.cumsum(s)))
        self._list = s.tolist()            # the same, for the scalar path (no numpy call overhead)
        self._plist = self._prefix.tolist()

    def index(self, a: float | np.ndarray, hi: float) -> float | np.ndarray:
        """``G(a)`` with quantum ``hi - a`` (``hi`` = the queue's upper threshold); 0 where undefined."""
        if isinstance(a, (int, float)):
            return self._index1(float(a), hi)
        s, pre, n = self.samples, self._prefix, self.n
        arr = np.asarray(a, dtype=float)
        i = np.searchsorted(s, arr, side="right")        # samples <= a
        above = n - i                                      # #{s > a}
        if math.isinf(hi):
            num = (above > 0).astype(float)
            tail = pre[n] - pre[i]
        else:
            j = np.searchsorted(s, hi, side="right")       # samples <= hi
            num = np.maximum(j - i, 0).astype(float)
            tail = np.where(j > i, pre[np.maximum(j, i)] - pre[i], 0.0) + hi * (n - np.maximum(j, i))
        den = tail - arr * above
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where((num > 0) & (den > 0), num / np.where(den > 0, den, 1.0), 0.0)
        return float(g) if g.ndim == 0 else g


    def _index1(self, a: float, hi: float) -> float:
        s, pre, n = self._list, self._plist, self.n
        i = bisect_right(s, a)
        above = n - i
        if math.isinf(hi):
            num, tail = float(above > 0), pre[n] - pre[i]
        else:
            j = max(bisect_right(s, hi), i)
            num, tail = float(j - i), pre[j] - pre[i] + hi * (n - j)
        den = tail - a * above
        return num / den if num > 0 and den > 0 else 0.0


class History:
    """Service of the jobs finished so far; :meth:`distribution` is rebuilt when the history has grown
    by ``growth`` (10 %) since the last build, and is ``None`` below ``min_samples``."""

    __slots__ = ("samples", "min_samples", "growth", "_dist", "_built_at")

    def __init__(self, min_samples: int, growth: float = 0.1) -> None:
        self.samples: list[float] = []
        self.min_samples = min_samples
        self.growth = growth
        self._dist: ServiceDistribution | None = None
        self._built_at = 0

    def add(self, service: float) -> bool:
        """Record one finished job; True when the distribution was rebuilt (indices changed)."""
        self.samples.append(float(service))
        n = len(self.samples)
        if n >= self.min_samples and (self._dist is None or n >= self._built_at * (1.0 + self.growth)):
            self._dist = ServiceDistribution(self.samples)
            self._built_at = n
            return True
        return False

    @property
    def distribution(self) -> ServiceDistribution | None:
        return self._dist


def load_samples(path: str | Path) -> np.ndarray:
    """Service samples (GPU-seconds) from a CSV with a ``duration`` column (or a single column).

    Errors name the file, line and column: an empty file, no usable column, a value that is not a
    number, negative, or not finite, and a file without any sample."""
    src = str(path)
    text = read_text(path, what="Gittins service distribution")
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if header is None or not any(c.strip() for c in header):
        raise SpecError("Gittins service distribution is empty", source=src)
    cols = [c.strip() for c in header]
    if "duration" in cols:
        col = cols.index("duration")
    elif len(cols) == 1:
        col = 0
    else:
        raise SpecError(f"no 'duration' column (columns: {', '.join(cols)})", source=src, line=1,
                        column="duration")
    name = cols[col]
    out: list[float] = []
    for line, row in enumerate(rows, start=2):
        if not row or not any(c.strip() for c in row):
            continue
        raw = row[col].strip() if col < len(row) else ""
        try:
            v = float(raw)
        except ValueError:
            raise SpecError(f"not a number: {raw!r}", source=src, line=line, column=name) from None
        if not math.isfinite(v) or v < 0:
            raise SpecError(f"service must be a finite number >= 0 GPU-seconds, got {raw!r}", source=src,
                            line=line, column=name)
        out.append(v)
    if not out:
        raise SpecError("Gittins service distribution has a header but no samples", source=src, line=1)
    return np.asarray(out, dtype=float)


def _py2_round(x: float, digits: int) -> float:
    """Python 2.7's ``round``: correctly rounded, halves away from zero."""
    return float(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


class ArtifactGittins:
    """The artifact's rank table (see the module docstring). ``rank(a)`` for attained GPU-seconds ``a``;
    jobs are served by *descending* rank. The correct index is :class:`ServiceDistribution`."""

    __slots__ = ("data", "ranks", "delta")

    def __init__(self, samples: Sequence[float] | np.ndarray, delta: int) -> None:
        data = sorted(int(v) for v in samples)  # the artifact reads int(row['duration'])
        n = len(data)
        self.delta = int(delta)
        ranks = [self._r(data, n, v - 1) for v in data]
        self.data = data
        self.ranks = ranks

    def _r(self, data: list[int], n: int, a: int) -> float:
        if a > data[-1] - 1:
            return 0.0
        idx = _first_above(data, a)
        nxt = a + self.delta
        idx_d = n - 1 if nxt > data[-1] - 1 else _first_above(data, nxt)
        p = _py2_round((idx_d - idx) * 1.0 / (n - idx), 5)
        e_sum = sum(data[idx:idx_d]) + self.delta * (n - idx_d)   # whole durations: the artifact's defect
        e = _py2_round(float(e_sum // (n - idx)), 5)              # Python 2 integer division
        return _py2_round(p * 1000000 / e, 4) if e else 0.0

    def rank(self, a: int) -> float:
        data = self.data
        if a > data[-1]:
            return 0.0
        i = _first_above(data, a)
        return self.ranks[i] if i < len(data) else 0.0


_first_above = bisect_right  # index of the first sample > a (len(data) if none)


__all__ = ["ArtifactGittins", "History", "ServiceDistribution", "load_samples"]
