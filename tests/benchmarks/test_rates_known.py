"""``RealisticRates.speed_at`` / ``slowdown_at`` (the simulator's ``_allocate`` passes the GPUs and tier it
computes anyway) give the same floats as ``speed`` / ``placement_slowdown`` of the placement itself, for
tier-rated jobs (the closed form over ``TierRates.base``) and for the other rate models (delegated), on
random placements of the Philly cluster."""

from __future__ import annotations

import random

import pytest

from schedlab.benchmarks.simulator.rates import RealisticRates
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling import Job, Resources
from schedlab.topology import preset
from schedlab.topology.tiers import Tier

_MODELS = ("resnet18", "resnet50", "vgg16", "bert-large", "mobilenetv3")


def _jobs(rng: random.Random) -> list[Job]:
    out = []
    for n in range(60):
        g = rng.choice((1, 2, 3, 4, 8, 16, 24, 32))
        model = rng.choice(_MODELS)
        kind = rng.choice(("tier", "tier", "reference", None))
        attrs = {"iter_time": rng.uniform(0.05, 3.0)} if n % 5 else {"compute_time": rng.uniform(0.05, 3.0)}
        if kind is not None:
            attrs["rates"] = kind
        if "iter_time" not in attrs and kind == "reference":
            attrs["iter_time"] = 1.0
        out.append(Job(f"j{n}", Resources(g, 2 * g, 8.0 * g), iterations=1000.0, model=model, attrs=attrs))
    return out


def _placement(rng: random.Random, machines: list[str], gpus: dict[str, int], g: int) -> dict[str, Resources]:
    left, out = g, {}
    for m in rng.sample(machines, len(machines)):
        k = min(left, rng.randint(1, gpus[m]))
        out[m] = Resources(k, k, 2.0 * k)
        left -= k
        if not left:
            return out
    raise AssertionError("cluster too small")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_known_gpus_and_tier_give_the_same_floats(seed):
    cluster = preset("philly")
    rng = random.Random(seed)
    machines = list(cluster.machines)
    gpus = {m: cluster.machine(m).gpus for m in machines}
    fast, ref = RealisticRates(cluster), RealisticRates(cluster)
    checked = spread = 0
    for job in _jobs(rng):
        for _ in range(4):
            g = rng.choice((job.requested.gpus, max(1, job.requested.gpus // 2), job.requested.gpus + 1))
            p = _placement(rng, machines, gpus, g)
            plan = ExecutionPlan(dp=g)
            spans = sum(1 for r in p.values() if r.gpus > 0)
            tier = Tier.MACHINE if len(p) == 1 else cluster.tier_of(p, default=Tier.MACHINE)
            got = fast.speed_at(job, plan, p, g, tier)
            assert got == ref.speed(job, plan, p)
            if spans > 1:
                spread += 1
                assert fast.slowdown_at(job, plan, p, got[0], g) == ref.placement_slowdown(job, plan, p, got[0])
            checked += 1
        fast.forget(job.id)
        ref.forget(job.id)
    assert checked == 240 and spread > 20
    assert fast.sources == ref.sources and fast.capped == ref.capped


def test_base_is_per_job_object():
    """A reused id with another job is recomputed (the entry holds the job it was computed for)."""
    rates = RealisticRates(preset("philly"))
    a = Job("x", Resources(2), iterations=10.0, model="resnet50", attrs={"iter_time": 1.0, "rates": "tier"})
    b = Job("x", Resources(2), iterations=10.0, model="resnet50", attrs={"iter_time": 2.0, "rates": "tier"})
    p = {next(iter(rates.cluster.machines)): Resources(2)}
    assert rates.tiers.speed(b, ExecutionPlan(dp=2), p)[0] == 2 * rates.tiers.speed(a, ExecutionPlan(dp=2), p)[0]
