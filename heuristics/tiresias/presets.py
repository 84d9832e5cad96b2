"""The Tiresias family's registered policies and the artifact's schedules as named presets.

===================  =====================================================================
``2d-las``           discretized 2D-LAS with skew placement (defaults: K = 2, 1 GPU-hour)
``2d-gittins``       discretized 2D-Gittins (history or file distribution) with skew placement
``dlas-gpu``         the artifact's ``dlas-gpu``: ``2d-las`` with its 3 queues (limits 3,250 and
                     7,200 GPU-s; the third, 18,000, is never used) and ``discipline=artifact``,
                     which reproduces its demotion-time rounding under ``--semantics tiresias``;
                     our ``2d-las`` demotes at the exact crossing time instead
``dlas-gpu-gittins`` the artifact's ``dlas-gpu-gittins``: as ``dlas-gpu`` with its Gittins rank
                     table (Δ = 3,250, whole durations instead of remaining service: the artifact's
                     defect; give ``distribution=.../yarn-gput1000.csv`` for its numbers); our
                     ``2d-gittins`` uses the remaining service within the queue instead
===================  =====================================================================

``shortest`` / ``shortest-gpu`` (SRTF / SRSF) and ``fifo`` are the baselines' and FIFO's registries.
"""

from __future__ import annotations

from typing import Any

from schedlab.heuristics.tiresias.artifact import ArtifactTiresias
from schedlab.heuristics.tiresias.las import TiresiasPolicy
from schedlab.heuristics.tiresias.params import GittinsParams, LasParams
from schedlab.scheduling.registry import PolicyFamily, PolicyRegistry, PolicySpec
from schedlab.scheduling.snapshot import PolicyBase

#: the artifact's ``dlas-gpu`` configuration (``jobs.py``: ``num_queue = 3``, ``queue_limit``)
ARTIFACT_DLAS: dict[str, Any] = {"queues": 3, "thresholds": (3250.0, 7200.0), "discipline": "artifact", "knob": None}


def _build(gittins: bool, seed: int, discipline: str, learn_packlimit: bool, pack_wait_s: float,
           **kw: Any) -> PolicyBase:
    if discipline == "artifact":
        return ArtifactTiresias(seed=seed, gittins=gittins, **kw)
    return TiresiasPolicy(seed=seed, gittins=gittins, learn_packlimit=learn_packlimit, pack_wait_s=pack_wait_s,
                          **kw)


def make_las(*, seed: int = 0, **params: Any) -> PolicyBase:
    return _build(False, seed, **params)


def make_gittins(*, seed: int = 0, **params: Any) -> PolicyBase:
    return _build(True, seed, **params)


REF = "Tiresias (NSDI'19) §3.2-3.3, Algorithm 1"
TIRESIAS_POLICIES = PolicyRegistry()
TIRESIAS_POLICIES.register(PolicySpec(
    "2d-las", make_las, "Tiresias discretized 2D-LAS (K queues on GPU-seconds, exact demotion timers, "
    "PROMOTEKNOB) with skew-based placement", PolicyFamily.TIRESIAS, LasParams, preemptive=True,
    twins=("tiresias-placement",), reference=REF))
TIRESIAS_POLICIES.register(PolicySpec(
    "2d-gittins", make_gittins, "Tiresias discretized 2D-Gittins (Gittins index of the remaining service within "
    "the queue) with skew-based placement", PolicyFamily.TIRESIAS, GittinsParams, preemptive=True,
    twins=("tiresias-placement",), reference=REF))
TIRESIAS_POLICIES.register(PolicySpec(
    "dlas-gpu", make_las, "the Tiresias artifact's dlas-gpu: 3 queues (3,250 / 7,200 GPU-s), its loop and "
    "demotion-time rounding (= 2d-las preset)", PolicyFamily.TIRESIAS, LasParams, preset=ARTIFACT_DLAS,
    preemptive=True, reference="SymbioticLab/Tiresias simulator/run_sim.py dlas_sim_jobs"))
TIRESIAS_POLICIES.register(PolicySpec(
    "dlas-gpu-gittins", make_gittins, "the Tiresias artifact's dlas-gpu-gittins: dlas-gpu with its Gittins rank "
    "table (= 2d-gittins preset)", PolicyFamily.TIRESIAS, GittinsParams, preset=ARTIFACT_DLAS, preemptive=True,
    reference="SymbioticLab/Tiresias simulator/run_sim.py dlas_sim_jobs, cal_r_gittins_index"))

__all__ = ["ARTIFACT_DLAS", "TIRESIAS_POLICIES", "make_gittins", "make_las"]
