"""What every case shares: the :class:`Case` protocol, the :class:`Suite` that holds cases, the
reproduction rows, and the helpers that make a case's key and label.

A case is a frozen dataclass (:class:`~schedlab.benchmarks.harness.gap.GapCase`,
:class:`~schedlab.benchmarks.harness.bound.BoundCase`,
:class:`~schedlab.benchmarks.harness.replay.ReplayCase`) that knows how to

* ``key()`` — a stable string of everything that determines its result (the store key is built on it);
* ``instance_id()`` — what every method answering the same input shares (best bounds are taken over it);
* ``check()`` — raise a :class:`SpecError` (naming the field) if it cannot run, before anything runs;
* ``run(threads)`` — run it here, returning its typed
  :class:`~schedlab.benchmarks.harness.record.Outcome`, from which the runner builds the one
  :class:`~schedlab.benchmarks.harness.record.Record` of the run (``Record.of``).

This module imports nothing of the harness: every case module builds on it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from schedlab.topology.errors import SpecError

if TYPE_CHECKING:
    from schedlab.benchmarks.harness.record import Outcome


@dataclass(frozen=True, slots=True)
class CaseInfo:
    """What a record says about its case besides its result: the method (a policy or a formulation
    method), its backend and parameters, the instance kind (``replay``, ``offline`` for bound cases),
    cluster and size, seed and solver limit (``None``: a replay, whose limit is its process's)."""

    method: str
    backend: str | None
    params: Mapping[str, Any]
    kind: str
    cluster: str | None
    jobs: int | None
    seed: int
    time_limit_s: float | None


@runtime_checkable
class Case(Protocol):
    """One run of a suite (see the module docstring)."""

    TYPE: ClassVar[str]
    label: str
    seed: int

    def spec(self) -> dict[str, Any]: ...

    def key(self) -> str: ...

    def instance_id(self) -> str: ...

    def check(self) -> None: ...

    def run(self, *, threads: int = 1, out_dir: str | None = None) -> Outcome: ...

    def info(self) -> CaseInfo: ...

    def shifted(self, seed: int, time_limit_s: float | None) -> Case: ...

    def process_limit_s(self, grace_s: float, override_s: float | None) -> float: ...

    def ladder(self) -> tuple | None: ...


def frozen(m: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(m))


def plain(x: Any) -> Any:
    """Dataclasses, mappings and sequences as JSON-able dicts and lists."""
    if is_dataclass(x) and not isinstance(x, type):
        return {f.name: plain(getattr(x, f.name)) for f in fields(x)}
    if isinstance(x, Mapping):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    return x


def with_params(name: str, params: Mapping[str, Any]) -> str:
    extra = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
    return name + (f"[{extra}]" if extra else "")


def options_label(generator: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(generator.items()))


def case_key(kind: str, d: dict[str, Any]) -> str:
    """``kind:`` + the case's plain fields as sorted JSON, without what does not change its result."""
    d = dict(d)
    d.pop("label", None)  # the label names the case's role in its suite; it does not change the result
    d.pop("hard_limit_s", None)  # nor does a replay's wall-clock limit
    return kind + ":" + json.dumps(d, sort_keys=True, default=str)


def sized_label(kind: str, cluster: str, jobs: int | None, seed: int, generator: Mapping[str, Any], *,
                state: str | None = None) -> str:
    """``kind/cluster/n=JOBS/s=SEED[/generator]`` (``state=TAG`` for ``n=JOBS`` where the instance is a
    replay's decision state): a snapshot instance's id, and the head of its label."""
    gen = options_label(generator)
    size = f"state={state}" if state is not None else f"n={jobs}"
    return f"{kind}/{cluster}/{size}/s={seed}" + (f"/{gen}" if gen else "")


def state_tag(state: Mapping[str, Any]) -> str:
    """A short name of a replay-state reference: ``WORKLOAD[xLOAD]@POLICY#INDEX``."""
    load = state.get("load", 1.0)
    return (f"{state.get('workload')}" + (f"x{load:g}" if load != 1.0 else "") + f"@{state.get('policy')}"
            f"#{state.get('index', 0)}")


def check_size(jobs: int, time_limit_s: float, source: str) -> None:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise SpecError(f"jobs must be an integer >= 1, got {jobs!r}", source=source, field="jobs")
    if not time_limit_s > 0:
        raise SpecError(f"time_limit_s must be > 0, got {time_limit_s}", source=source, field="time_limit_s")


def hard_limit(time_limit_s: float, grace_s: float) -> float:
    """The wall-clock limit of a worker whose solver limit is ``time_limit_s``: twice that plus a grace."""
    return 2.0 * time_limit_s + grace_s


class SolverLimited:
    """For cases with a ``seed`` and a solver limit ``time_limit_s`` (gap and bound cases): a sweep's
    seed offset and limit override, and the process limit that follows from the solver's."""

    seed: int
    time_limit_s: float

    def shifted(self, seed: int, time_limit_s: float | None) -> Any:
        return replace(self, seed=self.seed + seed, time_limit_s=time_limit_s or self.time_limit_s)

    def process_limit_s(self, grace_s: float, override_s: float | None) -> float:
        return hard_limit(self.time_limit_s, grace_s)


@dataclass(frozen=True, slots=True)
class ReproRow:
    """One reproduced figure: the paper's value beside ours (``None``: not measured), with the reason
    for any difference in ``note``."""

    quantity: str
    paper: float | str | None
    ours: float | None
    unit: str = ""
    note: str = ""


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

__all__ = ["Case", "CaseInfo", "ReproRow", "SolverLimited", "Suite", "SuiteBuilder", "case_key", "check_size", "frozen",
           "hard_limit", "options_label", "plain", "sized_label", "state_tag", "with_params"]
