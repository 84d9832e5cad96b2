"""Conformance checks for code that extends schedlab (plugins), usable from a plugin's own tests.

* :func:`check_formulation` — a formulation method on every available backend: a tiny instance with a
  known answer must come back proven optimal (for its own model), with the expected value of the kind's
  objective function (the one the harness scores every method with), accepted by the verifier (the
  backend conformance test of a formulation);
* :func:`check_policy` — the policy conformance suite: documented and validated parameters; online,
  on a rigid-job and a multi-tenant reconfigurable workload, every decision verified (the simulator
  refuses any other), every job finishes, the same seed gives the same records; in snapshot form,
  verified and deterministic decisions.

Each returns what it checked; a violation raises :class:`AssertionError` naming the backend or the
check, so ``assert_*``-style use in pytest reads naturally.
"""

from __future__ import annotations

import dataclasses
from typing import Any

#: workloads of the online checks (name -> cluster): rigid jobs, and multi-tenant reconfigurable ones
POLICY_WORKLOADS = {"smoke": "tiresias-60", "smoke-mt": "rubick-64"}


def check_formulation(method: str, instance: Any, optimum: float, *, backends: tuple[str, ...] | None = None,
                      time_limit_s: float = 60.0, rel: float = 1e-6) -> dict[str, str]:
    """``{backend: "ok" | "skipped: why"}``; raises on a wrong, unproven or unverified answer."""
    from schedlab.benchmarks.registry import all_kinds
    from schedlab.formulations import BACKENDS, SolveParams, Status
    from schedlab.topology.errors import Unsupported

    kinds = all_kinds()
    assert method in kinds.methods, f"unknown method {method!r}; registered: {', '.join(kinds.methods)}"
    meth = kinds.methods[method]
    kind, solver, objective = meth.kind, meth.solve, kinds[meth.kind].objective
    assert instance.KIND == kind, f"{method} solves {kind!r} instances, not {instance.KIND!r}"
    out: dict[str, str] = {}
    for name in backends or tuple(BACKENDS):
        av = BACKENDS[name]().availability()
        if not av.ok:
            out[name] = f"skipped: unavailable ({av.reason})"
            continue
        try:
            res = solver(instance, name, SolveParams(time_limit_s=time_limit_s, threads=1, seed=0))
        except Unsupported as e:
            out[name] = f"skipped: {e}"
            continue
        assert res.status is Status.OPTIMAL, f"{method}@{name}: {res.status.value} ({res.termination.detail})"
        value = objective(instance, res.solution)
        tol = rel * max(1.0, abs(optimum))
        assert abs(value - optimum) <= tol, f"{method}@{name}: objective {value}, expected {optimum}"
        assert res.verified is not False, f"{method}@{name}: the verifier rejected it: {res.violations}"
        if res.bounds.dual is not None and res.bounds.primal is not None:  # its own model's proof
            assert abs(res.bounds.dual - res.bounds.primal) <= 1e-5 * max(1.0, abs(res.bounds.primal)), \
                f"{method}@{name}: optimal, yet primal {res.bounds.primal} != dual bound {res.bounds.dual}"
        out[name] = "ok"
    assert any(v == "ok" for v in out.values()), f"{method}: no backend could solve it: {out}"
    return out


def _online(name: str, seed: int) -> list[str]:
    from schedlab.benchmarks.registry import all_policies
    from schedlab.benchmarks.simulator import simulate
    from schedlab.benchmarks.workloads import get_workload
    from schedlab.topology.presets import preset

    reg = all_policies()
    checked = []
    for wname, cname in POLICY_WORKLOADS.items():
        cluster = preset(cname)
        w = get_workload(wname).build(cluster, seed=3)

        a, b = (simulate(cluster, w.jobs, reg.build(name, seed=seed), quotas=w.quotas, small_gpus=w.small_gpus,
                         short_s=w.short_s) for _ in range(2))
        assert not a.unfinished, f"{name} on {wname}: jobs never finished: {list(a.unfinished)[:5]}"
        assert len(a.jobs) == len(w.jobs), f"{name} on {wname}: {len(a.jobs)} of {len(w.jobs)} jobs recorded"
        assert [dataclasses.asdict(r) for r in a.jobs] == [dataclasses.asdict(r) for r in b.jobs], \
            f"{name} on {wname}: the same seed gave other records"
        checked.append(f"online {wname}")
        checked += _snapshot(name, cluster, w, seed)
    return checked


def _snapshot(name: str, cluster, w, seed: int) -> list[str]:
    from schedlab.benchmarks.registry import all_policies
    from schedlab.scheduling import Instance, validate_allocation

    reg = all_policies()
    jobs = tuple(w.jobs[:16])
    cold = Instance(cluster, jobs, quotas=w.quotas)
    running = reg["fifo-backfill"].decide(Instance(cluster, jobs[:8], quotas=w.quotas), seed=0)
    busy = Instance(cluster, jobs, current=running, quotas=w.quotas, time=600.0)
    for label, inst in (("cold", cold), ("busy", busy)):
        a = reg[name].decide(inst, seed=seed)
        bad = validate_allocation(inst, a)
        assert not bad, f"{name} snapshot ({label}): the verifier rejected it: {[str(v) for v in bad[:3]]}"
        assert dict(a.assignments) == dict(reg[name].decide(inst, seed=seed).assignments), \
            f"{name} snapshot ({label}): the same seed gave another decision"
    return [f"snapshot {w.name}"]


def check_policy(name: str, *, seed: int = 0) -> list[str]:
    """The checks passed (see the module docstring); raises on the first failure."""
    from schedlab.benchmarks.registry import all_policies
    from schedlab.scheduling.policy import Policy
    from schedlab.scheduling.registry import PolicyParams
    from schedlab.topology.errors import SpecError

    spec = all_policies().spec(name)
    assert spec.summary.strip(), f"{name}: no summary"
    assert issubclass(spec.params, PolicyParams), f"{name}: parameters are not a PolicyParams model"
    for p in spec.param_info():
        assert p.description.strip(), f"{name}.{p.name}: no description"
    spec.validate({})
    try:
        spec.validate({"no_such_parameter": 1})
    except SpecError as e:
        assert e.field == f"{name}.no_such_parameter", f"{name}: unknown parameter reported as {e.field!r}"
    else:
        raise AssertionError(f"{name}: accepted an unknown parameter")
    policy = spec.build(seed=seed)
    assert isinstance(policy, Policy) and policy.name, f"{name}: does not implement the Policy protocol"
    assert bool(policy.oracle) == spec.oracle, f"{name}: oracle flag differs between spec and policy"
    return ["documented", *_online(name, seed)]


__all__ = ["POLICY_WORKLOADS", "check_formulation", "check_policy"]
