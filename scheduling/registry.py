"""Policy registries: a name -> :class:`PolicySpec` dict with documented, validated parameters.

Every policy (heuristic or exact-in-the-loop) is registered once, with

* ``params``: a pydantic model whose fields are the policy's parameters (type, default, range and a
  one-line description each; ``schedlab list`` prints them), validated at the edge (CLI, suite files,
  Python callers) before anything runs; an error names the policy and the field;
* ``preset``: parameter values a named preset binds (e.g. ``yarn-cs`` = ``fifo`` with blocking); a
  caller may not override them;
* ``oracle``: the policy reads the future (``Job.duration``); reports mark it;
* ``preemptive``: the policy may preempt (or shrink) running jobs; its online JCT/makespan is compared
  with the offline bound valid for preemptive schedules, the others with the non-preemptive one;
* ``decisions``: the policy's decision set (:class:`Decision`: admission, placement, GPU count, plan,
  preemption, waiting); by default admission, placement and waiting, plus preemption when
  ``preemptive``. A bound is only compared with policies whose decision set it covers (an offline
  bound over rigid GPU counts refuses a policy that resizes jobs);
* ``origin`` of every parameter (:func:`paper` / :func:`ours` declare it): ``paper`` — part of the
  paper's algorithm (its default the paper's value, or the reading we chose where the paper gives none;
  the policy's doc page says which); ``ours`` — an addition of ours, off by default (``False``,
  ``None``, 0) or, where no "off" exists (a solver limit, the reading of an ambiguity), a default that
  keeps the paper's algorithm, with the reason (``neutral``); ``schedlab list policies`` shows it;
* ``twins``: the formulation instance kinds (``formulations.KINDS`` names: ``"joint"``,
  ``"tiresias-placement"``, ``"tier-placement"``) whose objective scores the policy's snapshot decision
  against the proven optimum of the same input (the harness's gap suites pair them).

Factories are called as ``factory(seed=seed, **validated_params)``: every policy takes a seed, and the
same seed gives the same decisions. Parameters are never parsed out of names.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schedlab.topology.errors import SpecError

if TYPE_CHECKING:
    from schedlab.scheduling.allocation import Allocation
    from schedlab.scheduling.instance import Instance
    from schedlab.scheduling.policy import Policy


class PolicyFamily(StrEnum):
    """Which system a policy belongs to (reports group by it)."""

    BASELINE = "baseline"
    TIRESIAS = "tiresias"
    DALLY = "dally"
    RUBICK = "rubick"
    EXACT = "exact"


class PolicyParams(BaseModel):
    """Base of every policy's parameter model: unknown keys are errors, values are immutable.

    Subclass it and declare each parameter as ``name: type = Field(default, ge=..., description=...)``;
    a ``model_validator`` may check relations between fields (e.g. thresholds increasing).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoParams(PolicyParams):
    """A policy without parameters."""


class Origin(StrEnum):
    """Where a parameter comes from (see the module docstring)."""

    PAPER = "paper"
    OURS = "ours"


def paper(default: Any = ..., **kw: Any) -> Any:
    """``Field(default, **kw)`` of a parameter of the paper's algorithm."""
    return Field(default, json_schema_extra={"origin": Origin.PAPER.value}, **kw)


def ours(default: Any = ..., *, neutral: str | None = None, **kw: Any) -> Any:
    """``Field(default, **kw)`` of an addition of ours: off by default, or ``neutral`` says why its default
    keeps the paper's algorithm."""
    extra: dict[str, Any] = {"origin": Origin.OURS.value}
    if neutral:
        extra["neutral"] = neutral
    return Field(default, json_schema_extra=extra, **kw)


def _extra(info: Any, key: str) -> str:
    extra = info.json_schema_extra
    return str(extra.get(key, "")) if isinstance(extra, dict) else ""


@dataclass(frozen=True, slots=True)
class ParamInfo:
    """One documented parameter, as ``schedlab list`` shows it."""

    name: str
    type: str
    default: Any
    description: str
    constraints: str = ""
    origin: str = ""     # "paper" / "ours" ("" for a plugin that does not say)
    neutral: str = ""    # for an "ours" parameter whose default is not off: why it keeps the paper's algorithm

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "default": _jsonable(self.default),
                "description": self.description, "constraints": self.constraints, "origin": self.origin,
                "neutral": self.neutral}


def _jsonable(x: Any) -> Any:
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return str(x)


def _type_name(annotation: Any) -> str:
    name = getattr(annotation, "__name__", None)
    text = name if name and not getattr(annotation, "__args__", None) else str(annotation)
    return text.replace("typing.", "").replace("NoneType", "None")


def _constraints(info: Any) -> str:
    out = []
    for m in info.metadata:
        for attr, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"), ("min_length", "len >="),
                          ("max_length", "len <=")):
            v = getattr(m, attr, None)
            if v is not None:
                out.append(f"{sym} {v}")
    return ", ".join(out)


class Decision(StrEnum):
    """What a policy (or a model) may decide."""

    ADMISSION = "admission"    # which jobs run now
    PLACEMENT = "placement"    # where their GPUs are
    GPUS = "gpus"              # how many GPUs a job gets (resizing away from its request)
    PLAN = "plan"              # its execution plan (parallelism)
    PREEMPTION = "preemption"  # stop or shrink running jobs
    WAITING = "waiting"        # hold a job back although it fits (delay scheduling, ordering)


#: the decision set of a policy that declares none: admission, placement and waiting (+ preemption)
BASE_DECISIONS = frozenset({Decision.ADMISSION, Decision.PLACEMENT, Decision.WAITING})


@dataclass(frozen=True)
class PolicySpec:
    """A registered policy: how to build it and what it takes."""

    name: str
    factory: Callable[..., Policy]
    summary: str
    family: PolicyFamily = PolicyFamily.BASELINE
    params: type[PolicyParams] = NoParams
    preset: Mapping[str, Any] = field(default_factory=dict)
    oracle: bool = False
    preemptive: bool = False
    twins: tuple[str, ...] = ()
    reference: str = ""
    decisions: frozenset[Decision] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "preset", MappingProxyType(dict(self.preset)))
        object.__setattr__(self, "twins", tuple(self.twins))
        if self.decisions is None:
            extra = {Decision.PREEMPTION} if self.preemptive else set()
            object.__setattr__(self, "decisions", BASE_DECISIONS | extra)
        else:
            object.__setattr__(self, "decisions", frozenset(Decision(d) for d in self.decisions))
        unknown = set(self.preset) - set(self.params.model_fields)
        if unknown:
            raise SpecError(f"policy {self.name!r}: preset sets unknown parameters {sorted(unknown)}",
                            source="<policies>", field=f"{self.name}.preset")

    # ------------------------------------------------------------ parameters
    def validate(self, params: Mapping[str, Any] | None = None, *, source: str = "<policy>") -> dict[str, Any]:
        """The full, validated keyword set the factory receives (defaults, then preset, then ``params``)."""
        given = dict(params or {})
        fixed = sorted(set(given) & set(self.preset))
        if fixed:
            raise SpecError(f"policy {self.name!r}: parameter {fixed[0]!r} is fixed by this preset "
                            f"(= {self.preset[fixed[0]]!r}); use the base policy to change it",
                            source=source, field=f"{self.name}.{fixed[0]}")
        try:
            model = self.params.model_validate({**self.preset, **given})
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(p) for p in err["loc"]) or "params"
            known = ", ".join(self.param_names()) or "none"
            raise SpecError(f"policy {self.name!r}: {err['msg']} (parameters: {known})", source=source,
                            field=f"{self.name}.{loc}") from None
        return {k: getattr(model, k) for k in self.params.model_fields}

    def param_names(self) -> list[str]:
        return [k for k in self.params.model_fields if k not in self.preset]

    def param_info(self) -> list[ParamInfo]:
        """The parameters a caller may set (preset ones excluded), documented."""
        out = []
        for name, info in self.params.model_fields.items():
            if name in self.preset:
                continue
            out.append(ParamInfo(name, _type_name(info.annotation), info.get_default(call_default_factory=True),
                                 info.description or "", _constraints(info), _extra(info, "origin"),
                                 _extra(info, "neutral")))
        return out

    # ------------------------------------------------------------ building
    def build(self, params: Mapping[str, Any] | None = None, *, seed: int = 0,
              source: str = "<policy>") -> Policy:
        """A fresh policy object with validated ``params`` and ``seed``."""
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise SpecError(f"seed must be an integer >= 0, got {seed!r}", source=source, field="seed")
        return self.factory(seed=seed, **self.validate(params, source=source))

    def decide(self, instance: Instance, params: Mapping[str, Any] | None = None, *, seed: int = 0) -> Allocation:
        """Snapshot form of a freshly built policy: one decision on ``instance``."""
        return self.build(params, seed=seed).decide(instance, seed=seed)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "summary": self.summary, "family": self.family.value, "oracle": self.oracle,
                "preemptive": self.preemptive, "twins": list(self.twins),
                "decisions": sorted(d.value for d in self.decisions or ()), "reference": self.reference, "preset": _jsonable(dict(self.preset)),
                "params": [p.as_dict() for p in self.param_info()]}


class PolicyRegistry(dict[str, PolicySpec]):
    """``name -> PolicySpec``; :meth:`register` refuses duplicates, lookups name the known policies."""

    def register(self, spec: PolicySpec) -> PolicySpec:
        if spec.name in self:
            raise SpecError(f"policy {spec.name!r} registered twice", source="<policies>", field=spec.name)
        self[spec.name] = spec
        return spec

    def spec(self, name: str, *, source: str = "<policy>") -> PolicySpec:
        try:
            return self[name]
        except KeyError:
            raise SpecError(f"unknown policy {name!r}; known: {', '.join(sorted(self))}", source=source,
                            field="policy") from None

    def build(self, name: str, params: Mapping[str, Any] | None = None, *, seed: int = 0,
              source: str = "<policy>") -> Policy:
        """A fresh policy object of a registered policy, its parameters validated.

        Parameters
        ----------
        name : str
            A registered policy (``schedlab list policies``; ``heuristics.POLICIES`` holds the
            heuristics, ``benchmarks.registry.all_policies()`` adds the solver-in-the-loop ones).
        params : mapping, optional
            The policy's parameters (its ``PolicySpec.params`` model: typed, ranges checked); default:
            the documented defaults.
        seed : int, default 0
            The seed of every random choice the policy makes.
        source : str, default "<policy>"
            Where the parameters come from, named in errors (a suite file, a command option).

        Returns
        -------
        Policy
            A new policy object (online ``schedule`` through the simulator, snapshot ``decide``).

        Raises
        ------
        SpecError
            An unknown policy (the error lists the known ones), an unknown or invalid parameter, or a
            seed that is not an integer >= 0.

        Examples
        --------
        >>> from schedlab.heuristics import POLICIES
        >>> from schedlab.formulations import KINDS
        >>> from schedlab.topology import preset
        >>> policy = POLICIES.build("fifo", {"blocking": False}, seed=0)
        >>> type(policy).__name__
        'FifoPolicy'
        >>> inst = KINDS["tier-placement"].generate(preset("dally-2"), 4, seed=0)
        >>> len(policy.decide(inst.base, seed=0))  # jobs it places in snapshot form
        4
        >>> POLICIES.build("fifo", {"blocking": "maybe"})
        Traceback (most recent call last):
        ...
        schedlab.topology.errors.SpecError: ...
        """
        return self.spec(name, source=source).build(params, seed=seed, source=source)

    @classmethod
    def merged(cls, *registries: Mapping[str, PolicySpec]) -> PolicyRegistry:
        out = cls()
        for reg in registries:
            for spec in reg.values():
                out.register(spec)
        return out


def parse_value(text: str) -> Any:
    """A parameter value from the command line: JSON (``3``, ``1e3``, ``true``, ``[1, 2]``), else the
    string itself; the policy's parameter model then validates it."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_assignments(items: Iterable[str], *, source: str = "<command line>") -> dict[str, dict[str, Any]]:
    """``["2d-las.queues=3", "dally.window=50"]`` -> ``{"2d-las": {"queues": 3}, "dally": {"window": 50}}``."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, eq, value = item.partition("=")
        name, dot, param = key.strip().rpartition(".")
        if not eq or not dot or not name or not param:
            raise SpecError(f"expected POLICY.PARAM=VALUE, got {item!r}", source=source, field="param")
        out.setdefault(name, {})[param] = parse_value(value.strip())
    return out


__all__ = [
    "BASE_DECISIONS", "Decision", "NoParams", "Origin", "ParamInfo", "PolicyFamily", "PolicyParams", "PolicyRegistry",
    "PolicySpec", "ours", "paper", "parse_assignments", "parse_value",
]
