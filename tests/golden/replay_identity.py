"""The cases of the replay byte-compare (``tests/benchmarks/test_replay_identity.py``): quick named workloads and
2,000-job Philly windows, each under the policies whose hot paths were tuned for speed.

``replay_digests.json`` holds the digests main's code (f41736f) produced before the speed work, with
one exception: ``tiresias-480/gandiva`` depended on string hashing (the artifact gandiva's preemption
order came from a set; now from the running order), so main gave a different digest per process; the
stored one is the now deterministic replay's. ``main()`` rewrites the file: do it only for a change of
behaviour that is meant, and say why in the commit."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

GOLDEN = Path(__file__).with_name("replay_digests.json")
OFFSET = 40_000  # the window: 2,000 consecutive jobs of the Philly table by submit time, from the 40,000th
POLICIES = ("fifo", "2d-las", "2d-gittins", "srtf", "srsf", "dally", "rubick", "gandiva-like", "gandiva")
PHILLY_POLICIES = tuple(p for p in POLICIES if p != "gandiva")  # the artifact's gandiva needs one machine size
BUSY_POLICIES = tuple(p for p in PHILLY_POLICIES if p != "rubick")
WORKLOADS = {
    "tiresias-480": POLICIES, "smoke": ("fifo", "2d-las", "srtf", "dally", "rubick"),
    "rubick-base": ("rubick",), "dally-batch": ("dally",),
    # name: philly<jobs>:<cluster>@<load>; auto:1 sizes the cluster for the window's mean load (contention)
    "philly2000:philly@1": PHILLY_POLICIES, "philly2000:philly@5": PHILLY_POLICIES,
    "philly2000:auto:1@1": BUSY_POLICIES, "philly500:auto:1@1": ("rubick",),
}


# the longer replays (Rubick on the Philly windows, the busy window under 2D-Gittins, the 5x windows):
# run with ``pytest -m slow``; the rest is in the default run
QUICK_PHILLY = {"philly2000:philly@1": ("fifo", "2d-las", "srtf", "dally"),
                "philly2000:auto:1@1": ("fifo", "2d-las", "srtf", "srsf", "dally", "gandiva-like")}


def slow(case: str) -> bool:
    w, p = case.split("/")
    return w.startswith("philly") and p not in QUICK_PHILLY.get(w, ())


def cases() -> list[str]:
    return [f"{w}/{p}" for w, ps in WORKLOADS.items() for p in ps]


def _sem(policy: str) -> str:
    from schedlab.benchmarks.bench_simulator import policy_semantics

    return policy_semantics(policy)


def workload(name: str, tmp: Path):
    """``(workload, cluster)`` of a case's workload part."""
    from schedlab.benchmarks.bench_simulator import find_trace, philly_window, philly_workload
    from schedlab.benchmarks.workloads.source import WorkloadSource

    if name.startswith("philly"):
        head, load = name.split("@")
        size, cluster = head.removeprefix("philly").split(":", 1)
        src = find_trace(None)
        if src is None:
            return None
        win = tmp / f"philly_window_{size}.csv"
        if not win.exists():
            philly_window(src, int(size), win, offset=OFFSET)
        return philly_workload(load=float(load), trace_path=win, cluster=cluster)
    return WorkloadSource(workload=name).build()


def digest(case: str, tmp: Path, cache: dict) -> str | None:
    from schedlab.benchmarks.bench_simulator import philly_replay
    from schedlab.benchmarks.simulator.digest import records_digest

    wname, policy = case.split("/")
    if wname not in cache:
        cache[wname] = workload(wname, tmp)
    wc = cache[wname]
    if wc is None:
        return None
    sim = philly_replay(policy, *wc, semantics=_sem(policy), keep_segments=True)
    sim.run()
    return records_digest(sim.recorder)


def main() -> int:
    out = {}
    cache: dict = {}
    with tempfile.TemporaryDirectory() as d:
        for c in cases():
            out[c] = digest(c, Path(d), cache)
            print(c, out[c], file=sys.stderr, flush=True)
    GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
