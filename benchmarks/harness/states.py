"""Gap instances from replays: a :class:`~schedlab.benchmarks.harness.cases.GapCase` with ``state`` is
answered on a decision state that a real replay met (:class:`~schedlab.benchmarks.harness.sampler.
StateSampler`), beside the generator's instances.

``state`` = ``{"workload": NAME, "policy": POLICY, "index": I, "load": L (1.0), "k": K (2),
"replay_seed": S (0), "min_queued": Q (1)}``: the named workload (arrivals compressed by ``load``) replays
on the case's ``cluster`` under ``policy`` (realistic semantics, every decision verified);
:class:`StateSampler` keeps ``K`` decision points with at least ``Q`` queued jobs, seeded by the case's
``seed``, and the case takes the ``I``-th (in decision order). Every method of the kind then answers that
same state, so a policy's gap is measured on a state it could really meet, not only on generated ones.

Kinds (:data:`STATE_KINDS`): ``joint`` (the state becomes the joint instance the ``exact-joint`` policy would
solve there: :func:`~schedlab.formulations.policies.joint_snapshot.joint_snapshot`, perf-model option tables,
the generator's ``reconfig_penalty``, default 0, and the simulator's holding rule: a job the decision preempts
keeps its resources until its checkpoint, ``JointInstance.hold_preempted``, so no twin may start another job
on them in the same decision and a heuristic that does so breaks a rule); ``tiresias-placement`` and
``tier-placement`` (:mod:`~schedlab.formulations.from_state`: the queued jobs to place, the running ones held
with their release times; the tier generator's ``mode`` applies). Other kinds have no converter from a
scheduling state: a case asking for one is a :class:`SpecError` naming ``state``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from schedlab.benchmarks.harness.sampler import StateSampler
from schedlab.benchmarks.merged import all_policies
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.formulations.from_state import tier_from_state, tiresias_from_state
from schedlab.formulations.policies.base import ViewSnapshot
from schedlab.formulations.policies.joint_snapshot import OptionTables, joint_snapshot
from schedlab.formulations.tier import TierMode
from schedlab.perfmodel import PerfModel
from schedlab.perfmodel.memory import plan_host_memory_gb
from schedlab.perfmodel.zoo import resolve_name
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.topology.errors import SpecError

#: what a ``state`` reference may name, with defaults
STATE_DEFAULTS: dict[str, Any] = {"load": 1.0, "k": 2, "replay_seed": 0, "min_queued": 1}
STATE_KINDS = ("joint", "tiresias-placement", "tier-placement")
#: generator options a replay state of each kind takes
STATE_OPTIONS = {"joint": {"reconfig_penalty"}, "tiresias-placement": set(), "tier-placement": {"mode"}}


def check_state(kind: str, state: Mapping[str, Any], source: str = "<gap case>") -> dict[str, Any]:
    """The state reference with its defaults; unknown keys, a missing workload/policy/index or a kind
    without a converter are errors naming ``state.FIELD``."""
    if kind not in STATE_KINDS:
        raise SpecError(f"replay-sampled states are converted for {', '.join(STATE_KINDS)} only, not {kind!r}",
                        source=source, field="state")
    unknown = sorted(set(state) - {"workload", "policy", "index", *STATE_DEFAULTS})
    if unknown:
        raise SpecError(f"unknown state option {unknown[0]!r}", source=source, field=f"state.{unknown[0]}")
    for need in ("workload", "policy", "index"):
        if need not in state:
            raise SpecError(f"a replay state needs {need!r}", source=source, field=f"state.{need}")
    out = {**STATE_DEFAULTS, **dict(state)}
    if not (isinstance(out["k"], int) and out["k"] >= 1 and isinstance(out["index"], int)
            and 0 <= out["index"] < out["k"]):
        raise SpecError(f"state index must be in [0, k), got index {out['index']!r}, k {out['k']!r}", source=source,
                        field="state.index")
    return out


def sample(cluster: str, state: Mapping[str, Any], seed: int, source: str = "<gap case>") -> tuple[Any, Any, Any]:
    """Replay and sample: ``(SampledState, its ViewSnapshot, cluster)`` of the reference ``state``."""
    st = {**STATE_DEFAULTS, **dict(state)}
    w, cl = WorkloadSource(workload=st["workload"], load=float(st["load"]), cluster=cluster,
                           seed=int(st["replay_seed"])).build()
    policy = all_policies().build(st["policy"], {}, seed=int(st["replay_seed"]), source=source)
    states = StateSampler(int(st["k"]), seed=seed, min_queued=int(st["min_queued"])).sample(
        cl, w.jobs, policy, workload=w.name, replay_seed=int(st["replay_seed"]), quotas=w.quotas,
        small_gpus=w.small_gpus, short_s=w.short_s)
    if int(st["index"]) >= len(states):
        raise SpecError(f"the replay of {w.name} under {st['policy']} has {len(states)} decision points with "
                        f">= {st['min_queued']} queued jobs; state {st['index']} does not exist", source=source,
                        field="state.index")
    s = states[int(st["index"])]
    by_id = {j.id: j for j in w.jobs}
    return s, ViewSnapshot(s.instance, tuple(by_id[j] for j in s.frozen if j in by_id)), cl


def state_instance(kind: str, cluster: str, state: Mapping[str, Any], seed: int, generator: Mapping[str, Any],
                   source: str = "<gap case>") -> tuple[Any, dict[str, Any]]:
    """The kind's instance of the sampled state and its provenance (``origin``: where it came from)."""
    check_state(kind, state, source)
    s, snap, cl = sample(cluster, state, seed, source)

    unknown = sorted(set(generator) - STATE_OPTIONS[kind])
    if unknown:
        raise SpecError(f"generator option {unknown[0]!r} does not apply to a replay state of {kind}", source=source,
                        field=f"generator.{unknown[0]}")
    origin = {"instance_source": "replay", "origin": s.origin.label(), "origin_detail": s.origin.as_dict(),
              "replay_decided": len(s.decided)}
    if kind == "tiresias-placement":
        return tiresias_from_state(snap.instance), origin
    if kind == "tier-placement":
        return tier_from_state(snap.instance, TierMode(generator.get("mode", TierMode.MAX_THROUGHPUT))), origin
    snap, completed = with_host_memory(snap)
    inst = joint_snapshot(snap, OptionTables(cl), float(generator.get("reconfig_penalty", 0.0)), hold=True)
    return inst, origin | {"host_memory_completed": completed}


def with_host_memory(snap: Any) -> tuple[Any, int]:
    """The snapshot with every request (and running allocation) that states less host memory than its plan
    needs (perf model, :func:`~schedlab.perfmodel.memory.plan_host_memory_gb`) raised to that need, split
    over machines in proportion to GPUs, and how many jobs were completed. Workload requests often state
    no host memory (the Rubick mix: 0 GB, which the simulator does not charge) while the joint model prices
    ZeRO-offload plans by it; without this a state's running jobs could not be priced at all."""

    inst = snap.instance
    pm = PerfModel(inst.cluster)

    def need(job, plan) -> float:
        if resolve_name(job.model) is None:
            return 0.0
        try:
            return float(plan_host_memory_gb(pm.spec(job.model), plan))
        except SpecError:
            return 0.0

    jobs, done = [], 0
    for j in inst.jobs:
        n = need(j, j.requested_plan)
        if j.requested.mem_gb < n - 1e-9:
            j = replace(j, requested=replace(j.requested, mem_gb=float(n)))
            done += 1
        jobs.append(j)
    by_id = {j.id: j for j in jobs}
    current = []
    for ja in inst.current:
        total = sum(r.mem_gb for r in ja.placement.values())
        n = need(by_id[ja.job_id], ja.plan) if ja.job_id in by_id else 0.0
        g = sum(r.gpus for r in ja.placement.values())
        if total < n - 1e-9 and g > 0:
            ja = JobAllocation(ja.job_id, ja.plan, {m: replace(r, mem_gb=n * r.gpus / g) for m, r in ja.placement.items()})
        current.append(ja)
    base = replace(inst, jobs=tuple(jobs), current=Allocation.of(current))
    return replace(snap, instance=base), done


__all__ = ["STATE_DEFAULTS", "STATE_KINDS", "STATE_OPTIONS", "check_state", "sample", "state_instance"]
