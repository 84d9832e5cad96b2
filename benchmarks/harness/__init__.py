"""The benchmark harness: suites of cases (snapshot gap cases, trace replays), how each case runs, and
the paper-vs-ours reproduction rows. (Runner, results store, executors and reports build on these.)"""

from schedlab.benchmarks.harness.cases import GapCase, ReplayCase, ReproRow, Suite, SuiteBuilder
from schedlab.benchmarks.harness.replay import ReplayOutcome, run_replay, run_suite_replays

__all__ = ["GapCase", "ReplayCase", "ReplayOutcome", "ReproRow", "Suite", "SuiteBuilder", "run_replay",
           "run_suite_replays"]
