"""Where SRTF/SRSF's decisions spend their time, and whether the running jobs' ranking survives from one
decision to the next (issue 25; run outside CI).

``python -m schedlab.benchmarks.bench_srtf_order --policy srtf --jobs 25000`` replays the first N jobs of the
``--load 5`` Philly workload (as ``tests/benchmarks/test_replay_identity.py`` builds it) and prints one
JSON object:

* ``split``: CPU seconds inside the policy's parts (``schedule``, its ``_sync`` with ``refresh`` and
  ``keys``, ``ranked``, ``BlockFill``, ``_fill_blocks``, the placement of started jobs), each measured
  with ``time.process_time`` around the call (no profiler: the shares are not inflated by per-call
  cost; the wrappers add a little to each);
* ``order``: at each contested decision, whether the previous ranking of the running rows is still
  sorted by their new keys, and what the adjacent pairs that are out of order are: a row whose key did
  not move (restoring or checkpointing), two moving rows of the same slope (key units per second:
  ``rate x duration / iterations``, x GPUs for SRSF) whose keys differ by less than 1e-6 relative (float
  rounding of tied keys, before session 8's integer keys), or two moving rows of different slopes.

Both patch methods of the policy's classes for the replay and put them back after it."""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np

#: (class attribute path, label) of the parts timed by ``split``
PARTS = (("ShortestRemaining.schedule", "schedule"), ("ShortestRemaining._sync", "_sync"),
         ("RunningArrays.refresh", "refresh"), ("RunningArrays.keys", "keys"),
         ("RunningArrays.ranked", "ranked"), ("BlockFill.__init__", "BlockFill"),
         ("ShortestRemaining._fill_blocks", "_fill_blocks"), ("Starter.start", "start"))


def _classes() -> dict[str, type]:
    from schedlab.heuristics.baselines.srtf import ShortestRemaining
    from schedlab.heuristics.baselines.srtf_arrays import BlockFill, RunningArrays
    from schedlab.heuristics.tiresias.placement import Starter

    return {"ShortestRemaining": ShortestRemaining, "RunningArrays": RunningArrays, "BlockFill": BlockFill,
            "Starter": Starter}


@contextmanager
def _patched(wrappers: dict[str, Callable[[Callable], Callable]]) -> Iterator[None]:
    classes = _classes()
    saved = []
    try:
        for path, wrap in wrappers.items():
            cls_name, attr = path.split(".")
            cls = classes[cls_name]
            f = cls.__dict__[attr]
            saved.append((cls, attr, f))
            setattr(cls, attr, wrap(f))
        yield
    finally:
        for cls, attr, f in reversed(saved):
            setattr(cls, attr, f)


def _timed(acc: dict[str, float], label: str) -> Callable[[Callable], Callable]:
    def wrap(f: Callable) -> Callable:
        def g(*a: Any, **k: Any) -> Any:
            t = time.process_time()
            try:
                return f(*a, **k)
            finally:
                acc[label] = acc.get(label, 0.0) + time.process_time() - t
        return g
    return wrap


def _order_stats(stats: Counter, weighted: bool) -> Callable[[Callable], Callable]:
    def wrap(f: Callable) -> Callable:
        def ranked(self: Any) -> Any:
            order = self.previous_order()
            n = len(self.ids)
            ks = self.key[order]
            slope = (self.s[:n] * (self.gi[:n] if weighted else 1))[order]  # (integer keys: the quantized slope)
            mov = slope > 0
            stats["decisions"] += 1
            stats["rows"] += n
            desc = np.flatnonzero(ks[1:] < ks[:-1])
            kinds = set()
            for i in desc.tolist():
                if not (mov[i] and mov[i + 1]):
                    kinds.add("a row not moving")
                elif slope[i] == slope[i + 1] and ks[i] - ks[i + 1] < 1e-6 * max(1.0, abs(float(ks[i]))):
                    kinds.add("same slope, keys within 1e-6 (rounding)")
                elif slope[i] == slope[i + 1]:
                    kinds.add("same slope, keys further apart")
                else:
                    kinds.add("different slopes")
            if len(desc):
                stats["decisions out of order"] += 1
                stats["pairs out of order"] += len(desc)
            for k in kinds:
                stats[f"decisions with: {k}"] += 1
            return f(self)
        return ranked
    return wrap


def measure(policy: str, jobs: int, what: str) -> dict[str, Any]:
    from schedlab.benchmarks.bench_simulator import philly_replay, philly_workload

    w, cl = philly_workload(load=5)
    w = replace(w, jobs=w.jobs[:jobs])
    sim = philly_replay(policy, w, cl)
    acc: dict[str, float] = {}
    stats: Counter = Counter()
    if what == "split":
        wrappers = {path: _timed(acc, label) for path, label in PARTS}
    else:
        wrappers = {"RunningArrays.ranked": _order_stats(stats, policy == "srsf")}
    with _patched(wrappers):
        c0 = time.process_time()
        res = sim.run()
        cpu = time.process_time() - c0
    out: dict[str, Any] = {"policy": policy, "jobs": jobs, "load": 5, "events": res.events, "passes": res.passes,
                           "cpu_s": round(cpu, 2)}
    if what == "split":
        out["split"] = {k: round(v, 2) for k, v in acc.items()}
    else:
        out["order"] = dict(stats)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", choices=("srtf", "srsf"), default="srtf")
    ap.add_argument("--jobs", type=int, default=25_000, help="the first N jobs of the --load 5 workload")
    ap.add_argument("--what", choices=("split", "order"), default="order")
    a = ap.parse_args(argv)
    print(json.dumps(measure(a.policy, a.jobs, a.what)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
