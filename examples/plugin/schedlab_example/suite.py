"""The ``example`` suite: pack-first and largest-first against the tier-aware optimum (gap), and
largest-first against FIFO on the bursty workload (replay)."""

from schedlab.benchmarks.harness import GapCase, ReplayCase, Suite
from schedlab.benchmarks.workloads.source import WorkloadSource


def example_suite() -> Suite:
    cases = []
    for n in (4, 8):
        for s in (0, 1):
            cases += [GapCase("tier-placement", "dally-2", n, "largest-first", seed=s, time_limit_s=30),
                      GapCase("tier-placement", "dally-2", n, "fifo", seed=s, time_limit_s=30),
                      GapCase("tier-placement", "dally-2", n, "pack-first", "highs", seed=s, time_limit_s=30),
                      GapCase("tier-placement", "dally-2", n, "tier-ilp", "highs", seed=s, time_limit_s=30)]
    burst = WorkloadSource(workload="smoke-burst")
    cases += [ReplayCase(burst, p, label=f"smoke-burst/{p}") for p in ("largest-first", "fifo")]
    return Suite("example", "pack-first and largest-first vs the tier-aware optimum; a bursty replay", tuple(cases))


SUITES = {"example": example_suite}
