"""What a suite is made of: every case type, and cases as plain data.

* :class:`~schedlab.benchmarks.harness.replay.ReplayCase` — one trace replay: a
  :class:`~schedlab.benchmarks.workloads.source.WorkloadSource` under one registered policy (with
  parameters), semantics and seed.
* :class:`~schedlab.benchmarks.harness.gap.GapCase` — one snapshot decision: a seeded instance of a
  formulation kind, answered by a method (a registered policy in snapshot form, or a formulation method
  on a backend) and scored by that kind's one objective against the best proven bound.
* :class:`~schedlab.benchmarks.harness.bound.BoundCase` — one policy online on a small seeded workload
  with known durations against the offline bound valid for it.
* :class:`~schedlab.benchmarks.harness.casebase.Suite` — a named tuple of cases plus, for the papers'
  experiments, ``reproduce``.

Each implements the :class:`~schedlab.benchmarks.harness.casebase.Case` protocol (``key``,
``instance_id``, ``check``, ``run``). Suites are declared by builder functions ``(**options) -> Suite``
registered in ``schedlab.benchmarks.harness.suites.SUITES``. :func:`case_spec` / :func:`case_from_spec`
turn a case into plain JSON-able data and back (what worker processes, Dask and the store receive;
mapping proxies do not pickle).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedlab.benchmarks.harness.bound import BoundCase
from schedlab.benchmarks.harness.casebase import Case, ReproRow, Suite, SuiteBuilder, state_tag
from schedlab.benchmarks.harness.gap import GapCase
from schedlab.benchmarks.harness.replay import ReplayCase

CASE_TYPES: dict[str, Any] = {c.TYPE: c for c in (ReplayCase, GapCase, BoundCase)}


def case_spec(case: Case) -> dict[str, Any]:
    """Plain data (JSON-able, picklable) from which :func:`case_from_spec` rebuilds ``case``."""
    return {"type": case.TYPE, **case.spec()}


def case_from_spec(spec: Mapping[str, Any]) -> Case:
    d = dict(spec)
    return CASE_TYPES[d.pop("type")].from_spec(d)


__all__ = ["CASE_TYPES", "BoundCase", "Case", "GapCase", "ReplayCase", "ReproRow", "Suite", "SuiteBuilder",
           "case_from_spec", "case_spec", "state_tag"]
