r"""Exact-in-the-loop: every round, solve the joint plan + allocation model on the snapshot and move
the cluster to its optimum. It answers the question a researcher asks first: how much does a greedy
(Rubick's Algorithm 1) lose against solving each round exactly?

**Round** (:class:`~schedlab.formulations.policies.base.RoundPolicy`, every ``interval_s``; an
arrival or completion between rounds waits for the next one, as Sia): the snapshot the view shows
(:func:`~schedlab.formulations.policies.base.view_instance`) becomes a
:class:`~schedlab.formulations.JointInstance` (:mod:`~schedlab.formulations.policies.joint_snapshot`:
option tables from the perf model, reference throughputs, quotas left after restoring jobs), which
``method`` (``formulations.METHODS``: ``joint-2stage`` by default, ``joint`` or ``joint-machines``) solves on
``backend``, warm-started from the running allocation. Every method proves the optimum of the same
model; ``joint-2stage`` (:mod:`~schedlab.formulations.joint_twostage`) proves it fastest: its class MIP
(machines pooled per class, a relaxation) bounds the round, and a packing of its choices that reaches
the bound is optimal (on the ``rubick-base`` replay's rounds it always did; issue 25 round 7). The objective is ``OBJECTIVES["joint"]``:

.. math:: \max \sum_j \frac{\tau_j(a_j)}{\tau_j^{ref}} - \pi\,\bigl|\{j \text{ running}: a_j \ne a_j^{cur}\}\bigr|

(sum of normalised throughputs; ``pi`` = ``reconfig_penalty`` per running job reconfigured, moved or
preempted: a linear stand-in for Rubick's ``(T - N delta)/T > 0.97`` rule). Guaranteed jobs take only
options at or above their SLO and minRes, within their tenant's quota (the joint model's rules).

**A mirror of a heuristic** (issue 21 item 6): three parameters say which exact problem a round solves,
so that "the exact per-round decision of policy P's own problem" replays on the same trace as P:

* ``decisions``: ``resizable`` (the ``joint`` twin: admission, placement, GPU count, plan, preemption;
  Rubick's set) or ``rigid`` (the ``joint-rigid`` twin, :func:`~schedlab.formulations.joint_rigid.rigid_instance`:
  GPU counts and plans at the request; the set of FIFO, Synergy, AntMan, ...). The rigid model is built
  from ``source="request"`` tables cached across rounds
  (:func:`~schedlab.formulations.policies.joint_snapshot.rigid_snapshot`, tested equal to the twin's
  restriction);
* ``objective``: ``family`` (above) or ``neutral``: ``est-avg-jct`` (:mod:`~schedlab.formulations.neutral`)
  minimised exactly (``JointObjective.NEUTRAL``: a placed job's term ``d_j / r_j`` is a constant per
  option, so the model stays linear); the penalty is then charged in units of the snapshot's mean
  remaining run time;
* ``interval_s``: the round cadence.

``warm_start=POLICY`` gives the solver the named heuristic's ``decide()`` on the same snapshot as its
MIP start (else the running allocation); ``counters["warm-start:used"]`` / ``["warm-start:not-used"]``
say whether the backend took it (``SolveResult.warm_start_used``). The name is resolved by the registry
that builds the policy (:func:`schedlab.benchmarks.registry.all_policies` passes itself as
``registry``): formulations never import heuristics. In gap tables this policy solving its twin under
the family objective is a ``check`` (gap 0); with ``objective=neutral`` it is a result.

**Preemptions**: a preempted job holds its resources until its checkpoint is saved (a reconfigured
one frees them within the decision). ``preemption`` says how a round knows it:

* ``hold`` (default): the rule is in the model (``JointInstance.hold_preempted``, the same instance the
  gap harness's twins solve on a replay state): one exact solve, whose decision never starts a job on
  resources a job it preempts still holds. Since a preempted job frees nothing within the decision, such
  a round preempts only to resize or move (or a job that cannot run); in a gap table it is a ``check``;
* ``re-solve`` (the behaviour before the rule was in the model): the round is solved as if preemption
  freed resources at once; when the optimum preempts running jobs, it is solved again with those jobs
  out and their resources held (:func:`~schedlab.formulations.policies.joint_snapshot.holding`; counted
  ``re-solved:preemption``), until a solution preempts no one else: the decision preempts them and
  starts what fits beside them; what needed their resources starts at a later round ("preempt now,
  start later", which no one-decision model credits). The re-solve starts from the part of the first
  optimum that fits beside the held resources (:func:`_fitting_part`), a feasible point close to its
  optimum. Not a check in gap tables.

**Budget and fallbacks** (each counted in ``counters``, reported as ``metrics["policy_counters"]``):
``time_limit_s`` is a wall-clock budget for the whole round (tables, build, solve, extraction,
verification). A solve that ends at a limit with an incumbent uses it (``incumbent:<status>``); one
without a solution (``kept-current:<status>``), a :class:`~schedlab.topology.errors.SolverError`
(``kept-current:solver-error``), a solution the verifier rejects (``kept-current:rejected``) or a budget
spent before the solver could start (``kept-current:budget``) keeps the running allocation
unchanged for the round; the simulation never stops on a solver failure. ``node_limit`` /
``work_limit`` add deterministic limits (same seed, same records even when they bind).
``feasibility_jump`` (off by default) is HiGHS's feasibility-jump heuristic, which costs a fixed ~25 ms
of CPU per MIP solve (most of a small round's solve); a primal heuristic only decides which of equally
good solutions a round finds, never whether it is proven optimal. ``mip_restart`` (off by default, issue
25) is HiGHS's restart after the root once presolve can fix many columns: on the rounds of the
``rubick-base`` replay it re-ran the root's cut rounds on the reduced model, ~25 % of the solver's CPU;
off, every round is still proven optimal (same objective), ties may resolve to another allocation.

**Settled rounds** (family objective only: the neutral one depends on progress and the clock): when the
previous round was solved to proven optimality, preempting no one, and the snapshot is what
that decision made of it (every job holds what the decision gave it, the jobs it started or
reconfigured possibly restoring; no arrival, completion, job back from restoring or quota change),
its optimum is still optimal (:meth:`ExactJointPolicy._settled` proves it) and the round keeps the
running allocation without solving (``rounds-unchanged`` when the decision changed nothing,
``rounds-settled`` otherwise).

Limitation: the objective is the instantaneous throughput (no fairness or waiting-time term), so a
job whose GPUs are worth more to others waits until contention drops.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import field_validator

from schedlab.formulations.backends import BACKENDS, quick_availability
from schedlab.formulations.base import MIN_SOLVE_S
from schedlab.formulations.joint_instance import JointInstance, JointObjective
from schedlab.formulations.joint_rigid import RIGID_DECISIONS
from schedlab.formulations.policies.base import RoundPolicy, ViewSnapshot
from schedlab.formulations.policies.joint_snapshot import (
    OptionTables,
    holding,
    joint_snapshot,
    rigid_snapshot,
)
from schedlab.formulations.result import SolveParams, Status
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.registry import (
    BASE_DECISIONS,
    Decision,
    PolicyFamily,
    PolicyParams,
    PolicyRegistry,
    PolicySpec,
    ours,
)
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SolverError, SpecError

NODE_LIMIT_BACKENDS = ("highs", "scip", "cbc", "scipy")
#: ``decisions`` -> what the round's model decides (``resizable``: the joint twin; ``rigid``: ``joint-rigid``)
DECISION_SETS = {"resizable": BASE_DECISIONS | {Decision.PREEMPTION, Decision.GPUS, Decision.PLAN},
                 "rigid": BASE_DECISIONS | RIGID_DECISIONS}
OBJECTIVE_NAMES = ("family", "neutral")
PREEMPTION_MODES = ("hold", "re-solve")


class ExactJointParams(PolicyParams):
    """No paper: every parameter is ours (solver settings and the formulation's own choices)."""

    backend: str = ours("highs", neutral="the solver: the same optimum on every backend",
                        description="MIP backend (formulations.BACKENDS; must be installed)")
    method: Literal["joint", "joint-machines", "joint-2stage"] = ours(
        "joint-2stage", neutral="every method proves the same optimum of the same model; joint-2stage is the "
                                "fastest (issue 25)",
        description="exact joint method of formulations.METHODS: joint (pooled model when exact, else "
        "per machine), joint-machines (always per machine), joint-2stage (class MIP, then packing; optimal "
        "when the packing reaches the class bound, else the per-machine model: the fastest proof)")
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
    rel_gap: float = ours(1e-6, gt=0.0, lt=1.0, neutral="SolveParams' default: optimal within 1e-6",
                          description="relative gap within which a round's solution counts as optimal (the "
                                      "status rule's tolerance, passed to the solver; a wider one solves faster)")
    threads: int = ours(1, ge=1, neutral="solver threads: 1 is deterministic",
                        description="solver threads (1 = deterministic on every backend)")
    max_gpus: int = ours(0, ge=0, description="largest GPU count in a reconfigurable job's option table "
                         "(0 = the cluster's GPUs)")
    source: Literal["perfmodel", "request"] = ours(
        "perfmodel", neutral="perfmodel is the full joint model",
        description="option tables: perfmodel (plans and resources chosen from the perf model's "
        "tables) or request (every job keeps its requested GPUs and plan: placement only)")
    decisions: Literal["resizable", "rigid"] = ours(
        "resizable", neutral="resizable is the joint twin (Rubick's problem)",
        description="decision set solved each round: resizable (the joint twin: admission, placement, GPU "
        "count, plan, preemption) or rigid (the joint-rigid twin: GPU counts and plans at the request, the "
        "set of FIFO, Synergy, AntMan, ...)")
    objective: Literal["family", "neutral"] = ours(
        "family", neutral="family is the joint kind's own objective",
        description="objective solved each round: family (sum of normalised throughputs, Rubick's) or "
        "neutral (est-avg-jct of formulations.neutral, minimised exactly; the penalty is then in units of "
        "the snapshot's mean remaining run time)")
    feasibility_jump: bool = ours(
        False, neutral="a primal heuristic: it changes which optimum a tie resolves to, never the proof",
        description="HiGHS's feasibility-jump heuristic before the root (backend highs only): a fixed ~25 ms "
        "of CPU per MIP solve, most of a small round's solve; off, the proof of optimality is unchanged")
    mip_restart: bool = ours(
        False, neutral="a solver setting: it changes which of equally good solutions a round finds, never the proof",
        description="HiGHS's restart after the root when presolve can fix many columns (backend highs only): "
                    "off (default) cut the solver's CPU by ~25 % on the rounds of the rubick-base replay; every "
                    "round is still proven optimal, ties may resolve differently")
    preemption: Literal["hold", "re-solve"] = ours(
        "hold", neutral="hold is the simulator's rule in the model (a gap-table check)",
        description="how a round knows that a preempted job keeps its resources until its checkpoint: hold "
        "(the rule is in the model: one exact solve, never starting a job on a preempted job's resources) "
        "or re-solve (solved as if preemption freed them at once, then again with the preempted jobs "
        "holding theirs: preempt now, start at a later round)")
    warm_start: str | None = ours(
        None, description="a registered policy (e.g. rubick) whose decision on the same snapshot is the "
        "solver's MIP start each round (None: the running allocation); resolved by the registry that "
        "builds the policy (schedlab.benchmarks.registry.all_policies), never imported here")

    @field_validator("warm_start")
    @classmethod
    def _warm_start(cls, v: str | None) -> str | None:
        if v is not None and (not v.strip() or v == "exact-joint"):
            raise ValueError("warm_start names another registered policy (a heuristic such as rubick)")
        return v

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
    """See the module docstring. ``last_result``: the latest round's :class:`SolveResult` (or None).
    ``registry``: the policy registry a ``warm_start`` name is resolved in (given by
    :func:`schedlab.benchmarks.registry.all_policies`; formulations never import heuristics)."""

    name = "exact-joint"
    oracle = False

    def __init__(self, *, backend: str = "highs", method: str = "joint-2stage", time_limit_s: float = 10.0,
                 node_limit: int = 0, work_limit: float = 0.0, interval_s: float = 60.0,
                 reconfig_penalty: float = 0.05, rel_gap: float = 1e-6, threads: int = 1, max_gpus: int = 0,
                 source: str = "perfmodel", feasibility_jump: bool = False, mip_restart: bool = False,
                 decisions: str = "resizable", objective: str = "family", preemption: str = "hold",
                 warm_start: str | None = None, registry: Mapping[str, Any] | None = None, seed: int = 0) -> None:
        super().__init__(interval_s, seed=seed)
        self.backend, self.method, self.time_limit_s = backend, method, time_limit_s
        self.node_limit, self.work_limit = node_limit or None, work_limit or None
        self.reconfig_penalty, self.threads, self.max_gpus, self.source = reconfig_penalty, threads, max_gpus, source
        self.rel_gap = rel_gap
        #: backend options of every solve (SolveParams.backend_options)
        self.backend_options = () if backend != "highs" else (
            (() if feasibility_jump else (("mip_heuristic_run_feasibility_jump", False),))
            + (() if mip_restart else (("mip_allow_restart", False),)))
        if decisions not in DECISION_SETS:
            raise SpecError(f"unknown decision set {decisions!r}; known: {', '.join(DECISION_SETS)}",
                            source="<exact-joint>", field="exact-joint.decisions")
        if objective not in OBJECTIVE_NAMES:
            raise SpecError(f"unknown objective {objective!r}; known: {', '.join(OBJECTIVE_NAMES)}",
                            source="<exact-joint>", field="exact-joint.objective")
        if preemption not in PREEMPTION_MODES:
            raise SpecError(f"unknown preemption mode {preemption!r}; known: {', '.join(PREEMPTION_MODES)}",
                            source="<exact-joint>", field="exact-joint.preemption")
        self.decision_set, self.objective_name, self.preemption = decisions, objective, preemption
        #: what this configuration decides (the gap harness measures it in this set's twin)
        self.decisions = DECISION_SETS[decisions]
        self.warm_start = warm_start
        self._hint_policy = resolve_warm_start(warm_start, registry, seed)
        self.hint_s = 0.0  # seconds spent in the warm-start heuristic's decisions
        self._tables: OptionTables | None = None
        self._steady: tuple | None = None
        self.last_result = None
        #: the latest round's solved model instance (or None): what a gap table's check compares with its twin's
        self.last_instance: JointInstance | None = None
        #: ``(simulated time, termination)`` of every solve that did not prove optimality (a limit hit, no
        #: solution, an error): which rounds' decisions are incumbents or kept the running allocation
        self.limit_log: list[tuple[float, str]] = []
        #: called as ``on_solve(instance, params, result)`` after every solve (None: nothing); e.g.
        #: ``bench_exact_loop --check-method`` solves each round's instance again with another method
        self.on_solve = None

    def tables(self, cluster: Cluster) -> OptionTables:
        if self._tables is None or self._tables.cluster is not cluster:
            source = "request" if self.decision_set == "rigid" else self.source
            self._tables = OptionTables(cluster, max_gpus=self.max_gpus, source=source, counters=self.counters)
        return self._tables

    def snapshot(self, snap: ViewSnapshot) -> JointInstance:
        """The round's model instance: the snapshot's joint instance in this configuration's decision
        set (rigid: :func:`~schedlab.formulations.policies.joint_snapshot.rigid_snapshot`, the
        ``joint-rigid`` twin's restriction) under its objective, with the holding rule when ``preemption``
        is ``hold``."""
        objective = JointObjective.NEUTRAL if self.objective_name == "neutral" else JointObjective.SUM
        tables = self.tables(snap.instance.cluster)
        jinst = joint_snapshot(snap, tables, self.reconfig_penalty, objective=objective,
                               hold=self.preemption == "hold")
        return rigid_snapshot(jinst, tables) if self.decision_set == "rigid" else jinst

    def round(self, snap: ViewSnapshot) -> Allocation:
        t0 = time.perf_counter()
        inst = snap.instance
        settled = self._settled(inst)
        if settled is not None:
            self.counters[settled] += 1
            return inst.current
        self._steady, self.last_result, self.last_instance = None, None, None
        jinst = self.snapshot(snap)
        hint = self._hint(inst, jinst)
        left = self.time_limit_s - (time.perf_counter() - t0)
        resolved = False
        start = None
        while True:
            self.last_instance = jinst
            res = self._solve(jinst, left, hint, start)
            if res is None:
                return inst.current
            preempted = {ja.job_id for ja in jinst.base.current} - set(res.allocation.assignments)
            if not preempted or jinst.hold_preempted:  # under the rule the solve already held them
                break
            # the preempted jobs hold their resources until their checkpoint: solve again without
            # them, their resources held, so that no start uses what they still hold
            resolved = True
            self.counters["re-solved:preemption"] += 1
            start = _fitting_part(res.allocation, jinst.base.current, preempted)
            jinst = holding(jinst, preempted)
            hint = None if hint is None else Allocation.of(ja for ja in hint if ja.job_id not in preempted)
            left = self.time_limit_s - (time.perf_counter() - t0)
        target = res.allocation
        if res.status is Status.OPTIMAL and not resolved and not preempted and self.objective_name == "family":
            cur = inst.current
            changed = frozenset(ja.job_id for ja in target if cur.get(ja.job_id) != ja)
            self._steady = (frozenset(j.id for j in inst.jobs), target, dict(inst.reserved), dict(inst.quotas),
                            changed)
        return target

    def _settled(self, inst: Instance) -> str | None:
        """The counter of a round answered without solving, or ``None`` when it must be solved.

        With the family objective the model depends only on the jobs, the running allocation, the
        reserved capacity and the quotas (option tables are fixed per job; progress and the clock do
        not enter it). Let the previous round be solved to proven optimality, preempting no one (so
        without re-solves), on jobs ``J1`` with running allocation ``C1``, giving ``T``. If now every job of ``J1`` still
        holds what ``T`` gave it, except that jobs ``T`` started or reconfigured may be restoring (frozen:
        out of the decision, their resources reserved), and nothing else changed (no arrival,
        completion, job back from restoring, quota), then ``T`` is still optimal: an allocation ``A`` of
        the new model with ``T``'s frozen jobs added is feasible for the old one, and the penalty counts
        obey ``changed_C1(A) <= changed_C1(T) + changed_T(A)``, so ``A`` cannot beat keeping ``T``. Under
        the holding rule, an ``A`` that preempts jobs of ``T`` is beaten by ``A`` with those jobs kept (they
        hold the same resources, gain their value and no penalty), which preempts no one: the argument
        above applies to it. The
        round keeps the running allocation (``rounds-unchanged`` when ``T`` changed nothing and the
        snapshot is the same, ``rounds-settled`` otherwise). The neutral objective depends on progress
        and time: it is solved every round."""
        last = self._steady
        if last is None or self.objective_name != "family":
            return None
        jobs1, target, reserved1, quotas1, changed = last
        ids = {j.id for j in inst.jobs}
        if dict(inst.quotas) != quotas1 or not ids <= jobs1 or len(ids) != len(inst.jobs):
            return None
        gone = jobs1 - ids
        if not gone <= changed:
            return None
        cur = inst.current
        if len(cur) != sum(1 for j in ids if j in target.assignments) or any(
                cur.get(j) != target.get(j) for j in ids):
            return None
        expect = dict(reserved1)
        for jid in gone:
            for m, r in target[jid].placement.items():
                expect[m] = expect.get(m, Resources()) + r
        if not _same_capacity(expect, dict(inst.reserved)):
            return None
        return "rounds-unchanged" if not changed and not gone else "rounds-settled"

    def _hint(self, inst: Instance, jinst: JointInstance) -> Allocation | None:
        """The named heuristic's decision on the same snapshot, restricted to the model's jobs (the
        MIP start); ``None`` without ``warm_start`` (the running allocation is the start then)."""
        if self._hint_policy is None:
            return None
        t0 = time.perf_counter()
        alloc = self._hint_policy.decide(inst, seed=self.seed)
        self.hint_s += time.perf_counter() - t0
        ids = jinst.base.job_by_id
        return Allocation.of(ja for ja in alloc if ja.job_id in ids)

    def _solve(self, jinst: JointInstance, left: float, hint: Allocation | None = None,
               first: Allocation | None = None):
        """One solve of ``jinst`` within ``left`` seconds; ``None`` (counted) when the round must keep
        the running allocation. ``hint``: the warm-start heuristic's decision (else ``first``, else the
        running one); ``first``: a start of a preemption re-solve (:func:`_fitting_part`)."""
        if left < MIN_SOLVE_S:
            self.counters["kept-current:budget"] += 1
            return None
        cur = jinst.base.current
        start = hint if hint is not None else first if first is not None else (cur if len(cur) else None)
        params = SolveParams(time_limit_s=left, node_limit=self.node_limit, work_limit=self.work_limit,
                             threads=self.threads, seed=self.seed, warm_start=start, rel_gap=self.rel_gap,
                             backend_options=self.backend_options)
        self.counters["solves"] += 1
        try:
            res = solver_of(self.method)(jinst, self.backend, params)
        except SolverError:
            self.counters["kept-current:solver-error"] += 1
            self.limit_log.append((jinst.base.time, "solver-error"))
            return None
        self.last_result = res
        if self.on_solve is not None:
            self.on_solve(jinst, params, res)
        if res.status is not Status.OPTIMAL:
            self.limit_log.append((jinst.base.time, res.status.value))
        if hint is not None:
            self.counters[f"warm-start:{'used' if res.provenance.warm_start_used else 'not-used'}"] += 1
        if res.allocation is None:
            self.counters[f"kept-current:{res.status.value}"] += 1
            return None
        if res.violations:
            self.counters["kept-current:rejected"] += 1
            return None
        if res.status is not Status.OPTIMAL:
            self.counters[f"incumbent:{res.status.value}"] += 1
        return res


def _fitting_part(target: Allocation, current: Allocation, preempted: set[str]) -> Allocation:
    """The part of ``target`` that fits beside the resources of the ``preempted`` jobs, which they hold
    until their checkpoint: every job but those that ``target`` starts or changes on a machine the
    preempted jobs use (on those machines only kept jobs stay, and they ran beside the preempted ones).
    The start of the preemption re-solve (quotas aside: a start that breaks one is only a hint)."""
    busy = {m for jid in preempted for m in current[jid].placement}
    return Allocation.of(ja for ja in target if ja.job_id not in preempted and (
        current.get(ja.job_id) == ja or not busy & set(ja.placement)))


def _same_capacity(a: Mapping[str, Resources], b: Mapping[str, Resources]) -> bool:
    zero = Resources()
    for m in set(a) | set(b):
        x, y = a.get(m, zero), b.get(m, zero)
        if x.gpus != y.gpus or x.cpus != y.cpus or abs(x.mem_gb - y.mem_gb) > 1e-6:
            return False
    return True


def resolve_warm_start(name: str | None, registry: Mapping[str, Any] | None, seed: int):
    """The policy object a ``warm_start`` name stands for, built from ``registry`` (a
    :class:`~schedlab.scheduling.registry.PolicyRegistry`), or ``None`` without a name."""
    if name is None:
        return None
    if registry is None:
        raise SpecError(f"warm_start={name!r} needs the policy registry to resolve it: build exact-joint "
                        "through schedlab.benchmarks.registry.all_policies()", source="<exact-joint>",
                        field="exact-joint.warm_start")
    if name not in registry:
        raise SpecError(f"unknown warm-start policy {name!r}; known: {', '.join(sorted(registry))}",
                        source="<exact-joint>", field="exact-joint.warm_start")
    spec = registry[name]
    if spec.family is PolicyFamily.EXACT:
        raise SpecError(f"warm_start={name!r} solves a model itself; name a heuristic", source="<exact-joint>",
                        field="exact-joint.warm_start")
    return spec.build({}, seed=seed, source="<exact-joint warm_start>")


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
    decisions=DECISION_SETS["resizable"]))

__all__ = ["DECISION_SETS", "EXACT_POLICIES", "ExactJointParams", "ExactJointPolicy", "resolve_warm_start"]
