"""``PassState.retouch`` (gandiva-like's replay of a skipped migration candidate) leaves the pass state
exactly as giving the placement back and taking it again with ``take`` does: the same effective free
resources (floats included), the same machines in the same order in every bucket, the same racks'
taken GPUs."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.heuristics.fifo import PassState
from schedlab.scheduling import Resources

MACHINES = [f"m{i}" for i in range(6)]


def view(free: dict[str, Resources]) -> SimpleNamespace:
    racks = {m: f"r{i % 2}" for i, m in enumerate(MACHINES)}
    return SimpleNamespace(free=free.__getitem__, cluster=SimpleNamespace(max_gpus_per_machine=8),
                           index=SimpleNamespace(rack_of=racks.__getitem__))


res = st.builds(Resources, st.integers(0, 4), st.integers(0, 8), st.sampled_from([0.0, 0.1, 1.7, 12.3, 31.25]))
placement = st.dictionaries(st.sampled_from(MACHINES), res, min_size=1, max_size=4)
step = st.tuples(st.sampled_from(["take", "retouch"]), placement)


def state(ps: PassState):
    return (ps.eff, {k: list(b) for k, b in ps.buckets.items() if b}, ps.rack_taken)


@settings(max_examples=400, deadline=None)
@given(free=st.fixed_dictionaries({m: st.builds(Resources, st.integers(4, 8), st.integers(8, 16),
                                                st.sampled_from([64.0, 100.3, 255.9])) for m in MACHINES}),
       steps=st.lists(step, max_size=12))
def test_retouch_is_give_back_and_retake(free, steps):
    v = view(free)
    fast, ref = PassState(v), PassState(v)
    for kind, p in steps:
        if any(ref.free(m).gpus < r.gpus for m, r in p.items()):
            continue  # (a pass never takes more GPUs than are free)
        if kind == "take":
            for ps in (fast, ref):
                for m, r in p.items():
                    ps.take(m, r)
        else:
            fast.retouch(p)
            for m, r in p.items():
                ref.take(m, r.scale(-1))
            for m, r in p.items():
                ref.take(m, r)
        assert state(fast) == state(ref)
