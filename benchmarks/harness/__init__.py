"""The benchmark harness: suites of cases (snapshot gap cases, online-vs-bound cases, trace replays), how
each case runs, the runner (worker processes with hard timeouts, local or Dask), the resumable results
store, reports and comparisons, plugins, and the paper-vs-ours reproduction rows.

Declaring a suite: :class:`GapCase`, :class:`BoundCase`, :class:`ReplayCase`, :class:`Suite`,
:class:`ReproRow`, registered in ``schedlab.benchmarks.harness.suites.SUITES``; every case implements the
:class:`Case` protocol. Running one:
``schedlab bench SUITE`` or :func:`~schedlab.benchmarks.harness.runner.run_bench`.
"""

from schedlab.benchmarks.harness.casebase import Case, ReproRow, Suite, SuiteBuilder
from schedlab.benchmarks.harness.cases import BoundCase, GapCase, ReplayCase, case_from_spec, case_spec
from schedlab.benchmarks.harness.replay import ReplayOutcome, replay_policy, run_replay, run_suite_replays

__all__ = ["BoundCase", "Case", "GapCase", "ReplayCase", "ReplayOutcome", "ReproRow", "Suite", "SuiteBuilder",
           "case_from_spec", "case_spec", "replay_policy", "run_replay", "run_suite_replays"]
