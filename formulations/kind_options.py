"""Typed options of the built-in instance kinds' generators and of every solver method.

Each model is validated at the edge (suite files, the CLI, Python callers through
:meth:`~formulations.kinds.Kind.generate`): an unknown option, a wrong type or a value outside an
enum is a :class:`~topology.errors.SpecError` naming the field, never a string passed through (a
suite file's ``objective: max-min`` used to run the weighted sum silently).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveFloat, PositiveInt

from schedlab.formulations.joint_instance import JointObjective
from schedlab.formulations.tier import TierMode


class Options(BaseModel):
    """Base of every options model: frozen, unknown fields refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class JointOptions(Options):
    guaranteed_frac: float = Field(0.0, ge=0.0, le=1.0, description="fraction of guaranteed jobs (tenant A)")
    running_frac: float = Field(0.0, ge=0.0, le=1.0, description="fraction already running first-fit")
    reconfig_penalty: NonNegativeFloat = Field(0.0, description="penalty per changed running job")
    max_gpus: PositiveInt | None = Field(None, description="largest GPU count of an option (default: the cluster)")
    objective: JointObjective = Field(JointObjective.SUM, description="sum, weighted, max-min or est-avg-jct (the neutral objective, exactly)")
    source: Literal["synthetic", "perfmodel"] = Field("synthetic", description="option tables: synthetic zoo or "
                                                      "PerfModel.options")
    busy: float = Field(0.0, ge=0.0, le=1.0, description="probability that a machine is partly used outside")


class TierOptions(Options):
    busy: float = Field(0.3, ge=0.0, le=1.0, description="probability that a machine is busy")
    mode: TierMode = Field(TierMode.MAX_THROUGHPUT, description="max-throughput or min-overhead")


class TiresiasOptions(Options):
    gpus: PositiveInt = Field(32, description="workers of the first job (later ones: powers of two up to it)")
    busy: float = Field(0.5, ge=0.0, le=1.0, description="probability that a machine is busy")
    ps_per_job: PositiveInt | None = Field(None, description="parameter servers per job (default max(1, W // 8))")
    cpus_per_worker: PositiveInt = 2
    cpus_per_ps: PositiveInt = 2
    background: NonNegativeFloat = Field(0.1, description="existing traffic per used GPU, x 100-500 MB (1.0: the "
                                         "old scale, where it was the optimum of most instances)")


class OfflineOptions(Options):
    mean_gap: PositiveInt = Field(300, description="mean seconds between arrivals")
    objective: Literal["avg-jct", "makespan"] = "avg-jct"
    mode: Literal["machine", "total"] = Field("machine", description="per-machine schedule or total-GPU relaxation")


class HorizonOptions(Options):
    slot: PositiveFloat = Field(300.0, description="slot length in seconds (the resolution of a start)")
    slots: PositiveInt = Field(8, description="slots in the horizon")
    busy: float = Field(0.5, ge=0.0, le=1.0, description="probability that a machine runs a background job")
    arriving: float = Field(0.3, ge=0.0, le=1.0, description="fraction of jobs arriving within the horizon")


class OfflineTIOptions(Options):
    slot: PositiveFloat = Field(600.0, description="slot length in seconds (arrivals rounded down, durations up)")
    mean_gap: PositiveInt = Field(300, description="mean seconds between arrivals (before rounding)")
    objective: Literal["avg-jct", "makespan"] = "avg-jct"
    mode: Literal["total", "machine"] = Field("total", description="total free GPUs or per-machine capacity")


class ResizableOptions(Options):
    slot: PositiveFloat = Field(600.0, description="slot length in seconds (arrivals rounded down)")
    mean_gap: PositiveInt = Field(300, description="mean seconds between arrivals (before rounding)")
    objective: Literal["avg-jct", "makespan"] = "avg-jct"


class SolverOptions(Options):
    """A formulation method's solver parameters (a suite file's ``formulations[i].params``)."""

    work_limit: PositiveFloat | None = Field(None, description="deterministic work budget (CP-SAT deterministic seconds)")
    node_limit: PositiveInt | None = Field(None, description="branch-and-bound nodes (HiGHS, SCIP, CBC, scipy)")
    rel_gap: NonNegativeFloat = Field(1e-6, description="tolerance of the status rule")
    warm_start: str | None = Field(None, description="a registered policy whose snapshot decision warm-starts the "
                                   "solve (methods with the warm-start capability; not a SolveParams field)")
    objective: Literal["family", "neutral"] = Field(
        "family", description="the objective solved: the kind's own, or its neutral one (est-avg-jct) where the kind "
        "gives it an exact form (joint: JointObjective.NEUTRAL; tier: mode est-avg-jct; Tiresias: neutral=True); the "
        "harness solves the instance it maps to "
        "(not a SolveParams field)")

    def solve_fields(self) -> dict[str, object]:
        """The fields that are :class:`~formulations.SolveParams` parameters (all but ``warm_start`` and
        ``objective``)."""
        return {k: getattr(self, k) for k in type(self).model_fields if k not in ("warm_start", "objective")}


__all__ = ["HorizonOptions", "JointOptions", "OfflineOptions", "OfflineTIOptions", "Options",
           "ResizableOptions", "SolverOptions", "TierOptions", "TiresiasOptions"]
