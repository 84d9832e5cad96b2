"""Deferred claims of a Rubick pass, kept across passes (Algorithm 1: a job that took the resources of
jobs it preempted gets them when their checkpoints are saved).

A claim is ``job id -> (the job, the allocation decided for it, the preempted jobs it waits for)``.
:func:`remember_claims` records them at the end of a pass; :func:`keep_claims`, at the start of the
next, holds a waiting claim's free units for its job or, once no victim checkpoints any more, gives
the job the claimed units, planned as the deciding pass would have.
"""

from __future__ import annotations

from collections import Counter

from schedlab.heuristics.rubick.commit import EPS, best_plan, settle
from schedlab.heuristics.rubick.state import CPU, GPU, PassState
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import JobStatus

Claims = dict[str, tuple[Job, JobAllocation, frozenset[str]]]


def keep_claims(claims: Claims, st: PassState, counters: Counter[str]) -> None:
    """Algorithm 1 gives a job the resources of the jobs it preempted once their checkpoints are
    saved; that decision holds across passes (a retry timer, an arrival or a completion in between
    does not re-decide it). While a victim still checkpoints, the claim's free units are held for
    the job (nobody else takes them; it does not start on part of them); once none does, the job
    gets the claimed units, planned (``GetBestPlan``, ``AllocMem``) as the deciding pass would
    have. A claim that no longer fits (the cluster changed under it) is dropped and the job decided
    afresh, counted as ``claim-lost``."""
    old = dict(claims)
    claims.clear()
    for jid, (job, alloc, waits) in old.items():
        e = st.entries.get(jid)
        if e is None or e.jm.job is not job or e.frozen:
            continue  # finished, or (running) checkpointing itself: the claim is void
        pending = frozenset(w for w in waits if (v := st.peek(w))[1] is not None
                            and v[0].status is JobStatus.CHECKPOINTING)  # (builds no entry)
        mark = st.mark()
        ok = True
        # a queued job's claim changes the free pool and its own units only, and it ends frozen (or undone):
        # no machine's lowest loss changes, so the machines' versions stay (their kept lowest losses hold)
        st.quiet = not e.running
        for m, r in alloc.placement.items():
            for kind, want in ((GPU, r.gpus), (CPU, r.cpus)):
                k = want - e.on(kind, m)
                if k > 0:
                    got = min(k, st.free[kind][m]) if pending else k
                    if got > st.free[kind][m]:
                        ok = False
                        break
                    if got > 0:
                        st.move(kind, m, None, e, got)
            if not ok:
                break
        if ok and not pending:
            for kind in (GPU, CPU):  # units the claim does not keep go back to the pool
                for m, k in list(e.units[kind].items()):
                    pl = alloc.placement.get(m)
                    keep = 0 if pl is None else (pl.gpus if kind == GPU else pl.cpus)
                    if k > keep:
                        st.move(kind, m, e, None, k - keep)
            # GetBestPlan and AllocMem on the claimed units, as the deferring pass would have
            found = best_plan(e, e.units[GPU], e.units[CPU]) if e.g else None
            ok = (found is not None and (not e.slo or found[1].throughput >= e.jm.ref * (1 - EPS))
                  and settle(st, e, *found))
        if not ok:
            st.rollback(mark)
            st.quiet = False
            counters["claim-lost"] += 1
            continue
        st.set(e, "frozen", True)  # decided already: not re-decided in this pass
        if pending:
            st.set(e, "deferred", True)
            claims[jid] = (job, alloc, pending)
        st.quiet = False

def remember_claims(claims: Claims, st: PassState, preempt: list[str], checkpointing: list[str]) -> None:
    """Jobs deferred in this pass for the checkpoint of jobs it (or an earlier pass) preempted
    (``checkpointing``: the jobs of the pass checkpointing already): their allocations become claims
    (:func:`keep_claims`)."""
    holders = {jid: set(st.peek(jid)[1].placement) for jid in (*preempt, *checkpointing)}
    if not holders:
        return
    for e in st.touched_entries():  # (a deferred entry was touched)
        if not e.deferred or e.preempted or e.g == 0 or e.jid in claims:
            continue
        ja = st.allocation(e)
        waits = frozenset(w for w, ms in holders.items() if w != e.jid and ms & set(ja.placement))
        if waits:
            claims[e.jid] = (e.job, ja, waits)


__all__ = ["Claims", "keep_claims", "remember_claims"]
