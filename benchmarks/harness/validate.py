"""Checking a suite before anything runs: every name resolves (policy and its parameters, method and its
instance kind, backend, workload, cluster, trace file, semantics, cost model, generator options), every
size and limit is in range. An error is a :class:`SpecError` naming the suite (or file) and the field,
raised before the results store is opened, so nothing stored is touched."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.cases import BoundCase, Case, GapCase, ReplayCase, Suite
from schedlab.benchmarks.harness.gap import LP_BOUND, SIMULATED, bound_refusal
from schedlab.topology.errors import SchedlabError, SpecError


@functools.cache
def _cluster_ok(ref: str) -> str | None:
    from schedlab.topology.presets import load_cluster

    try:
        load_cluster(ref)
    except SchedlabError as e:
        return str(e)
    except OSError as e:
        return f"{ref}: {e}"
    return None


def _bad(field: str, msg: str) -> SpecError:
    return SpecError(msg, source="<case>", field=field)


def _check_cluster(ref: str | None, field: str = "cluster") -> None:
    if ref is None:
        return
    why = _cluster_ok(str(ref))
    if why is not None:
        raise _bad(field, f"unknown cluster {ref!r}: {why}")


def _check_policy(name: str, params: Mapping[str, Any], field: str = "policy") -> Any:
    from schedlab.benchmarks.registry import all_policies

    reg = all_policies()
    if name not in reg:
        raise _bad(field, f"unknown policy {name!r}; known: {', '.join(sorted(reg))}")
    try:
        reg[name].validate(params, source="<case>")
    except SpecError as e:
        raise _bad(f"params.{(e.field or '').split('.', 1)[-1]}", e.message) from None
    return reg[name]


def _check_backend(name: str | None) -> None:
    from schedlab.formulations import BACKENDS

    if name is not None and name not in BACKENDS:
        raise _bad("backend", f"unknown backend {name!r}; known: {', '.join(BACKENDS)}")


def check_gap(case: GapCase) -> None:
    from schedlab.benchmarks.registry import all_kinds

    kinds = all_kinds()
    kind = kinds.kind(case.kind, source="<case>")
    _check_cluster(case.cluster)
    kind.parse_options(case.generator, source="<case>")
    if case.state:
        from schedlab.benchmarks.harness.states import check_state

        st = check_state(case.kind, case.state, source="<case>")
        _check_policy(str(st["policy"]), {}, field="state.policy")
    _check_backend(case.backend)
    if case.method == LP_BOUND:
        if kind.relaxation is None:
            have = ", ".join(k for k, v in kinds.items() if v.relaxation is not None)
            raise _bad("method", f"{LP_BOUND} has no relaxation for {case.kind!r} (it has: {have})")
        return
    if case.backend is None:
        if not kind.snapshot and case.kind not in SIMULATED:
            raise _bad("method", f"a policy answers {case.kind} instances online: declare a bound case instead")
        if case.method in kinds.methods:
            raise _bad("backend", f"formulation {case.method!r} needs a backend")
        _check_policy(case.method, case.params, "method")
        return
    if case.method not in kinds.methods:
        raise _bad("method", f"unknown method {case.method!r}; formulations: {', '.join(kinds.methods)}, or "
                   f"{LP_BOUND}; a policy takes no backend")
    method = kinds.methods[case.method]
    if method.kind != case.kind:
        raise _bad("method", f"method {case.method!r} solves {method.kind!r} instances, not {case.kind!r}")
    opts = method.parse_options(case.params, source="<case>")
    if opts.warm_start is not None:
        _check_policy(opts.warm_start, {}, "params.warm_start")


def check_bound(case: BoundCase) -> None:
    from schedlab.benchmarks.registry import all_kinds

    spec = _check_policy(case.policy, case.params)
    why = bound_refusal(spec)
    if why is not None:
        raise _bad("policy", why)
    _check_cluster(case.cluster)
    _check_backend(case.backend)
    all_kinds()["offline"].parse_options(case.generator, source="<case>")


def check_replay(case: ReplayCase) -> None:
    from schedlab.benchmarks.simulator import COSTS, SEMANTICS
    from schedlab.benchmarks.workloads import WORKLOADS

    _check_policy(case.policy, case.params)
    if case.semantics not in SEMANTICS:
        raise _bad("semantics", f"unknown semantics {case.semantics!r}; known: {', '.join(SEMANTICS)}")
    if case.costs is not None and case.costs not in COSTS:
        raise _bad("costs", f"unknown cost model {case.costs!r}; known: {', '.join(COSTS)}")
    src = case.source
    check = getattr(src, "check", None)  # WorkloadSource's own pre-flight check, where it has one
    if check is not None:
        check()
    if (src.workload is None) == (src.trace is None):
        raise _bad("workload", "give exactly one of a named workload or a trace file")
    if src.workload is not None and src.workload not in WORKLOADS:
        raise _bad("workload", f"unknown workload {src.workload!r}; known: {', '.join(WORKLOADS)}")
    if src.trace is not None and not Path(src.trace).is_file():
        raise _bad("trace", f"trace file not found: {src.trace}")
    if not src.load > 0:
        raise _bad("load", f"load must be > 0, got {src.load}")
    _check_cluster(src.cluster)


CHECKS: dict[type, Callable[[Any], None]] = {GapCase: check_gap, BoundCase: check_bound, ReplayCase: check_replay}


def check_case(case: Case, *, source: str, where: str) -> None:
    """Raise a :class:`SpecError` naming ``source`` and ``where.<field>`` if ``case`` cannot run."""
    try:
        CHECKS[type(case)](case)
    except SpecError as e:
        raise SpecError(e.message, source=source,
                        field=f"{where}.{e.field}" if e.field else where) from None


def validate_suite(suite: Suite, *, source: str | None = None) -> None:
    src = source or f"suite {suite.name}"
    for part in getattr(suite, "parts", ()):
        validate_suite(part, source=source)
    for i, case in enumerate(suite.cases):
        check_case(case, source=src, where=f"cases[{i}] ({case.label})")


__all__ = ["CHECKS", "check_bound", "check_case", "check_gap", "check_replay", "validate_suite"]
