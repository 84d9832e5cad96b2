"""The report's tables (pandas DataFrames), shared by ``schedlab report``, the summary ``schedlab bench``
prints and ``schedlab compare``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from schedlab.benchmarks.harness.analysis import AT_LIMIT, FINISHED, scale_fits


def _fmt_status(s: pd.Series) -> str:
    c = s.value_counts()
    return ", ".join(f"{k} {v}" for k, v in c.items())


def _verdicts(v: pd.Series) -> str:
    """``accepted/judged`` over the runs the verifier judged (a bound or an infeasible run has no
    allocation to judge)."""
    judged = v.dropna()
    return f"{int((judged == True).sum())}/{len(judged)}" if len(judged) else "n/a"  # noqa: E712


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (case type, kind, method@backend) — a method is never averaged across kinds: runs,
    statuses, median time, mean/max signed gap to the best proven bound (gap cases; bound cases: online
    vs the offline bound)."""
    if df.empty:
        return pd.DataFrame()
    rows = []
    cur = df[df["current"]].copy()
    cur["kind"] = cur["kind"].fillna("")
    for (ct, kind, who), g in cur.groupby(["case_type", "kind", "who"], sort=False):
        gaps = g["gap"].dropna()
        rows.append({"type": ct, "kind": kind, "method": who, "runs": len(g), "status": _fmt_status(g["status"]),
                     "median time [s]": float(g["time_s"].median()),
                     "mean gap [%]": 100 * float(gaps.mean()) if len(gaps) else math.nan,
                     "max gap [%]": 100 * float(gaps.max()) if len(gaps) else math.nan,
                     "verified": _verdicts(g["verified"])})
    return pd.DataFrame(rows)


def bound_violations(df: pd.DataFrame) -> pd.DataFrame:
    """Runs whose verified objective beats a proven bound (``bound-violated``): a bug in a model or a
    bound, listed first in the report."""
    if df.empty or "bound_violation" not in df:
        return pd.DataFrame()
    bad = df[df["current"] & (df["status"] == "bound-violated")]
    if bad.empty:
        return pd.DataFrame()
    return pd.DataFrame({"kind": bad["kind"], "instance": bad["instance"], "method": bad["who"],
                         "objective": bad["objective"], "proven bound": bad["best_bound"],
                         "what": bad["bound_violation"]}).reset_index(drop=True)


def kind_header(kind: str) -> dict[str, str]:
    """What a gap table of ``kind`` is measured in: the objective, the decision set of its exact model
    and the kind's gap note (from its :class:`~schedlab.formulations.kinds.Kind`)."""
    from schedlab.benchmarks.registry import all_kinds

    k = all_kinds().get(kind)
    if k is None:
        return {"objective": "unknown (kind not registered here)", "decisions": "unknown", "note": ""}
    return {"objective": k.objective_name, "decisions": ", ".join(sorted(d.value for d in k.decisions)),
            "note": k.gap_note}


def _warm(d: pd.DataFrame) -> str:
    """``used/runs`` of a warm-started series (``params.warm_start``), blank otherwise."""
    if "warm_start" not in d or not d["warm_start"].notna().any():
        return ""
    used = d["warm_start_used"].map(lambda v: v is True or v == 1) if "warm_start_used" in d else []
    return f"{int(sum(used))}/{len(d)}"


def gap_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (kind, cluster, jobs, method@backend): its role, seeds, mean and max signed gap to the best
    bound, share of instances whose bound is the proven optimum, how many runs' warm start the backend
    took (warm-started series only), median time, statuses."""
    g = df[(df["case_type"] == "gap") & df["current"]]
    if g.empty:
        return pd.DataFrame()
    rows = []
    for (kind, cluster, n, who), d in g.groupby(["kind", "cluster", "jobs", "who"]):
        gaps = d["gap"].dropna()
        rows.append({"kind": kind, "cluster": cluster, "jobs": int(n), "method": who,
                     "role": ",".join(sorted(d["role"].dropna().astype(str).unique())), "seeds": len(d),
                     "mean gap [%]": 100 * gaps.mean() if len(gaps) else math.nan,
                     "max gap [%]": 100 * gaps.max() if len(gaps) else math.nan,
                     "bound proven optimal": f"{int(d['bound_optimal'].sum())}/{len(d)}",
                     "warm start used": _warm(d),
                     "median time [s]": d["time_s"].median(), "status": _fmt_status(d["status"])})
    return pd.DataFrame(rows).sort_values(["kind", "cluster", "jobs", "method"]).reset_index(drop=True)


def replay_table(df: pd.DataFrame) -> pd.DataFrame:
    r = df[(df["case_type"] == "replay") & df["current"]]
    rows = []
    for _, x in r.iterrows():
        m = x["metrics"] if isinstance(x["metrics"], dict) else {}
        rows.append({"workload": m.get("workload", x["instance"]), "cluster": x["cluster"], "policy": x["label"],
                     "family": m.get("family", ""), "jobs": m.get("jobs"), "avg JCT [s]": m.get("avg_jct"),
                     "p95 JCT [s]": m.get("p95_jct"), "avg queue [s]": m.get("avg_queue"),
                     "makespan [s]": m.get("makespan"), "utilisation": m.get("utilization"),
                     "preemptions": m.get("preemptions"), "status": x["status"]})
    return pd.DataFrame(rows)


def bound_table(df: pd.DataFrame) -> pd.DataFrame:
    b = df[(df["case_type"] == "bound") & df["current"]]
    rows = []
    for _, x in b.iterrows():
        ex = x["extra"] if isinstance(x["extra"], dict) else {}
        rows.append({"policy": x["method"], "instance": x["instance"], "preemptive": ex.get("preemptive"),
                     "online avg JCT [s]": x["objective"], "offline bound [s]": x["bound"],
                     "online / bound": x["objective"] / x["bound"] if x["bound"] else math.nan,
                     "bound": ex.get("bound_method"), "bound status": ex.get("bound_status"),
                     "note": x["gap_note"]})
    return pd.DataFrame(rows)


def scale_table(df: pd.DataFrame) -> pd.DataFrame:
    f = scale_fits(df)
    if f.empty:
        return f
    return f.rename(columns={"method": "method", "exponent": "exponent b (t ~ n^b)", "r2": "R^2"})


def failures(df: pd.DataFrame) -> pd.DataFrame:
    cur = df[df["current"]]
    bad = cur[~cur["status"].isin((*FINISHED, *AT_LIMIT, "incomplete"))]
    return bad[["suite", "label", "status", "message"]].reset_index(drop=True) if len(bad) else pd.DataFrame()


def fmt(value: object) -> str:
    """A table cell: 4 significant digits, blanks for missing values."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.3g}"
        return f"{v:.4g}"
    return str(value)


__all__ = ["bound_table", "bound_violations", "failures", "kind_header", "fmt", "gap_table", "replay_table", "scale_table", "summary"]
