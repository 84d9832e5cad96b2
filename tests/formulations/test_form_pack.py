"""Stage 2a of the two-stage joint solve: the greedy packing's one-machine rule, kept by buckets."""

import random

from schedlab.formulations.joint_instance import JobOption
from schedlab.formulations.joint_pack import _ByFree
from schedlab.perfmodel.plans import ExecutionPlan


def _brute(o: JobOption, free: dict) -> str | None:
    """The rule as written: among machines holding the option, fewest free GPUs, then smallest name."""
    fits = [m for m in free if free[m][0] >= o.gpus and free[m][1] >= o.cpus and free[m][2] >= o.mem_gb - 1e-9]
    return min(fits, key=lambda m: (free[m][0], m)) if fits else None


def test_bucketed_first_fit_equals_the_rule_through_a_packing_sequence():
    rng = random.Random(7)
    free = {f"m{i:02d}": [rng.choice((0, 2, 4, 8)), rng.choice((2, 8, 32)), rng.choice((16.0, 64.0))] for i in range(40)}
    by = _ByFree({m: f[0] for m, f in free.items()})
    placed = 0
    for _ in range(300):
        g = rng.choice((1, 2, 4, 8))
        o = JobOption(g, rng.choice((1, 2, 4)) * g, 1, 1.0, ExecutionPlan(g, 1, 1), rng.choice((1.0, 8.0)) * g)
        m = by.first_fit(o, free)
        assert m == _brute(o, free)
        if m is not None:  # take it, as pack_greedy does
            placed += 1
            by.move(m, free[m][0], free[m][0] - g)
            free[m] = [free[m][0] - g, free[m][1] - o.cpus, free[m][2] - o.mem_gb]
        else:  # give some room back so the sequence keeps exercising both branches
            m = rng.choice(sorted(free))
            by.move(m, free[m][0], free[m][0] + 2)
            free[m][0] += 2
            free[m][1] += 4
    assert 0 < placed < 300
