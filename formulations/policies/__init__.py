"""Policies that solve an optimisation model in the loop (formulation side of the layering): they
may import ``formulations``; heuristics may not. Registered in ``formulations.POLICIES``.

:mod:`~formulations.policies.base` holds what every such policy shares (the view -> ``Instance``
conversion, the target allocation -> decision delta, the round clock); :mod:`~formulations.policies.sia`
is the Sia-like baseline.
"""

from __future__ import annotations

from schedlab.formulations.policies.base import RoundClock, ViewSnapshot, decision_to, view_instance
from schedlab.formulations.policies.sia import SIA_POLICIES, SiaParams, SiaPolicy

__all__ = ["SIA_POLICIES", "RoundClock", "SiaParams", "SiaPolicy", "ViewSnapshot", "decision_to", "view_instance"]
