r"""Exact-in-the-loop: every round, solve the joint plan + allocation model on the snapshot and move
the cluster to its optimum. It answers the question a researcher asks first: how much does a greedy
(Rubick's Algorithm 1) lose against solving each round exactly?

**Round** (:class:`~schedlab.formulations.policies.base.RoundPolicy`, every ``interval_s``; an
arrival or completion between rounds waits for the next one, as Sia): the snapshot the view shows
(:func:`~schedlab.formulations.policies.base.view_instance`) becomes a
:class:`~schedlab.formulations.JointInstance` (:mod:`~schedlab.formulations.policies.joint_snapshot`:
option tables from the perf model, reference throughputs, quotas left after restoring jobs), which
``method`` (``formulations.METHODS``: ``joint``, ``joint-machines`` or ``joint-2stage``) solves on
``backend``, warm-started from the running allocation. The objective is ``OBJECTIVES["joint"]``:

.. math:: \max \sum_j \frac{\tau_j(a_j)}{\tau_j^{ref}} - \pi\,\bigl|\{j \text{ running}: a_j \ne a_j^{cur}\}\bigr|

(sum of normalised throughputs; ``pi`` = ``reconfig_penalty`` per running job reconfigured, moved or
preempted: a linear stand-in for Rubick's ``(T - N delta)/T > 0.97`` rule). Guaranteed jobs take only
options at or above their SLO and minRes, within their tenant's quota (the joint model's rules).

**Preemptions**: a preempted job holds its resources until its checkpoint is saved (a reconfigured
one frees them within the decision), which the joint model does not know. When the optimum preempts
running jobs, the round is solved again with those jobs out and their resources held
(:func:`~schedlab.formulations.policies.joint_snapshot.holding`; counted ``re-solved:preemption``),
until a solution preempts no one else: the decision preempts them and starts what fits beside them;
what needed their resources starts at a later round.

**Budget and fallbacks** (each counted in ``counters``, reported as ``metrics["policy_counters"]``):
``time_limit_s`` is a wall-clock budget for the whole round (tables, build, solve, extraction,
verification). A solve that ends at a limit with an incumbent uses it (``incumbent:<status>``); one
without a solution (``kept-current:<status>``), a :class:`~schedlab.topology.errors.SolverError`
(``kept-current:solver-error``), a solution the verifier rejects (``kept-current:rejected``) or a budget
spent before the solver could start (``kept-current:budget``) keeps the running allocation
unchanged for the round; the simulation never stops on a solver failure. ``node_limit`` /
``work_limit`` add deterministic limits (same seed, same records even when they bind).

**Steady rounds**: when the previous round was solved to proven optimality, changed nothing, and the
snapshot (jobs, running allocation, reserved capacity, quotas) is the same, the model is the same
and so is its optimum: the round is answered without solving (``rounds-unchanged``).

Limitation: the objective is the instantaneous throughput (no fairness or waiting-time term), so a
job whose GPUs are worth more to others waits until contention drops.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import field_validator

from schedlab.formulations.backends import BACKENDS, quick_availability
from schedlab.formulations.base import MIN_SOLVE_S
from schedlab.formulations.policies.base import RoundPolicy, ViewSnapshot
from schedlab.formulations.policies.joint_snapshot import OptionTables, holding, joint_snapshot
from schedlab.formulations.result import SolveParams, Status
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.registry import (
    BASE_DECISIONS,
    Decision,
    PolicyFamily,
    PolicyParams,
    PolicyRegistry,
    PolicySpec,
    ours,
)
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SolverError

NODE_LIMIT_BACKENDS = ("highs", "scip", "cbc", "scipy")


class ExactJointParams(PolicyParams):
    """No paper: every parameter is ours (solver settings and the formulation's own choices)."""

    backend: str = ours("highs", neutral="the solver: the same optimum on every backend",
                        description="MIP backend (formulations.BACKENDS; must be installed)")
    method: Literal["joint", "joint-machines", "joint-2stage"] = ours(
        "joint", neutral="joint is the full model",
        description="exact joint method of formulations.METHODS: joint (pooled model when exact, else "
        "per machine), joint-machines (always per machine), joint-2stage (class MIP, then packing)")
    time_limit_s: float = ours(10.0, gt=0.0, neutral="a solver budget; a round that hits it is counted",
                               description="wall-clock budget per round, seconds (tables, build, solve, "
                                           "extraction, verification); a round without a solution keeps the "
                                           "running allocation (counted)")
    node_limit: int = ours(0, ge=0, description="branch-and-bound node limit per solve (highs, scip, cbc, scipy; "
                           "0 = none): a deterministic limit")
    work_limit: float = ours(0.0, ge=0.0, description="CP-SAT deterministic time limit per solve "
                                        "(cpsat only; 0 = none)")
    interval_s: float = ours(60.0, gt=0.0, neutral="rounds as Sia's", description="round length, seconds (as Sia)")
    reconfig_penalty: float = ours(0.05, ge=0.0, neutral="the formulation's objective (a stand-in for Rubick's "
                                                         "penalty rule)",
                                   description="objective charge per running job reconfigured, moved or "
                                               "preempted, in normalised-throughput units (a restart cost delta "
                                               "amortised over the time a change pays off: 78 s / ~26 min ~ 0.05)")
    threads: int = ours(1, ge=1, neutral="solver threads: 1 is deterministic",
                        description="solver threads (1 = deterministic on every backend)")
    max_gpus: int = ours(0, ge=0, description="largest GPU count in a reconfigurable job's option table "
                         "(0 = the cluster's GPUs)")
    source: Literal["perfmodel", "request"] = ours(
        "perfmodel", neutral="perfmodel is the full joint model",
        description="option tables: perfmodel (plans and resources chosen from the perf model's "
        "tables) or request (every job keeps its requested GPUs and plan: placement only)")

    @field_validator("backend")
    @classmethod
    def _backend(cls, v: str) -> str:
        if v not in BACKENDS:
            raise ValueError(f"unknown backend {v!r}; known: {', '.join(BACKENDS)}")
        av = quick_availability(v)
        if not av.ok:
            raise ValueError(f"backend {v!r} is not available: {av.reason}")
        return v

    @field_validator("node_limit")
    @classmethod
    def _node_limit(cls, v: int, info) -> int:
        be = info.data.get("backend")
        if v and be is not None and be not in NODE_LIMIT_BACKENDS:
            raise ValueError(f"a node limit applies to {', '.join(NODE_LIMIT_BACKENDS)}, not {be!r} "
                             "(use work_limit)")
        return v

    @field_validator("work_limit")
    @classmethod
    def _det_limit(cls, v: float, info) -> float:
        be = info.data.get("backend")
        if v and be is not None and be != "cpsat":
            raise ValueError(f"a deterministic time limit applies to cpsat, not {be!r} (use node_limit)")
        return v


class ExactJointPolicy(RoundPolicy):
    """See the module docstring. ``last_result``: the latest round's :class:`SolveResult` (or None)."""

    name = "exact-joint"
    oracle = False

    def __init__(self, *, backend: str = "highs", method: str = "joint", time_limit_s: float = 10.0,
                 node_limit: int = 0, work_limit: float = 0.0, interval_s: float = 60.0,
                 reconfig_penalty: float = 0.05, threads: int = 1, max_gpus: int = 0, source: str = "perfmodel",
                 seed: int = 0) -> None:
        super().__init__(interval_s, seed=seed)
        self.backend, self.method, self.time_limit_s = backend, method, time_limit_s
        self.node_limit, self.work_limit = node_limit or None, work_limit or None
        self.reconfig_penalty, self.threads, self.max_gpus, self.source = reconfig_penalty, threads, max_gpus, source
        self._tables: OptionTables | None = None
        self._steady: tuple | None = None
        self.last_result = None

    def tables(self, cluster: Cluster) -> OptionTables:
        if self._tables is None or self._tables.cluster is not cluster:
            self._tables = OptionTables(cluster, max_gpus=self.max_gpus, source=self.source, counters=self.counters)
        return self._tables

    def round(self, snap: ViewSnapshot) -> Allocation:
        t0 = time.perf_counter()
        inst = snap.instance
        key = (tuple(j.id for j in inst.jobs), dict(inst.current.assignments), dict(inst.reserved), dict(inst.quotas))
        if key == self._steady:
            self.counters["rounds-unchanged"] += 1
            return inst.current
        self._steady, self.last_result = None, None
        jinst = joint_snapshot(snap, self.tables(inst.cluster), self.reconfig_penalty)
        left = self.time_limit_s - (time.perf_counter() - t0)
        while True:
            res = self._solve(jinst, left)
            if res is None:
                return inst.current
            preempted = {ja.job_id for ja in jinst.base.current} - set(res.allocation.assignments)
            if not preempted:
                break
            # the preempted jobs hold their resources until their checkpoint: solve again without
            # them, their resources held, so that no start uses what they still hold
            self.counters["re-solved:preemption"] += 1
            jinst = holding(jinst, preempted)
            left = self.time_limit_s - (time.perf_counter() - t0)
        term = res.status
        target = res.allocation
        if term is Status.OPTIMAL and dict(target.assignments) == key[1]:
            self._steady = key
        return target

    def _solve(self, jinst, left: float):
        """One solve of ``jinst`` within ``left`` seconds; ``None`` (counted) when the round must keep
        the running allocation."""
        if left < MIN_SOLVE_S:
            self.counters["kept-current:budget"] += 1
            return None
        cur = jinst.base.current
        params = SolveParams(time_limit_s=left, node_limit=self.node_limit, work_limit=self.work_limit,
                             threads=self.threads, seed=self.seed, warm_start=cur if len(cur) else None)
        self.counters["solves"] += 1
        try:
            res = solver_of(self.method)(jinst, self.backend, params)
        except SolverError:
            self.counters["kept-current:solver-error"] += 1
            return None
        self.last_result = res
        if res.allocation is None:
            self.counters[f"kept-current:{res.status.value}"] += 1
            return None
        if res.violations:
            self.counters["kept-current:rejected"] += 1
            return None
        if res.status is not Status.OPTIMAL:
            self.counters[f"incumbent:{res.status.value}"] += 1
        return res


def solver_of(method: str):
    """The solver of a built-in joint method (``formulations.KINDS``)."""
    from schedlab.formulations.builtin_kinds import KINDS  # the kinds import the policies' package

    return KINDS.method(method).solve


EXACT_POLICIES = PolicyRegistry()
EXACT_POLICIES.register(PolicySpec(
    "exact-joint", ExactJointPolicy, "exact-in-the-loop: every round solves the joint plan + allocation model "
    "(sum of normalised throughputs, reconfiguration penalty) on the snapshot and moves to its optimum",
    PolicyFamily.EXACT, ExactJointParams, preemptive=True, twins=("joint",),
    reference="Rubick (MLSys'25) Sec. 4 problem, solved exactly per round (issue 15)",
    decisions=BASE_DECISIONS | {Decision.PREEMPTION, Decision.GPUS, Decision.PLAN}))

__all__ = ["EXACT_POLICIES", "ExactJointParams", "ExactJointPolicy"]
