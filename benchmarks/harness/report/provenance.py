"""Where the reproduction tables' records come from (``schedlab report DIR --reproduction --runs``): one
header line (the date, the git commit of the code that renders, the records' code versions, the load
now) and one row per ``schedlab bench`` session stored in each results directory, read from the stores'
``sessions`` and ``records`` tables — so the run times and counts beside the tables are generated too.

A session's row: its results directory (as given), suite, start and end (UTC), wall time, status
(``done``, ``interrupted`` for a writer killed before it closed its session), the replays it had to run
(``total``), those it ran, those stopped at the time limit (``killed``: too long for this machine at that
limit), the per-replay time limit it ran under, the load average and the code commit at its start, and
the case groups it stored (the first part of each label, with counts; ``@seed=`` ignored).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.store import Store
from schedlab.benchmarks.harness.suites.seeds import split_seed

#: a session shows at most this many case groups, then "+ N more"
GROUPS_SHOWN = 6


def _time(s: str | None) -> datetime | None:
    return None if not s else datetime.fromisoformat(s)


def _hms(s: str | None) -> str:
    t = _time(s)
    return "—" if t is None else t.strftime("%H:%M:%S")


def _group(label: str) -> str:
    return split_seed(label)[0].split("/", 1)[0]


def session_rows(name: str, sessions: Sequence[Mapping[str, Any]],
                 records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per session of one store (``name``: how the table names the store). The records a session
    stored are those of its suite finished in ``[its start, the next session's start)``."""
    rows = []
    for i, s in enumerate(sessions):
        start = s.get("started_at") or ""
        nxt = next((x.get("started_at") for x in sessions[i + 1:] if x.get("suite") == s.get("suite")), None)
        mine = [r for r in records if r.get("suite") == s.get("suite") and (r.get("finished_at") or "") >= start
                and (nxt is None or (r.get("finished_at") or "") < nxt)]
        t0, t1 = _time(s.get("started_at")), _time(s.get("finished_at"))
        counts = s.get("counts") or {}
        opts = s.get("options") or {}
        env = s.get("environment") or {}
        load = env.get("load_avg")
        groups = Counter(_group(r["label"]) for r in mine)
        rows.append({
            "store": name, "suite": s.get("suite"), "start": start, "end": s.get("finished_at"),
            "wall_s": None if t0 is None or t1 is None else (t1 - t0).total_seconds(),
            "status": s.get("status"), "total": counts.get("total"), "ran": counts.get("ran"),
            "killed": sum(r.get("status") == "killed" for r in mine),
            "time_limit": opts.get("time_limit_s") if opts.get("time_limit_s") not in (None, "None") else None,
            "workers": opts.get("workers"), "executor": opts.get("executor"),
            "load": None if not load else float(load[0]), "git": env.get("git"), "groups": groups})
    return rows


def store_rows(directory: str | Path, name: str | None = None) -> list[dict[str, Any]]:
    with Store(directory, create=False) as store:
        return session_rows(name or str(directory), store.sessions(), store.records())


def code_versions(directories: Iterable[str | Path]) -> dict[str, Counter]:
    """``suite -> Counter(code version -> finished records)`` over the stores."""
    out: dict[str, Counter] = {}
    for d in directories:
        with Store(d, create=False) as store:
            for r in store.records():
                if r.get("status") == "ok":
                    out.setdefault(r["suite"], Counter())[r.get("code_version") or "?"] += 1
    return out


def _groups(c: Counter) -> str:
    items = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{k} ({v})" for k, v in items[:GROUPS_SHOWN])
    return shown + (f", + {len(items) - GROUPS_SHOWN} more" if len(items) > GROUPS_SHOWN else "") or "—"


def runs_table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    out = ["| results | suite | when (UTC) | wall | status | replays: to run / ran / stopped at the limit | "
           "limit per replay | load at start | code (git) | case groups stored (replays) |",
           "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        wall = "—" if r["wall_s"] is None else f"{r['wall_s']:,.0f} s"
        lim = "—" if r["time_limit"] is None else f"{float(r['time_limit']):g} s"
        load = "—" if r["load"] is None else f"{r['load']:.2f}"
        out.append(f"| `{r['store']}` | {r['suite']} | {_hms(r['start'])} - {_hms(r['end'])} | {wall} | {r['status']} | "
                   f"{r['total'] if r['total'] is not None else '—'} / {r['ran'] if r['ran'] is not None else '—'} / "
                   f"{r['killed']} | {lim} | {load} | `{r['git'] or '—'}` | {_groups(r['groups'])} |")
    return out


def wall_by_suite(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per suite: the sessions' wall time summed (sessions that ran side by side count each), replays run,
    replays stopped at the limit."""
    agg: dict[str, list[float]] = {}
    for r in rows:
        a = agg.setdefault(r["suite"], [0.0, 0, 0])
        a[0] += r["wall_s"] or 0.0
        a[1] += r["ran"] or 0
        a[2] += r["killed"]
    out = ["| suite | sessions' wall time (sum) | replays run | stopped at the time limit (too long here) |",
           "| --- | ---: | ---: | ---: |"]
    out += [f"| {s} | {w:,.0f} s | {n} | {k} |" for s, (w, n, k) in sorted(agg.items())]
    return out


def render_provenance(directories: Sequence[str | Path], *, commit: str | None, now: datetime,
                      load: Sequence[float] | None = None, cores: int | None = None) -> str:
    """The header line and the runs tables of the stores ``directories`` (Markdown)."""
    rows = [row for d in directories for row in store_rows(d)]
    vers = code_versions(directories)
    v = "; ".join(f"{suite}: " + ", ".join(f"`{cv}` ({n})" for cv, n in sorted(c.items()))
                  for suite, c in sorted(vers.items()))
    head = (f"Generated {now.strftime('%Y-%m-%d %H:%M')} UTC from the code at commit `{commit or 'unknown'}` "
            f"(the records' code versions: {v or 'none'})")
    if load is not None:
        head += f"; load average now {' '.join(f'{x:.2f}' for x in load)}"
    if cores is not None:
        head += f" on {cores} cores"
    lines = [head + ".", "", "**Runs** (one row per `schedlab bench` session stored in each results directory; "
             "wall time from the session's start to its end):", ""]
    lines += runs_table(rows) + ["", "**Per suite:**", ""] + wall_by_suite(rows) + [""]
    return "\n".join(lines) + "\n"


def machine_load() -> tuple[float, float, float] | None:
    try:
        return os.getloadavg()
    except OSError:
        return None


__all__ = ["code_versions", "machine_load", "render_provenance", "runs_table", "session_rows", "store_rows",
           "wall_by_suite"]
