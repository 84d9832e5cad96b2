"""The report's tables (pandas DataFrames), shared by ``schedlab report``, the summary ``schedlab bench``
prints and ``schedlab compare``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from schedlab.benchmarks.harness.analysis import scale_fits
from schedlab.benchmarks.harness.record import AT_LIMIT, FINISHED, Status
from schedlab.benchmarks.merged import all_kinds
from schedlab.formulations.result import signed_gap


def _fmt_status(s: pd.Series) -> str:
    c = s.value_counts()
    return ", ".join(f"{k} {v}" for k, v in c.items())


def _verdicts(v: pd.Series) -> str:
    """``accepted/judged`` over the runs the verifier judged (a bound or an infeasible run has no
    allocation to judge)."""
    judged = v.dropna()
    return f"{int((judged == True).sum())}/{len(judged)}" if len(judged) else "n/a"  # noqa: E712


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (case type, kind, decision set, objective, method@backend) — a method is never averaged
    across kinds, decision sets or objectives, and each row names the decision set and objective its gap is
    measured in: runs, statuses, median time (a policy: its warm ``decide()`` inside the worker), mean/max
    signed gap to the best proven bound (gap cases; bound cases: online vs the offline bound)."""
    if df.empty:
        return pd.DataFrame()
    rows = []
    cur = df[df["current"]].copy()
    cur["kind"] = cur["kind"].fillna("")
    for c in ("decision_set", "objective_name"):
        cur[c] = cur[c].fillna("") if c in cur else ""
    for (ct, kind, dset, obj, who), g in cur.groupby(["case_type", "kind", "decision_set", "objective_name", "who"],
                                                     sort=False):
        gaps = g["gap"].dropna()
        rows.append({"type": ct, "kind": kind, "decision set": dset, "objective": obj, "method": who, "runs": len(g),
                     "status": _fmt_status(g["status"]),
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
    bad = df[df["current"] & (df["status"] == Status.BOUND_VIOLATED.value)]
    if bad.empty:
        return pd.DataFrame()
    return pd.DataFrame({"kind": bad["kind"], "instance": bad["instance"], "method": bad["who"],
                         "objective": bad["objective"], "proven bound": bad["best_bound"],
                         "what": bad["bound_violation"]}).reset_index(drop=True)


def kind_header(kind: str) -> dict[str, str]:
    """What a gap table of ``kind`` is measured in: the objective, the decision set of its exact model
    and the kind's gap note (from its :class:`~schedlab.formulations.kinds.Kind`)."""
    k = all_kinds().get(kind)
    if k is None:
        return {"objective": "unknown (kind not registered here)", "decisions": "unknown", "note": ""}
    sets = "; ".join(f"{n} = {{{', '.join(sorted(d.value for d in ds))}}}" for n, ds in k.decision_sets().items())
    return {"objective": k.objective_name, "decisions": ", ".join(sorted(d.value for d in k.decisions)),
            "note": k.gap_note, "sets": sets, "neutral": "" if k.neutral is None else
            f"{k.neutral.name} ({k.neutral.summary})"}


#: roles whose runs solve a twin themselves: listed apart as checks (their gap must be 0), not results
CHECK_ROLES = ("exact", "relaxation", "bound")
#: a check row whose |gap| exceeds this (relative) is reported as failed
CHECK_TOL = 1e-6


def _warm(d: pd.DataFrame) -> str:
    """``used/runs`` of a warm-started series (``params.warm_start``), blank otherwise."""
    if "warm_start" not in d or not d["warm_start"].notna().any():
        return ""
    used = d["warm_start_used"].map(lambda v: v is True or v == 1) if "warm_start_used" in d else []
    return f"{int(sum(used))}/{len(d)}"


def gap_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (kind, cluster, jobs, instances (``generated`` or the replay state's origin), decision set,
    method@backend): its role, seeds, mean and max signed gap
    to the best bound of its decision set under the kind's (family) objective, the neutral objective's
    mean gap and what it is measured against (``neutral reference``: ``optimum``, the proven neutral optimum
    of the set, where a twin was solved under it, else ``twin allocation``, the family twin's allocation
    scored the same way: a reference, not a bound; ``solved for`` names the neutral objective on the rows
    of such solves, whose check is their neutral gap), share of instances whose bound is the
    proven optimum, how many runs' warm start the backend took (warm-started series only), median
    time, statuses. Methods that solve a twin themselves (``exact``, relaxations)
    and exact policies (``exact-joint``) are ``check`` rows, listed after the heuristics: their gap must be
    0 (a relaxation's need not)."""
    g = df[(df["case_type"] == "gap") & df["current"]]
    if g.empty:
        return pd.DataFrame()
    if "decision_set" not in g:
        g = g.assign(decision_set=g["kind"], objective_name=None, neutral_name=None, neutral_gap=np.nan)
    rows = []
    # where the instances came from: generated, or the replay state (workload, policy, decision, time)
    src = [o if s == "replay" and isinstance(o, str) else "generated" for s, o in
           zip(g.get("instance_source", [None] * len(g)), g.get("origin", [None] * len(g)), strict=True)]
    g = g.assign(source=src)
    for (kind, cluster, n, source, dset, who), d in g.groupby(["kind", "cluster", "jobs", "source", "decision_set",
                                                               "who"]):
        gaps = d["gap"].dropna()
        ng = d["neutral_gap"].dropna() if "neutral_gap" in d else pd.Series(dtype=float)
        roles = sorted(d["role"].dropna().astype(str).unique())
        names = d["objective_name"].dropna().unique()
        neutral = d["neutral_name"].dropna().unique()
        policy_check = bool(d["check"].all() if "check" in d else False)
        check = (bool(roles) and all(r in CHECK_ROLES for r in roles)) or policy_check
        # a proven check (a policy check, or exact solves that all proved optimality) solves the twin itself:
        # a nonzero gap is a defect of the model or the harness, said loudly (a relaxation's or a time-limited
        # solve's gap is not)
        proven = policy_check or (roles == ["exact"] and (d["status"].astype(str) == "optimal").all())
        # a twin solved under the neutral objective: its check is its neutral gap (0 to its own optimum)
        optimises = d["optimises"].dropna().unique() if "optimises" in d else []
        failed = bool(proven and len(gaps) and gaps.abs().max() > CHECK_TOL) if not len(optimises) else \
            bool(proven and len(ng) and ng.abs().max() > CHECK_TOL)
        refs = d["neutral_reference"].fillna("").astype(str) if "neutral_reference" in d else pd.Series(dtype=str)
        ref_count = refs[refs != ""].value_counts()
        rows.append({"kind": kind, "cluster": cluster, "jobs": int(n), "instances": source, "decision set": dset,
                     "method": who,
                     "role": ",".join(roles),
                     "check": check,
                     "seeds": len(d), "objective": names[0] if len(names) else "",
                     "solved for": optimises[0] if len(optimises) else "",
                     "mean gap [%]": 100 * gaps.mean() if len(gaps) else math.nan,
                     "max gap [%]": 100 * gaps.max() if len(gaps) else math.nan,
                     "neutral objective": neutral[0] if len(neutral) else "",
                     "neutral gap [%]": 100 * ng.mean() if len(ng) else math.nan,
                     "neutral reference": ", ".join(f"{r} {c}/{len(d)}" if c < len(d) else r
                                                    for r, c in ref_count.items()),
                     "bound proven optimal": f"{int(d['bound_optimal'].sum())}/{len(d)}",
                     "warm start used": _warm(d),
                     "median time [s]": d["time_s"].median(),
                     "status": _fmt_status(d["status"]) + (", CHECK FAILED: gap must be 0" if failed else "")})
    out = pd.DataFrame(rows).sort_values(["kind", "cluster", "instances", "jobs", "decision set", "check", "method"])
    return out.reset_index(drop=True)


def flexibility(df: pd.DataFrame) -> pd.DataFrame:
    """The value of flexibility: per instance, each narrower decision set's proven optimum against the
    kind's own (wider) set's, as the signed gap of the narrow optimum to the wide one (what resizing and
    re-planning would add), under the family objective. Only proven optima are compared. ``neutral: twin
    allocations`` compares the two family twins' allocations under the neutral objective (minimised; neither
    optimises it: a comparison of allocations, not of optima); ``neutral: optima`` the two sets' proven
    neutral optima (where both twins were solved under it)."""
    g = df[(df["case_type"] == "gap") & df["current"]]
    if g.empty or "decision_set" not in g:
        return pd.DataFrame()

    rows = []
    for _, d in g.groupby("instance"):
        kind = str(d["kind"].iloc[0])
        opt = d[d["bound_optimal"] & d["best_bound"].notna()].groupby("decision_set")["best_bound"].first()
        if kind not in opt.index:
            continue
        wide = float(opt[kind])
        sense = d["sense"].dropna().iloc[0]
        twin = d[(d["role"] == "exact") & d["neutral_objective"].notna()] if "neutral_objective" in d else d[:0]
        if "optimises" in twin:
            twin = twin[twin["optimises"].isna()]
        neutral = twin.sort_values("who").groupby("decision_set")["neutral_objective"].first()
        nopt = (d[d["neutral_optimum"].notna()].groupby("decision_set")["neutral_optimum"].first()
                if "neutral_optimum" in d else pd.Series(dtype=float))
        for dset, v in opt.items():
            if dset == kind:
                continue
            gap = signed_gap(float(v), wide, sense)
            names = d["objective_name"].dropna().unique() if "objective_name" in d else []
            rows.append({"kind": kind, "cluster": d["cluster"].iloc[0], "jobs": int(d["jobs"].iloc[0]),
                         "seed": int(d["seed"].iloc[0]), "objective": names[0] if len(names) else "",
                         "decision set": dset, "its optimum": float(v),
                         "wider set": kind, "wider optimum": wide,
                         "value of flexibility [%]": math.nan if gap is None else 100 * gap,
                         "neutral: twin allocations [%]": _ngap(neutral, dset, kind),
                         "neutral: optima [%]": _ngap(nopt, dset, kind)})
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).sort_values(["kind", "cluster", "jobs", "decision set", "seed"]).reset_index(drop=True)


def _ngap(neutral: pd.Series, narrow: str, wide: str) -> float:
    if narrow not in neutral.index or wide not in neutral.index:
        return math.nan
    g = signed_gap(float(neutral[narrow]), float(neutral[wide]), "min")
    return math.nan if g is None else 100 * g


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
        rows.append({"policy": x["method"], "instance": x["instance"], "objective": ex.get("objective_name", ""),
                     "decision set": ex.get("decision_set", ""), "preemptive": ex.get("preemptive"),
                     "online avg JCT [s]": x["objective"], "offline bound [s]": x["bound"],
                     "online / bound": x["objective"] / x["bound"] if x["bound"] else math.nan,
                     "bound": ex.get("bound_method"), "bound status": ex.get("bound_status"),
                     "note": x["gap_note"]})
    return pd.DataFrame(rows)


def scale_table(df: pd.DataFrame) -> pd.DataFrame:
    f = scale_fits(df)
    if f.empty:
        return f
    return f.rename(columns={"method": "method", "exponent": "exponent b (t ~ n^b)", "ci_low": "b 95% low",
                             "ci_high": "b 95% high", "r2": "R^2"})


def failures(df: pd.DataFrame) -> pd.DataFrame:
    cur = df[df["current"]]
    bad = cur[~cur["status"].isin((*FINISHED, *AT_LIMIT, Status.INCOMPLETE))]
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


__all__ = ["CHECK_ROLES", "bound_table", "bound_violations", "failures", "flexibility", "kind_header", "fmt", "gap_table", "replay_table", "scale_table", "summary"]
