"""Suite files: a user's own suite in YAML or TOML, validated with pydantic; every error names the file,
the field and (YAML) the line, before anything runs.

.. code-block:: yaml

    name: my-gap                      # required; records are stored under this suite name
    description: FIFO vs the joint ILP on busy clusters
    until_unproven: true              # exact methods stop growing once they stop proving optimality
    defaults: {seeds: [0, 1], time_limit_s: 60}
    gap:                              # instance kind x cluster x sizes x seeds, answered by each method
      - kind: joint
        cluster: rubick-64            # or a list: [rubick-64, dally-2]
        sizes: [8, 16, 32]
        generator: {running_frac: 0.3}   # typed per kind (schedlab list kinds): a wrong value is an error
        policies: [fifo, {name: fifo, params: {blocking: false}}]   # snapshot form
        formulations: [joint, {method: pop-joint, backends: [highs]}]
        backends: [cpsat, highs]       # for formulations that name none
        lp_bound: true                 # the relaxation bound (joint, tier-placement)
    replay:                           # workload x policies x seeds in the simulator
      - workload: smoke               # or trace: PATH (relative to this file) + trace_format
        policies: [fifo, yarn-cs]
        semantics: realistic
        source: {load: 1.5}           # any other WorkloadSource option
        hard_limit_s: 600             # the replay process's wall-clock limit (default 1800)
    bound:                            # each policy online vs the offline bound valid for it
      - {cluster: tiresias-60, jobs: 30, policies: [fifo], generator: {mean_gap: 10}}
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveFloat, PositiveInt, ValidationError

from schedlab.benchmarks.harness.bound import BoundCase
from schedlab.benchmarks.harness.casebase import Case, Suite
from schedlab.benchmarks.harness.gap import LP_BOUND, GapCase
from schedlab.benchmarks.harness.replay import ReplayCase
from schedlab.benchmarks.harness.validate import check_case
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.topology.errors import SpecError, field_path
from schedlab.topology.files import read_text


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: keys a suite file once took, and the key that replaced each
RENAMED = {"limit_s": "hard_limit_s", "hard_s": "hard_limit_s", "hard_timeout_s": "hard_limit_s"}


class PolicyEntry(_Model):
    name: str = Field(min_length=1, description="a registered policy (schedlab list policies)")
    params: dict[str, Any] = Field(default_factory=dict, description="its parameters")


class FormulationEntry(_Model):
    method: str = Field(min_length=1, description="a formulation method (schedlab list formulations)")
    backends: list[str] | None = Field(None, min_length=1, description="backends (default: the entry's)")
    params: dict[str, Any] = Field(default_factory=dict, description="solver parameters (rel_gap, node_limit, ...)")


class Defaults(_Model):
    seeds: list[NonNegativeInt] = Field([0], min_length=1)
    time_limit_s: PositiveFloat = 60.0
    backends: list[str] = Field(["cpsat", "highs"], min_length=1)


class GapEntry(_Model):
    kind: str
    cluster: str | list[str] = Field(description="a cluster or a list of clusters")
    sizes: list[PositiveInt] = Field(min_length=1)
    seeds: list[NonNegativeInt] | None = Field(None, min_length=1)
    generator: dict[str, Any] = Field(default_factory=dict)
    policies: list[str | PolicyEntry] = Field(default_factory=list)
    formulations: list[str | FormulationEntry] = Field(default_factory=list)
    backends: list[str] | None = Field(None, min_length=1)
    lp_bound: bool = False
    time_limit_s: PositiveFloat | None = None


class ReplayEntry(_Model):
    workload: str | None = None
    trace: str | None = None
    trace_format: str | None = None
    cluster: str | list[str] | None = None
    policies: list[str | PolicyEntry] = Field(min_length=1)
    seeds: list[NonNegativeInt] | None = Field(None, min_length=1)
    semantics: str = "realistic"
    costs: str | None = None
    source: dict[str, Any] = Field(default_factory=dict, description="other WorkloadSource options")
    hard_limit_s: PositiveFloat | None = Field(None, description="the process's wall-clock limit (s)")


class BoundEntry(_Model):
    cluster: str | list[str]
    jobs: PositiveInt
    policies: list[str | PolicyEntry] = Field(min_length=1)
    seeds: list[NonNegativeInt] | None = Field(None, min_length=1)
    generator: dict[str, Any] = Field(default_factory=dict)
    backend: str = "cpsat"
    time_limit_s: PositiveFloat | None = None


class SuiteFile(_Model):
    name: str = Field(min_length=1)
    description: str = ""
    until_unproven: bool = False
    defaults: Defaults = Defaults()
    gap: list[GapEntry] = Field(default_factory=list)
    replay: list[ReplayEntry] = Field(default_factory=list)
    bound: list[BoundEntry] = Field(default_factory=list)


# ------------------------------------------------------------------------------ reading
def _lines(text: str) -> dict[tuple, int]:
    """YAML path (tuple of keys/indices) -> 1-based line, for error messages."""
    out: dict[tuple, int] = {}

    def walk(node: yaml.Node, path: tuple) -> None:
        out[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                out[(*path, k.value)] = k.start_mark.line + 1
                walk(v, (*path, k.value))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, (*path, i))

    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return out
    if root is not None:
        walk(root, ())
    return out


def _parse_path(field: str) -> tuple:
    out: list[Any] = []
    for part in field.replace("[", ".[").split("."):
        if not part:
            continue
        out.append(int(part[1:-1]) if part.startswith("[") else part)
    return tuple(out)


def _line_of(lines: dict[tuple, int], path: tuple) -> int | None:
    while path and path not in lines:
        path = path[:-1]
    return lines.get(path)


def _raw(path: Path) -> tuple[Any, dict[tuple, int]]:
    text = read_text(path, what="suite file")
    suffix = path.suffix.lower()
    if suffix == ".toml":
        try:
            return tomllib.loads(text), {}
        except tomllib.TOMLDecodeError as e:
            raise SpecError(f"not valid TOML: {e}", source=str(path)) from None
    if suffix not in (".yaml", ".yml"):
        raise SpecError(f"a suite file is .yaml, .yml or .toml, not {suffix or 'without a suffix'}", source=str(path))
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise SpecError(f"not valid YAML: {getattr(e, 'problem', e)}", source=str(path),
                        line=None if mark is None else mark.line + 1) from None
    return data, _lines(text)


def load_suite_file(path: str | Path) -> Suite:
    """Read, validate and expand a suite file into a :class:`Suite` whose every case has been checked."""
    p = Path(path)
    data, lines = _raw(p)
    if not isinstance(data, Mapping):
        raise SpecError("a suite file is a mapping with name, gap, replay and bound entries", source=str(p))
    _renamed(data, p, lines)
    try:
        spec = SuiteFile.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(x for x in err["loc"] if not (isinstance(x, str) and x in ("str", "PolicyEntry", "FormulationEntry")))
        raise SpecError(err["msg"], source=str(p), field=field_path(loc) or None, line=_line_of(lines, loc)) from None
    if not (spec.gap or spec.replay or spec.bound):
        raise SpecError("the suite declares no gap, replay or bound entries", source=str(p), field="gap")
    cases, origins = _expand(spec, p, lines)
    for case, origin in zip(cases, origins, strict=True):
        try:
            check_case(case, source=str(p), where="")
        except SpecError as e:
            where = _where(origin, (e.field or "").lstrip("."))
            raise SpecError(e.message, source=str(p), field=field_path(where),
                            line=_line_of(lines, where)) from None
    try:
        return Suite(spec.name, spec.description or f"suite file {p.name}", tuple(cases),
                     until_unproven=spec.until_unproven)
    except SpecError as e:
        raise SpecError(e.message, source=str(p), field="name") from None


def _renamed(data: Mapping[str, Any], path: Path, lines: dict[tuple, int]) -> None:
    """An old key (``limit_s``, ``hard_s``, ``hard_timeout_s``) in ``defaults`` or an entry is an error
    naming the key that replaced it."""
    places = [(("defaults",), data.get("defaults"))]
    places += [((sec, i), e) for sec in ("gap", "replay", "bound") if isinstance(data.get(sec), list)
               for i, e in enumerate(data[sec])]
    for at, entry in places:
        for old in (RENAMED.keys() & entry.keys() if isinstance(entry, Mapping) else ()):
            where = (*at, old)
            raise SpecError(f"{old!r} is now called {RENAMED[old]!r}", source=str(path), field=field_path(where),
                            line=_line_of(lines, where))


def _where(origin: dict[str, tuple], field: str) -> tuple:
    head, _, rest = field.partition(".")
    base = origin.get(head, (*origin["*"], *_parse_path(head)) if head else origin["*"])
    return (*base, *_parse_path(rest)) if rest else base


def _policies(entries: list, at: tuple) -> list[tuple[str, dict, tuple]]:
    out = []
    for i, e in enumerate(entries):
        if isinstance(e, str):
            out.append((e, {}, (*at, i)))
        else:
            out.append((e.name, dict(e.params), (*at, i)))
    return out


def _clusters(value: str | list[str] | None, base: Path, at: tuple) -> list[tuple[str | None, tuple]]:
    """``(cluster, its location in the file)`` for one cluster or each of a list."""
    if isinstance(value, list):
        return [(_resolve(v, base), (*at, "cluster", i)) for i, v in enumerate(value)]
    return [(_resolve(value, base), (*at, "cluster"))]


def _resolve(value: str | None, base: Path) -> str | None:
    """A relative file path in a suite file is relative to the file."""
    if value is None:
        return None
    p = Path(value)
    if p.suffix and not p.is_absolute() and (base / p).exists():
        return str(base / p)
    return value


class _Cases:
    """The cases of a suite file, each with where in the file it came from (for error messages); two
    cases with one label are an error naming both places."""

    def __init__(self, path: Path, lines: dict[tuple, int]) -> None:
        self.path, self.lines = path, lines
        self.cases: list[Case] = []
        self.origins: list[dict[str, tuple]] = []
        self.seen: dict[str, tuple] = {}

    def add(self, case: Case, origin: dict[str, tuple]) -> None:
        where = origin.get("method", origin.get("policy", origin["*"]))
        if case.label in self.seen:
            raise SpecError(f"two runs are labelled {case.label!r} (also at {field_path(self.seen[case.label])})",
                            source=str(self.path), field=field_path(where), line=_line_of(self.lines, where))
        self.seen[case.label] = where
        self.cases.append(case)
        self.origins.append(origin)


def _expand(spec: SuiteFile, path: Path, lines: dict[tuple, int]) -> tuple[list[Case], list[dict[str, tuple]]]:
    out = _Cases(path, lines)
    for gi, g in enumerate(spec.gap):
        _expand_gap(out, g, ("gap", gi), spec.defaults, path.parent)
    for ri, r in enumerate(spec.replay):
        _expand_replay(out, r, ("replay", ri), spec.defaults, path.parent)
    for bi, b in enumerate(spec.bound):
        at = ("bound", bi)
        for cluster, cl_at in _clusters(b.cluster, path.parent, at):
            for s in b.seeds or spec.defaults.seeds:
                for name, params, where in _policies(b.policies, (*at, "policies")):
                    out.add(BoundCase(name, cluster, b.jobs, seed=s, params=params, generator=b.generator,
                                      backend=b.backend, time_limit_s=b.time_limit_s or spec.defaults.time_limit_s),
                            {"*": at, "cluster": cl_at, "policy": where, "params": (*where, "params")})
    return out.cases, out.origins


def _expand_gap(out: _Cases, g: GapEntry, at: tuple, d: Defaults, base: Path) -> None:
    for cluster, cl_at in _clusters(g.cluster, base, at):
        for n in g.sizes:
            for s in g.seeds or d.seeds:
                common = {"seed": s, "generator": g.generator, "time_limit_s": g.time_limit_s or d.time_limit_s}
                for name, params, where in _policies(g.policies, (*at, "policies")):
                    out.add(GapCase(g.kind, cluster, n, name, policy_params=params, **common),
                            {"*": at, "cluster": cl_at, "method": where, "params": (*where, "params")})
                for fi, f in enumerate(g.formulations):
                    fe = FormulationEntry(method=f) if isinstance(f, str) else f
                    where = (*at, "formulations", fi)
                    for bi, b in enumerate(fe.backends or g.backends or d.backends):
                        out.add(GapCase(g.kind, cluster, n, fe.method, b, solver_params=fe.params, **common),
                                {"*": at, "cluster": cl_at, "method": where, "params": (*where, "params"),
                                 "backend": _backend_at(fe, g, where, at, bi)})
                if g.lp_bound:
                    out.add(GapCase(g.kind, cluster, n, LP_BOUND, **common),
                            {"*": at, "cluster": cl_at, "method": (*at, "lp_bound")})


def _expand_replay(out: _Cases, r: ReplayEntry, at: tuple, d: Defaults, base: Path) -> None:
    top = ("workload", "trace", "trace_format", "cluster")
    source_fields = {f.name: (*at, "source", f.name) for f in fields(WorkloadSource) if f.name not in top}
    for cluster, cl_at in _clusters(r.cluster, base, at):
        given = {"workload": r.workload, "trace": _resolve(r.trace, base), "trace_format": r.trace_format,
                 "cluster": cluster}
        src_kw = {**r.source, **{k: v for k, v in given.items() if v is not None}}
        for s in r.seeds or d.seeds:
            try:
                source = WorkloadSource(**{**src_kw, "seed": s + int(r.source.get("seed", 0))})
            except TypeError as e:
                raise SpecError(f"unknown workload source option: {e}", source=str(out.path),
                                field=field_path((*at, "source")), line=_line_of(out.lines, (*at, "source"))) from None
            opts = ",".join(f"{k}={v}" for k, v in sorted(r.source.items()))
            head = (source.label + (f"[{opts}]" if opts else "") + (f"@{cluster}" if cluster else "")
                    + f"/{r.semantics}/s={s}")
            for name, params, where in _policies(r.policies, (*at, "policies")):
                label = f"{head}/{ReplayCase(source, name, params).label}"
                out.add(ReplayCase(source, name, params, r.semantics, r.costs, seed=s, label=label,
                                   hard_limit_s=r.hard_limit_s),
                        {"*": at, "cluster": cl_at, "policy": where, "params": (*where, "params"), **source_fields})


def _backend_at(fe: FormulationEntry, g: GapEntry, where: tuple, at: tuple, i: int) -> tuple:
    """Where the ``i``-th backend of a formulation came from: the entry's own list, the gap entry's, or
    ``defaults.backends``."""
    if fe.backends:
        return (*where, "backends", i)
    if g.backends:
        return (*at, "backends", i)
    return ("defaults", "backends", i)


def is_suite_file(ref: str) -> bool:
    return Path(ref).suffix.lower() in (".yaml", ".yml", ".toml") or Path(ref).is_file()


__all__ = ["SuiteFile", "is_suite_file", "load_suite_file"]
