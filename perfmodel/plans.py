"""Execution plans: 3D parallelism (DP x TP x PP), gradient accumulation (GA), gradient
checkpointing (GC) and ZeRO (ZeRO-DP = ZeRO-2, ZeRO-Offload).

Artifact names (Rubick's ``exec_plan`` column) are parsed and printed:

* ``dp`` (plain data parallel), ``ga``, ``gc``, ``zero-dp``, ``zero-offload``, and ``+`` combinations
  (``zero-offload+gc``, ``tp+ga``);
* 3-digit PP-TP-DP codes: ``248`` = PP 2 x TP 4 x DP 8 = 64 GPUs.

A plan is a value: the global batch size belongs to the job and never changes with the plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from schedlab.topology.errors import PlanError


class ZeroMode(Enum):
    """ZeRO optimisation level: none, ZeRO-2 over the DP group, ZeRO-2 + CPU offload."""

    NONE = "none"
    DP = "zero-dp"
    OFFLOAD = "zero-offload"


DEFAULT_GA_STEPS = 2  # what a bare "ga" name means when no step count is given (ours)


@dataclass(frozen=True, slots=True)
class ExecutionPlan:
    """``dp * tp * pp`` GPUs; ``micro_batches`` (PP, 1F1B), ``ga_steps``, ``gc``, ``zero``."""

    dp: int = 1
    tp: int = 1
    pp: int = 1
    micro_batches: int = 1
    ga_steps: int = 1
    gc: bool = False
    zero: ZeroMode = ZeroMode.NONE

    def __post_init__(self) -> None:
        for f in ("dp", "tp", "pp", "micro_batches", "ga_steps"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise PlanError(f"execution plan field {f} must be an integer >= 1, got {v!r}")
        if not isinstance(self.zero, ZeroMode):
            raise PlanError(f"execution plan field zero must be a ZeroMode, got {self.zero!r}")
        if self.pp == 1 and self.micro_batches != 1:
            raise PlanError("micro_batches > 1 needs pipeline parallelism (pp > 1)")

    @property
    def gpus(self) -> int:
        return self.dp * self.tp * self.pp

    @property
    def is_3d(self) -> bool:
        return self.tp > 1 or self.pp > 1

    # ------------------------------------------------------------------ names
    @property
    def name(self) -> str:
        """Artifact-style name (``ga``, ``zero-offload+gc``, ``248``); see :meth:`canonical`."""
        parts: list[str] = []
        if self.is_3d:
            if (self.zero is ZeroMode.NONE and not self.gc and self.ga_steps == 1
                    and max(self.pp, self.tp, self.dp) < 10):  # the code does not carry micro-batches
                return f"{self.pp}{self.tp}{self.dp}"
            return self.canonical()
        if self.zero is not ZeroMode.NONE:
            parts.append(self.zero.value)
        if self.ga_steps > 1:
            parts.append("ga")
        if self.gc:
            parts.append("gc")
        return "+".join(parts) if parts else "dp"

    def canonical(self) -> str:
        """Lossless name, e.g. ``dp8-tp4-pp2-mb4-ga1-gc0-none``; :func:`parse_plan` reads it back."""
        return (f"dp{self.dp}-tp{self.tp}-pp{self.pp}-mb{self.micro_batches}-ga{self.ga_steps}"
                f"-gc{int(self.gc)}-{self.zero.value}")

    def __str__(self) -> str:
        return self.canonical()


_CANON = re.compile(r"^dp(\d+)-tp(\d+)-pp(\d+)-mb(\d+)-ga(\d+)-gc([01])-(none|zero-dp|zero-offload)$")
_CODE = re.compile(r"^([1-9])([1-9])([1-9])$")


def parse_plan(name: str, gpus: int | None = None, *, ga_steps: int = DEFAULT_GA_STEPS,
               micro_batches: int | None = None) -> ExecutionPlan:
    """Parse an artifact plan name or a canonical name.

    Names without a 3D code (``ga``, ``zero-dp``...) are data parallel over ``gpus`` GPUs, which must
    then be given. A 3-digit code fixes the GPU count; if ``gpus`` is also given it must agree. ``tp``
    in a ``+`` name (``tp+ga``) means TP over all ``gpus`` GPUs.
    """
    s = name.strip().lower()
    m = _CANON.match(s)
    if m:
        dp, tp, pp, mb, ga, gc = (int(x) for x in m.groups()[:6])
        plan = ExecutionPlan(dp, tp, pp, mb, ga, bool(gc), ZeroMode(m.group(7)))
    elif _CODE.match(s):
        pp, tp, dp = (int(c) for c in s)
        mb = micro_batches if micro_batches is not None else (2 * pp if pp > 1 else 1)
        plan = ExecutionPlan(dp=dp, tp=tp, pp=pp, micro_batches=mb)
    else:
        tokens = [t for t in s.split("+") if t]
        if not tokens:
            raise PlanError(f"empty execution plan name {name!r}")
        if gpus is None or gpus < 1:
            raise PlanError(f"plan {name!r} is data parallel over the job's GPUs: give gpus >= 1")
        zero, ga, gc, tp = ZeroMode.NONE, 1, False, 1
        for t in tokens:
            if t in ("zero-dp", "zero-offload"):
                if zero is not ZeroMode.NONE:
                    raise PlanError(f"plan {name!r} names two ZeRO modes")
                zero = ZeroMode(t)
            elif t == "ga":
                ga = ga_steps
            elif t == "gc":
                gc = True
            elif t == "tp":
                tp = gpus
            elif t == "dp":
                pass
            else:
                raise PlanError(f"unknown execution plan component {t!r} in {name!r}; expected dp, ga, gc, "
                                "tp, zero-dp, zero-offload or a 3-digit PP-TP-DP code")
        plan = ExecutionPlan(dp=gpus // tp, tp=tp, ga_steps=ga, gc=gc, zero=zero)
    if gpus is not None and plan.gpus != gpus:
        raise PlanError(f"plan {name!r} uses {plan.gpus} GPUs, not {gpus}")
    return plan


__all__ = ["DEFAULT_GA_STEPS", "ExecutionPlan", "ZeroMode", "parse_plan"]
