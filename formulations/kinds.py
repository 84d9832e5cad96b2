"""The instance kinds: one :class:`Kind` object per kind, one :class:`KindRegistry` of them.

A :class:`Kind` holds everything the harness, the CLI and the containment check need to know about
one kind of instance: its name, its instance type and (de)serialisation, its typed generator options,
THE objective (with its name and sense) and the rule that completes a plain
:class:`~scheduling.Allocation` into the objective's solution type, its decision set, its methods
(each a :class:`Method` with a declared :class:`Role` and :class:`Capability` s), its relaxation
bound, its gap note, the formulation the containment check builds, and its default cluster and sizes.

Roles decide what a method's numbers mean:

* ``exact`` — a model over every decision of the kind, solved to a proof (its dual bound is a bound
  on the kind's optimum, its solution a feasible point);
* ``relaxation`` — a bound only (no schedule, or a schedule that need not be feasible);
* ``restriction`` — a model over a subset of the decisions (POP's partitions, fixed job sizes): a
  feasible point, but its "optimum" is the restricted optimum, never a bound of the kind;
* ``heuristic-in-model`` — a model solved for another objective (e.g. GPUs placed): a feasible point.

Only ``exact`` and ``relaxation`` feed the best bound of an instance (the harness's gaps), and only for
the runs measured in a decision set their own contains: an ``exact`` method may declare a narrower set
(:attr:`Method.decisions`; ``joint-rigid`` fixes GPU counts and plans), making it the exact twin of that
set (:meth:`Kind.twin_for` picks a policy's twin from its ``PolicySpec.decisions``).

:data:`formulations.builtin_kinds.KINDS` is the built-in registry (plain, immutable data). A plugin registers a :class:`Kind`
or a :class:`Method` through the plugin mechanism; ``schedlab.benchmarks.registry.all_kinds()``
merges them with :meth:`KindRegistry.merged` (nothing patches a dict).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import ValidationError

from schedlab.formulations.kind_options import Options, SolverOptions
from schedlab.formulations.neutral import Objective
from schedlab.formulations.result import SolveParams, SolveResult
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.registry import Decision
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.files import read_text

Sense = Literal["min", "max"]


class KindInstance(Protocol):
    """What every instance type offers: its kind's name, ``base`` (the scheduling instance) and a
    JSON round trip."""

    KIND: str

    def to_dict(self) -> dict[str, Any]: ...


I = TypeVar("I", bound=KindInstance)  # noqa: E741 - the instance type, as in the maths

#: ``(instance, backend, params) -> SolveResult``
Solver = Callable[[Any, str, SolveParams], SolveResult]


class Role(StrEnum):
    EXACT = "exact"
    RELAXATION = "relaxation"
    RESTRICTION = "restriction"
    HEURISTIC = "heuristic-in-model"

    @property
    def bounds(self) -> bool:
        """Whether this role's dual bound is a bound on the kind's optimum (feeds the best bound)."""
        return self in (Role.EXACT, Role.RELAXATION)


class Capability(StrEnum):
    WARM_START = "warm-start"    # uses SolveParams.warm_start (hints) where the backend takes them
    PARTITIONED = "partitioned"  # POP: solves parts independently and merges
    NO_BACKEND = "no-backend"    # combinatorial: the backend argument is not used


@dataclass(frozen=True)
class Method:
    """A solver method of one kind. ``solve(instance, backend, SolveParams) -> SolveResult``."""

    name: str
    kind: str
    solve: Solver
    role: Role = Role.EXACT
    capabilities: frozenset[Capability] = frozenset()
    summary: str = ""
    #: the solver parameters a suite file may pass (a subclass may narrow them, e.g. forbid ``node_limit``)
    options: type[SolverOptions] = SolverOptions
    #: the decision set this method ranges over (``None``: the kind's); an ``exact`` method with its own
    #: set is the exact twin of that set (e.g. ``joint-rigid``), bounding only runs measured in it
    decisions: frozenset[Decision] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "role", Role(self.role))
        object.__setattr__(self, "capabilities", frozenset(Capability(c) for c in self.capabilities))
        if self.decisions is not None:
            object.__setattr__(self, "decisions", frozenset(Decision(d) for d in self.decisions))

    @classmethod
    def of(cls, formulation: Callable[[], Any], kind: str, *, role: Role | str, name: str | None = None,
           **kw: Any) -> Method:
        """From a :class:`~formulations.base.Formulation` factory, solved by the one driver."""
        from schedlab.formulations.base import solve

        return cls(name or formulation().name, kind,
                   lambda inst, backend, params: solve(formulation(), inst, backend, params), Role(role), **kw)

    def parse_options(self, raw: Mapping[str, Any] | None, *, source: str = "<method>") -> SolverOptions:
        return _parse(self.options, raw, source, "params", f"method {self.name!r}")

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "role": self.role.value,
                "capabilities": sorted(c.value for c in self.capabilities), "summary": self.summary,
                "decisions": None if self.decisions is None else sorted(d.value for d in self.decisions)}


@dataclass(frozen=True)
class SuitePlan:
    """Where and how big the built-in suites make instances of one kind."""

    cluster: str
    quick: tuple[int, ...]
    gap: tuple[int, ...]
    scale_jobs: tuple[int, ...]
    scale_fixed_jobs: int = 8
    #: generator options for the suites' instances
    generator: tuple[tuple[str, object], ...] = ()


def _identity(inst: Any, allocation: Allocation) -> Any:
    return allocation


@dataclass(frozen=True)
class Kind(Generic[I]):
    """One instance kind: everything the harness, the CLI and the containment check know of a
    decision problem (module docstring).

    A kind generates seeded instances with typed options, scores any allocation with THE objective
    (the same function for a heuristic's decision and a solver's solution), and lists the methods
    that solve it, each with its role (exact, relaxation, restriction). The built-in kinds are in
    ``formulations.KINDS``.

    Parameters
    ----------
    name : str
        The kind's name (``joint``, ``tier-placement``, ...): a record's ``kind``.
    instance_type : type
        The instance class (``KIND``, ``to_dict``, ``from_dict``).
    generator : callable
        ``(cluster, n_jobs, *, seed, **options) -> instance``; called through :meth:`generate`.
    options : type[Options]
        The pydantic model that types and validates the generator's options.
    objective : callable
        ``(instance, solution or Allocation) -> float``: THE objective.
    objective_name : str
        Its name in reports.
    sense : callable
        ``instance -> "max" | "min"`` (tier placement's depends on the instance's mode).
    decisions : frozenset[Decision]
        The decision set of the kind's exact model.
    methods : tuple[Method, ...]
        The methods that solve it (``KINDS.methods`` merges every kind's).
    complete : callable
        Turns a plain allocation into the solution the containment check maps onto the model.

    The remaining fields (``containment``, ``relaxation``, ``gap_note``, defaults, ``plan``,
    ``default_exact``, ``snapshot``, ``neutral``, ``rules``) are documented where declared.

    Raises
    ------
    SpecError
        On construction: a method declared for another kind, or a ``default_exact`` that is not one of
        its methods; from :meth:`generate`: an unknown or invalid generator option.

    Examples
    --------
    >>> from schedlab.formulations import KINDS
    >>> from schedlab.heuristics import POLICIES
    >>> from schedlab.topology import preset
    >>> joint = KINDS["joint"]
    >>> inst = joint.generate(preset("rubick-64"), 3, seed=1)
    >>> joint.exact_method().name
    'joint-2stage'
    >>> alloc = POLICIES["fifo"].decide(inst.base, seed=0)
    >>> joint.objective(inst, alloc)
    3.0
    """

    name: str
    instance_type: type[I]
    generator: Callable[..., I]
    options: type[Options]
    objective: Callable[[I, Any], float]
    objective_name: str
    sense: Callable[[I], Sense]
    decisions: frozenset[Decision]
    methods: tuple[Method, ...] = ()
    complete: Callable[[I, Allocation], Any] = _identity
    containment: Callable[[], Any] | None = None
    relaxation: Callable[[I, str | None], float | None] | None = None
    gap_note: str = ""
    default_cluster: str = "rubick-64"
    default_jobs: int = 8
    plan: SuitePlan | None = None
    #: the harness's exact twin of this kind (a method name; default: the first exact method)
    default_exact: str | None = None
    #: whether policies answer it in snapshot form (the offline kind is answered online instead)
    snapshot: bool = True
    #: the neutral objective shared by every policy of the kind (:mod:`formulations.neutral`), scored
    #: beside THE (family) objective on every allocation; ``None``: none declared
    neutral: Objective | None = None
    #: the kind's own rules a plain allocation must keep beyond ``scheduling.validate_allocation`` (joint: a
    #: placed guaranteed job at its SLO); ``(instance, allocation) -> violations``. A policy decision that
    #: breaks one is ``invalid`` (no gap: it is no point of the problem the exact methods solve)
    rules: Callable[[I, Allocation], list[str]] | None = None

    def violations(self, inst: I, allocation: Allocation) -> list[str]:
        """What :attr:`rules` finds wrong with a plain allocation (empty without rules)."""
        return [] if self.rules is None else list(self.rules(inst, allocation))

    def __post_init__(self) -> None:
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "decisions", frozenset(Decision(d) for d in self.decisions))
        for m in self.methods:
            if m.kind != self.name:
                raise SpecError(f"method {m.name!r} is declared for kind {m.kind!r}, not {self.name!r}",
                                source="<kinds>", field=m.name)
        if self.default_exact is not None and self.default_exact not in self.method_names():
            raise SpecError(f"kind {self.name!r}: default exact method {self.default_exact!r} is not one of its "
                            "methods", source="<kinds>", field=self.name)

    # ------------------------------------------------------------ instances
    def parse_options(self, raw: Mapping[str, Any] | Options | None, *, source: str = "<generator>") -> Options:
        """The typed generator options (unknown names, wrong types and enum values are errors naming
        ``generator.FIELD``)."""
        if isinstance(raw, self.options):
            return raw
        return _parse(self.options, raw, source, "generator", f"the {self.name} generator")

    def generate(self, cluster: Cluster, n_jobs: int, *, seed: int = 0, **options: Any) -> I:
        """A seeded instance; ``options`` are validated by :meth:`parse_options` first."""
        opts = self.parse_options(options)
        return self.generator(cluster, n_jobs, seed=seed, **{k: getattr(opts, k) for k in type(opts).model_fields})

    def load(self, data: Mapping[str, Any], *, source: str = "<instance>") -> I:
        return self.instance_type.from_dict(data, source=source)  # type: ignore[attr-defined]

    def score(self, inst: I, allocation: Allocation) -> float:
        """THE objective on a plain allocation (a policy's decision)."""
        return self.objective(inst, allocation)

    # ------------------------------------------------------------ methods
    def method_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.methods)

    def exact_method(self) -> Method | None:
        """The harness's exact twin: :attr:`default_exact`, else the first ``exact`` method."""
        if self.default_exact is not None:
            return next(m for m in self.methods if m.name == self.default_exact)
        return next((m for m in self.methods if m.role is Role.EXACT and m.decisions is None), None)

    # ------------------------------------------------------------ decision sets
    def decision_set_of(self, method: Method | None) -> str:
        """The name of the decision set a method ranges over: the kind's name for the kind's own set,
        else the method's name (e.g. ``joint-rigid``)."""
        return self.name if method is None or method.decisions is None else method.name

    def decision_sets(self) -> dict[str, frozenset[Decision]]:
        """``set name -> decisions``: the kind's own set and every exact twin's narrower set."""
        out = {self.name: self.decisions}
        for m in self.methods:
            if m.role is Role.EXACT and m.decisions is not None:
                out[m.name] = m.decisions
        return out

    def twin_for(self, decisions: frozenset[Decision] | None) -> Method | None:
        """The exact twin a policy deciding ``decisions`` is measured against: the exact method of the
        smallest decision set containing ``decisions`` restricted to what the kind can express (waiting
        is not a snapshot decision), else the kind's :meth:`exact_method`."""
        want = frozenset(decisions or ()) & self.decisions
        default = self.exact_method()
        cands = [m for m in self.methods if m.role is Role.EXACT and m.decisions is not None and want <= m.decisions]
        if cands:
            return min(cands, key=lambda m: (len(m.decisions or ()), m.name))
        return default

    def twins(self) -> tuple[Method, ...]:
        """The exact twin of every decision set (the kind's :meth:`exact_method` first)."""
        first = self.exact_method()
        rest = [m for m in self.methods if m.role is Role.EXACT and m.decisions is not None]
        return tuple(m for m in (first, *rest) if m is not None)

    def score_neutral(self, inst: I, allocation: Allocation) -> float | None:
        """The neutral objective on a plain allocation (``None`` where the kind declares none)."""
        return None if self.neutral is None else self.neutral.fn(inst, allocation)

    def partitioned_method(self) -> Method | None:
        return next((m for m in self.methods if Capability.PARTITIONED in m.capabilities), None)

    def with_methods(self, *methods: Method) -> Kind[I]:
        return replace(self, methods=(*self.methods, *methods))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "objective": self.objective_name,
                "neutral": None if self.neutral is None else self.neutral.name,
                "decisions": sorted(d.value for d in self.decisions), "gap_note": self.gap_note,
                "decision_sets": {k: sorted(d.value for d in v) for k, v in self.decision_sets().items()},
                "default_cluster": self.default_cluster, "default_jobs": self.default_jobs,
                "exact": None if (m := self.exact_method()) is None else m.name,
                "relaxation": self.relaxation is not None,
                "options": list(self.options.model_fields), "methods": [m.name for m in self.methods]}


def _parse(model: type[Options], raw: Mapping[str, Any] | None, source: str, where: str, what: str) -> Any:
    try:
        return model.model_validate(dict(raw or {}))
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        known = ", ".join(model.model_fields) or "none"
        msg = err["msg"] if err["type"] != "extra_forbidden" else f"{what} takes no option {loc!r}"
        raise SpecError(f"{msg} (options: {known})", source=source, field=f"{where}.{loc}" if loc else where) from None


class KindRegistry(Mapping[str, Kind]):
    """``name -> Kind``, immutable. :meth:`merged` adds kinds and methods (a new registry); a name
    taken twice (a kind, or a method across all kinds) is an error."""

    def __init__(self, kinds: Iterable[Kind] = (), methods: Iterable[Method] = (), *, origin: str = "<kinds>") -> None:
        by: dict[str, Kind] = {}
        for k in kinds:
            if k.name in by:
                raise SpecError(f"instance kind {k.name!r} registered twice", source=origin, field=k.name)
            by[k.name] = k
        for m in methods:
            if m.kind not in by:
                raise SpecError(f"method {m.name!r} is for an unknown instance kind {m.kind!r}; known: "
                                f"{', '.join(by)}", source=origin, field=m.name)
            by[m.kind] = by[m.kind].with_methods(m)
        self._kinds = by
        self._methods: dict[str, Method] = {}
        for k in by.values():
            for m in k.methods:
                if m.name in self._methods:
                    raise SpecError(f"method {m.name!r} registered twice", source=origin, field=m.name)
                self._methods[m.name] = m

    def __getitem__(self, name: str) -> Kind:
        return self._kinds[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    @property
    def methods(self) -> Mapping[str, Method]:
        from types import MappingProxyType

        return MappingProxyType(self._methods)

    def kind(self, name: str, *, source: str = "<kinds>", field: str = "kind") -> Kind:
        if name not in self._kinds:
            raise SpecError(f"unknown instance kind {name!r}; known: {', '.join(self._kinds)}", source=source,
                            field=field)
        return self._kinds[name]

    def method(self, name: str, *, source: str = "<kinds>", field: str = "method") -> Method:
        if name not in self._methods:
            raise SpecError(f"unknown method {name!r}; known: {', '.join(self._methods)}", source=source, field=field)
        return self._methods[name]

    def of(self, inst: Any) -> Kind:
        """The kind of an instance (by its ``KIND``)."""
        return self.kind(getattr(inst, "KIND", type(inst).__name__))

    def merged(self, kinds: Iterable[Kind] = (), methods: Iterable[Method] = (), *,
               origin: str = "<plugins>") -> KindRegistry:
        """This registry plus ``kinds`` and ``methods`` (attached to their kinds), as a new registry."""
        return KindRegistry([*self._kinds.values(), *kinds], methods, origin=origin)

    # ------------------------------------------------------------ files
    def save_instance(self, inst: Any, path: str | Path) -> None:
        kind = self.of(inst)
        Path(path).write_text(json.dumps({"kind": kind.name, **inst.to_dict()}, indent=1))

    def load_instance(self, path: str | Path) -> Any:
        src = str(path)
        text = read_text(path, what="instance")
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise SpecError(f"not JSON: {e.msg} (column {e.colno})", source=src, line=e.lineno) from None
        except RecursionError:
            raise SpecError("nested too deeply to be an instance", source=src) from None
        name = d.get("kind") if isinstance(d, dict) else None
        if not isinstance(name, str) or name not in self._kinds:
            raise SpecError(f"unknown instance kind {name!r}; known: {', '.join(self._kinds)}", source=src,
                            field="kind")
        try:
            return self._kinds[name].load(d, source=src)
        except SpecError as e:
            raise SpecError(f"malformed {name} instance: {e}", source=src) from None
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError) as e:
            raise SpecError(f"malformed {name} instance: {type(e).__name__}: {e}"[:500], source=src) from None


__all__ = ["Capability", "Kind", "KindRegistry", "Method", "Role", "Sense", "Solver", "SuitePlan"]
