"""Online scheduling policies. ``POLICIES`` maps a name to a factory ``(**params) -> Policy``."""

from __future__ import annotations

from collections.abc import Callable

from schedlab.heuristics.fifo import FifoPolicy
from schedlab.scheduling.policy import Policy

POLICIES: dict[str, Callable[..., Policy]] = {
    "fifo": FifoPolicy,
    "yarn-cs": FifoPolicy,
    "fifo-backfill": lambda **kw: FifoPolicy(blocking=False, **kw),
}

__all__ = ["POLICIES", "FifoPolicy"]
