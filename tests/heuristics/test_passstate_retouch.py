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


MEM = [0.0, -0.0, 0.1, 1.7, 12.3, 31.25]  # (-0.0 and 0.0 both: ``retouch`` reuses an object only when no sign can flip)
res = st.builds(Resources, st.integers(0, 4), st.integers(0, 8), st.sampled_from(MEM))
placement = st.dictionaries(st.sampled_from(MACHINES), res, min_size=1, max_size=4)
step = st.tuples(st.sampled_from(["take", "retouch"]), placement)


def state(ps: PassState):
    """The pass state, floats by ``repr`` (``-0.0 == 0.0``, but a later ``-0.0 - 0.0`` differs)."""
    eff = [(m, r.gpus, r.cpus, repr(r.mem_gb)) for m, r in ps.eff.items()]
    return (eff, {k: list(b) for k, b in ps.buckets.items() if b}, list(ps.rack_taken.items()))


@settings(max_examples=600, deadline=None)
@given(free=st.fixed_dictionaries({m: st.builds(Resources, st.integers(4, 8), st.integers(8, 16),
                                                st.sampled_from([64.0, 100.3, 255.9, 0.0, -0.0, 0.1])) for m in MACHINES}),
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


@settings(max_examples=300, deadline=None)
@given(free=st.lists(st.integers(0, 8), min_size=1, max_size=10), gpus=st.integers(0, 9),
       skip=st.sets(st.integers(0, 9)), bad=st.sets(st.integers(0, 9)), with_accept=st.booleans())
def test_best_fit_except_is_best_fit_with_a_skip(free, gpus, skip, bad, with_accept):
    """``FreeIndex.best_fit_except`` (``place_consolidated``'s best fit among untouched machines) picks
    what ``best_fit`` with the lambda it replaces picks."""
    from schedlab.scheduling.free_index import FreeIndex

    names = [f"m{i}" for i in range(len(free))]
    cluster = SimpleNamespace(max_gpus_per_machine=8, machines=names, racks=["r0"],
                              rack_of=lambda m: "r0")
    idx = FreeIndex(cluster, dict(zip(names, free, strict=True)))
    for i, m in enumerate(names):  # some updates, so buckets hold machines out of cluster order
        if i % 3 == 1:
            idx._set(m, (free[i] + 3) % 9)
    sk = {f"m{i}" for i in skip}
    ok = (lambda m: int(m[1:]) not in bad) if with_accept else None
    want = idx.best_fit(gpus, accept=lambda m: m not in sk and (ok is None or ok(m)))
    assert idx.best_fit_except(gpus, sk, ok) == want


@settings(max_examples=400, deadline=None)
@given(free=st.fixed_dictionaries({m: st.builds(Resources, st.integers(0, 8), st.integers(0, 16),
                                                st.sampled_from([64.0, 100.3, 0.0, -0.0, 0.1])) for m in MACHINES}),
       steps=st.lists(st.tuples(st.booleans(), placement), max_size=12))
def test_take_all_is_take_per_machine(free, steps):
    """``PassState.take_all`` (a start's whole placement in one call: 2D-LAS / 2D-Gittins's ``Starter``)
    leaves the state ``take`` per machine leaves, given-back amounts (negative) included."""
    v = view(free)
    fast, ref = PassState(v), PassState(v)
    for give_back, p in steps:
        if give_back:
            p = {m: r.scale(-1) for m, r in p.items()}
        elif any(ref.free(m).gpus < r.gpus for m, r in p.items()):
            continue  # (a pass never takes more GPUs than are free)
        fast.take_all(p)
        for m, r in p.items():
            ref.take(m, r)
        assert state(fast) == state(ref)
        assert fast._gain == ref._gain
