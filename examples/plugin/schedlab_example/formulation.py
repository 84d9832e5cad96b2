"""Two methods of the tier-placement kind, each declaring its role.

``pack-first`` (role ``heuristic-in-model``): place as many GPUs as possible, ignoring tiers.

Integer ``k[j,m]`` (GPUs of job j on machine m) and binary ``y[j]`` (job j placed):

    sum_m k[j,m] = g_j * y_j        (gang: all of the job or nothing)
    sum_j k[j,m] <= free_m          (capacity)
    maximise sum_j g_j * y_j

``objective`` is the model's own (GPUs placed: the solver's status is checked against it). The harness
scores the allocation with the kind's objective, ``OBJECTIVES["tier-placement"]`` (effective GPUs,
tier-aware), so the gap suite measures what ignoring tiers costs. Its model optimises another
objective, so its role is ``heuristic-in-model``: its allocation is scored, its bound never used.

``pack-local`` (role ``restriction``): the kind's own objective (effective GPUs) over a subset of the
decisions: every job on ONE machine (machine tier), binary ``x[j,m]``::

    sum_m x[j,m] <= 1                   (one machine, or unplaced)
    sum_j g_j x[j,m] <= free_m          (capacity)
    maximise sum_j,m g_j / (1 + o_j,machine) x[j,m]

Its optimum is the best machine-local placement, a feasible point but NOT a bound on the kind's
optimum (a job larger than a machine cannot be placed at all): declared a restriction, the harness
never takes its bound for the instance's best bound.
"""

from schedlab.formulations import Method, Role
from schedlab.formulations.base import Built
from schedlab.formulations.model import LinExpr, Model
from schedlab.formulations.tier import TierInstance
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.verify import validate_allocation


class PackFirst:
    name = "pack-first"

    def build(self, inst: TierInstance, deadline: float | None = None) -> Built:
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


class PackLocal(PackFirst):
    name = "pack-local"

    def build(self, inst: TierInstance, deadline: float | None = None) -> Built:
        mdl = Model("pack-local", sense="max")
        machines = [m for m in inst.eligible_machines if inst.free_gpus(m) > 0]
        used = {m: LinExpr() for m in machines}
        x, obj = {}, LinExpr()
        for job in inst.base.jobs:
            g = job.requested.gpus
            one = LinExpr()
            for m in machines:
                if g <= inst.free_gpus(m):
                    v = x[job.id, m] = mdl.binary(f"x[{job.id},{m}]")
                    one.add_term(v.index, 1)
                    used[m].add_term(v.index, g)
                    obj.add_term(v.index, g / (1 + inst.overhead[job.id][0]))
            mdl.add(one <= 1, f"one[{job.id}]")
        for m in machines:
            mdl.add(used[m] <= inst.free_gpus(m), f"cap[{m}]")
        mdl.maximize(obj)
        return Built(mdl, x)

    def extract(self, inst: TierInstance, built: Built, values: list[float]) -> Allocation:
        g = {j.id: j.requested.gpus for j in inst.base.jobs}
        return Allocation.of(JobAllocation(j, ExecutionPlan(dp=g[j]), {m: Resources(g[j], 0, 0.0)})
                             for (j, m), v in built.data.items() if values[v.index] > 0.5)

    def objective(self, inst: TierInstance, solution: Allocation) -> float:
        return sum(ja.plan.dp / (1 + inst.overhead[ja.job_id][0]) for ja in solution)


FORMULATIONS = [Method.of(PackFirst, TierInstance.KIND, role=Role.HEURISTIC,
                          summary="max GPUs placed, ignoring tiers (scored by the tier objective)"),
                Method.of(PackLocal, TierInstance.KIND, role=Role.RESTRICTION,
                          summary="tier objective, every job on one machine (a restriction)")]
