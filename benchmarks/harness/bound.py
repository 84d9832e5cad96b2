"""The bound case: a policy online on a small seeded workload with known durations (an ``offline``
instance) against the offline bound valid for it (preemptive or not). A policy whose decision set is
wider than the bound's (it resizes jobs) is refused (:func:`bound_refusal`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from schedlab.benchmarks.harness import casebase as cb
from schedlab.benchmarks.harness.gap import instance_size, make_instance
from schedlab.benchmarks.harness.record import Outcome, Status
from schedlab.benchmarks.harness.validate import bad, check_backend, check_cluster, check_policy
from schedlab.benchmarks.registry import all_kinds, all_policies
from schedlab.benchmarks.simulator import Simulator
from schedlab.formulations import BOUND_METHOD, SolveParams, relative_gap
from schedlab.formulations import Status as SolveStatus
from schedlab.scheduling.registry import Decision, PolicySpec
from schedlab.topology.errors import SpecError

#: online bound per ``PolicySpec.preemptive``: the method name of the offline bound valid for such
#: policies (``formulations.BOUND_METHOD``: ``offline-nonpreemptive`` / ``offline-preemptive``). A name
#: that is not registered falls back to the trivial bound ``JCT_j >= d_j`` and the record says so.
OFFLINE_BOUND_METHOD: Mapping[bool, str | None] = BOUND_METHOD


@dataclass(frozen=True)
class BoundCase(cb.SolverLimited):
    """``policy`` online on ``KINDS["offline"].generate(cluster, jobs, seed=seed, **generator)`` (arrivals and
    known durations, speed independent of placement) against the offline bound valid for it: the
    ``offline-nonpreemptive`` for non-preemptive policies, ``offline-preemptive`` for the others
    (:func:`offline_bound_method`), solved on ``backend`` within ``time_limit_s``."""

    TYPE: ClassVar[str] = "bound"

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
        object.__setattr__(self, "params", cb.frozen(self.params))
        object.__setattr__(self, "generator", cb.frozen(self.generator))
        cb.check_size(self.jobs, self.time_limit_s, "<bound case>")
        if not self.label:
            object.__setattr__(self, "label", cb.sized_label("bound", self.cluster, self.jobs, self.seed, self.generator)
                               + f"/{cb.with_params(self.policy, self.params)}")

    def spec(self) -> dict[str, Any]:
        return cb.plain(self)

    @classmethod
    def from_spec(cls, d: Mapping[str, Any]) -> BoundCase:
        return cls(**d)

    def key(self) -> str:
        return cb.case_key("bound", self.spec())

    def instance_id(self) -> str:
        return cb.sized_label("offline", self.cluster, self.jobs, self.seed, self.generator)

    def info(self) -> cb.CaseInfo:
        return cb.CaseInfo(self.policy, self.backend, self.params, "offline", self.cluster, self.jobs, self.seed,
                        self.time_limit_s)

    def ladder(self) -> tuple | None:
        return None

    def check(self) -> None:
        spec = check_policy(self.policy, self.params)
        why = bound_refusal(spec)
        if why is not None:
            raise bad("policy", why)
        check_cluster(self.cluster)
        check_backend(self.backend)
        all_kinds()["offline"].parse_options(self.generator, source="<case>")

    def run(self, *, threads: int = 1, out_dir: str | None = None) -> Outcome:
        return run_bound(self, threads=threads)


def offline_bound_method(preemptive: bool) -> str | None:
    """The offline-bound method valid for a (non-)preemptive policy, if registered."""
    name = OFFLINE_BOUND_METHOD.get(preemptive)
    return name if name in all_kinds().methods else None


def bound_decisions(preemptive: bool) -> frozenset[Decision]:
    """What the offline bound lets a schedule decide: the offline kind's decision set (admission,
    placement, waiting; GPU counts and plans fixed at the request), plus preemption for the
    preemptive bound."""
    base = all_kinds()["offline"].decisions
    return base | {Decision.PREEMPTION} if preemptive else base


def bound_refusal(spec: PolicySpec) -> str | None:
    """Why no offline bound is valid for ``spec`` (its decision set is wider than the bound's), or ``None``."""
    wider = sorted(d.value for d in (spec.decisions or frozenset()) - bound_decisions(spec.preemptive))
    if not wider:
        return None
    return (f"policy {spec.name!r} decides {', '.join(wider)}, which the offline bound does not (it assumes rigid "
            "jobs: GPU counts and plans fixed at the request); no bound valid for this policy exists yet")


def online_value(objective: str, jobs: list) -> float:
    """``offline_objective`` on online job records: mean ``end - arrival`` or ``max end``."""
    if not jobs:
        return 0.0
    if objective == "makespan":
        return max(r.end for r in jobs)
    return sum(r.end - r.arrival for r in jobs) / len(jobs)


def trivial_bound(inst: Any) -> float:
    """Valid for any schedule of rigid jobs, preemptive or not: ``JCT_j >= d_j`` (avg JCT) and
    ``end_j >= r_j + d_j`` (makespan)."""
    jobs = inst.base.jobs
    if not jobs:
        return 0.0
    if inst.objective == "makespan":
        return max(j.arrival + j.duration for j in jobs)
    return sum(j.duration for j in jobs) / len(jobs)


def run_bound(case: BoundCase, *, threads: int = 1) -> Outcome:
    """The policy online (Tiresias semantics: speed independent of placement, free preemption, as the
    bound assumes) and the offline bound valid for it."""
    t0 = time.perf_counter()
    spec = all_policies().spec(case.policy, source=f"<case {case.label}>")
    why = bound_refusal(spec)
    if why is not None:
        raise SpecError(why, source=f"<case {case.label}>", field="policy")
    inst = make_instance("offline", case.cluster, case.jobs, case.seed, case.generator)
    policy = spec.build(case.params, seed=case.seed, source=f"<case {case.label}>")
    t1 = time.perf_counter()
    sim = Simulator(inst.base.cluster, inst.base.jobs, policy, semantics="tiresias").run()
    t2 = time.perf_counter()
    online = online_value(inst.objective, list(sim.jobs))
    extra: dict[str, Any] = {"generate_s": t1 - t0, "preemptive": spec.preemptive, "bound_objective": inst.objective,
                             "unfinished": len(sim.unfinished),
                             # what the gap is measured in: the offline objective, over the bound's decision set
                             "objective_name": "makespan [s]" if inst.objective == "makespan" else "average JCT [s]",
                             "decision_set": "offline (rigid jobs" + (", preemptive)" if spec.preemptive else ")")}
    bound, fields = _offline_bound(inst, case, spec.preemptive, threads, extra)
    return Outcome(role="online", solve_s=t2 - t1, objective=online, sense="min", metrics=dict(sim.metrics),
                   bound=bound, own_gap=relative_gap(online, bound), verified=not sim.unfinished, extra=extra,
                   **instance_size(inst), **fields)


def _offline_bound(inst: Any, case: BoundCase, preemptive: bool, threads: int,
                   extra: dict[str, Any]) -> tuple[float | None, dict[str, Any]]:
    """The bound, the outcome fields it sets, and (into ``extra``) how it was found."""
    method = offline_bound_method(preemptive)
    if method is None:
        extra.update(bound_method="trivial", bound_status="valid (JCT >= duration); not the optimum")
        return trivial_bound(inst), {"proven": False, "status": Status.OK, "build_s": 0.0, "threads": 1}
    res = all_kinds().methods[method].solve(inst, case.backend, SolveParams(time_limit_s=case.time_limit_s,
                                                                            threads=threads, seed=case.seed))
    extra.update(bound_method=f"{method}@{res.provenance.backend}", bound_status=res.status.value,
                 bound_solve_s=res.timing.solve_s)
    return res.bounds.dual, {"proven": res.status is SolveStatus.OPTIMAL, "build_s": res.timing.build_s,
                            "status": Status.OK if res.bounds.dual is not None else Status.NO_BOUND,
                            "threads": res.provenance.threads, "backend_version": res.provenance.backend_version}


__all__ = ["OFFLINE_BOUND_METHOD", "BoundCase", "bound_decisions", "bound_refusal", "offline_bound_method",
           "online_value", "run_bound", "trivial_bound"]
