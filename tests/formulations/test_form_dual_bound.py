"""No heuristic beats a proven bound: on tiny random instances of every snapshot kind, each twin
policy's verified allocation, scored by ``OBJECTIVES[kind]``, lies on the right side of the exact
formulation's reported ``dual_bound`` (and of its optimum). Joint instances use one-rack clusters here
(multi-rack containment: ``test_form_containment.py``); every policy allocation is compared, none skipped
(a guaranteed job's options below its minRes CPUs once left rubick's decisions outside the model: the
pinned case below), except those that break a rule of the kind (``Kind.violations``: a guaranteed joint
job below its SLO, which synergy and other SLO-blind policies produce), which are no point of the problem."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.registry import all_policies
from schedlab.formulations import KINDS, OBJECTIVES, SolveParams, Status, solve
from schedlab.formulations.containment import check
from schedlab.formulations.joint import JointFormulation
from schedlab.formulations.joint_options import generate_joint
from schedlab.formulations.tier import TierFormulation, TierMode, generate_tier
from schedlab.formulations.tiresias_gen import generate_tiresias
from schedlab.formulations.tiresias_ilp import TiresiasFormulation
from schedlab.scheduling import Instance, Resources, validate_allocation
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.loaders import spec_from_dict

P = SolveParams(threads=1, time_limit_s=30, seed=0, work_limit=30)
REG = all_policies()
FORMS = {"joint": JointFormulation, "tier-placement": TierFormulation, "tiresias-placement": TiresiasFormulation}
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


def cluster(racks: int, machines: int, gpus: int, gpu_model: str, mem: float) -> Cluster:
    links = {"machine": {"bandwidth_gbps": 100}, "rack": {"bandwidth_gbps": 10}}
    if racks > 1:
        links["network"] = {"bandwidth_gbps": 5}
    return Cluster(spec_from_dict({
        "name": "tiny", "defaults": {"gpus": gpus, "gpu_model": gpu_model, "gpu_memory_gb": mem, "cpus": 32,
                                     "host_memory_gb": 512},
        "links": links, "racks": racks, "machines_per_rack": machines}))


def placed_only(inst, alloc):
    """A Tiresias instance restricted to the jobs a heuristic placed (the ILP places all of its jobs)."""
    if inst.KIND != "tiresias-placement" or all(j.id in alloc for j in inst.base.jobs):
        return inst
    jobs = tuple(j for j in inst.base.jobs if j.id in alloc)
    return dataclasses.replace(inst, base=Instance(inst.base.cluster, jobs, reserved=inst.base.reserved),
                               ps={j.id: inst.ps[j.id] for j in jobs})


def assert_no_policy_beats_the_bound(inst, seed: int) -> int:
    """Every twin policy of ``inst.KIND``: verified allocation, contained in the exact model, score vs
    the exact dual bound and optimum (solved on the instance the score is defined on). Returns how
    many were compared."""
    kind = inst.KIND
    compared = 0
    for name in sorted(n for n in REG if kind in REG[n].twins):
        alloc = REG[name].decide(inst.base, seed=seed)
        assert validate_allocation(inst.base, alloc) == [], name
        sub = placed_only(inst, alloc)
        if not sub.base.jobs or KINDS[kind].violations(sub, alloc):
            continue  # breaks a rule of the kind (a guaranteed job below its SLO): no point of the problem
        rep = check(sub, alloc)
        assert rep.ok, f"{name}: {rep}"
        value = OBJECTIVES[kind](sub, alloc)
        r = solve(FORMS[kind](), sub, "highs", P)
        assert r.status is Status.OPTIMAL and r.bounds.dual is not None, (name, r.termination)
        tol = 1e-6 * max(1.0, abs(value))
        if r.bounds.sense == "max":
            assert r.bounds.dual >= value - tol and r.objective >= value - tol, (name, value, r.bounds.dual)
        else:
            assert r.bounds.dual <= value + tol and r.objective <= value + tol, (name, value, r.bounds.dual)
        compared += 1
    return compared


@SETTINGS
@given(machines=st.integers(1, 3), gpus=st.sampled_from([2, 4, 8]), n=st.integers(1, 4), seed=st.integers(0, 999),
       source=st.sampled_from(["synthetic", "perfmodel"]), running=st.sampled_from([0.0, 0.4]),
       penalty=st.sampled_from([0.0, 0.3]), guaranteed=st.sampled_from([0.0, 0.3]))
def test_joint_one_rack(machines, gpus, n, seed, source, running, penalty, guaranteed):
    cl = cluster(1, machines, gpus, "A800-80GB", 80)
    inst = generate_joint(cl, n, seed=seed, source=source, running_frac=running, reconfig_penalty=penalty,
                          guaranteed_frac=guaranteed)
    # generate_joint can start a guaranteed job running above its tenant's quota (an invalid snapshot
    # every policy then keeps: reported with issue 20); such snapshots are not this property's subject
    assume(validate_allocation(inst.base, inst.base.current) == [])
    assert assert_no_policy_beats_the_bound(inst, seed) > 0


def test_joint_one_rack_guaranteed_job_above_the_cheapest_cpu_level():
    # found by test_joint_one_rack: bert_large is guaranteed (minRes 2 GPUs / 4 CPUs); its table's only
    # 2-GPU one-machine option needs 2 CPUs (4 CPUs is no faster, so that option was pruned as dominated)
    # and was inadmissible below minRes, so no option covered any 2-GPU placement of it: joint reported
    # 4.376 "optimal" while rubick's decision (2 GPUs, 4 CPUs, zero-dp) scores 4.838 (flat perf model). Options below minRes
    # CPUs now stand for their class at >= minRes CPUs (JointInstance.table)
    inst = generate_joint(cluster(1, 3, 2, "A800-80GB", 80), 3, seed=1, source="perfmodel", guaranteed_frac=0.3)
    job = inst.base.job("j0000")
    assert job.guaranteed and job.min_resources.cpus == 4
    assert [o.cpus for o in inst.options[job.id] if o.gpus == 2 and o.single] == [2]
    assert [o.cpus for _, o in inst.admissible(job) if o.gpus == 2 and o.single] == [4]
    alloc = REG["rubick"].decide(inst.base, seed=1)
    assert dict(alloc[job.id].placement).popitem()[1] == Resources(2, 4, 8.0)
    assert OBJECTIVES["joint"](inst, alloc) == pytest.approx(4.838016, rel=1e-6)
    r = solve(JointFormulation(), inst, "highs", P)
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(4.838016, rel=1e-6)
    assert assert_no_policy_beats_the_bound(inst, 1) == sum("joint" in p.twins for p in REG.values())


@SETTINGS
@given(racks=st.integers(1, 2), machines=st.integers(1, 3), gpus=st.sampled_from([2, 4, 8]), n=st.integers(1, 6),
       seed=st.integers(0, 999), busy=st.sampled_from([0.0, 0.5]), mode=st.sampled_from(list(TierMode)))
def test_tier(racks, machines, gpus, n, seed, busy, mode):
    inst = generate_tier(cluster(racks, machines, gpus, "A100-80GB", 80), n, seed=seed, busy=busy, mode=mode)
    assert assert_no_policy_beats_the_bound(inst, seed) > 0


@SETTINGS
@given(machines=st.integers(2, 4), n=st.integers(1, 3), seed=st.integers(0, 999), busy=st.sampled_from([0.0, 0.4]))
def test_tiresias(machines, n, seed, busy):
    try:
        inst = generate_tiresias(cluster(1, machines, 4, "P100-16GB", 16), n, seed=seed, gpus=4, busy=busy)
    except SpecError:  # fewer free GPUs than jobs after the busy machines (the generator says so)
        assume(False)
    assert_no_policy_beats_the_bound(inst, seed)  # a busy snapshot may leave the policies nothing to place
