"""Parameters of the Tiresias policies (pydantic models; ``schedlab list policies`` prints them).

Queue thresholds are in GPU-seconds of attained service (GPUs x running seconds). ``queues`` = K; the
first K-1 thresholds are ``thresholds`` when given, else ``threshold`` doubled at each further queue
(``threshold``, ``2 threshold``, ...). Defaults are the paper's simulations: K = 2, 1 GPU-hour.
"""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator, model_validator

from schedlab.scheduling.registry import PolicyParams, ours, paper

DEFAULT_PACKLIMIT = 0.4  # ours: between the skewed (VGG 0.72-0.77, AlexNet 0.62) and the rest (<= 0.23)


class LasParams(PolicyParams):
    queues: int = paper(2, ge=1, le=64, description="K: number of priority queues (Q1 highest)")
    threshold: float = paper(3600.0, gt=0, description="Q1's upper threshold in GPU-seconds of attained "
                                                       "service (further queues double it) unless `thresholds`")
    thresholds: tuple[float, ...] | None = paper(None, description="explicit upper thresholds of Q1..Q(K-1) "
                                                                   "in GPU-seconds, strictly increasing")
    knob: float | None = paper(None, gt=0, description="PROMOTEKNOB: a waiting job in a lower queue returns to "
                                                      "Q1 when waiting >= knob x executed time (both since its "
                                                      "last promotion); null disables promotion")
    discipline: Literal["tiresias", "artifact"] = ours(
        "tiresias", neutral="tiresias is the paper's algorithm; artifact is a reproduction mode",
        description="tiresias: our 2D-LAS (exact demotion timers, FIFO by start time in a queue, a higher queue "
                    "preempts the lowest-priority running jobs); artifact: the reference simulator's loop (every "
                    "GPU reassigned at each event, its queue lists, its demotion-time rounding)")
    packlimit: float = paper(DEFAULT_PACKLIMIT, ge=0, le=1, description="PACKLIMIT: jobs whose model skew "
                                                                        "(largest tensor / model size) exceeds "
                                                                        "it are consolidated, the rest spread")
    learn_packlimit: bool = paper(False, description="re-learn PACKLIMIT from the slowdown of spread jobs seen so "
                                                     "far (a 1-D linear classifier on skew; not with discipline=artifact)")
    pack_wait_s: float = ours(0.0, ge=0, description="the longest wait for a consolidated placement of a skewed "
                              "job before it is spread, seconds (ours; 0 = off: spread at once, as the paper's "
                              "'attempts to consolidate' and its artifact; discipline=artifact never waits)")

    @field_validator("thresholds")
    @classmethod
    def _increasing(cls, v: tuple[float, ...] | None) -> tuple[float, ...] | None:
        if v is None:
            return v
        if any(not t > 0 for t in v):
            raise ValueError(f"thresholds must be > 0 GPU-seconds, got {list(v)}")
        if any(b <= a for a, b in zip(v, v[1:], strict=False)):
            raise ValueError(f"thresholds must be strictly increasing, got {list(v)}")
        return v

    @model_validator(mode="after")
    def _k_matches(self) -> LasParams:
        if self.thresholds is not None and len(self.thresholds) != self.queues - 1:
            raise ValueError(f"thresholds has {len(self.thresholds)} value(s) but queues={self.queues} needs "
                             f"{self.queues - 1} (one per queue but the last)")
        return self

    def limits(self) -> tuple[float, ...]:
        return queue_limits(self.queues, self.threshold, self.thresholds)


def queue_limits(queues: int, threshold: float, thresholds: tuple[float, ...] | None) -> tuple[float, ...]:
    """Upper thresholds of Q1..Q(K-1) (the last queue is unbounded)."""
    if thresholds is not None:
        return tuple(float(t) for t in thresholds)
    return tuple(threshold * 2.0 ** i for i in range(queues - 1))


class GittinsParams(LasParams):
    distribution: str | None = paper(None, description="CSV of job service samples (a `duration` column in "
                                                       "GPU-seconds, e.g. yarn-gput1000.csv); null: the service "
                                                       "of the workload's jobs finished so far")
    preempt_margin: float = ours(0.0, ge=0, description="ours (the paper re-sorts by index at every event: 0): a "
                                                          "waiting job preempts a running job of its own queue only "
                                                          "if its index exceeds (1 + margin) times that job's "
                                                          "(hysteresis against preemption ping-pong; not with "
                                                          "discipline=artifact, which sorts by its rank table)")
    min_history: int = ours(20, ge=1, neutral="a cold start the paper leaves open: no index without samples",
                            description="finished jobs needed before the history is used; until then (and "
                                        "without a file) jobs in a queue are ordered as 2D-LAS")


__all__ = ["DEFAULT_PACKLIMIT", "GittinsParams", "LasParams", "queue_limits"]
