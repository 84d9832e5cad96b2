r"""Synergy-like resource-sensitive scheduler (Mohan et al., OSDI'22), as Rubick's evaluation uses it:
GPU count and execution plan fixed at the request, CPUs and host memory tuned per job.

Order: FIFO over the queue with backfill (the Synergy artifact's ``fifo`` + ``tune`` mode used by the
Rubick artifact). Placement: consolidated on GPUs (as YARN-CS), with at least one CPU per GPU.

Tuning (Synergy-TUNE, ours in detail): the job's *demand* is the smallest point of the grid
``cpus in {g, 2g, ..., C_max g}`` x ``memory in {plan's host memory, fair share}`` that maximises its
throughput (the perf model's, for its fixed plan on the chosen placement; memory below the plan's
host memory is infeasible, more does not speed a job up). Each machine ``m`` then gives it

.. math:: c_m = \min\bigl(D_m,\ \max(\min(D_m, F_m),\ free_m - F^{gpu}_m\, f_m)\bigr)

CPUs (likewise memory): its demand ``D_m`` (split in proportion to GPUs) if the machine can spare it
while keeping the *fair share* ``F^{gpu}_m`` (the machine's CPUs per GPU) for each of its ``f_m`` GPUs
still free after this job, and never less than its own fair share ``F_m`` (capped by its demand) when
that is free. A job whose minimum (one CPU per GPU, its plan's memory, a guaranteed job's minRes)
does not fit waits. Guaranteed jobs also respect their tenant's quota.

Not modelled: Synergy's periodic re-tuning of running jobs at lease boundaries (allocations are kept
for a job's lifetime; a change would cost a checkpoint-restart in this simulator).
"""

from __future__ import annotations

from dataclasses import replace

from schedlab.heuristics.fifo import PassState, QuotaLedger, place_consolidated
from schedlab.perfmodel.curves import MIN_CPUS_PER_GPU
from schedlab.perfmodel.facade import PerfModel
from schedlab.perfmodel.memory import plan_host_memory_gb
from schedlab.perfmodel.zoo import resolve_name
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import ClusterView, Decision
from schedlab.scheduling.registry import PolicyFamily, PolicyParams, PolicyRegistry, PolicySpec, ours
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.snapshot import PolicyBase


class SynergyParams(PolicyParams):
    max_cpus_per_gpu: int = ours(16, ge=1, neutral="the top of the tuning grid (Synergy profiles CPU points up "
                                                   "to the server's share; 16 per GPU covers every preset)",
                                 description="largest CPUs-per-GPU point of the tuning grid")


class SynergyPolicy(PolicyBase):
    """See the module docstring."""

    name = "synergy"
    oracle = False

    def __init__(self, *, max_cpus_per_gpu: int = 16, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.max_cpus_per_gpu = max_cpus_per_gpu
        self._pm: PerfModel | None = None
        self._demand: dict[tuple, tuple[int, float]] = {}

    def schedule(self, view: ClusterView) -> Decision:
        if view.queue_length == 0 or view.index.total == 0:
            return Decision()
        if self._pm is None or self._pm.cluster is not view.cluster or self._pm.calibration != view.calibration:
            self._pm, self._demand = PerfModel(view.cluster, calibration=view.calibration), {}
        ps = PassState(view)
        ledger = QuotaLedger(view) if view.quotas else None
        starts: dict[str, JobAllocation] = {}
        for jv in view.queue():
            job = jv.job
            if job.requested.gpus > view.index.total:
                continue
            if ledger is not None and job.guaranteed and job.tenant in view.quotas and not ledger.fits(job):
                continue
            placement = self._place(view, ps, job)
            if placement is None:
                continue
            for m, r in placement.items():
                ps.take(m, r)
            starts[job.id] = JobAllocation(job.id, job.requested_plan, placement)
            if ledger is not None and job.guaranteed and job.tenant in view.quotas:
                ledger.charge(job)
        return Decision(start=starts)

    def _place(self, view: ClusterView, ps: PassState, job: Job) -> dict[str, Resources] | None:
        g = job.requested.gpus
        floor_c = max(g * MIN_CPUS_PER_GPU, job.min_resources.cpus if job.guaranteed and job.min_resources else 0)
        probe = replace(job, requested=Resources(g, g * MIN_CPUS_PER_GPU, 0.0), min_resources=None)
        gpus = place_consolidated(view, probe, ps)
        if gpus is None:
            return None
        counts = {m: r.gpus for m, r in gpus.items()}
        demand_c, host_gb = self.demand(job, counts)
        out: dict[str, Resources] = {}
        for m, k in counts.items():
            spec = view.cluster.machine(m)
            free = ps.free(m)
            others = free.gpus - k                       # GPUs still free here after this job
            fair_c = spec.cpus // spec.gpus
            fair_mem = spec.host_memory_gb / spec.gpus
            want_c = demand_c * k // g
            c = min(want_c, max(min(want_c, fair_c * k), free.cpus - fair_c * others), free.cpus)
            mem_need = host_gb * k / g
            mem = max(mem_need, min(job.requested.mem_gb * k / g, fair_mem * k))
            if c < k * MIN_CPUS_PER_GPU or mem > free.mem_gb + 1e-9:
                return None
            out[m] = Resources(k, c, mem)
        short = floor_c - sum(r.cpus for r in out.values())
        for m, r in out.items():  # a guaranteed job's CPU floor, from free CPUs
            if short <= 0:
                break
            add = min(ps.free(m).cpus - r.cpus, short)
            if add > 0:
                out[m] = Resources(r.gpus, r.cpus + add, r.mem_gb)
                short -= add
        return out if short <= 0 else None

    def demand(self, job: Job, counts: dict[str, int]) -> tuple[int, float]:
        """The job's tuned demand on ``counts``: ``(CPUs, host memory GB)`` (module docstring)."""
        g = sum(counts.values())
        key = (job.model, job.global_batch, job.requested_plan, tuple(sorted(counts.items())))
        hit = self._demand.get(key)
        if hit is not None:
            return hit
        name = resolve_name(job.model)
        if name is None:
            hit = (max(job.requested.cpus, g * MIN_CPUS_PER_GPU), job.requested.mem_gb)
        else:
            pm = self._pm
            host = plan_host_memory_gb(pm.spec(name), job.requested_plan)
            grid = [g * k for k in range(MIN_CPUS_PER_GPU, self.max_cpus_per_gpu + 1)]
            tput = pm.throughputs(name, [job.requested_plan] * len(grid), counts, grid, global_batch=job.global_batch)
            best = int(tput.argmax())
            top = float(tput[best])
            c = next(c for c, t in zip(grid, tput, strict=True) if t >= top * (1 - 1e-9))
            hit = (c, host)
        self._demand[key] = hit
        return hit


SYNERGY_POLICIES = PolicyRegistry()
SYNERGY_POLICIES.register(PolicySpec(
    "synergy", SynergyPolicy, "Synergy-like: FIFO at the requested GPUs and plan, CPUs and memory tuned per job "
    "from its sensitivity with a fair-share floor", PolicyFamily.BASELINE, SynergyParams, twins=("joint",),
    reference="Rubick (MLSys'25) Sec. 7.3 baseline; Synergy (OSDI'22)"))

__all__ = ["SYNERGY_POLICIES", "SynergyParams", "SynergyPolicy"]
