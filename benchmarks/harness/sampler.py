r"""``StateSampler``: decision states taken from real replays, for the gap suites.

A replay calls the policy's ``schedule(view)`` at every decision point. :meth:`StateSampler.sample`
wraps the policy (:class:`Capturing`, which forwards every attribute to it), turns the view at each
decision point into the :class:`~scheduling.Instance` the policy may decide on
(:func:`formulations.policies.base.view_instance`, the inverse of the snapshot form: queued and
running jobs, the current allocation, progress, quotas, and as ``reserved`` whatever the policy may not
touch now), and keeps a **uniform seeded sample of K of them** (reservoir sampling, one pass:
every decision point with at least ``min_queued`` queued jobs is kept with probability
:math:`K/N`). With each state it records what the policy decided there (``decided``: the allocation
its decision moves the instance to) and where the state came from (:class:`StateOrigin`: workload,
policy and its parameters, replay seed, sampler seed, semantics, time, decision index).

A :class:`SampledState` is not a formulation kind (it is a scheduling instance with provenance):
:func:`save_state` / :func:`load_state` write and read it as JSON tagged ``"kind": "sampled-state"``
(the tag is checked on load), using :mod:`formulations.io`'s instance and allocation helpers.
For a stateless policy (FIFO, YARN-CS, ...) ``decide`` on the loaded state gives ``decided`` again; a
stateful one (Dally's wait history, Tiresias' queues) may differ, because a fresh policy object
has no history — :func:`replay_matches` says which.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedlab.benchmarks.simulator.engine import Simulator
from schedlab.formulations import io
from schedlab.formulations.policies.base import view_instance
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import ClusterView, Decision, Policy
from schedlab.scheduling.snapshot import apply_decision
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.files import read_text


@dataclass(frozen=True)
class StateOrigin:
    """Where a sampled state came from."""

    workload: str
    policy: str
    params: Mapping[str, Any]
    replay_seed: int
    sample_seed: int
    semantics: str
    time: float
    decision_index: int
    decision_points: int  # decision points seen in the whole replay (the sampling population)

    def as_dict(self) -> dict[str, Any]:
        return {"workload": self.workload, "policy": self.policy, "params": dict(self.params),
                "replay_seed": self.replay_seed, "sample_seed": self.sample_seed, "semantics": self.semantics,
                "time": self.time, "decision_index": self.decision_index, "decision_points": self.decision_points}

    def label(self) -> str:
        return (f"{self.workload} under {self.policy} (seed {self.replay_seed}), decision {self.decision_index}"
                f"/{self.decision_points} at t={self.time:g} s")


@dataclass(frozen=True)
class SampledState:
    """A captured decision state: ``instance`` (what the policy may decide on), ``frozen`` (jobs holding
    resources it may not change now; their resources are ``instance.reserved``), ``decided`` (the
    policy's allocation of the instance in the replay) and ``origin``."""

    KIND = "sampled-state"
    instance: Instance
    decided: Allocation
    origin: StateOrigin
    frozen: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"base": io.instance_to_dict(self.instance), "decided": io.allocation_to_dict(self.decided),
                "origin": self.origin.as_dict(), "frozen": list(self.frozen)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<sampled-state>") -> SampledState:
        o = d["origin"]
        origin = StateOrigin(str(o["workload"]), str(o["policy"]), dict(o.get("params", {})), int(o["replay_seed"]),
                             int(o["sample_seed"]), str(o["semantics"]), float(o["time"]), int(o["decision_index"]),
                             int(o["decision_points"]))
        return cls(io.instance_from_dict(d["base"], source), io.allocation_from_dict(d.get("decided", {})), origin,
                   tuple(d.get("frozen", ())))


def save_state(state: SampledState, path: str | Path) -> None:
    """``state`` as JSON tagged ``"kind": "sampled-state"``."""
    Path(path).write_text(json.dumps({"kind": SampledState.KIND, **state.to_dict()}, indent=1))


def load_state(path: str | Path) -> SampledState:
    """A state written by :func:`save_state`; anything else (not JSON, another ``kind`` tag, a missing
    or malformed field) is a :class:`SpecError` naming the file."""
    src = str(path)
    try:
        d = json.loads(read_text(path, what="sampled state"))
    except json.JSONDecodeError as e:
        raise SpecError(f"not JSON: {e.msg} (column {e.colno})", source=src, line=e.lineno) from None
    except RecursionError:
        raise SpecError("nested too deeply to be a sampled state", source=src) from None
    tag = d.get("kind") if isinstance(d, dict) else None
    if tag != SampledState.KIND:
        raise SpecError(f"not a sampled state: kind {tag!r}, expected {SampledState.KIND!r}", source=src, field="kind")
    try:
        return SampledState.from_dict(d, source=src)
    except SpecError as e:
        raise SpecError(f"malformed sampled state: {e}", source=src) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError) as e:
        raise SpecError(f"malformed sampled state: {type(e).__name__}: {e}"[:500], source=src) from None


@dataclass
class Capturing:
    """A policy wrapper that samples decision states (see the module docstring); every other attribute
    is the wrapped policy's."""

    inner: Policy
    k: int
    rng: random.Random
    min_queued: int = 1
    seen: int = 0
    kept: list[tuple[int, float, Any, Allocation]] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def schedule(self, view: ClusterView) -> Decision:
        decision = self.inner.schedule(view)
        if view.queue_length < self.min_queued:
            return decision
        idx = self.seen
        self.seen += 1
        slot = idx if idx < self.k else self.rng.randrange(idx + 1)
        if slot < self.k:
            snap = view_instance(view)
            decided = _decided(snap.instance, decision)
            entry = (idx, view.now, snap, decided)
            if idx < self.k:
                self.kept.append(entry)
            else:
                self.kept[slot] = entry
        return decision


def _decided(inst: Instance, decision: Decision) -> Allocation:
    """The allocation ``decision`` moves ``inst`` to; jobs outside the instance (frozen) are dropped."""
    start = {j: ja for j, ja in decision.start.items() if j in inst.job_by_id}
    trimmed = Decision(start=start, preempt=tuple(j for j in decision.preempt if j in inst.current.assignments))
    return apply_decision(inst, trimmed)


class StateSampler:
    """Sample ``k`` decision states (with at least ``min_queued`` queued jobs) from a replay; ``seed``
    picks which (reservoir sampling)."""

    def __init__(self, k: int, *, seed: int = 0, min_queued: int = 1) -> None:
        if k < 1:
            raise SpecError(f"k must be >= 1, got {k}", source="<sampler>", field="k")
        self.k, self.seed, self.min_queued = k, seed, min_queued

    def sample(self, cluster: Cluster, jobs: Iterable[Job], policy: Policy, *, workload: str,
               params: Mapping[str, Any] | None = None, replay_seed: int = 0, semantics: str = "realistic",
               until: float = float("inf"), **sim_kwargs: Any) -> list[SampledState]:
        """Replay ``jobs`` under ``policy`` and return the sampled states in decision order."""
        cap = Capturing(policy, self.k, random.Random(self.seed), self.min_queued)
        Simulator(cluster, jobs, cap, semantics=semantics, **sim_kwargs).run(until)
        name = getattr(policy, "name", type(policy).__name__)
        out = []
        for idx, now, snap, decided in sorted(cap.kept, key=lambda e: e[0]):
            origin = StateOrigin(workload, name, dict(params or {}), replay_seed, self.seed, semantics, float(now),
                                 idx, cap.seen)
            out.append(SampledState(snap.instance, decided, origin, tuple(j.id for j in snap.frozen)))
        return out


def save_states(states: Iterable[SampledState], directory: str | Path, prefix: str = "state") -> list[Path]:
    """One ``sampled-state`` JSON per state: ``<prefix>-<decision index>.json``."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for s in states:
        p = d / f"{prefix}-{s.origin.decision_index:06d}.json"
        save_state(s, p)
        paths.append(p)
    return paths


def load_states(directory: str | Path, prefix: str = "state") -> list[SampledState]:
    """Every ``<prefix>-*.json`` of ``directory`` (in name order), each by :func:`load_state`."""
    return [load_state(p) for p in sorted(Path(directory).glob(f"{prefix}-*.json"))]


def replay_matches(state: SampledState, policy: Policy) -> bool:
    """Does ``policy.decide`` on the state give the allocation decided in the replay?"""
    return policy.decide(state.instance) == state.decided


__all__ = ["Capturing", "SampledState", "StateOrigin", "StateSampler", "load_state", "load_states",
           "replay_matches", "save_state", "save_states"]
