"""Online scheduling policies (heuristics). ``POLICIES`` is the registry of every heuristic:
``name -> PolicySpec`` with documented, validated parameters (:mod:`schedlab.scheduling.registry`).

Each family keeps its own registry in its package and is merged here; formulation-side policies
(exact-in-the-loop) live in ``schedlab.formulations`` and are merged with these by the benchmarks layer
(``schedlab.benchmarks.registry.all_policies``). The policy classes are exported by their family's
package (``heuristics.fifo``, ``heuristics.rubick``, ``heuristics.dally``, ...), none of them here.
"""

from __future__ import annotations

from schedlab.heuristics.baselines import BASELINE_POLICIES
from schedlab.heuristics.baselines.antman import ANTMAN_POLICIES
from schedlab.heuristics.baselines.synergy import SYNERGY_POLICIES
from schedlab.heuristics.dally import DALLY_POLICIES
from schedlab.heuristics.fifo import FIFO_POLICIES
from schedlab.heuristics.rubick import RUBICK_POLICIES
from schedlab.heuristics.tiresias import TIRESIAS_POLICIES
from schedlab.scheduling.registry import PolicyRegistry

POLICIES: PolicyRegistry = PolicyRegistry.merged(
    FIFO_POLICIES,
    DALLY_POLICIES,
    RUBICK_POLICIES,
    SYNERGY_POLICIES,
    ANTMAN_POLICIES,
    TIRESIAS_POLICIES,
    BASELINE_POLICIES,
)

__all__ = ["POLICIES"]
