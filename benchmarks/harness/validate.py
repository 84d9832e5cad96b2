"""Checking a suite before anything runs: every name resolves (policy and its parameters, method and its
instance kind, backend, workload, cluster, trace file, semantics, cost model, generator options), every
size and limit is in range. Each case checks itself (``Case.check``, with the helpers here); an error is a
:class:`SpecError` naming the suite (or file) and the field, raised before the results store is opened,
so nothing stored is touched."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from schedlab.benchmarks.harness.casebase import Case, Suite
from schedlab.benchmarks.merged import all_policies
from schedlab.topology.errors import SchedlabError, SpecError
from schedlab.topology.presets import load_cluster


@functools.cache
def _cluster_ok(ref: str) -> str | None:
    try:
        load_cluster(ref)
    except SchedlabError as e:
        return str(e)
    except OSError as e:
        return f"{ref}: {e}"
    return None


def bad(field: str, msg: str) -> SpecError:
    """The error of a case's ``field``, placed by :func:`check_case`."""
    return SpecError(msg, source="<case>", field=field)


def check_cluster(ref: str | None, field: str = "cluster") -> None:
    if ref is None:
        return
    why = _cluster_ok(str(ref))
    if why is not None:
        raise bad(field, f"unknown cluster {ref!r}: {why}")


def check_policy(name: str, params: Mapping[str, Any], field: str = "policy") -> Any:
    """The policy's spec, once it and its parameters are known good."""
    reg = all_policies()
    if name not in reg:
        raise bad(field, f"unknown policy {name!r}; known: {', '.join(sorted(reg))}")
    try:
        reg[name].validate(params, source="<case>")
    except SpecError as e:
        raise bad(f"params.{(e.field or '').split('.', 1)[-1]}", e.message) from None
    return reg[name]


def check_backend(name: str | None) -> None:
    from schedlab.formulations import BACKENDS  # lazy: start-up (the solver layer)

    if name is not None and name not in BACKENDS:
        raise bad("backend", f"unknown backend {name!r}; known: {', '.join(BACKENDS)}")


def check_case(case: Case, *, source: str, where: str) -> None:
    """Raise a :class:`SpecError` naming ``source`` and ``where.<field>`` if ``case`` cannot run."""
    try:
        case.check()
    except SpecError as e:
        raise SpecError(e.message, source=source,
                        field=f"{where}.{e.field}" if e.field else where) from None


def validate_suite(suite: Suite, *, source: str | None = None) -> None:
    src = source or f"suite {suite.name}"
    for part in suite.parts:
        validate_suite(part, source=source)
    for i, case in enumerate(suite.cases):
        check_case(case, source=src, where=f"cases[{i}] ({case.label})")


__all__ = ["bad", "check_backend", "check_case", "check_cluster", "check_policy", "validate_suite"]
