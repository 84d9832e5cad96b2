"""The example plugin's own tests: the backend conformance of its formulation (a tiny instance solved
by hand) and the policy conformance suite, both from schedlab.benchmarks.harness.conformance."""

from schedlab.benchmarks.harness.conformance import check_formulation, check_policy
from schedlab.formulations.tier import TierInstance
from schedlab.scheduling import Instance, Job, Resources
from schedlab.topology.presets import preset


def test_pack_first_on_every_backend():
    # dally-2 with one machine free (8 GPUs), every other one full. Jobs of 8, 4 and 2 GPUs: at most 8
    # GPUs fit, either the 8-GPU job alone (8) or the 4 + 2 (6): pack-first places the 8-GPU job, on
    # that one machine (machine tier). Objective (effective GPUs): 8 / (1 + o_machine) = 8 / 1.25 = 6.4.
    cluster = preset("dally-2")
    free = cluster.machines[0]
    reserved = {m: Resources(8, 0, 0.0) for m in cluster.machines if m != free}
    jobs = tuple(Job(f"j{i}", Resources(g, 0, 0.0)) for i, g in enumerate((8, 4, 2)))
    overhead = {j.id: (0.25, 0.5, 1.0) for j in jobs}  # per tier: machine, rack, network
    inst = TierInstance(Instance(cluster, jobs, reserved=reserved), overhead)
    result = check_formulation("pack-first", inst, optimum=6.4)
    assert result["highs"] == "ok" and result["cpsat"] == "ok"


def test_largest_first_conforms():
    assert "online smoke-mt" in check_policy("largest-first")
