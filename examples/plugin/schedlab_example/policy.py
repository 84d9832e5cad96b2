"""``largest-first``: start the queued jobs with the most GPUs first, each at its request with FIFO's
consolidating placement, skipping jobs that do not fit (tenant quotas respected)."""

from pydantic import Field

from schedlab.heuristics.fifo import PassState, QuotaLedger, place_consolidated
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import ClusterView, Decision
from schedlab.scheduling.registry import PolicyFamily, PolicyParams, PolicySpec
from schedlab.scheduling.snapshot import PolicyBase


class LargestFirstParams(PolicyParams):
    max_starts: int = Field(1000, ge=1, description="most jobs started per decision")


class LargestFirst(PolicyBase):
    name = "largest-first"

    def __init__(self, *, max_starts: int = 1000, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.max_starts = max_starts

    def schedule(self, view: ClusterView) -> Decision:
        ps = PassState(view)
        quota = QuotaLedger(view) if view.quotas else None
        starts: dict[str, JobAllocation] = {}
        queue = sorted(view.queue(), key=lambda jv: -jv.job.requested.gpus)  # stable: FIFO among equals
        for jv in queue:
            job = jv.job
            if len(starts) == self.max_starts:
                break
            if quota is not None and job.guaranteed and job.tenant in view.quotas and not quota.fits(job):
                continue
            placement = place_consolidated(view, job, ps)
            if placement is None:
                continue
            for m, r in placement.items():
                ps.take(m, r)
            starts[job.id] = JobAllocation(job.id, job.requested_plan, placement)
            if quota is not None and job.guaranteed and job.tenant in view.quotas:
                quota.charge(job)
        return Decision(start=starts)


POLICIES = [PolicySpec("largest-first", LargestFirst, "Largest GPU request first, consolidating placement",
                       PolicyFamily.BASELINE, LargestFirstParams, twins=("tier-placement",),
                       reference="schedlab example plugin")]
