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
measurements of the machine as much as of the code (its load moves them): they are compared only when
asked (``time=True``, ``schedlab compare --time``), and count only beyond ``max(2 SE, 25 %, 0.05 s)``.
Gaps are in percent, as in the report (``gap [%]``).

:func:`mismatches` says what makes two sides not like for like: different seeds of a series (the
difference then includes seed-to-seed variation of the instances), different code versions.
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
#: metrics that are measurements of the machine: compared only with ``time=True``
TIME_METRICS = ("time_s",)
#: stored name -> shown name and scale (the report's units)
SHOWN = {"gap": ("gap [%]", 100.0)}


def _series(label: str) -> str:
    return re.sub(r"/s=\d+(?=/|$)", "", label)


def _long(df: pd.DataFrame, time: bool = False) -> pd.DataFrame:
    rows = []
    cols = ["suite", "type", "series", "seed", "metric", "value", "code_version"]
    if df.empty:
        return pd.DataFrame(rows, columns=cols)
    for _, r in df[df["current"]].iterrows():
        ct = r["case_type"]
        m = r["metrics"] if isinstance(r.get("metrics"), dict) else {}
        for metric in METRICS.get(ct, ()):
            if metric in TIME_METRICS and not time:
                continue
            v = m.get(metric) if ct == "replay" else r.get(metric)
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            name, scale = SHOWN.get(metric, (metric, 1.0))
            rows.append({"suite": r["suite"], "type": ct, "series": _series(r["label"]), "seed": r["seed"],
                         "metric": name, "value": scale * float(v), "code_version": r.get("code_version")})
    return pd.DataFrame(rows, columns=cols)


def _load(d: str | Path, time: bool = False) -> pd.DataFrame:
    with Store(d, create=False) as s:
        return _long(frame(s.records()), time)


def mismatches(dir_a: str | Path, dir_b: str | Path) -> list[str]:
    """What is not like for like between two results folders: series run on different seeds, different
    code versions. Empty when A and B ran the same code on the same seeds."""
    a, b = _load(dir_a), _load(dir_b)
    out = []
    sa = a.groupby(["suite", "series"])["seed"].agg(lambda x: tuple(sorted(set(x)))) if len(a) else pd.Series()
    sb = b.groupby(["suite", "series"])["seed"].agg(lambda x: tuple(sorted(set(x)))) if len(b) else pd.Series()
    both = sa.index.intersection(sb.index)
    differ = [k for k in both if sa[k] != sb[k]]
    if differ:
        k = differ[0]
        out.append(f"{len(differ)} of {len(both)} series ran on different seeds (e.g. {k[1]}: A seeds "
                   f"{', '.join(map(str, sa[k]))}, B seeds {', '.join(map(str, sb[k]))}): their differences include "
                   "the instances' seed-to-seed variation, not only the code's")
    ca, cb = set(a["code_version"].dropna()), set(b["code_version"].dropna())
    if ca and cb and ca != cb:
        out.append(f"different code: A {', '.join(sorted(ca))}; B {', '.join(sorted(cb))}")
    return out


def compare(dir_a: str | Path, dir_b: str | Path, *, time: bool = False) -> pd.DataFrame:
    """One row per (suite, type, series, metric) present on either side; build + solve times only with
    ``time=True``."""
    a, b = _load(dir_a, time), _load(dir_b, time)
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
        if k[3] in TIME_METRICS:
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


__all__ = ["EXACT_TOL", "METRICS", "SHOWN", "TIME_ABS_S", "TIME_METRICS", "TIME_REL", "compare", "mismatches"]
