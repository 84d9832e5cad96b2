"""The per-machine joint model drops a resource's per-machine rows only where they can never bind
(:func:`~schedlab.formulations.joint.slack`), and the exact-in-the-loop policy's default method
(``joint-2stage``) proves the same optimum as the full model. Tiny instances with optima by hand."""

from __future__ import annotations

import pytest

from schedlab.formulations import JobOption, JointInstance, SolveParams
from schedlab.formulations.base import solve
from schedlab.formulations.joint import JointFormulation, build_machines
from schedlab.formulations.joint_twostage import JointTwoStage
from schedlab.formulations.policies.exact_joint import ExactJointParams, ExactJointPolicy
from schedlab.formulations.result import Status
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Allocation, Instance, Job, JobAllocation, Resources

from .conftest import tiny_cluster

P = SolveParams(threads=1, time_limit_s=30, seed=0, work_limit=30)
DP2 = ExecutionPlan(dp=2)


def instance(b_mem: float) -> JointInstance:
    """One machine (4 GPUs, 16 CPUs, 64 GB). ``a`` runs there on 2 GPUs with 2 CPUs and 8 GB (worth 1.0);
    ``b`` waits: 2 GPUs, 2 CPUs and ``b_mem`` GB, worth 2.0. Penalty 0.05 per changed running job.

    By hand: with ``b_mem`` = 8 both fit: keep ``a``, start ``b``: **3.0** (memory never binds: 8 + 8 <=
    64). With ``b_mem`` = 60 they do not fit together (8 + 60 > 64): preempt ``a`` (-0.05) and start ``b``:
    **1.95** (keeping ``a`` alone: 1.0)."""
    cl = tiny_cluster(machines=1, gpus=4, cpus=16, mem=64.0)
    m = cl.machines[0]
    a = Job("a", Resources(2, 2), plan=DP2, reconfigurable=False)
    b = Job("b", Resources(2, 2), plan=DP2, reconfigurable=False)
    cur = Allocation({"a": JobAllocation("a", DP2, {m: Resources(2, 2, 8.0)})})
    opts = {"a": (JobOption(2, 2, 1, 5.0, DP2, 8.0),), "b": (JobOption(2, 2, 1, 10.0, DP2, b_mem),)}
    base = Instance(cl, (a, b), current=cur, time=0.0)
    return JointInstance(base, opts, {"a": 5.0, "b": 5.0}, reconfig_penalty=0.05)


@pytest.mark.parametrize(("b_mem", "rows", "want"), [(8.0, False, 3.0), (60.0, True, 1.95)])
def test_memory_rows_only_where_they_can_bind(b_mem, rows, want):
    inst = instance(b_mem)
    built = build_machines(inst)
    # a kept job ties the CPUs and memory it runs with; the rows go only when they can never bind
    assert built.data["mem_rows"] is rows
    assert built.data["cpu_rows"] is False  # 2 + 2 of 16 CPUs: never binding
    for res in (solve(JointFormulation(aggregate=False), inst, "highs", P), JointTwoStage().solve(inst, "highs", P)):
        assert res.status is Status.OPTIMAL
        assert res.objective == pytest.approx(want)
        assert res.violations == ()
    # the memory the extraction shares out fits the machine beside the kept job
    used = sum(r.mem_gb for ja in res.allocation for r in ja.placement.values())
    assert used <= 64.0 + 1e-9


def test_the_default_method_is_the_two_stage_proof():
    assert ExactJointParams().method == "joint-2stage"
    assert ExactJointPolicy().method == "joint-2stage"
