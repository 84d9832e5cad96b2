"""The benchmark harness: suites of cases (snapshot gap cases, online-vs-bound cases, trace replays), how
each case runs, the runner (worker processes with hard timeouts, local or Dask), the resumable results
store, reports and comparisons, plugins, and the paper-vs-ours reproduction rows.

Declaring a suite: :class:`GapCase`, :class:`BoundCase`, :class:`ReplayCase`, :class:`Suite`,
:class:`ReproRow`, registered in ``schedlab.benchmarks.harness.suites.SUITES``; every case implements the
:class:`Case` protocol. Running one: ``schedlab bench SUITE`` or
:func:`~schedlab.benchmarks.harness.runner.run_bench`.

The names below are imported on first use (PEP 562): importing one submodule of the harness (its
plugins, say, which the merged registries build on) does not import every case type.
"""

from schedlab.topology.lazy import lazy_exports

_LAZY = {
    "BoundCase": "cases", "GapCase": "cases", "ReplayCase": "cases", "case_from_spec": "cases",
    "case_spec": "cases", "Case": "casebase", "ReproRow": "casebase", "Suite": "casebase",
    "SuiteBuilder": "casebase", "ReplayOutcome": "replay", "replay_policy": "replay", "run_replay": "replay",
    "run_suite_replays": "replay",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = ["BoundCase", "Case", "GapCase", "ReplayCase", "ReplayOutcome", "ReproRow", "Suite", "SuiteBuilder",
           "case_from_spec", "case_spec", "replay_policy", "run_replay", "run_suite_replays"]
