"""``place_spread``'s early refusal (``g > ps.free_gpus``: no search when the pass cannot hold the job)
must not refuse a job that asks for exactly the GPUs the pass has left: the boundary case, worked by
hand (cln8's mutation run found that no test pinned it)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from schedlab.heuristics.fifo import PassState
from schedlab.heuristics.tiresias.placement import place_spread
from schedlab.scheduling import Job, Resources
from schedlab.scheduling.free_index import FreeIndex

NAMES = ["m0", "m1", "m2"]


def _view(free_gpus: list[int]) -> SimpleNamespace:
    cluster = SimpleNamespace(max_gpus_per_machine=4, machines=NAMES, racks=["r0"], rack_of=lambda m: "r0")
    free = {m: Resources(g, 4 * g, 64.0 * g) for m, g in zip(NAMES, free_gpus, strict=True)}
    return SimpleNamespace(cluster=cluster, index=FreeIndex(cluster, {m: r.gpus for m, r in free.items()}),
                           free=free.__getitem__)


@pytest.mark.parametrize("free_gpus", [[4, 2, 1], [1, 1, 1], [0, 3, 2]])
def test_a_job_asking_every_free_gpu_is_placed(free_gpus):
    v = _view(free_gpus)
    ps = PassState(v)
    total = sum(free_gpus)
    assert ps.free_gpus == total
    job = Job("j", Resources(total, total), iterations=1.0)
    placement = place_spread(v, job, ps)
    assert placement is not None  # (a ``>=`` in the early refusal returns None here)
    assert {m: r.gpus for m, r in placement.items()} == {m: g for m, g in zip(NAMES, free_gpus, strict=True) if g}
    assert place_spread(v, Job("k", Resources(total + 1, total + 1), iterations=1.0), ps) is None


def test_exact_fit_after_a_take_in_the_same_pass():
    """The bound after a take: 7 free, 3 taken on m0, a 4-GPU job takes the 4 left (m1, m2, m0's last)."""
    v = _view([4, 2, 1])
    ps = PassState(v)
    ps.take("m0", Resources(3, 12, 192.0))
    assert ps.free_gpus == 4
    placement = place_spread(v, Job("j", Resources(4, 4), iterations=1.0), ps)
    assert placement is not None
    assert sum(r.gpus for r in placement.values()) == 4
