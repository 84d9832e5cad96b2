"""What a suite is made of.

* :class:`ReplayCase` — one trace replay: a :class:`~schedlab.benchmarks.workloads.source.WorkloadSource`
  under one registered policy (with parameters), semantics and seed.
* :class:`GapCase` — one snapshot decision: a seeded instance of a formulation kind, answered by a method
  (a registered policy in snapshot form, or a formulation method on a backend) and scored by that kind's
  one objective (its :class:`~schedlab.formulations.kinds.Kind`) against the best proven bound.
* :class:`BoundCase` — one policy online on a small seeded workload with known durations
  (an ``offline`` instance) against the offline bound valid for it (preemptive or not; refused for a
  policy that resizes jobs).
* :class:`Suite` — a named tuple of cases plus, for the papers' experiments, ``reproduce``: a function
  from the finished runs (``label -> metrics``) to :class:`ReproRow` s, our figure beside the paper's.

Suites are declared by builder functions ``(**options) -> Suite`` registered in
``schedlab.benchmarks.harness.suites.SUITES``. Every case has a ``label`` unique in its suite and a
``key`` (a stable string of everything that determines its result) for the results store.
:func:`case_spec` / :func:`case_from_spec` turn a case into plain JSON-able data and back (what worker
processes, Dask and the store receive; mapping proxies do not pickle).
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


def _plain(x: Any) -> Any:
    if is_dataclass(x) and not isinstance(x, type):
        return {f.name: _plain(getattr(x, f.name)) for f in fields(x)}
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _with_params(name: str, params: Mapping[str, Any]) -> str:
    extra = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
    return name + (f"[{extra}]" if extra else "")


def _key(kind: str, obj: Any) -> str:
    d = _plain(obj)
    d.pop("label", None)  # the label names the case's role in its suite; it does not change the result
    d.pop("limit_s", None)  # nor does a replay's wall-clock limit
    return kind + ":" + json.dumps(d, sort_keys=True, default=str)


@dataclass(frozen=True)
class ReplayCase:
    """One trace replay. ``seed`` seeds the policy (the workload's seed is ``source.seed``);
    ``limit_s`` is its hard wall-clock limit in the harness (None: ``runner.REPLAY_LIMIT_S``; a
    ``--time-limit`` given to the run overrides both)."""

    source: WorkloadSource
    policy: str
    params: Mapping[str, Any] = field(default_factory=dict)
    semantics: str = "realistic"
    costs: str | None = None
    seed: int = 0
    label: str = ""
    limit_s: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _frozen(self.params))
        if not self.label:
            object.__setattr__(self, "label", _with_params(self.policy, self.params))
        if self.limit_s is not None and not (isinstance(self.limit_s, int | float) and self.limit_s > 0):
            raise SpecError(f"replay limit must be > 0 seconds, got {self.limit_s!r}", source=f"<case {self.label}>",
                            field="limit_s")

    @property
    def key(self) -> str:
        return _key("replay", self)


def state_tag(state: Mapping[str, Any]) -> str:
    """A short name of a replay-state reference: ``WORKLOAD[xLOAD]@POLICY#INDEX``."""
    load = state.get("load", 1.0)
    return (f"{state.get('workload')}" + (f"x{load:g}" if load != 1.0 else "") + f"@{state.get('policy')}"
            f"#{state.get('index', 0)}")


@dataclass(frozen=True)
class GapCase:
    """One snapshot decision on a generated instance of ``kind`` (``Kind.generate``, ``generator``: its typed
    options) or, with ``state``, on a decision state sampled from a replay (:mod:`~schedlab.benchmarks.
    harness.states`: ``{"workload", "policy", "index"[, "load", "k", "replay_seed"]}``, replayed on
    ``cluster``, sampled with ``seed``): ``method`` is a registered policy (``backend=None``) or a method of
    the kind solved on ``backend`` within ``time_limit_s`` of wall-clock time."""

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
    state: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _frozen(self.params))
        object.__setattr__(self, "generator", _frozen(self.generator))
        object.__setattr__(self, "state", _frozen(self.state))
        _check_size(self.jobs, self.time_limit_s, "<gap case>")
        if not self.label:
            who = _with_params(self.method if self.backend is None else f"{self.method}@{self.backend}", self.params)
            gen = ",".join(f"{k}={v}" for k, v in sorted(self.generator.items()))
            size = f"state={state_tag(self.state)}" if self.state else f"n={self.jobs}"
            object.__setattr__(self, "label", f"{self.kind}/{self.cluster}/{size}/s={self.seed}"
                                              + (f"/{gen}" if gen else "") + f"/{who}")

    @property
    def key(self) -> str:
        return _key("gap", self)


@dataclass(frozen=True)
class BoundCase:
    """``policy`` online on ``KINDS["offline"].generate(cluster, jobs, seed=seed, **generator)`` (arrivals and
    known durations, speed independent of placement) against the offline bound valid for it: the
    ``offline-nonpreemptive`` for non-preemptive policies, ``offline-preemptive`` for the others
    (``schedlab.benchmarks.harness.gap.offline_bound_method``), solved on ``backend`` within
    ``time_limit_s``."""

    policy: str
    cluster: str
    jobs: int
    seed: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)
    generator: Mapping[str, Any] = field(default_factory=dict)
    backend: str = "cpsat"
    time_limit_s: float = 60.0
    label: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _frozen(self.params))
        object.__setattr__(self, "generator", _frozen(self.generator))
        _check_size(self.jobs, self.time_limit_s, "<bound case>")
        if not self.label:
            gen = ",".join(f"{k}={v}" for k, v in sorted(self.generator.items()))
            object.__setattr__(self, "label", f"bound/{self.cluster}/n={self.jobs}/s={self.seed}"
                                              + (f"/{gen}" if gen else "") + f"/{_with_params(self.policy, self.params)}")

    @property
    def key(self) -> str:
        return _key("bound", self)


def _check_size(jobs: int, time_limit_s: float, source: str) -> None:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise SpecError(f"jobs must be an integer >= 1, got {jobs!r}", source=source, field="jobs")
    if not time_limit_s > 0:
        raise SpecError(f"time_limit_s must be > 0, got {time_limit_s}", source=source, field="time_limit_s")


@dataclass(frozen=True, slots=True)
class ReproRow:
    """One reproduced figure: the paper's value beside ours (``None``: not measured), with the reason
    for any difference in ``note``."""

    quantity: str
    paper: float | str | None
    ours: float | None
    unit: str = ""
    note: str = ""


Case = ReplayCase | GapCase | BoundCase


@dataclass(frozen=True)
class Suite:
    """``reproduce`` maps the finished runs (``label -> metrics``: a replay's simulator metrics, a gap
    or bound case's record) to :class:`ReproRow` s. ``until_unproven``: exact methods (formulations on
    a backend) stop growing with instance size once every seed of a size finished without proving
    optimality (the larger sizes are skipped and reported as such; POP and bounds go on). ``parts``:
    suites run one after the other under their own names (``all``), sharing their stored records with
    separate runs of each."""

    name: str
    description: str
    cases: tuple[Case, ...]
    reproduce: Callable[[Mapping[str, Mapping[str, Any]]], list[ReproRow]] | None = None
    paper: str = ""
    until_unproven: bool = False
    parts: tuple[Suite, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "cases", tuple(self.cases))
        object.__setattr__(self, "parts", tuple(self.parts))
        seen: set[str] = set()
        for c in self.cases:
            if c.label in seen:
                raise SpecError(f"suite {self.name!r}: two cases are labelled {c.label!r}", source="<suite>",
                                field="cases")
            seen.add(c.label)


SuiteBuilder = Callable[..., Suite]

CASE_TYPES: dict[str, type] = {"replay": ReplayCase, "gap": GapCase, "bound": BoundCase}


def case_type(case: Case) -> str:
    return next(name for name, cls in CASE_TYPES.items() if isinstance(case, cls))


def case_spec(case: Case) -> dict[str, Any]:
    """Plain data (JSON-able, picklable) from which :func:`case_from_spec` rebuilds ``case``."""
    return {"type": case_type(case), **_plain(case)}


def case_from_spec(spec: Mapping[str, Any]) -> Case:
    d = dict(spec)
    cls = CASE_TYPES[d.pop("type")]
    if cls is ReplayCase:
        d["source"] = WorkloadSource(**d["source"])
    return cls(**d)


__all__ = ["CASE_TYPES", "BoundCase", "Case", "GapCase", "ReplayCase", "ReproRow", "Suite", "SuiteBuilder", "case_from_spec",
           "case_spec", "case_type", "state_tag"]
