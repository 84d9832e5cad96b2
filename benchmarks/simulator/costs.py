"""Costs of changing a job's allocation, and the two simulation semantics.

* **preemption**: the job saves a checkpoint (``checkpoint_s``, holding its resources, no progress),
  then releases them and re-queues with its progress kept; when it is started again it restores
  (``restore_s``, holding the new resources, no progress).
* **reconfiguration** (new placement, GPU count or plan of a running job): ``reconfigure_s`` holding
  the new resources, no progress. Rubick measured 78 s on average per checkpoint-and-resume.

``realistic`` (default): Rubick's 78 s split into 39 s checkpoint + 39 s restore, 78 s per
reconfiguration, speed from the placement (perf model / Dally tiers). ``COSTS`` also holds the
Tiresias measurement (221 preemptions cost 13,724 s: about 62 s each, split evenly between checkpoint
and restore) and ``free``. ``tiresias`` semantics: the Tiresias
simulator's assumptions (its artifact, scheme ``count``; ``docs/simulator.md``): free preemption,
speed independent of placement, allocation by GPU count only (CPU and memory requests dropped), the
cluster as one pool of GPUs (a job fits when enough GPUs are free anywhere), jobs larger than the
cluster kept as they are (they never run), and whole-second clocks (arrivals and durations floored
to whole seconds as the artifact reads them; completion times exact whole seconds). ``reference``
semantics: tiresias' costs, speed and GPU-only requests on the real machines (placement still bounded
by machine sizes, no pooling, no rounding).
"""

from __future__ import annotations

from dataclasses import dataclass

from schedlab.topology.errors import SpecError

RUBICK_RECONFIG_S = 78.0  # Rubick, avg measured checkpoint-resume cost


@dataclass(frozen=True, slots=True)
class CostModel:
    checkpoint_s: float = RUBICK_RECONFIG_S / 2
    restore_s: float = RUBICK_RECONFIG_S / 2
    reconfigure_s: float = RUBICK_RECONFIG_S

    def __post_init__(self) -> None:
        for f in ("checkpoint_s", "restore_s", "reconfigure_s"):
            if getattr(self, f) < 0:
                raise SpecError(f"{f} must be >= 0", source="<CostModel>", field=f)


TIRESIAS_PREEMPT_S = 13724.0 / 221  # Tiresias-L: 221 preemptions cost 13,724 s in total (about 62 s each)

COSTS: dict[str, CostModel] = {
    "rubick": CostModel(RUBICK_RECONFIG_S / 2, RUBICK_RECONFIG_S / 2, RUBICK_RECONFIG_S),
    "tiresias": CostModel(TIRESIAS_PREEMPT_S / 2, TIRESIAS_PREEMPT_S / 2, TIRESIAS_PREEMPT_S),
    "free": CostModel(0.0, 0.0, 0.0),
}


def cost_model(name: str) -> CostModel:
    try:
        return COSTS[name]
    except KeyError:
        raise SpecError(f"unknown cost model {name!r}; known: {', '.join(COSTS)}", source="<costs>",
                        field="costs") from None


@dataclass(frozen=True, slots=True)
class Semantics:
    """``placement_speed``: rates depend on the placement; ``gpu_only``: requests keep GPUs only;
    ``pooled``: the cluster is one pool of GPUs (one machine holding them all); ``keep_oversized``:
    jobs larger than the cluster are kept (never run) instead of refused, and a trace conversion's
    cut of them is undone; ``whole_seconds``: arrivals and durations are whole seconds and completion
    times are exact whole seconds (the Tiresias artifact's integer clock)."""

    name: str
    costs: CostModel
    placement_speed: bool
    gpu_only: bool
    pooled: bool = False
    keep_oversized: bool = False
    whole_seconds: bool = False


SEMANTICS: dict[str, Semantics] = {
    "realistic": Semantics("realistic", CostModel(), placement_speed=True, gpu_only=False),
    # the reference rates on the real machines: free preemption, speed independent of placement, GPU-only
    # requests, but placement still bounded by machines (isolates scheduling from placement speed)
    "reference": Semantics("reference", CostModel(0.0, 0.0, 0.0), placement_speed=False, gpu_only=True),
    "tiresias": Semantics("tiresias", CostModel(0.0, 0.0, 0.0), placement_speed=False, gpu_only=True, pooled=True,
                          keep_oversized=True, whole_seconds=True),
}


def semantics(name: str) -> Semantics:
    try:
        return SEMANTICS[name]
    except KeyError:
        raise SpecError(f"unknown semantics {name!r}; known: {', '.join(SEMANTICS)}",
                        source="<semantics>", field="semantics") from None


__all__ = ["COSTS", "CostModel", "RUBICK_RECONFIG_S", "SEMANTICS", "Semantics", "TIRESIAS_PREEMPT_S",
           "cost_model", "semantics"]
