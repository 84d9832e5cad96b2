"""Policies that solve an optimisation model in the loop (formulation side of the layering): they
may import ``formulations``; heuristics may not. Registered in ``formulations.POLICIES``.

:mod:`~formulations.policies.base` holds what every such policy shares (the view -> ``Instance``
conversion, the target allocation -> decision delta, the round clock); :mod:`~formulations.policies.sia`
is the Sia-like baseline; :mod:`~formulations.policies.exact_joint` the exact-in-the-loop policy
(the joint model solved every round on the snapshot :mod:`~formulations.policies.joint_snapshot` builds).
"""

from __future__ import annotations

from schedlab.formulations.policies.base import (
           RoundClock,
           RoundPolicy,
           ViewSnapshot,
           decision_to,
           view_instance,
)
from schedlab.formulations.policies.exact_joint import EXACT_POLICIES, ExactJointParams, ExactJointPolicy
from schedlab.formulations.policies.joint_snapshot import OptionTables, joint_snapshot
from schedlab.formulations.policies.sia import SIA_POLICIES, SiaParams, SiaPolicy

__all__ = ["EXACT_POLICIES", "SIA_POLICIES", "ExactJointParams", "ExactJointPolicy", "OptionTables", "RoundClock",
           "RoundPolicy", "SiaParams", "SiaPolicy", "ViewSnapshot", "decision_to", "joint_snapshot", "view_instance"]
