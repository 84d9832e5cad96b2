"""``pack-first``: place as many GPUs as possible on a tier-placement instance, ignoring tiers.

Integer ``k[j,m]`` (GPUs of job j on machine m) and binary ``y[j]`` (job j placed):

    sum_m k[j,m] = g_j * y_j        (gang: all of the job or nothing)
    sum_j k[j,m] <= free_m          (capacity)
    maximise sum_j g_j * y_j

``objective`` is the model's own (GPUs placed: the solver's status is checked against it). The harness
scores the allocation with the kind's objective, ``OBJECTIVES["tier-placement"]`` (effective GPUs,
tier-aware), so the gap suite measures what ignoring tiers costs; the model's bound on GPUs placed is
also a valid bound on effective GPUs in max-throughput mode (effective GPUs never exceed GPUs).
"""

from schedlab.benchmarks.harness.plugins import FormulationPlugin
from schedlab.formulations.base import Built
from schedlab.formulations.model import LinExpr, Model
from schedlab.formulations.tier import TierInstance
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.verify import validate_allocation


class PackFirst:
    name = "pack-first"

    def build(self, inst: TierInstance) -> Built:
        mdl = Model("pack-first", sense="max")
        machines = [m for m in inst.eligible_machines if inst.free_gpus(m) > 0]
        used = {m: LinExpr() for m in machines}
        k, obj = {}, LinExpr()
        for job in inst.base.jobs:
            g = job.requested.gpus
            y = mdl.binary(f"y[{job.id}]")
            total = LinExpr()
            for m in machines:
                v = mdl.integer(f"k[{job.id},{m}]", 0, min(g, inst.free_gpus(m)))
                k[job.id, m] = v
                total.add_term(v.index, 1)
                used[m].add_term(v.index, 1)
            mdl.add(total - g * y == 0, f"gang[{job.id}]")
            obj.add_term(y.index, g)
        for m in machines:
            mdl.add(used[m] <= inst.free_gpus(m), f"cap[{m}]")
        mdl.maximize(obj)
        return Built(mdl, k)

    def extract(self, inst: TierInstance, built: Built, values: list[float]) -> Allocation:
        per: dict[str, dict[str, Resources]] = {}
        for (jid, m), v in built.data.items():
            n = int(round(values[v.index]))
            if n > 0:
                per.setdefault(jid, {})[m] = Resources(n, 0, 0.0)
        return Allocation.of(JobAllocation(j, ExecutionPlan(dp=sum(r.gpus for r in pl.values())), pl)
                             for j, pl in per.items())

    def objective(self, inst: TierInstance, solution: Allocation) -> float:
        return float(sum(r.gpus for ja in solution for r in ja.placement.values()))

    def allocation_of(self, solution: Allocation) -> Allocation:
        return solution

    def verify(self, inst: TierInstance, solution: Allocation) -> list[str]:
        return [str(v) for v in validate_allocation(inst.base, solution)]

    def hints(self, inst: TierInstance, built: Built, allocation: Allocation) -> dict[int, float]:
        return {}


FORMULATIONS = [FormulationPlugin.of(PackFirst, kind=TierInstance.KIND)]
