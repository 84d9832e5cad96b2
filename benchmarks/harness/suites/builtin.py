"""The harness's own suites: ``quick`` (the main job), ``gap``, ``scale`` and ``all``.

Every suite is built from the registries at call time, so policies and formulations merged later (or
registered by plugins) join without an edit here:

* each policy with ``twins`` answers instances of each twin kind in snapshot form, beside that kind's
  exact twin (``Kind.exact_method()``: its ``default_exact``, else its first ``exact`` method) and the
  exact twin of every narrower decision set one of its policies is measured in (``joint-rigid`` for
  fixed-size policies; :func:`twin_methods`), each on two backends; sizes and clusters come from the kind's :class:`~schedlab.formulations.kinds.SuitePlan`;
  where the kind gives its neutral objective an exact form (joint), each twin is also solved under it
  once (:func:`neutral_twins`): the neutral optimum of each decision set;
* each policy family (``PolicySpec.family``) replays through its representative (FIFO first fit is
  the floor of the baseline family), on a rigid and a multi-tenant reconfigurable workload;
* each representative runs online against the offline bound valid for it (:class:`BoundCase`); one
  whose decision set is wider than the bound's (it resizes jobs) is left out, and the suite's
  description says so.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from schedlab.benchmarks import merged
from schedlab.benchmarks.harness.bound import BoundCase, bound_refusal
from schedlab.benchmarks.harness.casebase import Case, Suite
from schedlab.benchmarks.harness.gap import LP_BOUND, SIMULATED, GapCase
from schedlab.benchmarks.harness.replay import ReplayCase
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.formulations import BACKENDS
from schedlab.formulations.kinds import SuitePlan
from schedlab.scheduling.registry import PolicyFamily
from schedlab.topology.errors import SpecError

#: the ``scale`` suite's clusters: jobs grow on the first, GPUs grow along all of them (same machines)
SCALE_CLUSTERS = ("dally-2", "dally-4", "dally-8", "dally-16")


#: sizes of a kind that declares no :class:`SuitePlan` (e.g. a plugin's)
DEFAULT_PLAN = SuitePlan("rubick-64", (4, 8), (4, 8, 16, 32, 64), (4, 8, 16, 32, 64))
#: the floor every gap suite and replay compares with
FLOOR = "fifo"
HERE = Path(__file__).resolve().parent
#: the quick suite's solver limit (s); on a loaded machine Tiresias' ILP and the horizon model need more
#: than 10 s on some quick instances
QUICK_LIMIT_S = 30.0
#: per-kind quick limits: joint at 10 s (HiGHS proves every quick joint instance in about a second;
#: single-threaded CP-SAT stops at any limit on the 16-job joint-rigid / joint-plan instance of seed 0)
QUICK_LIMITS = {"joint": 10.0}
#: a 16-GPU cluster (1 switch x 4 nodes x 4 GPUs, Tiresias' spec format) on which the smoke mix queues
BUSY_CLUSTER = str(HERE / "tiresias_1x4x4.csv")
#: the quick suite's replays, ``(workload, load, cluster or None for the workload's own)``: every
#: representative replays both, at a load where most jobs queue (arrivals compressed 4x; the rigid smoke
#: mix on 16 GPUs): measured utilisation 0.61-0.82 and average JCT 632-1,025 s on smoke (docs/harness.md)
REPLAYS: tuple[tuple[str, float, str | None], ...] = (("smoke", 4.0, BUSY_CLUSTER), ("smoke-mt", 4.0, None))
#: the named workloads of :data:`REPLAYS` (kept for callers of the earlier constant)
REPLAY_WORKLOADS = tuple(w for w, _, _ in REPLAYS)
#: the decision states the gap parts sample from a replay (harness.states), 2 per seed with >= 3 queued jobs;
#: every policy and twin of the kind answers them beside the generated instances. joint: the multi-tenant
#: reconfigurable mix at load 4 under FIFO; Tiresias placement: the rigid smoke mix at load 4 on 16 GPUs under
#: 2D-LAS (the placement decisions Tiresias' own scheduler meets); tier placement: the same under Dally
QUICK_STATES: dict[str, dict] = {
    "joint": {"workload": "smoke-mt", "load": 4.0, "policy": FLOOR, "k": 2, "min_queued": 3},
    "tiresias-placement": {"workload": "smoke", "load": 4.0, "policy": "2d-las", "k": 2, "min_queued": 3},
    "tier-placement": {"workload": "smoke", "load": 4.0, "policy": "dally", "k": 2, "min_queued": 3}}
#: where the states' replays run (joint: the workload's own cluster; the placement kinds: the busy 16-GPU one)
STATE_CLUSTER = {"joint": "rubick-64", "tiresias-placement": BUSY_CLUSTER, "tier-placement": BUSY_CLUSTER}
#: the small online-vs-offline-bound workload (offline generator on a 32-GPU cluster, arrivals 10 s apart:
#: jobs queue, so the policies' ratios to the bound differ)
BOUND_WORKLOAD = {"cluster": str(HERE / "tiresias_1x8x4.csv"), "jobs": 30, "generator": {"mean_gap": 10}}
BACKEND_PREFERENCE = ("cpsat", "highs", "scip", "scipy", "cbc")
#: the backend of the neutral twin solves (HiGHS proves each quick joint one in well under a second)
NEUTRAL_BACKENDS = ("highs", "scip", "cpsat")


def _policies():
    return merged.all_policies()  # looked up at call time: a test may swap the registry


def _kinds():
    return merged.all_kinds()


def exact_method(kind: str) -> str | None:
    """The kind's exact twin (``Kind.exact_method()``)."""
    m = _kinds()[kind].exact_method() if kind in _kinds() else None
    return None if m is None else m.name


def twin_methods(kind: str) -> tuple[str, ...]:
    """The exact twins a kind's gap cases run: its :func:`exact_method` and the twin of every other
    decision set one of its policies is measured in (``Kind.twin_for(PolicySpec.decisions)``)."""
    k = _kinds().get(kind)
    if k is None:
        return ()
    reg = _policies()
    want = {m.name for p in twin_kinds().get(kind, []) if (m := k.twin_for(reg[p].decisions)) is not None}
    return tuple(m.name for m in k.twins() if m.name in want or m is k.exact_method())


def pop_method(kind: str) -> str | None:
    """The kind's partitioned (POP) method, if it has one."""
    m = _kinds()[kind].partitioned_method() if kind in _kinds() else None
    return None if m is None else m.name


@functools.cache
def _available(name: str) -> bool:
    """A backend's availability (a smoke solve), checked once per process: a suite asks per kind."""
    return BACKENDS[name]().availability().ok


def backends(n: int = 2, needs: str = "mip") -> tuple[str, ...]:
    """The first ``n`` available backends (in :data:`BACKEND_PREFERENCE` order) with capability ``needs``."""
    names = [b for b in BACKEND_PREFERENCE if b in BACKENDS] + [b for b in BACKENDS if b not in BACKEND_PREFERENCE]
    out = []
    for name in names:
        if needs in BACKENDS[name]().capabilities and _available(name):
            out.append(name)
        if len(out) == n:
            break
    return tuple(out)


#: kinds a policy answers by being replayed over the instance (``gap.SIMULATED``) -> the policies scored
#: there: ``horizon-wait`` scores the waiting of Dally (delay timers) and Tiresias (skew-based consolidation
#: waits) against the horizon optimum, with FIFO as the floor
SIMULATED_POLICIES: dict[str, tuple[str, ...]] = {
    "horizon-wait": (FLOOR, "dally", "dally-manual", "2d-las", "2d-gittins")}


def twin_kinds() -> dict[str, list[str]]:
    """kind -> the policies whose decisions it scores (FIFO first): in snapshot form (``PolicySpec.twins``),
    or replayed over the instance for the kinds of :data:`SIMULATED_POLICIES`."""
    kinds = _kinds()
    out: dict[str, list[str]] = {}
    reg = _policies()
    for name in sorted(reg, key=lambda n: (n != FLOOR, n)):
        for kind in reg[name].twins:
            if kind in kinds and kinds[kind].snapshot:
                out.setdefault(kind, []).append(name)
    for kind, names in SIMULATED_POLICIES.items():
        if kind in kinds and kind in SIMULATED:
            out[kind] = [n for n in names if n in reg]
    return out


def representatives() -> list[str]:
    """One policy per family: FIFO for the baseline family, else the first (by name) non-oracle policy
    with twins, else the first non-oracle policy that is not a preset, else the first."""
    reg = _policies()
    by_family: dict[str, list[str]] = {}
    for name in sorted(reg):
        by_family.setdefault(reg[name].family.value, []).append(name)
    out = []
    for names in by_family.values():
        if FLOOR in names:
            out.append(FLOOR)
            continue
        specs = [reg[n] for n in names]
        pick = (next((s for s in specs if s.twins and not s.oracle), None)
                or next((s for s in specs if not s.oracle and not s.preset), None) or specs[0])
        out.append(pick.name)
    return sorted(out, key=lambda n: (n != FLOOR, reg[n].family.value, n))


def neutral_twins(kind: str, bes: tuple[str, ...], cluster: str, n: int, **kw) -> list[Case]:
    """Each exact twin of ``kind`` (:func:`twin_methods`) solved under the kind's neutral objective
    (``params.objective: neutral``), once, on the first backend of :data:`NEUTRAL_BACKENDS` available (else
    ``bes[0]``), where the kind gives that objective an exact form (joint): the neutral optimum of each
    decision set, which the report's neutral gap is measured against."""
    k = _kinds().get(kind)
    if k is None or k.neutral is None or k.neutral.exact_instance is None or not bes:
        return []
    b = next((x for x in NEUTRAL_BACKENDS if x in bes), bes[0])
    return [GapCase(kind, cluster, n, m, b, solver_params={"objective": "neutral"}, **kw) for m in twin_methods(kind)]


def _plan(kind: str) -> SuitePlan:
    k = _kinds().get(kind)
    return k.plan if k is not None and k.plan is not None else DEFAULT_PLAN


def mirror_params(policy: str, generator: Mapping[str, Any], state: bool = False) -> dict[str, Any]:
    """Parameters that make an exact policy (exact-joint) solve its twin's model on instances with running
    jobs (a replay ``state``, or a generator with ``running_frac``): the instance's reconfiguration penalty
    (the generator's, default 0), so that its row is a check (``gap._check``). Empty for a heuristic, or
    where nothing runs (the penalty cannot matter: the cases stay as they were)."""
    spec = _policies()[policy]
    if spec.family is not PolicyFamily.EXACT or "reconfig_penalty" not in spec.params.model_fields:
        return {}
    if not state and not generator.get("running_frac"):
        return {}
    return {"reconfig_penalty": float(generator.get("reconfig_penalty", 0.0))}


def gap_cases(kind: str, cluster: str, sizes, seeds, *, n_backends: int = 2, time_limit_s: float = 60.0,
              pop: bool = False, lp: bool = False, all_backends: bool = False, neutral: bool = True) -> list[Case]:
    """Twin policies, the exact formulation on ``n_backends`` backends (or every capable one), the twins
    under the neutral objective (``neutral``: :func:`neutral_twins`), and optionally POP and the relaxation
    bound, at every size x seed."""
    policies = twin_kinds().get(kind, [])
    exacts = twin_methods(kind)
    bes = backends(99 if all_backends else n_backends)
    gen = dict(_plan(kind).generator)
    cases: list[Case] = []
    for n in sizes:
        for s in seeds:
            kw = {"seed": s, "time_limit_s": time_limit_s, "generator": gen}
            cases += [GapCase(kind, cluster, n, p, policy_params=mirror_params(p, gen), **kw) for p in policies]
            cases += [GapCase(kind, cluster, n, exact, b, **kw) for exact in exacts for b in bes]
            if neutral:
                cases += neutral_twins(kind, bes, cluster, n, **kw)
            if pop and pop_method(kind) is not None:
                cases.append(GapCase(kind, cluster, n, pop_method(kind), bes[0], **kw))
            if lp and _kinds()[kind].relaxation is not None:
                cases.append(GapCase(kind, cluster, n, LP_BOUND, **kw))
    return cases


def replay_cases(seed: int = 0) -> list[Case]:
    """Every representative on every workload of :data:`REPLAYS`."""
    return [ReplayCase(WorkloadSource(workload=w, seed=seed, load=load, cluster=cl), p, seed=seed,
                       label=f"replay/{w}" + (f"x{load:g}" if load != 1.0 else "") + f"/{p}")
            for w, load, cl in REPLAYS for p in representatives()]


def state_cases(kind: str, state: dict, cluster: str, seeds=(0,), *, n_backends: int = 2,
                time_limit_s: float = 30.0) -> list[Case]:
    """Every policy of ``kind`` and its exact twins (two backends) on each of the ``state["k"]`` decision
    states sampled from the replay ``state`` names (:mod:`~schedlab.benchmarks.harness.states`)."""
    policies = twin_kinds().get(kind, [])
    bes = backends(n_backends)
    cases: list[Case] = []
    for s in seeds:
        for i in range(int(state.get("k", 2))):
            ref = {**state, "index": i}
            kw = {"seed": s, "time_limit_s": time_limit_s, "state": ref}
            cases += [GapCase(kind, cluster, 1, p, policy_params=mirror_params(p, {}, state=True), **kw)
                      for p in policies]
            cases += [GapCase(kind, cluster, 1, m, b, **kw) for m in twin_methods(kind) for b in bes]
            cases += neutral_twins(kind, bes, cluster, 1, **kw)
    return cases


def bound_refused() -> dict[str, str]:
    """Representatives no offline bound is valid for (their decision set is wider), with the reason."""
    reg = _policies()
    return {p: why for p in representatives() if (why := bound_refusal(reg[p])) is not None}


def bound_cases(seeds=(0,), time_limit_s: float = 20.0) -> list[Case]:
    """Every representative the offline bound is valid for (:func:`bound_refused` lists the others)."""
    b = BOUND_WORKLOAD
    refused = bound_refused()
    return [BoundCase(p, b["cluster"], b["jobs"], seed=s, generator=b["generator"], time_limit_s=time_limit_s)
            for p in representatives() if p not in refused for s in seeds]


def _refused_note() -> str:
    refused = bound_refused()
    return (f" Not compared with the offline bound (it assumes rigid jobs): {', '.join(refused)}."
            if refused else "")


def quick() -> Suite:
    """Under 3 minutes on 2 cores: every twin pair on 2 sizes x 2 seeds, every family replayed, every
    family online against its offline bound."""
    cases: list[Case] = []
    for kind in twin_kinds():
        p = _plan(kind)
        cases += gap_cases(kind, p.cluster, p.quick, (0, 1), time_limit_s=QUICK_LIMITS.get(kind, QUICK_LIMIT_S))
        if kind in QUICK_STATES:
            cases += state_cases(kind, QUICK_STATES[kind], STATE_CLUSTER[kind],
                                 time_limit_s=QUICK_LIMITS.get(kind, QUICK_LIMIT_S))
    cases += replay_cases()
    cases += bound_cases()
    return Suite("quick", "Snapshot gap of every heuristic vs its own decision set's exact twin on two backends, on "
                 "generated instances and on decision states sampled from replays (joint: FIFO; Tiresias placement: "
                 "2D-LAS; tier placement: Dally); one replay per "
                 "policy family at a load where jobs queue; online vs the offline bound on a busy 32-GPU cluster."
                 + _refused_note(), tuple(cases))


def gap(*, seeds: int = 3, max_jobs: int = 0, states: bool = True) -> Suite:
    """Optimality gap vs instance size, exact methods until they stop proving optimality, POP and the LP
    relaxation bound beyond; and every kind's policies and twins on decision states sampled from replays
    (2 per seed, :data:`QUICK_STATES`). Options: ``seeds`` (0 .. seeds-1), ``max_jobs`` (0: every size of the
    kind's plan; else only sizes up to it), ``states`` (the replay states)."""
    if seeds < 1 or max_jobs < 0:
        raise SpecError("seeds must be >= 1 and max_jobs >= 0", source="<gap suite>", field="seeds")
    cases: list[Case] = []
    for kind in twin_kinds():
        p = _plan(kind)
        sizes = tuple(n for n in p.gap if not max_jobs or n <= max_jobs) or p.gap[:1]
        cases += gap_cases(kind, p.cluster, sizes, tuple(range(seeds)), time_limit_s=60.0, pop=True, lp=True)
        if states and kind in QUICK_STATES:
            cases += state_cases(kind, QUICK_STATES[kind], STATE_CLUSTER[kind], tuple(range(seeds)),
                                 time_limit_s=QUICK_LIMIT_S)
    note = "" if max_jobs == 0 else f" Sizes capped at {max_jobs} jobs."
    return Suite("gap", (gap.__doc__ or "").split("Options:")[0].strip() + note, tuple(cases), until_unproven=True)


def scale() -> Suite:
    """Runtime of every method against jobs (on 128 GPUs) and GPUs (a fixed number of jobs on clusters of
    128 to 1,024 GPUs, the same machines); log-log with fitted exponents in the report."""
    cases: list[Case] = []
    for kind in twin_kinds() or {k: [] for k, v in _kinds().items() if v.snapshot}:
        p = _plan(kind)
        first, *rest = SCALE_CLUSTERS
        kw = {"time_limit_s": 60.0, "pop": True, "all_backends": True, "neutral": False}  # runtime, not gaps
        cases += gap_cases(kind, first, p.scale_jobs, (0,), **kw)
        for cl in rest:
            cases += gap_cases(kind, cl, (p.scale_fixed_jobs,), (0,), **kw)
    return Suite("scale", scale.__doc__ or "", tuple(cases), until_unproven=True)


BUILTIN = {"quick": quick, "gap": gap, "scale": scale}

__all__ = ["BUILTIN", "DEFAULT_PLAN", "FLOOR", "NEUTRAL_BACKENDS", "backends", "bound_cases", "bound_refused", "exact_method",
           "gap_cases", "mirror_params", "neutral_twins", "representatives", "replay_cases", "state_cases", "twin_kinds", "twin_methods"]
