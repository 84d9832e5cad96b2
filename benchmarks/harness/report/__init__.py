"""``schedlab report DIR``: an HTML page and a Markdown file with the tables and PNG plots of a results
directory (also written at the end of ``schedlab bench``).

Sections: bound violations (runs whose verified objective beats a proven bound: a bug, listed first),
runs (sessions, environment), summary (one row per kind and method), optimality gap (gap vs size, table), runtime (log-log
vs jobs and GPUs with fitted exponents), online vs offline bound, trace replays (table, JCT CDF,
utilisation and queue length over time, a schedule picture per replay), reproduction tables (paper vs
ours), failed runs. Only the current run of each (suite, label) is shown.

A report records the digest it was rendered from (:func:`content_digest`: the store's records and
reproduction rows and the report code) in ``report.digest``; :func:`render_if_changed` (what
``schedlab bench`` calls) skips rendering while that digest is unchanged, so a rerun with nothing left
to run does not redraw the plots. Its sessions table then shows the session that last changed results.

``report.html`` embeds its plots (base64 PNG), so the page alone is the whole report; ``report.md``
links ``plots/*.png`` beside it. The store is only read: ``out`` writes the report elsewhere (a results
folder one cannot write).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from schedlab.benchmarks.harness import analysis
from schedlab.benchmarks.harness.analysis import MIN_FIT_SIZES, MIN_FIT_SPAN, POOR_R2, export, frame
from schedlab.benchmarks.harness.record import versions
from schedlab.benchmarks.harness.report import tables
from schedlab.benchmarks.harness.store import Store

# plots (matplotlib) are imported where a plot is drawn: a bench rerun that skips the report never pays for them
DIGEST_NAME = "report.digest"


@dataclass
class Report:
    html: Path
    markdown: Path
    plots: list[Path] = field(default_factory=list)
    exports: list[str] = field(default_factory=list)


class _Doc:
    """Markdown and HTML written side by side."""

    def __init__(self) -> None:
        self.md: list[str] = []
        self.html: list[str] = []

    def h(self, level: int, text: str) -> None:
        self.md.append(f"{'#' * level} {text}\n")
        self.html.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def p(self, text: str) -> None:
        self.md.append(text + "\n")
        self.html.append(f"<p>{html.escape(text)}</p>")

    def table(self, df: pd.DataFrame, highlight: str | None = None) -> None:
        if df is None or df.empty:
            self.p("(none)")
            return
        cols = list(df.columns)
        rows = [[tables.fmt(v) for v in r] for r in df.itertuples(index=False)]
        self.md.append("| " + " | ".join(cols) + " |")
        self.md.append("|" + "|".join(" --- " for _ in cols) + "|")
        for r in rows:
            self.md.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
        self.md.append("")
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body = []
        for r, raw in zip(rows, df.itertuples(index=False), strict=True):
            cls = ' class="hl"' if highlight and bool(getattr(raw, highlight, False)) else ""
            body.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>")
        self.html.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")

    def img(self, path: Path | None, root: Path, alt: str) -> None:
        """The plot linked from the Markdown (``plots/NAME.png``) and embedded in the HTML (base64)."""
        if path is None:
            return
        rel = path.relative_to(root).as_posix()
        self.md.append(f"![{alt}]({rel})\n")
        data = base64.b64encode(path.read_bytes()).decode()
        self.html.append(f'<p><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}" '
                         f'title="{html.escape(rel)}"></p>')


_CSS = ("body{font-family:system-ui,sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:13px}"
        "td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f0f0f0}"
        "td:first-child,th:first-child{text-align:left}tr.hl td{background:#ffe0e0;font-weight:bold}"
        "img{max-width:100%;border:1px solid #eee}h2{border-bottom:1px solid #ddd;margin-top:2em}")


#: longest plot file name stem taken from a label; longer ones are cut and end in a digest of the whole
SLUG_CHARS = 80


def _slug(text: str) -> str:
    """A file name stem for ``text``; one that had to be cut ends in 8 hex digits of the whole text's
    SHA-1, so two long labels that differ only in their tails never share a plot file."""
    s = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")
    if len(s) <= SLUG_CHARS:
        return s
    return s[:SLUG_CHARS - 9].rstrip("-") + "-" + hashlib.sha1(text.encode()).hexdigest()[:8]


def _sessions(store: Store) -> pd.DataFrame:
    rows = []
    latest: dict[str, dict] = {}
    for s in store.sessions():
        latest[s["suite"]] = s
    for suite, s in latest.items():
        opts, env, counts = s["options"] or {}, s["environment"] or {}, s["counts"] or {}
        status = s["status"] + (" (killed: counts are what it stored)" if s.get("note") else "")
        rows.append({"suite": suite, "started": s["started_at"], "finished": s["finished_at"], "status": status,
                     "executor": opts.get("executor"), "workers": opts.get("workers"), "threads": opts.get("threads"),
                     "cpus": env.get("cpu_count"), "host": env.get("host"),
                     "load avg at start": " ".join(str(x) for x in env.get("load_avg") or []),
                     "runs": counts.get("total"),
                     "ran now": counts.get("ran"), "stored before": counts.get("stored_before"),
                     "failed": counts.get("failed"), "skipped": counts.get("skipped")})
    return pd.DataFrame(rows)


def _code(df: pd.DataFrame, sessions: list[dict]) -> str:
    """``0.1.0+db731e5a6bed (git 475ed6a1b2c3)``: each code version of the current runs, with the git
    commits of the sessions that ran it (none outside a git checkout)."""
    commits = sorted({(s["environment"] or {}).get("git") for s in sessions} - {None})
    code = ", ".join(sorted(df.loc[df["current"], "code_version"].dropna().unique()))
    return code + (f" (git {', '.join(commits)})" if commits else " (no git commit: not run from a checkout)")


def _report_code() -> bytes:
    """The report's own source (this package and the analysis it reads through): a changed table or plot
    re-renders an unchanged store."""
    here = Path(__file__).resolve().parent
    files = sorted(here.glob("*.py")) + [Path(analysis.__file__).resolve()]
    return b"".join(f.name.encode() + f.read_bytes() for f in files)


def content_digest(directory: str | Path) -> str:
    """SHA-256 of what a report of ``directory`` shows that can change its results: every record (all
    columns, in key order), the reproduction rows, the report code and the schedlab version. Sessions
    are left out: a rerun that ran nothing adds a session and changes no result."""
    h = hashlib.sha256()
    with Store(directory, create=False) as store:
        for table, order in (("records", "key"), ("repro", "suite, position")):
            for row in store.conn.execute(f"SELECT * FROM {table} ORDER BY {order}"):
                h.update(json.dumps(list(row), default=str).encode())
                h.update(b"\n")
            h.update(b"\x00")
    h.update(_report_code())
    h.update(versions().get("schedlab", "0").encode())
    return h.hexdigest()


def existing_report(directory: str | Path, digest: str | None = None) -> Report | None:
    """The report in ``directory`` if it was rendered from ``digest`` (default: the store's
    :func:`content_digest`) and its files are all there, else ``None``."""
    dest = Path(directory)
    md, page, stamp = dest / "report.md", dest / "report.html", dest / DIGEST_NAME
    try:
        meta = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or not md.is_file() or not page.is_file():
        return None
    plots_ = [dest / p for p in meta.get("plots", [])]
    exports_ = [str(dest / e) for e in meta.get("exports", [])]
    if not all(p.is_file() for p in plots_) or not all(Path(e).is_file() for e in exports_):
        return None
    if meta.get("digest") != (digest if digest is not None else content_digest(dest)):
        return None
    return Report(page, md, plots_, exports_)


def render_if_changed(directory: str | Path, *, force: bool = False) -> tuple[Report, bool]:
    """``(report, rendered)``: the report of ``directory`` rendered only when the store's
    :func:`content_digest` differs from the one the existing report was rendered from (or ``force``)."""
    digest = content_digest(directory)
    if not force and (rep := existing_report(directory, digest)) is not None:
        return rep, False
    return render_report(directory, digest=digest), True


def _head_sections(doc: _Doc, df, all_sessions, sessions) -> None:
    """What ran (code, versions), any bound violation, the sessions and the summary table."""
    versions = df["versions"].dropna().iloc[-1] if df["versions"].notna().any() else {}
    doc.p(f"{len(df[df['current']])} current runs in suites {', '.join(sorted(df['suite'].unique()))}; code "
          f"{_code(df, all_sessions)}; "
          + ", ".join(f"{k} {v}" for k, v in sorted(versions.items()) if k != "backend"))
    viol = tables.bound_violations(df)
    if not viol.empty:
        doc.h(2, f"Bound violations ({len(viol)})")
        doc.p("These runs reached a verified objective better than a proven bound of the same instance: the "
              "bound's model does not contain the allocation, or the bound is wrong. No gap is reported for "
              "these instances.")
        doc.table(viol)
    doc.h(2, "Runs")
    doc.table(sessions)
    doc.h(2, "Summary")
    doc.p(GAP_DEFINITION)
    doc.table(tables.summary(df))


def render_report(directory: str | Path, *, exports: bool = True, out: str | Path | None = None,
                  digest: str | None = None) -> Report:
    """Write ``report.html``, ``report.md`` and ``plots/*.png`` (and ``results.csv``/``.parquet``) into
    ``out`` (default: ``directory``), reading the store of ``directory`` read-only; then
    ``report.digest`` (the :func:`content_digest` it was rendered from)."""
    from schedlab.benchmarks.harness.report import plots  # lazy: start-up (matplotlib)

    root = Path(directory)
    dest = Path(out) if out is not None else root
    digest = digest if digest is not None else content_digest(root)
    stamp = dest / DIGEST_NAME
    stamp.unlink(missing_ok=True)  # a report half rewritten is never taken for the old one
    with Store(root, create=False) as store:
        df = frame(store.records())
        all_sessions = store.sessions()
        sessions = _sessions(store)
        skipped = [x for s in all_sessions for x in (s["skipped"] or [])]
        repro = store.repro()
    pdir = dest / "plots"
    pdir.mkdir(parents=True, exist_ok=True)
    for old in pdir.glob("*.png"):
        old.unlink()
    doc = _Doc()
    made: list[Path] = []

    def keep(p: Path | None) -> Path | None:
        if p is not None:
            made.append(p)
        return p

    doc.h(1, f"schedlab benchmark report: {root.resolve().name}")
    if df.empty:
        doc.p("No records yet.")
    else:
        _head_sections(doc, df, all_sessions, sessions)
        with plots.quiet():
            _gap_section(doc, df, dest, pdir, keep, skipped)
            _bound_section(doc, df, dest, pdir, keep)
            _replay_section(doc, df, root, dest, pdir, keep)
    _repro_section(doc, repro)
    if not df.empty:
        fails = tables.failures(df)
        if not fails.empty:
            doc.h(2, "Failed runs")
            doc.table(fails)
    md = dest / "report.md"
    md.write_text("\n".join(doc.md) + "\n")
    page = dest / "report.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>schedlab report</title>"
                    f"<style>{_CSS}</style></head><body>{''.join(doc.html)}</body></html>\n")
    rep = Report(page, md, made)
    if exports and not df.empty:
        rep.exports = export(df, dest)
    stamp.write_text(json.dumps({"digest": digest, "plots": [p.relative_to(dest).as_posix() for p in made],
                                 "exports": [Path(e).relative_to(dest).as_posix() for e in rep.exports]}) + "\n")
    return rep


GAP_DEFINITION = ("Gap: signed, g = (B - v) / max(|B|, |v|) for a maximisation and (v - B) / max(|B|, |v|) for a "
                  "minimisation, where v is the run's verified objective and B the best proven bound of the same "
                  "instance and decision set (the run's 'decision set': its policy's twin's) over the methods "
                  "whose role is exact or relaxation and whose decision set contains it (never a restriction such "
                  "as POP, nor a heuristic-in-model). Positive = worse than the bound; above 100 % the value has the "
                  "opposite sign to the bound. Each kind's objective, decision set and gap note are printed "
                  "beside its gap table.")


def _opened(doc: _Doc, table, title: str) -> bool:
    """A section headed ``title`` when ``table`` has rows (else nothing, and False)."""
    if table.empty:
        return False
    doc.h(2, title)
    return True


def _gap_section(doc: _Doc, df, root, pdir, keep, skipped) -> None:
    from schedlab.benchmarks.harness.report import plots  # lazy: start-up (matplotlib)

    gt = tables.gap_table(df)
    if not _opened(doc, gt, "Optimality gap"):
        return
    doc.p(GAP_DEFINITION)
    doc.img(keep(plots.gap_vs_size(df, pdir / "gap_vs_size.png")), root, "gap vs size")
    for kind, part in gt.groupby("kind", sort=True):
        head = tables.kind_header(str(kind))
        doc.h(3, str(kind))
        doc.p(f"Objective: {head['objective']}. Decision set of the exact model: {head['decisions']}.")
        if head.get("sets"):
            doc.p(f"Decision sets (each policy is measured in the smallest containing what it decides): "
                  f"{head['sets']}. Neutral objective: {head.get('neutral') or 'none'}; its gap is to what "
                  "'neutral reference' names: 'optimum', the proven neutral optimum of the row's decision set (its "
                  "twin solved under the neutral objective, rows 'solved for' it), else 'twin allocation', the "
                  "family twin's allocation scored the same way (a reference, not a bound). Rows marked 'check' "
                  "solve the twin themselves: their gap (a neutral solve's: its neutral gap) must be 0.")
        if head["note"]:
            doc.p(f"Note: {head['note']}")
        doc.table(part.reset_index(drop=True))
    fx = tables.flexibility(df)
    if not fx.empty:
        doc.h(3, "Value of flexibility")
        doc.p("Per instance, a narrower decision set's proven optimum against the kind's own set's (family "
              "objective): what resizing and re-planning would add over the best fixed-size decision.")
        doc.table(fx)
    if skipped:
        doc.p(f"Exact methods stopped growing once they stopped proving optimality ({len(skipped)} runs skipped), "
              "e.g. " + "; ".join(skipped[:3]))
    doc.h(2, "Runtime")
    by_jobs = keep(plots.runtime_vs_size(df, pdir / "runtime_vs_jobs.png", "jobs"))
    by_gpus = keep(plots.runtime_vs_size(df, pdir / "runtime_vs_gpus.png", "gpus"))
    doc.img(by_jobs, root, "runtime vs jobs")
    doc.img(by_gpus, root, "runtime vs GPUs")
    if by_jobs is None and by_gpus is None:
        doc.p("No runtime curve: every kind ran at one size (a curve needs two sizes of jobs or of GPUs).")
    st = tables.scale_table(df)
    if not st.empty:
        doc.p("Fitted exponent b of build + solve time t ~ a n^b (least squares in log-log space, over runs that "
              "finished within their limit; 'unfinished' counts the runs cut by a limit), given only from at least "
              f"{MIN_FIT_SIZES} sizes spanning at least {MIN_FIT_SPAN:g}x, with R^2 and its 95 % interval (Student "
              f"t); 'flag' says why a sweep has no exponent, or marks a poor fit (R^2 < {POOR_R2:g}). A policy's "
              "time is its warm decide() inside the worker; the worker process's start is the record's process_s.")
        doc.table(st)


def _bound_section(doc: _Doc, df, root, pdir, keep) -> None:
    from schedlab.benchmarks.harness.report import plots  # lazy: start-up (matplotlib)

    bt = tables.bound_table(df)
    if not _opened(doc, bt, "Online vs offline bound"):
        return
    doc.p("Each policy replays a small workload with known durations (speed independent of placement, free "
          "preemption) and is compared with the offline bound valid for it: the non-preemptive offline optimum "
          "for non-preemptive policies; for preemptive ones the preemptive bound where registered, else the "
          "trivial bound (every job's JCT is at least its duration). Both assume rigid jobs: a policy that may "
          "resize jobs (PolicySpec.decisions with gpus or plan: Rubick, Sia, exact-joint) is refused, not compared.")
    doc.img(keep(plots.online_vs_bound(bt, pdir / "online_vs_bound.png")), root, "online vs bound")
    doc.table(bt)


def _replay_section(doc: _Doc, df, root, dest, pdir, keep) -> None:
    from schedlab.benchmarks.harness.report import plots  # lazy: start-up (matplotlib)
    from schedlab.benchmarks.harness.report.gantt import gantt  # lazy: start-up (matplotlib)

    rt = tables.replay_table(df)
    if not _opened(doc, rt, "Trace replays"):
        return
    doc.table(rt)
    for group, runs in plots.replay_groups(df, root).items():
        doc.h(3, group)
        slug = _slug(group)
        doc.img(keep(plots.jct_cdf(group, runs, root, pdir / f"jct_cdf_{slug}.png")), dest, f"JCT CDF {group}")
        doc.img(keep(plots.timeline(group, runs, root, pdir / f"timeline_{slug}.png")), dest, f"timeline {group}")
        for who, x in runs:
            p = gantt(root / x["records_dir"], f"{who} on {group}", pdir / f"gantt_{_slug(x['suite'] + '-' + x['label'])}.png",
                      x["cluster"])
            doc.img(keep(p), dest, f"schedule {who}")


def _repro_section(doc: _Doc, repro) -> None:
    if not repro:
        return
    doc.h(2, "Reproduction (paper vs ours)")
    for suite, rows in repro.items():
        doc.h(3, suite)
        doc.table(pd.DataFrame([{"quantity": r.quantity, "paper": r.paper, "ours": r.ours, "unit": r.unit,
                                 "note": r.note} for r in rows]))


__all__ = ["DIGEST_NAME", "Report", "content_digest", "existing_report", "render_if_changed", "render_report"]
