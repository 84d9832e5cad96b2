"""From stored records to what reports show (pandas).

* :func:`frame` — the records as a DataFrame, the latest run per (suite, label) flagged ``current``;
* :func:`with_best_bound` — per instance, the best proven bound over the methods whose role bounds the
  kind's optimum (``exact`` dual bounds and ``relaxation`` bounds; never a ``restriction`` such as POP,
  nor a ``heuristic-in-model``): the smallest upper bound of a maximisation, the largest lower bound of
  a minimisation. Each run's ``gap`` is the SIGNED gap :func:`~schedlab.formulations.result.signed_gap`
  of its objective to that bound (positive = worse than the bound, on the scale max(|bound|, |value|)).
  A verified objective better than the proven bound (beyond 1e-6 relative) is not a gap: the run's
  status becomes ``bound-violated`` (``bound_violation`` names both values and methods) and no run of
  that instance gets a gap. ``bound_optimal`` says whether the bound is a proven optimum (some verified
  run meets it), and ``gap_note`` says so in words;
* :func:`fit_exponent` / :func:`scale_fits` — runtime ~ a * size^b fitted in log-log space;
* :func:`results_by_label` — ``label -> metrics`` for a suite's ``reproduce``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.benchmarks.harness.record import AT_LIMIT, FINISHED, Status
from schedlab.benchmarks.merged import all_kinds
from schedlab.formulations.result import signed_gap

#: gaps below this are floating-point noise of equal objectives (solvers' own tolerances are >= 1e-9)
GAP_TOL = 1e-9
#: record roles whose bound is a bound on the kind's optimum (``bound``: relaxation records stored before
#: roles were declared)
BOUNDING_ROLES = ("exact", "relaxation", "bound")
#: a value better than the proven bound by more than this (relative, at least 1e-6 absolute) violates it
VIOLATION_TOL = 1e-6
#: FINISHED: statuses of runs that ended on their own (a proof, a decision, a bound); AT_LIMIT: statuses of a
#: solver stopped by a limit, unless it stopped well before the time limit (POP merges sub-solutions
#: without a proof; a node limit): then its time is a measurement too


def measured(df: pd.DataFrame) -> pd.Series:
    """Runs whose build + solve time is a measurement of the method, not of a limit or a failure."""
    early = df["status"].isin(AT_LIMIT) & (df["time_s"] < 0.95 * df["time_limit_s"].fillna(float("inf")))
    return df["status"].isin(FINISHED) | early


def who(method: str, backend: Any = None, params: Any = None) -> str:
    """``method[@backend][k=v,...]``: a parameter variant (``fifo[blocking=False]``) is its own series."""
    name = method if backend is None or (isinstance(backend, float) and math.isnan(backend)) else f"{method}@{backend}"
    extra = ",".join(f"{k}={v}" for k, v in sorted(params.items())) if isinstance(params, dict) else ""
    return name + (f"[{extra}]" if extra else "")


def frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(list(records))
    if df.empty:
        return df
    df["time_s"] = df[["build_s", "solve_s"]].fillna(0.0).sum(axis=1)
    df["who"] = [who(m, b if ct == "gap" else None, p) for m, b, ct, p in
                 zip(df["method"], df["backend"], df["case_type"],
                     df["params"] if "params" in df else [None] * len(df), strict=True)]
    latest = df.sort_values("finished_at").groupby(["suite", "label"]).tail(1).index
    df["current"] = df.index.isin(latest)
    return with_best_bound(with_measure(df))


#: fields a gap record keeps in ``extra`` that the analysis lifts into columns
MEASURE_FIELDS = ("decision_set", "objective_name", "neutral_name", "neutral_objective", "twin", "check",
                  "first_call_s", "instance_source", "origin", "optimises", "neutral_bound", "neutral_proven")


def with_measure(df: pd.DataFrame) -> pd.DataFrame:
    """Lift what a gap row was measured in out of ``extra``: its ``decision_set`` (a record stored before
    decision sets were declared counts as the kind's own), ``objective_name``, ``twin``, ``check`` (an
    exact policy solving the twin itself) and the neutral objective (``neutral_name``,
    ``neutral_objective``)."""
    df = df.copy()
    ex = [e if isinstance(e, dict) else {} for e in df.get("extra", pd.Series([None] * len(df), index=df.index))]
    for f in MEASURE_FIELDS:
        df[f] = [e.get(f) for e in ex]
    own = df["kind"] if "kind" in df else pd.Series([""] * len(df), index=df.index)
    old = (df["case_type"] == "gap") & df["decision_set"].isna()
    df.loc[old, "decision_set"] = own[old].fillna("")
    for f in ("neutral_objective", "first_call_s", "neutral_bound"):
        df[f] = pd.to_numeric(df[f], errors="coerce")
    df["check"] = [c is True for c in df["check"]]
    df["neutral_proven"] = [c is True for c in df["neutral_proven"]]
    return df


def _set_decisions(kind: str) -> dict[str, frozenset]:
    k = all_kinds().get(kind)
    return {} if k is None else dict(k.decision_sets())


def _within(kind_sets: dict[str, frozenset], narrow: str, wide: str) -> bool:
    """Whether decision set ``narrow`` is contained in ``wide`` (an unknown name only in itself)."""
    if narrow == wide:
        return True
    a, b = kind_sets.get(narrow), kind_sets.get(wide)
    return a is not None and b is not None and a <= b


def _best(bounds: pd.Series, sense: str | None) -> float | None:
    b = bounds.dropna()
    if b.empty or sense not in ("min", "max"):
        return None
    return float(b.min() if sense == "max" else b.max())


def with_best_bound(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["best_bound"] = np.nan
    df["gap"] = np.nan
    df["bound_optimal"] = False
    df["gap_note"] = ""
    df["bound_violation"] = ""
    df["neutral_gap"] = np.nan
    df["neutral_reference"] = ""
    df["neutral_optimum"] = np.nan
    if "decision_set" not in df:
        df = with_measure(df)
    snap = df["case_type"] == "gap"
    for (inst, dset), g_own in df[snap & df["current"]].groupby(["instance", "decision_set"]):
        g_all = df[snap & df["current"] & (df["instance"] == inst)]
        sets = _set_decisions(str(g_all["kind"].iloc[0])) if "kind" in g_all else {}
        # bounds of this set: bounding runs whose set contains it; checked against runs of sets inside it
        wider = g_all["decision_set"].map(lambda t, d=dset, s=sets: _within(s, d, t))
        inner = g_all["decision_set"].map(lambda t, d=dset, s=sets: _within(s, t, d))
        g = g_all[inner]
        senses = g_all["sense"].dropna().unique()
        sense = senses[0] if len(senses) else None
        src_rows = g_all[wider & g_all["role"].isin(BOUNDING_ROLES) & g_all["bound"].notna()]
        best = _best(src_rows["bound"], sense)
        idx = df.index[snap & (df["instance"] == inst) & (df["decision_set"] == dset)]
        _neutral_gaps(df, g_own, g, idx)
        if best is None:
            df.loc[idx, "gap_note"] = "no bound for this instance (no exact or relaxation run with a bound)"
            continue
        tol = VIOLATION_TOL * max(1.0, abs(best))
        src_row = src_rows.loc[(src_rows["bound"] - best).abs() <= tol].iloc[0]
        src, src_set = src_row["who"], src_row["decision_set"]
        df.loc[idx, "best_bound"] = best
        if _violations(df, g, best, sense, src, tol):
            df.loc[idx, "gap_note"] = (f"the proven bound {best:.6g} of {src} is beaten by a verified run "
                                       "(bound-violated): no gap on this instance")
            continue
        # a verified value that meets a valid bound is the optimum, whoever found it
        reached = g[g["objective"].notna() & (g["verified"] != False)]  # noqa: E712 - pandas column
        optimal = bool(((reached["objective"] - best).abs() <= tol).any())
        df.loc[idx, "bound_optimal"] = optimal
        df.loc[idx, "gap_note"] = ("bound is the proven optimum" if optimal else
                                   f"bound from {src}, not proven optimal" if src_set == dset else
                                   f"bound of the wider decision set {src_set} from {src} (no run of {dset} "
                                   "reaches it): valid, not this set's optimum")
        for i in idx:
            df.at[i, "gap"] = _gap(df.at[i, "objective"], best, sense)
    on = df["case_type"] == "bound"
    if not on.any():
        return df
    df.loc[on, "best_bound"] = df.loc[on, "bound"]
    df.loc[on, "gap"] = [_gap(o, b, "min") for o, b in zip(df.loc[on, "objective"], df.loc[on, "bound"], strict=True)]
    df.loc[on, "bound_optimal"] = df.loc[on, "proven"].fillna(False).astype(bool)
    df.loc[on, "gap_note"] = ["bound is the proven optimum" if p else "bound not proven optimal"
                              for p in df.loc[on, "bound_optimal"]]
    return df


def _neutral_gaps(df: pd.DataFrame, g_own: pd.DataFrame, g: pd.DataFrame, idx: pd.Index) -> None:
    """``neutral_gap``: each run's neutral objective (minimised) against, in order of preference,

    * ``neutral_reference = "optimum"``: the proven neutral optimum of its decision set (the smallest
      verified neutral value of a twin of this set solved under the neutral objective, ``optimises``, to
      proven optimality). A verified run of this set or a narrower one with a smaller neutral value is
      ``bound-violated`` (an error record) and the set gets no neutral gap on this instance;
    * ``"twin allocation"``: the family-objective exact twin's allocation of the set scored the same way
      (a reference, not a bound: it may be negative), where no neutral optimum was proven."""
    ok = g_own["neutral_objective"].notna() & (g_own["verified"] != False)  # noqa: E712 - pandas column
    solves = g_own[g_own["optimises"].notna()] if "optimises" in g_own else g_own[:0]
    opt = solves[solves["neutral_proven"] & solves["neutral_objective"].notna()]
    if not opt.empty:
        b = float(opt["neutral_objective"].min())
        tol = VIOLATION_TOL * max(1.0, abs(b))
        src = opt.loc[opt["neutral_objective"].idxmin(), "who"]
        if _neutral_violations(df, g, b, src, tol):
            df.loc[idx, "neutral_reference"] = "none: optimum beaten (bound-violated)"
            return
        _set_neutral(df, idx, b, "optimum")
        return
    ref = g_own[ok & (g_own["role"] == "exact") & g_own["optimises"].isna()] if "optimises" in g_own else g_own[:0]
    if not ref.empty:
        ref = ref.sort_values(["proven", "who"], ascending=[False, True])
        _set_neutral(df, idx, float(ref["neutral_objective"].iloc[0]), "twin allocation")


def _set_neutral(df: pd.DataFrame, idx: pd.Index, r: float, reference: str) -> None:
    for i in idx:
        v = df.at[i, "neutral_objective"]
        df.at[i, "neutral_reference"] = reference
        df.at[i, "neutral_optimum"] = r if reference == "optimum" else np.nan
        if pd.notna(v):
            gg = signed_gap(float(v), r, "min")
            df.at[i, "neutral_gap"] = np.nan if gg is None else (0.0 if abs(gg) < GAP_TOL else gg)


def _neutral_violations(df: pd.DataFrame, g: pd.DataFrame, b: float, src: str, tol: float) -> bool:
    """Mark the verified runs of ``g`` whose neutral value is below the proven neutral optimum ``b``; any?"""
    bad = g[g["neutral_objective"].notna() & (g["verified"] != False) & (b - g["neutral_objective"] > tol)]  # noqa: E712
    return _mark_violated(df, bad, lambda r: (
        f"{r['who']} reached est-avg-jct {r['neutral_objective']:.6g}, below the proven neutral optimum "
        f"{b:.6g} of {src}: the twin's model does not contain this allocation, or it is wrong"))


def _violations(df: pd.DataFrame, g: pd.DataFrame, best: float, sense: str, src: str, tol: float) -> bool:
    """Mark the runs of ``g`` whose verified objective beats the proven bound ``best``; any?"""
    ok = g["objective"].notna() & (g["verified"] != False)  # noqa: E712 - pandas column
    better = (g["objective"] - best) > tol if sense == "max" else (best - g["objective"]) > tol
    return _mark_violated(df, g[ok & better], lambda r: (
        f"{r['who']} reached {r['objective']:.6g}, better than the proven {'upper' if sense == 'max' else 'lower'} "
        f"bound {best:.6g} of {src}: the bound's model does not contain this allocation, or it is wrong"))


def _mark_violated(df: pd.DataFrame, bad: pd.DataFrame, message: Callable[[pd.Series], str]) -> bool:
    """Turn the runs ``bad`` into ``bound-violated`` error records (never gaps), each with its message; any?"""
    for i, r in bad.iterrows():
        msg = message(r)
        df.at[i, "status"] = Status.BOUND_VIOLATED.value
        df.at[i, "bound_violation"] = msg
        df.at[i, "message"] = msg
    return not bad.empty


def _gap(objective: Any, bound: Any, sense: str) -> float:
    if objective is None or bound is None or pd.isna(objective) or pd.isna(bound):
        return float("nan")
    g = signed_gap(float(objective), float(bound), sense)
    if g is None:
        return float("nan")
    return 0.0 if abs(g) < GAP_TOL else g


def fit_exponent(sizes: Iterable[float], times: Iterable[float]) -> tuple[float, float, float, int]:
    """Least squares of ``log t = log a + b log n``: ``(b, a, r2, points)`` (NaN with < 2 sizes)."""
    f = fit_power_law(sizes, times)
    return f["exponent"], f["coef"], f["r2"], f["points"]


#: a runtime exponent is fitted only over at least this many distinct sizes ...
MIN_FIT_SIZES = 4
#: ... spanning at least this factor (largest / smallest size)
MIN_FIT_SPAN = 8.0
#: a fit with R^2 below this is flagged (the power law does not describe the runtimes)
POOR_R2 = 0.8


def fit_power_law(sizes: Iterable[float], times: Iterable[float]) -> dict[str, Any]:
    """``t ~ a n^b`` by least squares in log-log space over the positive points: ``exponent`` b, ``coef``
    a, ``r2``, ``points``, ``sizes`` (distinct sizes), ``span`` (largest / smallest size) and the 95 %
    confidence interval of b (``ci_low``, ``ci_high``: Student t with points - 2 degrees of freedom; NaN
    with fewer than 3 points). NaN exponent with fewer than 2 distinct sizes."""
    x = np.asarray(list(sizes), float)
    y = np.asarray(list(times), float)
    ok = (x > 0) & (y > 0)
    x, y = x[ok], y[ok]
    out: dict[str, Any] = {"exponent": math.nan, "coef": math.nan, "r2": math.nan, "points": int(ok.sum()),
                           "sizes": int(len(np.unique(x))), "span": float(x.max() / x.min()) if len(x) else math.nan,
                           "ci_low": math.nan, "ci_high": math.nan}
    lx, ly = np.log(x), np.log(y)
    if out["sizes"] < 2:
        return out
    b, la = np.polyfit(lx, ly, 1)
    res = ly - (la + b * lx)
    ss = float(((ly - ly.mean()) ** 2).sum())
    out.update(exponent=float(b), coef=float(math.exp(la)), r2=1.0 - float((res**2).sum()) / ss if ss > 0 else 1.0)
    n = len(lx)
    if n > 2:
        from scipy.stats import t as student  # lazy: start-up (scipy)

        sxx = float(((lx - lx.mean()) ** 2).sum())
        se = math.sqrt(float((res**2).sum()) / (n - 2) / sxx)
        h = float(student.ppf(0.975, n - 2)) * se
        out.update(ci_low=float(b) - h, ci_high=float(b) + h)
    return out


def fit_admissible(fit: dict[str, Any]) -> str | None:
    """Why a fit of :func:`fit_power_law` gives no exponent (too few sizes, too narrow a span), or ``None``."""
    if fit["sizes"] >= MIN_FIT_SIZES and fit["span"] >= MIN_FIT_SPAN:
        return None
    return (f"not fitted: {fit['sizes']} sizes spanning {fit['span']:.3g}x (an exponent needs >= {MIN_FIT_SIZES} "
            f"sizes spanning >= {MIN_FIT_SPAN:g}x)")


def scale_fits(df: pd.DataFrame) -> pd.DataFrame:
    """Runtime exponent per (kind, method@backend) against jobs (one cluster) and GPUs (fixed jobs),
    over the runs that finished (limit-cut runs would flatten the curve; they are counted apart). An
    exponent is given only from >= :data:`MIN_FIT_SIZES` sizes spanning >= :data:`MIN_FIT_SPAN` x (else
    the row says why not), with R^2 and a 95 % interval; ``flag`` marks R^2 < :data:`POOR_R2`."""
    rows = []
    g = df[(df["case_type"] == "gap") & df["current"] & (df["method"] != "lp-bound")]
    for (kind, who), d in g.groupby(["kind", "who"]):
        fin = d[measured(d)]
        for axis, other in (("jobs", "gpus"), ("gpus", "jobs")):
            # the sweep along ``axis`` holds the other size fixed: take the most common value of it
            if fin.empty:
                continue
            fixed = fin[other].mode().iloc[0]
            sweep = fin[fin[other] == fixed]
            if sweep[axis].nunique() < 2:
                continue
            f = fit_power_law(sweep[axis], sweep["time_s"])
            why = fit_admissible(f)
            if why is not None:
                f.update(exponent=math.nan, coef=math.nan, r2=math.nan, ci_low=math.nan, ci_high=math.nan)
            poor = why is None and f["r2"] < POOR_R2
            cut = d[(d[other] == fixed) & ~measured(d)]
            rows.append({"kind": kind, "method": who, "axis": axis, "fixed": f"{other}={fixed}",
                         "exponent": f["exponent"], "ci_low": f["ci_low"], "ci_high": f["ci_high"], "coef": f["coef"],
                         "r2": f["r2"], "points": f["points"], "unfinished": len(cut),
                         "sizes": f"{int(sweep[axis].min())}-{int(sweep[axis].max())} ({f['sizes']} sizes)",
                         "flag": why or (f"poor fit: R^2 {f['r2']:.2f} < {POOR_R2:g}" if poor else "")})
    return pd.DataFrame(rows)


def results_by_label(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if df.empty:
        return out
    for _, r in df.iterrows():
        if r["case_type"] == "replay" and isinstance(r.get("metrics"), dict):
            out[r["label"]] = dict(r["metrics"])
        else:
            out[r["label"]] = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
    return out


def export(df: pd.DataFrame, directory, *, parquet: bool = True) -> list[str]:
    """``results.csv`` (and ``results.parquet`` when pyarrow is installed) with the derived columns."""
    d = Path(directory)
    flat = df.copy()
    for c in ("params", "violations", "versions", "metrics", "extra", "spec"):
        if c in flat:
            flat[c] = [None if v is None or (isinstance(v, float) and math.isnan(v)) else json.dumps(v, default=str)
                       for v in flat[c]]
    flat.to_csv(d / "results.csv", index=False)
    out = [str(d / "results.csv")]
    if parquet:
        try:
            import pyarrow  # noqa: F401  # lazy: optional dependency (pyarrow)
        except ImportError:
            return out
        flat.to_parquet(d / "results.parquet", index=False)
        out.append(str(d / "results.parquet"))
    return out


__all__ = ["AT_LIMIT", "BOUNDING_ROLES", "FINISHED", "MIN_FIT_SIZES", "MIN_FIT_SPAN", "POOR_R2", "VIOLATION_TOL", "export",
           "fit_admissible", "fit_exponent", "fit_power_law", "frame", "measured", "results_by_label", "scale_fits", "who",
           "with_best_bound"]
