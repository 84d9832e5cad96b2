r"""``schedlab compare DIR_A DIR_B``: two runs of the same suite side by side, differences beyond
seed-to-seed noise highlighted.

Runs are matched by suite and label; a *series* is a label without its seed (``.../s=3/...``), so each
series has one value per seed on each side. For every series and metric (gap cases: objective, gap,
time; bound cases: online value, gap; replays: average and p95 JCT, makespan, utilisation):

.. math::

   \Delta = \bar b - \bar a,\qquad
   SE = s_p \sqrt{1/n_a + 1/n_b},\qquad
   s_p^2 = \frac{(n_a-1)s_a^2 + (n_b-1)s_b^2}{n_a+n_b-2}

A difference is **beyond noise** when :math:`|\Delta| > 2\,SE` (about the 95 % band of a difference of
means). Without a noise estimate (one seed a side, or identical values across seeds) the results of a
seed are deterministic, so any relative difference above :data:`EXACT_TOL` counts. Times are
measurements, not results: they count only beyond ``max(2 SE, 25 %, 0.05 s)``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.benchmarks.harness.analysis import frame
from schedlab.benchmarks.harness.store import Store

EXACT_TOL = 1e-6
TIME_REL = 0.25
TIME_ABS_S = 0.05
METRICS = {
    "gap": ("objective", "gap", "time_s"),
    "bound": ("objective", "gap"),
    "replay": ("avg_jct", "p95_jct", "makespan", "utilization"),
}


def _series(label: str) -> str:
    return re.sub(r"/s=\d+(?=/|$)", "", label)


def _long(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, r in df[df["current"]].iterrows():
        ct = r["case_type"]
        m = r["metrics"] if isinstance(r.get("metrics"), dict) else {}
        for metric in METRICS.get(ct, ()):
            v = m.get(metric) if ct == "replay" else r.get(metric)
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            rows.append({"suite": r["suite"], "type": ct, "series": _series(r["label"]), "seed": r["seed"],
                         "metric": metric, "value": float(v)})
    return pd.DataFrame(rows, columns=["suite", "type", "series", "seed", "metric", "value"])


def _load(d: str | Path) -> pd.DataFrame:
    with Store(d, create=False) as s:
        return _long(frame(s.records()))


def compare(dir_a: str | Path, dir_b: str | Path) -> pd.DataFrame:
    """One row per (suite, type, series, metric) present on either side."""
    a, b = _load(dir_a), _load(dir_b)
    keys = ["suite", "type", "series", "metric"]
    ga = {k: v["value"].to_numpy() for k, v in a.groupby(keys)}
    gb = {k: v["value"].to_numpy() for k, v in b.groupby(keys)}
    rows = []
    for k in sorted(set(ga) | set(gb)):
        va, vb = ga.get(k, np.array([])), gb.get(k, np.array([]))
        row = dict(zip(keys, k, strict=True)) | {"n_a": len(va), "n_b": len(vb)}
        if not len(va) or not len(vb):
            row |= {"mean_a": va.mean() if len(va) else math.nan, "mean_b": vb.mean() if len(vb) else math.nan,
                    "delta": math.nan, "rel_pct": math.nan, "noise": math.nan,
                    "verdict": "only in A" if len(va) else "only in B"}
            rows.append(row)
            continue
        ma, mb = float(va.mean()), float(vb.mean())
        delta = mb - ma
        rel = delta / abs(ma) if abs(ma) > 1e-12 else (0.0 if abs(delta) < 1e-12 else math.inf)
        se = math.nan
        if len(va) + len(vb) > 2:
            sp2 = ((len(va) - 1) * (va.var(ddof=1) if len(va) > 1 else 0.0)
                   + (len(vb) - 1) * (vb.var(ddof=1) if len(vb) > 1 else 0.0)) / (len(va) + len(vb) - 2)
            se = math.sqrt(sp2) * math.sqrt(1 / len(va) + 1 / len(vb))
        noise = 2 * se if se == se else 0.0
        if k[3] == "time_s":
            threshold = max(noise, TIME_REL * max(abs(ma), abs(mb)), TIME_ABS_S)
        elif noise > 0:
            threshold = noise
        else:
            threshold = EXACT_TOL * max(1.0, abs(ma))
        beyond = abs(delta) > threshold
        row |= {"mean_a": ma, "mean_b": mb, "delta": delta, "rel_pct": 100 * rel, "noise": noise,
                "verdict": "BEYOND NOISE" if beyond else "within noise"}
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = ["EXACT_TOL", "METRICS", "TIME_ABS_S", "TIME_REL", "compare"]
