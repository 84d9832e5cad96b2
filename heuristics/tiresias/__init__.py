"""Tiresias (NSDI'19): discretized 2D-LAS / 2D-Gittins with skew-based placement, and the artifact's
schedules for exact reproduction. One module per concern: :mod:`.queues` (multi-level queues),
:mod:`.las` (the policy), :mod:`.gittins` (Gittins index), :mod:`.placement` (skew placement,
PACKLIMIT learner), :mod:`.artifact` (the reference simulator's loop), :mod:`.params`, :mod:`.presets`
(the registry)."""

from schedlab.heuristics.tiresias.artifact import ArtifactTiresias
from schedlab.heuristics.tiresias.las import TiresiasPolicy
from schedlab.heuristics.tiresias.presets import TIRESIAS_POLICIES

__all__ = ["TIRESIAS_POLICIES", "ArtifactTiresias", "TiresiasPolicy"]
