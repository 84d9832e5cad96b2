"""Baselines of the papers' comparisons that are not a paper's own system.

=================  ===================================================================
``best-effort``    FIFO without head-of-line blocking (Tiresias §6; = ``fifo`` with
                   ``blocking=False``); ``yarn-cs`` (with blocking) is FIFO's registry
``srtf``           preemptive shortest remaining time first (oracle)
``srsf``           preemptive shortest remaining service (time x GPUs) first (oracle)
``shortest``       the Tiresias artifact's ``shortest`` (= ``srtf``)
``shortest-gpu``   the Tiresias artifact's ``shortest-gpu`` (= ``srsf``)
``gandiva``        the Tiresias artifact's ``gandiva`` scheduler (:mod:`.gandiva_artifact`; node
                   sets per job size, 10-s steps, 60-s rotation; ``--semantics tiresias`` only)
``gandiva-like``   Gandiva-like time-slicing, packing and migration under costs (:mod:`.gandiva`)
``synergy``        Synergy-like CPU/memory-aware allocation (:mod:`.synergy`, own registry)
``antman``         AntMan-like opportunistic best-effort jobs (:mod:`.antman`, own registry)
=================  ===================================================================
"""

from schedlab.heuristics.baselines.gandiva import GandivaLike, GandivaLikeParams
from schedlab.heuristics.baselines.gandiva_artifact import ArtifactGandiva, ArtifactGandivaParams
from schedlab.heuristics.baselines.srtf import ShortestParams, ShortestRemaining
from schedlab.heuristics.fifo import FifoParams, FifoPolicy
from schedlab.scheduling.registry import PolicyFamily, PolicyRegistry, PolicySpec

_SRTF_REF = "Tiresias (NSDI'19) §6 baselines; artifact run_sim.py shortest_first_sim_jobs"

BASELINE_POLICIES = PolicyRegistry()
BASELINE_POLICIES.register(PolicySpec(
    "best-effort", FifoPolicy, "Best-effort: FIFO that skips jobs that do not fit (YARN-CS without head-of-line "
    "blocking; = fifo with blocking=false)", PolicyFamily.BASELINE, FifoParams, preset={"blocking": False},
    reference="Tiresias (NSDI'19) §6"))
for _name, _w, _what in (("srtf", False, "SRTF: preemptive shortest remaining time first (oracle)"),
                         ("srsf", True, "SRSF: preemptive shortest remaining service (time x GPUs) first (oracle)"),
                         ("shortest", False, "the Tiresias artifact's shortest (= srtf)"),
                         ("shortest-gpu", True, "the Tiresias artifact's shortest-gpu (= srsf)")):
    BASELINE_POLICIES.register(PolicySpec(
        _name, ShortestRemaining, _what, PolicyFamily.BASELINE, ShortestParams, preset={"gpu_weighted": _w},
        oracle=True, preemptive=True, reference=_SRTF_REF))
BASELINE_POLICIES.register(PolicySpec(
    "gandiva", ArtifactGandiva, "the Tiresias artifact's gandiva: node sets per job size, time-slicing of "
    "over-subscribed sets (10-s steps, 60-s rotation), free sharing; --semantics tiresias only",
    PolicyFamily.BASELINE, ArtifactGandivaParams, preemptive=True,
    reference="SymbioticLab/Tiresias simulator/run_sim.py gandiva_sim_jobs, cluster.py gandiva_*"))
BASELINE_POLICIES.register(PolicySpec(
    "gandiva-like", GandivaLike, "Gandiva-like: network-agnostic time-slicing of over-subscribed GPUs, packing, "
    "migration toward consolidation, with preemption costs", PolicyFamily.BASELINE, GandivaLikeParams,
    preemptive=True, twins=("joint",), reference="Gandiva (OSDI'18) as compared in Tiresias (NSDI'19) §6; ours"))

__all__ = ["BASELINE_POLICIES", "ArtifactGandiva", "ArtifactGandivaParams", "GandivaLike", "GandivaLikeParams",
           "ShortestParams", "ShortestRemaining"]
