"""Committing a job in a Rubick pass: ``GetBestPlan`` on the placement found, ``AllocMem``, re-planning
the jobs it took units from (a best-effort job left with nothing runnable is preempted), and, at the
end of a pass, the check that the decision never over-commits a machine.

All functions work on a :class:`~schedlab.heuristics.rubick.state.PassState` and roll back what they
did when they fail.
"""

from __future__ import annotations

from schedlab.heuristics.rubick.curves import PlanChoice, is_offload
from schedlab.heuristics.rubick.state import CPU, GPU, Entry, PassState
from schedlab.perfmodel.curves import MIN_CPUS_PER_GPU
from schedlab.scheduling.policy import ClusterView, split_resources
from schedlab.scheduling.resources import ZERO, Resources

EPS = 1e-9


def best_plan(e: Entry, gpus: dict[str, int], cpus: dict[str, int]) -> tuple[dict[str, int], PlanChoice] | None:
    """GetBestPlan on a placement: the best plan over the placement trimmed to each of the three
    largest amounts a plan runs on (GPUs it cannot use are given back; never below the floor)."""
    jm = e.jm
    usable = {m: (min(k, cpus.get(m, 0) // MIN_CPUS_PER_GPU) if jm.elastic else k) for m, k in gpus.items()}
    usable = {m: k for m, k in usable.items() if k > 0}
    total = sum(usable.values())
    best = None
    for a in [a for a in jm.valid_amounts(min(total, jm.cap)) if a >= e.floor[GPU]][:3]:
        counts = trim(usable, a, jm.granule)
        if counts is None:
            continue
        c = sum(cpus.get(m, 0) for m in counts) if jm.elastic else max(jm.job.requested.cpus, a)
        choice = jm.book.plan_for(jm, counts, c) if jm.book is not None else None
        if choice is not None and (best is None or choice.throughput > best[1].throughput * (1 + 1e-9)):
            best = (counts, choice)
    return best


def commit(st: PassState, e: Entry, victims: list[Entry]) -> bool:
    """``e`` reached its minRes (or holds something runnable): plan it, re-plan its ``victims`` (a
    best-effort one with nothing runnable is preempted, and ``e`` then waits for its checkpoint:
    *deferred*), book memory. False (everything undone) if it cannot run, runs below its SLO, or, if
    it is running, would not run faster."""
    mark = st.mark()
    found = best_plan(e, e.units[GPU], e.units[CPU]) if e.g else None
    ok = found is not None
    if ok:
        counts, choice = found
        tput = choice.throughput / e.jm.ref
        if e.slo and tput < 1 - EPS:
            ok = False
        elif e.running and tput <= e.tput * (1 + 1e-6):
            ok = False  # a running job is only reconfigured to run faster
    if ok:
        deferred = False
        for v in victims:
            if v.doomed:
                st.drop(v)
                deferred = True
                continue
            vf = best_plan(v, v.units[GPU], v.units[CPU]) if v.g else None
            if vf is None:
                if v.slo:
                    ok = False
                    break
                if v.running:
                    st.drop(v)
                    deferred = True
                else:
                    release(st, v)
            elif not settle(st, v, *vf):
                ok = False
                break
        if ok and deferred:  # it holds units a preempted job frees only later: nobody may take them
            st.set(e, "deferred", True)
            st.set(e, "frozen", True)
            st.set(e, "plan", choice.plan)
            st.set(e, "changed", True)
        elif ok:
            ok = settle(st, e, counts, choice)
    if not ok:
        st.rollback(mark)
    return ok


def release(st: PassState, e: Entry) -> None:
    """A job placed earlier in this pass loses its place: everything back to the free pool."""
    for r in (GPU, CPU):
        for m, k in list(e.units[r].items()):
            st.move(r, m, e, None, k)
    for m in list(e.mem):
        st.set_mem(e, m, 0.0)
    st.set(e, "changed", False)
    st.set(e, "plan", None)


def settle(st: PassState, e: Entry, counts: dict[str, int], choice: PlanChoice) -> bool:
    """Make ``e`` hold exactly ``counts`` GPUs, the CPUs its plan uses and the plan's host memory
    (AllocMem); False if a machine lacks the memory or, for fixed requests, the CPUs."""
    jm, job = e.jm, e.jm.job
    for m, k in list(e.units[GPU].items()):
        if k > counts.get(m, 0):
            st.move(GPU, m, e, None, k - counts.get(m, 0))
    g = sum(counts.values())
    if jm.elastic:
        want = {m: counts[m] * MIN_CPUS_PER_GPU for m in counts}
        if is_offload(choice.plan):
            want = {m: max(want[m], e.on(CPU, m)) for m in counts}
        extra = e.floor[CPU] - sum(want.values())
        for pool in ((lambda m: e.on(CPU, m) - want[m]), (lambda m: e.on(CPU, m) + st.free[CPU][m] - want[m])):
            for m in counts:  # the CPU floor: from what it holds first, then free CPUs
                add = min(pool(m), extra)
                if add > 0:
                    want[m] += add
                    extra -= add
        if extra > 0:
            return False
    else:
        want = {m: r.cpus for m, r in split_resources(job, counts).items()}
    for m in list(e.units[CPU]):
        if e.on(CPU, m) > want.get(m, 0):
            st.move(CPU, m, e, None, e.on(CPU, m) - want.get(m, 0))
    for m, c in want.items():
        short = c - e.on(CPU, m)
        if short > 0:
            if st.free[CPU][m] < short:
                return False
            st.move(CPU, m, None, e, short)
    host = max(jm.book.host_memory_gb(job, choice.plan) if jm.book is not None else 0.0, job.requested.mem_gb)
    for m in list(e.mem):
        if m not in counts:
            st.set_mem(e, m, 0.0)
    for m, k in counts.items():
        need = host * k / g
        if need - e.mem.get(m, 0.0) > st.free_mem[m] + EPS:
            return False
        st.set_mem(e, m, need)
    st.set(e, "plan", choice.plan)
    st.set(e, "changed", True)
    st.set(e, "tick", st.mark())
    return True


def defer_infeasible(st: PassState, view: ClusterView, start: dict) -> None:
    """Units a job gives up in a pass are free at once when it is reconfigured but only after its
    checkpoint when it is preempted (or when its own change waits): a job that (directly or through
    the free pool) got such units must wait for a later decision point. Applies the decision to the
    view's free resources and defers the latest-committed changes on any over-used machine until
    every machine fits (deferring everything leaves the current, feasible, state)."""
    while True:
        delta: dict[str, Resources] = {}
        for jid, ja in start.items():
            e = st.entries[jid]
            for m, r in ja.placement.items():
                delta[m] = delta.get(m, Resources()) + r
            if e.orig is not None:
                for m, r in e.orig.placement.items():
                    delta[m] = delta.get(m, Resources()) - r
        over = [m for m, d in delta.items() if not d <= view.free(m)]
        if not over:
            return
        m = over[0]
        grow = [jid for jid, ja in start.items() if not ja.placement.get(m, ZERO) <= _held(st.entries[jid], m)]
        grow = grow or [jid for jid, ja in start.items() if m in ja.placement]  # (rounding) any user of m
        jid = max(grow, key=lambda j: st.entries[j].tick)
        del start[jid]
        st.entries[jid].deferred = True


def _held(e: Entry, m: str) -> Resources:
    """What ``e`` held on ``m`` before the pass."""
    return e.orig.placement.get(m, ZERO) if e.orig is not None else ZERO


def trim(counts: dict[str, int], amount: int, granule: int) -> dict[str, int] | None:
    """``counts`` reduced to ``amount`` GPUs in multiples of ``granule`` per machine, taking from the
    smallest shares first (consolidation); None if that is impossible."""
    c = {m: k - k % granule for m, k in counts.items() if k - k % granule > 0}
    excess = sum(c.values()) - amount
    if excess < 0:
        return None
    for m in sorted(c, key=lambda m: c[m]):
        if excess <= 0:
            break
        take = min(c[m], excess)
        take -= take % granule
        c[m] -= take
        excess -= take
    if excess:
        return None
    return {m: k for m, k in c.items() if k > 0}


__all__ = ["best_plan", "commit", "defer_infeasible", "release", "settle", "trim"]
