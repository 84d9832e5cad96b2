"""Compare the records of two results directories, field by field, except timings, paths and dates.

    python tests/harness/records_diff.py BEFORE_DIR AFTER_DIR

Records are matched by (suite, label); the store key, the code version and the per-run folder differ
between two versions of the code by design. Prints every difference and exits 1 if there is one. A
replay's stored spec from before the process limit was named ``hard_limit_s`` (``limit_s``) is read as
the new name."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

#: columns that are timings, dates, paths or the code's identity
IGNORED = {"key", "build_s", "solve_s", "wall_s", "peak_mem_mb", "started_at", "finished_at", "code_version",
           "records_dir", "host", "executor", "process_s"}
#: keys inside JSON columns (extra, metrics) that are timings or process facts
#: (``decide_repeats``: how many warm decide() calls fit the timing budget; ``instance_cached``: which of the
#: concurrent runs of an instance built it first)
IGNORED_NESTED = {"generate_s", "bound_solve_s", "start_mem_mb", "pid", "wall_s", "events_per_s", "solve_s",
                  "build_s", "first_call_s", "decide_repeats", "instance_cached"}
JSON_COLUMNS = ("params", "violations", "versions", "metrics", "extra", "spec")
RENAMED = {"limit_s": "hard_limit_s"}
#: a duration inside a note ("stage 1 ...: optimal, 0.31 s")
SECONDS = re.compile(r"\d+(\.\d+)? s\b")
#: the checkout a path points into (two checkouts of the code differ there only)
CHECKOUT = re.compile(r"/[^\s'\",]*?/(?=benchmarks/)")


def _clean(x: Any) -> Any:
    if isinstance(x, dict):
        return {RENAMED.get(k, k): _clean(v) for k, v in x.items() if k not in IGNORED_NESTED}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    if isinstance(x, str):
        return CHECKOUT.sub("ROOT/", SECONDS.sub("T s", x))
    return x


def load(directory: str | Path) -> dict[tuple[str, str], dict[str, Any]]:
    con = sqlite3.connect(Path(directory) / "results.sqlite")
    con.row_factory = sqlite3.Row
    out = {}
    for r in con.execute("SELECT * FROM records"):
        row = {k: _clean(r[k]) for k in r.keys() if k not in IGNORED}
        for k in JSON_COLUMNS:
            if row.get(k) is not None:
                row[k] = _clean(json.loads(row[k]))
        out[(row["suite"], row["label"])] = row
    con.close()
    return out


def diff(before: dict, after: dict) -> list[str]:
    lines = [f"only before: {k}" for k in sorted(before.keys() - after.keys())]
    lines += [f"only after: {k}" for k in sorted(after.keys() - before.keys())]
    for k in sorted(before.keys() & after.keys()):
        a, b = before[k], after[k]
        for col in sorted(a.keys() | b.keys()):
            if isinstance(a.get(col), dict) and isinstance(b.get(col), dict) and a[col] != b[col]:
                x, y = a[col], b[col]
                lines += [f"{k[1]}: {col}.{f}: {x.get(f)!r} != {y.get(f)!r}" for f in sorted(x.keys() | y.keys())
                          if x.get(f) != y.get(f)]
            elif a.get(col) != b.get(col):
                lines.append(f"{k[1]} [{a.get('status')}/{b.get('status')}]: {col}: {a.get(col)!r} != {b.get(col)!r}")
    return lines


def main(argv: list[str]) -> int:
    before, after = load(argv[0]), load(argv[1])
    lines = diff(before, after)
    for line in lines:
        print(line)
    print(f"{len(before)} records before, {len(after)} after, {len(lines)} differences "
          "(timings, dates, paths and code version not compared)")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
