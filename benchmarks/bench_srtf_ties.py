"""Old (float) against new (integer) SRTF/SRSF keys, decision by decision: every difference of the
records is a tie-order change (issue 25, session 8; run outside CI).

``python -m schedlab.benchmarks.bench_srtf_ties --policy srtf --window philly:5:9000:0`` replays a workload
with a twin policy: the policy as committed at ``--ref`` (float keys ``progress + rate x (now - mark)``,
loaded from git) and the current one (integer keys, :mod:`heuristics.baselines.srtf_keys`) both answer
every decision from the same view. Until they disagree the old decision is applied. At a disagreement
(a *divergence from a common state*) the script compares the two policies' full orders of the active
jobs (running rows merged with the queued lists, as the pool is filled) and records every pair the two
orders put in opposite order, with the pair's old float keys: the claim is that every such pair has old
keys less than ~1 µs apart (GPU-µs for SRSF), i.e. a tie of the integer keys resolved by the tie rule
where the floats had an ulp-level order. Then the new decision is applied and both policies are built
afresh from the view at the next decision (the same initial state for both: keys now, the view's order),
so one replay gives many divergences, each from a common state. Prints one JSON object per window.

Windows: ``philly:LOAD:JOBS:OFFSET`` (``JOBS`` rows of the Philly table from the ``OFFSET``-th by submit
time, ``LOAD`` x arrivals, the replay-identity test's build), ``load5:JOBS`` (the first ``JOBS`` jobs of the
whole table at 5x, as ``bench_srtf_order`` and the ``load5-*`` rows build it) or a registered workload name (``smoke``,
``tiresias-480``)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import types
from heapq import merge
from pathlib import Path
from typing import Any

from schedlab.heuristics.baselines.srtf import ShortestRemaining
from schedlab.scheduling.policy import ClusterView, Decision
from schedlab.scheduling.snapshot import PolicyBase

ROOT = Path(__file__).resolve().parents[1]
#: the last commit with float keys
OLD_REF = "5beb4c7"


def old_policy_class(ref: str = OLD_REF) -> type:
    """``ShortestRemaining`` as committed at ``ref`` (its ``srtf.py`` and ``srtf_arrays.py`` read with
    ``git show`` and executed as private modules)."""
    def src(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"], check=True, capture_output=True,
                              text=True).stdout

    mods = {}
    for name, path, fix in (("_srtf_arrays_old", "heuristics/baselines/srtf_arrays.py", None),
                            ("_srtf_old", "heuristics/baselines/srtf.py",
                             ("from schedlab.heuristics.baselines.srtf_arrays import", "from _srtf_arrays_old import"))):
        text = src(path)
        if fix:
            text = text.replace(*fix)
        mod = types.ModuleType(name)
        sys.modules[name] = mod
        exec(compile(text, f"{ref}:{path}", "exec"), mod.__dict__)  # noqa: S102 (the project's own code at ref)
        mods[name] = mod
    return mods["_srtf_old"].ShortestRemaining


def merged_order(pol: Any) -> list[tuple[Any, str]]:
    """``(key, job)`` of every active job in the policy's list order as of its last decision."""
    arr = pol.arr
    order = arr.order if arr.order is not None else []
    ranked = [(arr.key[i].item(), int(arr.tb[i]), arr.ids[i]) for i in list(order)]
    return [(e[0], e[2]) for e in merge(ranked, *(lst for lst in pol.queued.values() if lst))]


def _same(a: Decision, b: Decision) -> bool:
    return list(a.start.items()) == list(b.start.items()) and a.preempt == b.preempt


class _Twin(PolicyBase):
    """Both policies on every view; the old decision applied until they differ (see the module doc)."""

    oracle = True

    def __init__(self, old_cls: type, weighted: bool) -> None:
        super().__init__(seed=0)
        self.name = "srsf" if weighted else "srtf"
        self.old_cls, self.weighted = old_cls, weighted
        self.decisions = 0
        self.divergences: list[dict[str, Any]] = []
        self._fresh()

    def _fresh(self) -> None:
        self.old = self.old_cls(gpu_weighted=self.weighted)
        self.new = ShortestRemaining(gpu_weighted=self.weighted)

    def schedule(self, view: ClusterView) -> Decision:
        if self.old is None:
            self._fresh()
        self.decisions += 1
        d_old = self.old.schedule(view)
        d_new = self.new.schedule(view)
        if _same(d_old, d_new):
            return d_old
        self.divergences.append(self._explain(view, d_old, d_new))
        self.old = self.new = None  # rebuilt from the view at the next decision
        return d_new

    def _explain(self, view: ClusterView, d_old: Decision, d_new: Decision) -> dict[str, Any]:
        old, new = merged_order(self.old), merged_order(self.new)
        okey = {j: float(k) for k, j in old}
        nkey = {j: int(k) for k, j in new}
        pos = {j: i for i, (_, j) in enumerate(old)}
        gpus = {j: self.old.const[j][2] for j in okey}
        worst, worst_us, pairs = 0.0, 0.0, 0
        seen: list[tuple[int, str]] = []  # (old position, job) of the jobs before, in the new order
        for _, b in new:
            pb = pos[b]
            for pa, a in seen:
                if pa > pb:  # a before b in the new order, after it in the old one
                    pairs += 1
                    d = abs(okey[a] - okey[b])
                    worst = max(worst, d)
                    worst_us = max(worst_us, d * 1e6 / (min(gpus[a], gpus[b]) if self.weighted else 1))
            seen.append((pb, b))
        return {"decision": self.decisions, "t": view.now, "pairs": pairs, "max_old_gap": worst,
                "max_old_gap_us_per_gpu": worst_us,
                "max_new_gap": max((abs(nkey[a] - nkey[b]) for a, b in self._inverted(old, new)), default=0),
                "start_old": sorted(d_old.start), "start_new": sorted(d_new.start),
                "preempt_old": sorted(d_old.preempt), "preempt_new": sorted(d_new.preempt)}

    @staticmethod
    def _inverted(old: list, new: list) -> list[tuple[str, str]]:
        pos = {j: i for i, (_, j) in enumerate(old)}
        out, seen = [], []
        for _, b in new:
            out.extend((a, b) for pa, a in seen if pa > pos[b])
            seen.append((pos[b], b))
        return out


def window(spec: str, tmp: Path):
    """``(workload, cluster)`` of a window spec (module docstring)."""
    from schedlab.benchmarks.bench_simulator import find_trace, philly_window, philly_workload
    from schedlab.benchmarks.workloads.source import WorkloadSource

    if spec.startswith("load5:"):  # the first N jobs of the whole table at 5x (bench_srtf_order's windows)
        from dataclasses import replace

        w, cl = philly_workload(load=5)
        return replace(w, jobs=w.jobs[:int(spec.split(":")[1])]), cl
    if spec.startswith("philly:"):
        _, load, jobs, offset = spec.split(":")
        win = philly_window(find_trace(None), int(jobs), tmp / f"w{jobs}_{offset}.csv", offset=int(offset))
        return philly_workload(load=float(load), trace_path=win)
    return WorkloadSource(workload=spec).build()


def measure(policy: str, spec: str, ref: str = OLD_REF) -> dict[str, Any]:
    from schedlab.benchmarks.bench_simulator import policy_semantics
    from schedlab.benchmarks.simulator import Recorder, Simulator

    with tempfile.TemporaryDirectory() as d:
        w, cl = window(spec, Path(d))
    twin = _Twin(old_policy_class(ref), policy == "srsf")
    sim = Simulator(cl, w.jobs, twin, semantics=policy_semantics(policy), quotas=w.quotas, recorder=Recorder(),
                    small_gpus=w.small_gpus, short_s=w.short_s)
    c0 = time.process_time()
    sim.run()
    div = twin.divergences
    return {"policy": policy, "window": spec, "ref": ref, "jobs": len(w.jobs), "decisions": twin.decisions,
            "divergences": len(div), "inverted_pairs": sum(x["pairs"] for x in div),
            "max_old_gap_s": max((x["max_old_gap"] for x in div), default=0.0),
            "max_old_gap_us_per_gpu": max((x["max_old_gap_us_per_gpu"] for x in div), default=0.0),
            "max_new_gap": max((x["max_new_gap"] for x in div), default=0),
            "cpu_s": round(time.process_time() - c0, 1), "first": div[:3]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", choices=("srtf", "srsf"), default="srtf")
    ap.add_argument("--window", action="append", required=True, help="philly:LOAD:JOBS:OFFSET or a workload name")
    ap.add_argument("--ref", default=OLD_REF, help="git commit of the float-key policy")
    a = ap.parse_args(argv)
    for spec in a.window:
        print(json.dumps(measure(a.policy, spec, a.ref)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
