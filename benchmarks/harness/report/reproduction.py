"""``schedlab report DIR --reproduction``: the papers' tables from the stored records of ``schedlab bench
tiresias|dally|rubick`` — the paper's figure, ours as a mean over seeds with a 95 % interval, a verdict,
and the cases behind each row. Nothing here is typed: every figure is read from a record, every paper
figure from :mod:`schedlab.benchmarks.harness.suites.paper_figures`.

**Ours.** A figure is a ratio ``num / den`` of one metric of two cases. Per seed (the ``@seed=`` suffix
of a label, :mod:`~schedlab.benchmarks.harness.suites.seeds`; the cases of one seed share the workload)
the ratio is taken, and ours is the mean of the per-seed ratios with a two-sided 95 % **Student t**
interval (``mean ± t(0.975, n-1) · sd / sqrt(n)``, ``n`` = seeds with both cases). Dally's improvements
are shown as ``100 (1 - ratio)`` %, the interval transformed with them.

**Verdicts** (the paper's band: its stated range, or a point figure ``v`` within a factor ``1 + tol``,
see ``paper_figures``; a point figure's band is cut at 1 on the paper's side where it names a winner):

* where the paper names no winner (its band contains 1): ``held`` when our interval overlaps the band,
  else ``not held``;
* where it names one (its band lies on one side of 1): ``held`` when our whole interval lies on that
  side and overlaps the band; ``direction only`` when it lies on that side but misses the band (the
  same winner, another size); ``not held`` when it lies on the other side or at 1 (no difference);
  ``inconclusive`` when it straddles 1 (too few seeds or too much spread to tell the winner);
* ``n = 1`` — one seed only: no interval, no verdict (the figure is shown); a deterministic figure
  (the artifact's own schedulers: seeds ``exact``) is judged on its one value, and so is a figure whose
  seeds all give one value (seeds ``1 (N identical: deterministic)``: a fixed trace under deterministic
  policies repeats one replay; no width-0 interval is shown as if it were precision);
* ``ours only`` — a row of an experiment (free preemption beside the measured cost) the paper has no
  figure for: ours with its interval, no verdict;
* a figure on a trace *as recorded* shown beside the same figure on the trace resampled per seed
  (``Figure.as_recorded``) prints its verdict as ``as recorded: ...``; the resampled row's verdict counts.

A sweep (``Trend``) is tested by the per-seed change of the ratio from the first point to the last:
``trend held`` when its 95 % interval lies on the paper's side of 0, ``reversed`` when on the other,
``no trend shown`` when it contains 0. Points whose records are missing are ``—``; a table without any
record is marked pending, with the command that produces it.

Records: ``status == "ok"`` only; of several records of one (suite, label) (code versions), the last
finished one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.store import Store
from schedlab.benchmarks.harness.suites import paper_figures as pf
from schedlab.benchmarks.harness.suites.rubick import micro_benchmark
from schedlab.benchmarks.harness.suites.rubick_micro import measured_micro
from schedlab.benchmarks.harness.suites.seeds import split_seed

SUITE_TITLES = {"tiresias": "Tiresias (NSDI'19)", "dally": "Dally", "rubick": "Rubick (MLSys'25)"}
#: the ``schedlab bench`` options that produce a table's cases (by the start of its title)
RUN_OPTIONS = (
    ("tiresias", "Testbed, the paper's", "parts=testbed-philly"),
    ("tiresias", "Testbed", "parts=testbed"),
    ("tiresias", f"Philly table, arrivals compressed 5x (ours), {pf.FREE_TITLE}",
     "parts=loaded --option semantics=realistic --option costs=free"),
    ("tiresias", "Philly table, arrivals compressed", "parts=loaded"),
    ("tiresias", "Philly table, the paper's load", "parts=loaded-paper"),
    ("tiresias", "Philly table", "parts=philly"),
    ("tiresias", "Philly per virtual cluster (", "parts=philly-vc"),
    ("tiresias", "Philly per virtual cluster, the artifact", "parts=reference"),
    ("tiresias", "Sensitivity (sensitivity-x5)", "parts=sensitivity --option resample=none"),
    ("tiresias", "Sensitivity (sensitivity-x5-rs)", "parts=sensitivity"),
    ("tiresias", "Sensitivity", "parts=sensitivity-testbed"),
)
SEEDS_WANTED = 5
#: the verdict column of a row the paper has no figure for (an experiment's own comparison)
NO_PAPER_FIGURE = "ours only"
#: the record's wall seconds, kept beside its metrics
WALL = "_wall_s"

Runs = Mapping[str, Mapping[str, Mapping[int | None, Mapping[str, Any]]]]  # suite -> label -> seed -> metrics


@dataclass(frozen=True)
class Interval:
    mean: float
    lo: float
    hi: float
    n: int


def t_interval(values: Sequence[float], level: float = 0.95) -> Interval:
    """Mean and two-sided Student t interval (``lo == hi == mean`` for one value)."""
    from scipy import stats  # lazy: start-up (scipy)

    n = len(values)
    if n == 0:
        raise ValueError("no values")
    m = math.fsum(values) / n
    if n == 1:
        return Interval(m, m, m, 1)
    sd = math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1))
    h = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return Interval(m, m - h, m + h, n)


# ------------------------------------------------------------------------------------------- records
def runs_from_records(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[int | None, dict]]]:
    """``suite -> plain label -> seed -> metrics`` of the finished replays (last finished per label)."""
    latest: dict[tuple[str, str], Mapping[str, Any]] = {}
    for r in records:
        if r.get("status") != "ok" or not r.get("metrics"):
            continue
        k = (r["suite"], r["label"])
        if k not in latest or str(r.get("finished_at") or "") >= str(latest[k].get("finished_at") or ""):
            latest[k] = r
    out: dict[str, dict[str, dict[int | None, dict]]] = {}
    for (suite, label), r in latest.items():
        plain, seed = split_seed(label)
        m = dict(r["metrics"])
        if r.get("wall_s") is not None:
            m[WALL] = float(r["wall_s"])
        out.setdefault(suite, {}).setdefault(plain, {})[seed] = m
    _alias(out)
    return out


#: labels of one suite that name the same replay (the same case key: the store keeps one record under one
#: of them): Rubick's ``load=1`` sweep point is its Base workload (the trace when present) at load 1
SAME_CASE: tuple[tuple[str, str, str], ...] = (("rubick", "load=1/", "base-trace/"),)


def _alias(out: dict[str, dict[str, dict[int | None, dict]]]) -> None:
    for suite, a, b in SAME_CASE:
        have = out.get(suite, {})
        if not any(lab.startswith(b) for lab in have) and not any(lab.startswith(a) for lab in have):
            continue
        for lab in list(have):
            for x, y in ((a, b), (b, a)):
                if lab.startswith(x) and lab.replace(x, y, 1) not in have:
                    have[lab.replace(x, y, 1)] = have[lab]


def runs_from_store(*directories: str | Path) -> dict[str, dict[str, dict[int | None, dict]]]:
    """The runs of one results directory, or of several together (runs made beside each other)."""
    records: list[dict[str, Any]] = []
    for d in directories:
        with Store(d, create=False) as store:
            records += store.records()
    return runs_from_records(records)


# ------------------------------------------------------------------------------------------- figures
def _metric(m: Mapping[str, Any], path: str) -> float | None:
    v: Any = m
    for part in path.split("."):
        if not isinstance(v, Mapping) or part not in v:
            return None
        v = v[part]
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def ratios(runs: Mapping[str, Mapping[int | None, Mapping[str, Any]]], num: str, den: str,
           metric: str) -> dict[int | None, float]:
    """Per seed (both cases present, denominator non-zero): ``num / den``."""
    a, b = runs.get(num, {}), runs.get(den, {})
    out: dict[int | None, float] = {}
    for s in a.keys() & b.keys():
        x, y = _metric(a[s], metric), _metric(b[s], metric)
        if x is not None and y:
            out[s] = x / y
    return out


def verdict(iv: Interval, band: tuple[float, float], *, exact: bool = False) -> str:
    """The verdict of ``iv`` against the paper's ``band`` (module docstring); ``exact``: a deterministic
    figure (one run is the value)."""
    if iv.n < 2 and not exact:
        return "n = 1"
    lo, hi = band
    overlap = iv.lo <= hi and iv.hi >= lo
    side = 1 if lo >= 1.0 else -1 if hi <= 1.0 else 0  # the winner the paper names (0: none)
    if side == 0:
        return "held" if overlap else "not held"
    if (iv.lo > 1.0) if side > 0 else (iv.hi < 1.0):  # our whole interval on the paper's side of 1
        return "held" if overlap else "direction only"
    if (iv.hi <= 1.0) if side > 0 else (iv.lo >= 1.0):  # on the other side, or exactly 1
        return "not held"
    return "inconclusive"


def trend_verdict(iv: Interval, grows: bool) -> str:
    if iv.n < 2:
        return "n = 1"
    if iv.lo > 0 or iv.hi < 0:
        return "trend held" if (iv.lo > 0) == grows else "reversed"
    return "no trend shown"


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}" if abs(v) >= 0.01 else f"{v:.2g}"


def fmt_interval(iv: Interval, show: str = "ratio") -> str:
    if show == "improvement":
        m, lo, hi = (100 * (1 - x) for x in (iv.mean, iv.hi, iv.lo))
        body = f"{m:+.1f} %"
        return body if iv.n < 2 else f"{body} [{lo:+.1f}, {hi:+.1f}]"
    body = f"{_num(iv.mean)}x"
    return body if iv.n < 2 else f"{body} [{_num(iv.lo)}, {_num(iv.hi)}]"


def _seeds(rs: Mapping[int | None, float]) -> str:
    return str(len(rs))


def _same(values: Sequence[float]) -> bool:
    return max(values) - min(values) <= 1e-12 * max(1.0, abs(max(values)))


def replicas(runs: Mapping[str, Mapping[int | None, Mapping[str, Any]]], num: str, den: str, metric: str,
             seeds: Iterable[int | None]) -> bool:
    """Several seeds whose numerator and denominator records give one value each (to 1e-12 relative):
    the same replays repeated (a fixed trace under deterministic policies), not a measurement of spread.
    (Equal *ratios* alone are not: two policies may tie on every seed's own workload.)"""
    seeds = list(seeds)
    if len(seeds) < 2:
        return False
    cols = [[_metric(runs[lab][s], metric) for s in seeds] for lab in (num, den)]
    return all(None not in c and _same(c) for c in cols)


def figure_row(fig: pf.Figure, runs: Mapping[str, Mapping[int | None, Mapping[str, Any]]]) -> list[str]:
    rs = ratios(runs, fig.num, fig.den, fig.metric)
    cases = f"`{fig.num}` / `{fig.den}`" + ("" if fig.metric == "avg_jct" else f" ({fig.metric})")
    if not rs:
        return [fig.quantity, fig.claim, fig.source, "—", "0", "no run", cases]
    values = [rs[s] for s in sorted(rs, key=lambda s: -1 if s is None else s)]
    if replicas(runs, fig.num, fig.den, fig.metric, rs):  # deterministic: one value, judged as such (no width-0 interval shown as precision)
        iv = t_interval(values[:1])
        n, v = f"1 ({len(values)} identical: deterministic)", verdict(iv, fig.band or (0.0, math.inf), exact=True)
    else:
        iv = t_interval(values)
        n = "exact" if fig.exact and iv.n == 1 else str(iv.n)
        v = verdict(iv, fig.band or (0.0, math.inf), exact=fig.exact)
    if fig.band is None:  # an experiment's row the paper has no figure for: ours only
        v = NO_PAPER_FIGURE
    if fig.as_recorded:
        v = f"as recorded: {v}"
    return [fig.quantity, fig.claim, fig.source, fmt_interval(iv, fig.show), n, v, cases]


def trend_row(tr: pf.Trend, runs: Mapping[str, Mapping[int | None, Mapping[str, Any]]]) -> list[str]:
    per = [ratios(runs, tr.pattern.format(x=x, policy=tr.num), tr.pattern.format(x=x, policy=tr.den), tr.metric)
           for x in tr.points]
    pts = []
    for x, rs in zip(tr.points, per, strict=True):
        pts.append(f"{x}: " + (fmt_interval(t_interval(list(rs.values()))) if rs else "—"))
    common = per[0].keys() & per[-1].keys()
    cases = f"`{tr.pattern.format(x='X', policy=tr.num)}` / `{tr.pattern.format(x='X', policy=tr.den)}`"
    if not common:
        return [tr.quantity, tr.claim, tr.source, "; ".join(pts), "0", "no run", cases]
    iv = t_interval([per[-1][s] - per[0][s] for s in common])
    change = f"change {tr.points[0]} -> {tr.points[-1]}: {iv.mean:+.3g}" + (
        "" if iv.n < 2 else f" [{iv.lo:+.3g}, {iv.hi:+.3g}]")
    return [tr.quantity, tr.claim, tr.source, "; ".join(pts) + f"; {change}", str(iv.n),
            trend_verdict(iv, tr.grows), cases]


# ------------------------------------------------------------------------------------------- render
HEADER = ("quantity", "paper", "source", "ours: mean [95 % t interval]", "seeds", "verdict", "cases (num / den)")


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(HEADER) + " |", "| --- | --- | --- | ---: | ---: | --- | --- |"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return out


def _run_command(suite: str, title: str) -> str:
    opt = next((o for s, prefix, o in RUN_OPTIONS if s == suite and title.startswith(prefix)), "")
    return (f"schedlab bench {suite} --option seeds={SEEDS_WANTED}" + (f" --option {opt}" if opt else "")
            + " --out DIR && schedlab report DIR --reproduction")


def micro_section(placements: str | Path, heading: str = "###") -> list[str]:
    """Rubick Fig. 8, computed (deterministic, no replay): from the artifact's measured tables (T5-3B, the
    paper's model) and from our perf model (T5 1.2B, the default ``flat`` calibration)."""
    src = f"{pf.RUBICK} §7.4, Fig. 8"
    lines = [f"{heading} Micro-benchmark (Fig. 8): two jobs on one 4-GPU A800 server, total normalised speedup", "",
             "Computed when the report is made (deterministic, no replay, no seed).", "",
             "| quantity | paper | source | ours | seeds | verdict | how |", "| --- | --- | --- | ---: | ---: | --- | --- |"]

    def row(q: str, paper: float, ours: float, how: str) -> str:
        v = verdict(Interval(ours, ours, ours, 1), pf.point(paper, 0.05), exact=True)
        return f"| {q} | {paper:g} | {src} | {ours:.3g} | exact | {v} | {how} |"

    if Path(placements).is_dir():
        m = measured_micro(placements)
        how = f"the artifact's measured tables (`{Path(placements).name}/t5_3B.csv`, `roberta.csv`)"
        lines += [row("equal split (2 + 2), T5-3B + RoBERTa", pf.MICRO_PAPER["equal split"], float(m["equal split"]), how),
                  row("Rubick's split (T5-3B 3 + RoBERTa 1)", pf.MICRO_PAPER["rubick"], float(m["paper split"]), how),
                  row(f"best split by the tables ({m['best split allocation']})", pf.MICRO_PAPER["rubick"],
                      float(m["best split"]), how)]
    else:
        lines.append(f"| measured tables | | {src} | — | | no run | `{placements}` not found |")
    o = micro_benchmark()
    how = "our perf model (`flat` calibration): T5 is the 1.2B model, which has no 3-GPU plan"
    lines += [row("equal split (2 + 2), T5 + RoBERTa", pf.MICRO_PAPER["equal split"], float(o["equal split"]), how),
              row(f"Rubick's decision ({o['allocation rubick']})", pf.MICRO_PAPER["rubick"], float(o["rubick"]), how),
              row("the paper's split (T5 3 + RoBERTa 1)", pf.MICRO_PAPER["rubick"], float(o["paper allocation"]),
                  how + " (T5 runs on 2)")]
    return lines + [""]


def artifact_section(have: Mapping[str, Mapping[int | None, Mapping[str, Any]]], heading: str = "###") -> list[str]:
    """The Tiresias artifact's own average JCTs (``tiresias.REFERENCE``, ``GANDIVA_REFERENCE``: measured with the
    artifact, ``../shared/docs/tiresias-reference.md``, ``gandiva-reference.md``) beside our replays of the same
    schedulers, VCs and cluster specs (the ``reference`` part; deterministic): ``held`` within the suite's
    tolerance. Nothing when no ``reference/`` record is stored."""
    from schedlab.benchmarks.harness.suites.tiresias import GANDIVA_REFERENCE, REFERENCE, REFERENCE_TOLERANCE

    want = [(vc, sched, fig) for vc, (_, figs) in REFERENCE.items() for sched, fig in figs.items()]
    want += [(vc, "gandiva", ref[1]) for vc, ref in GANDIVA_REFERENCE.items() if vc in REFERENCE]
    rows = []
    for vc, sched, fig in want:
        label = f"reference/{vc}/{sched}"
        ours = next((_metric(m, "avg_jct") for m in have.get(label, {}).values()), None)
        if ours is None:
            continue
        diff = round(100 * (ours - fig) / fig, 4) + 0.0  # + 0.0: no "-0.0000"
        v = "held" if abs(diff) <= 100 * REFERENCE_TOLERANCE else "not held"
        rows.append(f"| VC {vc}: avg JCT `{sched}` (s) | {fig:,.2f} | {TIRESIAS_ARTIFACT} | {ours:,.2f} | "
                    f"{diff:+.4f} % | exact | {v} | `{label}` |")
    if not rows:
        return []
    return [f"{heading} The artifact's own figures: our replays of its schedulers on its VCs and cluster specs", "",
            f"Deterministic (one run each, `tiresias` semantics); held = within {100 * REFERENCE_TOLERANCE:g} % "
            "of the artifact's figure.", "",
            "| quantity | artifact | source | ours | difference | seeds | verdict | case |",
            "| --- | ---: | --- | ---: | ---: | ---: | --- | --- |", *rows, ""]


TIRESIAS_ARTIFACT = "the Tiresias artifact's simulator"


def _cost(have: Mapping[str, Mapping[int | None, Mapping[str, Any]]], labels: Iterable[str]) -> str:
    walls = [(m[WALL], lab) for lab in dict.fromkeys(labels) for m in have.get(lab, {}).values() if WALL in m]
    if not walls:
        return "Cost: no wall time stored."
    top = max(walls)
    return (f"Cost: {len(walls)} replays, {sum(w for w, _ in walls):,.0f} s of wall time in all (one process each, "
            f"on the machine and load of the run); the longest {top[0]:,.0f} s (`{top[1]}`).")


def render(runs: Runs, suites: Sequence[str] = ("tiresias", "dally", "rubick"), *,
           placements: str | Path | None = None, depth: int = 2) -> str:
    """The Markdown of every paper's tables (a suite without any record: one pending line); with
    ``placements`` (the Rubick artifact's measured tables), also Fig. 8 computed (:func:`micro_section`).
    ``depth``: the Markdown level of a paper's heading (its tables one deeper)."""
    h1, h2 = "#" * depth, "#" * (depth + 1)
    figs, trends = pf.figures(), pf.trends()
    lines: list[str] = []
    for suite in suites:
        have = runs.get(suite, {})
        lines += [f"{h1} {SUITE_TITLES.get(suite, suite)}", ""]
        titles = list(dict.fromkeys([f.table for f in figs if f.suite == suite]
                                    + [t.table for t in trends if t.suite == suite]))
        for title in titles:
            rows = [figure_row(f, have) for f in figs if f.suite == suite and f.table == title]
            rows += [trend_row(t, have) for t in trends if t.suite == suite and t.table == title]
            mine = [f for f in figs if f.suite == suite and f.table == title]
            if mine and all(f.optional for f in mine) and all(r[5] == "no run" for r in rows):
                continue  # an optional table (Table 4 under another calibration) shows once it has runs
            lines += [f"{h2} {title}", ""]
            if all(r[5] == "no run" for r in rows):
                lines += [f"Pending: no stored record. `{_run_command(suite, title)}`", ""]
                continue
            lines += _table(rows) + [""]
            lines += [_cost(have, [f.num for f in figs if f.suite == suite and f.table == title]
                            + [f.den for f in figs if f.suite == suite and f.table == title]
                            + [t.pattern.format(x=x, policy=p) for t in trends if t.suite == suite and t.table == title
                               for x in t.points for p in (t.num, t.den)]), ""]
        if suite == "tiresias":
            lines += artifact_section(have, h2)
        if suite == "rubick" and placements is not None:
            lines += micro_section(placements, h2)
        counts = {label: len(seeds) for label, seeds in have.items()}
        if counts:
            lo, hi = min(counts.values()), max(counts.values())
            lines += [f"Records: {len(counts)} cases, {lo}-{hi} seeds each." if lo != hi else
                      f"Records: {len(counts)} cases, {lo} seed(s) each.", ""]
    verdicts: dict[str, int] = {}
    for line in lines:
        for v in ("held", "inconclusive", "direction only", "not held", "trend held", "no trend shown", "reversed", "n = 1"):
            if line.startswith("|") and f"| {v} |" in line and not line.startswith("| quantity"):
                verdicts[v] = verdicts.get(v, 0) + 1
    lines += ["Verdicts: " + (", ".join(f"{k} {v}" for k, v in verdicts.items()) or "none") + "."]
    return "\n".join(lines) + "\n"


__all__ = ["HEADER", "Interval", "fmt_interval", "ratios", "render", "runs_from_records", "runs_from_store", "t_interval",
           "trend_verdict", "verdict"]
