"""What a suite is made of.

* :class:`ReplayCase` — one trace replay: a :class:`~schedlab.benchmarks.workloads.source.WorkloadSource`
  under one registered policy (with parameters), semantics and seed.
* :class:`GapCase` — one snapshot decision: a seeded instance of a formulation kind, answered by a method
  (a registered policy in snapshot form, or a formulation method on a backend) and scored by that kind's
  one objective (``formulations.OBJECTIVES``) against the best proven bound.
* :class:`Suite` — a named tuple of cases plus, for the papers' experiments, ``reproduce``: a function
  from the finished runs (``label -> metrics``) to :class:`ReproRow` s, our figure beside the paper's.

Suites are declared by builder functions ``(**options) -> Suite`` registered in
``schedlab.benchmarks.harness.suites.SUITES``. Every case has a ``label`` unique in its suite and a
``key`` (a stable string of everything that determines its result) for the results store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from types import MappingProxyType
from typing import Any

from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.topology.errors import SpecError


def _frozen(m: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(m))


def _key(kind: str, obj: Any) -> str:
    def norm(x: Any) -> Any:
        if isinstance(x, Mapping):
            return {str(k): norm(v) for k, v in sorted(x.items())}
        if isinstance(x, (list, tuple)):
            return [norm(v) for v in x]
        return x

    def plain(x: Any) -> Any:
        if is_dataclass(x) and not isinstance(x, type):
            return {f.name: plain(getattr(x, f.name)) for f in fields(x) if f.name != "label"}
        return norm(x)

    return kind + ":" + json.dumps(plain(obj), sort_keys=True, default=str)


@dataclass(frozen=True)
class ReplayCase:
    """One trace replay. ``seed`` seeds the policy (the workload's seed is ``source.seed``)."""

    source: WorkloadSource
    policy: str
    params: Mapping[str, Any] = field(default_factory=dict)
    semantics: str = "realistic"
    costs: str | None = None
    seed: int = 0
    label: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _frozen(self.params))
        if not self.label:
            extra = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
            object.__setattr__(self, "label", self.policy + (f"[{extra}]" if extra else ""))

    @property
    def key(self) -> str:
        return _key("replay", self)


@dataclass(frozen=True)
class GapCase:
    """One snapshot decision on a generated instance of ``kind`` (``formulations.GENERATORS``):
    ``method`` is a registered policy (``backend=None``) or a formulation method (``formulations.METHODS``)
    solved on ``backend`` within ``time_limit_s`` of wall-clock time."""

    kind: str
    cluster: str
    jobs: int
    method: str
    backend: str | None = None
    seed: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)
    generator: Mapping[str, Any] = field(default_factory=dict)
    time_limit_s: float = 60.0
    label: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _frozen(self.params))
        object.__setattr__(self, "generator", _frozen(self.generator))
        if self.jobs < 1:
            raise SpecError(f"jobs must be >= 1, got {self.jobs}", source="<gap case>", field="jobs")
        if not self.time_limit_s > 0:
            raise SpecError(f"time_limit_s must be > 0, got {self.time_limit_s}", source="<gap case>",
                            field="time_limit_s")
        if not self.label:
            who = self.method if self.backend is None else f"{self.method}@{self.backend}"
            object.__setattr__(self, "label", f"{self.kind}/{self.cluster}/n={self.jobs}/s={self.seed}/{who}")

    @property
    def key(self) -> str:
        return _key("gap", self)


@dataclass(frozen=True, slots=True)
class ReproRow:
    """One reproduced figure: the paper's value beside ours (``None``: not measured), with the reason
    for any difference in ``note``."""

    quantity: str
    paper: float | str | None
    ours: float | None
    unit: str = ""
    note: str = ""


Case = ReplayCase | GapCase


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    cases: tuple[Case, ...]
    reproduce: Callable[[Mapping[str, Mapping[str, Any]]], list[ReproRow]] | None = None
    paper: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "cases", tuple(self.cases))
        seen: set[str] = set()
        for c in self.cases:
            if c.label in seen:
                raise SpecError(f"suite {self.name!r}: two cases are labelled {c.label!r}", source="<suite>",
                                field="cases")
            seen.add(c.label)


SuiteBuilder = Callable[..., Suite]

__all__ = ["Case", "GapCase", "ReplayCase", "ReproRow", "Suite", "SuiteBuilder"]
