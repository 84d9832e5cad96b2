"""Algorithm 1's ``ScheduleJob`` of a Rubick pass: one job visits the machines, takes free units and units
of the jobs with the lowest loss while they are worth more to it, and commits (or undoes everything).

:class:`ScheduleJobSearch` is a mix-in of :class:`~schedlab.heuristics.rubick.policy.RubickPolicy` (split out
of it, issue 25 round 7): it reads the policy's lowest-loss queries (:class:`~.victims.VictimSearch`) and
its ``_signature`` (the failure memo's key of a queued job).
"""

from __future__ import annotations

from schedlab.heuristics.rubick.commit import EPS, best_plan, commit
from schedlab.heuristics.rubick.curves import is_offload
from schedlab.heuristics.rubick.state import CPU, GPU, Entry, PassState
from schedlab.perfmodel.curves import MIN_CPUS_PER_GPU


class ScheduleJobSearch:
    """``ScheduleJob`` and its unit takers (a mix-in of the Rubick policy)."""

    def schedule_job(self, st: PassState, e: Entry) -> bool:
        """Algorithm 1's ``ScheduleJob``; True if ``e`` got (or changed) an allocation."""
        jm = e.jm
        if not jm.elastic and e.running:
            return commit(st, e, [])  # fixed resources: only the plan may change (Rubick-E)
        # a queued job's ScheduleJob is a function of the pass state and of what it reads of the job
        # (its signature): one that failed leaves the state as it was, so another job with the same
        # signature fails too while the state has not changed (long queues of alike jobs at high load)
        fail_key = None if e.running else self._fail_key(e)
        if fail_key is not None and st.memo.get(fail_key) == st.version:
            return False
        mark = st.mark()
        victims: list[Entry] = []
        # whole-cluster shortcut: nothing free and no job would give it a GPU -> only its own machines
        # can matter (CPUs for a running job); most of a long queue on a full cluster stops here
        gpus_out = (not e.below_floor(GPU) and st.free_total[GPU] < jm.granule
                    and jm.gain_g(e.g) <= self._min_loss(st, e) + EPS)
        if gpus_out and not e.running:
            return False
        sat = jm.gpu.saturation(jm.cap)
        machines = list(e.units[GPU]) if gpus_out else self._machine_order(st, e)
        # machines where _take_gpus can do something in the current state (_active): the others are
        # passed over while the state is the one the loop's last stop test saw (most visits on a busy
        # cluster change nothing)
        act_at, act, tested = -1, None, -1
        below = True  # (e below its GPU floor at the last test; only a move, a new version, changes it)
        for m in machines:
            if tested == st.version and not below and act_at == tested and act is not None and m not in act:
                continue  # the skip below, decided without a call: nothing changed since the last machine
            if not gpus_out:
                if e.below_floor(GPU):
                    self._take_gpus(st, e, m, sat, victims)
                else:
                    if act_at != st.version:
                        act, act_at = self._active(st, e, sat), st.version
                    if act is None or m in act:
                        self._take_gpus(st, e, m, sat, victims)
                    elif tested == st.version:
                        continue  # nothing to take on m, nothing held on m, and the stop test failed on this state
            if e.on(GPU, m) and jm.elastic:
                self._take_cpus(st, e, m, victims)
            below = e.below_floor(GPU)
            if e.g >= jm.cap and not below and (not jm.elastic or not self._wants_cpu(e)):
                break
            tested = st.version
        if commit(st, e, victims):
            return True
        st.rollback(mark)
        if fail_key is not None:
            st.memo[fail_key] = st.version
        return False

    def _fail_key(self, e: Entry) -> tuple[str, int]:
        """The failure memo's key of queued ``e``: its signature (:meth:`_signature`) as a small number, kept
        per job while its model, floor and SLO are the ones it was made from (a signature holds a plan:
        hashing it on every try cost more than the try that the memo answers; both tables are cleared
        between passes only, by :meth:`RubickPolicy.schedule`, so that a pass's keys stay unique)."""
        sigs = self._sigs
        hit = sigs.get(e.jid)
        if hit is None or hit[0] is not e.jm or hit[1] != e.floor or hit[2] is not e.slo:
            sig = self._signature(e)
            ids = self._sig_ids
            n = ids.get(sig)
            if n is None:
                n = ids[sig] = len(ids)
            hit = sigs[e.jid] = (e.jm, e.floor, e.slo, ("fail", n))
        return hit[3]

    @staticmethod
    def _signature(e: Entry) -> tuple:
        """Everything ``ScheduleJob`` of a queued entry reads of it besides the pass state."""
        jm = e.jm
        job = jm.job
        return (job.model, job.global_batch, job.num_layers, job.requested, job.requested_plan, jm.mode, jm.known,
                jm.cap, jm.granule, jm.ref, jm.family, e.floor, e.slo, e.guaranteed)

    def _wants_cpu(self, e: Entry) -> bool:
        return e.below_floor(CPU) or e.jm.gain_c(e.g, e.c) > EPS

    def _take_gpus(self, st: PassState, e: Entry, m: str, sat: int, victims: list[Entry]) -> None:
        jm = e.jm
        gran = jm.granule
        want = min(max(e.floor[GPU], sat), jm.cap) - e.g
        k = min(st.free[GPU][m], max(want, 0))
        k -= k % gran
        if k > 0:
            st.move(GPU, m, None, e, k)
        skip: set[str] = set()
        while e.g < jm.cap or e.below_floor(GPU):
            need = e.below_floor(GPU)
            gain = jm.gain_g(e.g)
            if not need and gain <= EPS:
                return
            if not need:  # the machine's lowest loss, cached while nothing moves: most visits end here
                low, who = self._machine_low(st, m)
                if who != e.jid and low >= gain - EPS:
                    return
            v, penalised, loss = self._victim(st, e, GPU, m, need, skip)
            if v is None or not (need or loss < gain - EPS):
                return
            k = v.jm.granule
            if v.slo and not self._keeps_slo(v, GPU, m, k):
                skip.add(v.jid)
                continue
            if penalised and not v.doomed:
                st.set(v, "doomed", True)
            st.move(GPU, m, v, e, k)
            if v not in victims:
                victims.append(v)

    def _take_cpus(self, st: PassState, e: Entry, m: str, victims: list[Entry]) -> None:
        jm = e.jm
        skip: set[str] = set()
        while True:
            short = e.on(CPU, m) < e.on(GPU, m) * MIN_CPUS_PER_GPU
            need = short or e.below_floor(CPU)
            gain = jm.gain_c(e.g, e.c)
            if not need and gain <= EPS:
                return
            if st.free[CPU][m] > 0:
                s = jm.cpu(e.g)
                top = s.saturation(s.top) if s is not None else e.c
                k = max(top - e.c, e.floor[CPU] - e.c, e.on(GPU, m) * MIN_CPUS_PER_GPU - e.on(CPU, m), 1)
                st.move(CPU, m, None, e, min(k, st.free[CPU][m]))
                continue
            v, _, loss = self._victim(st, e, CPU, m, need, skip)
            if v is None or not (need or loss < gain - EPS):
                return
            if v.slo and is_offload(v.plan) and not self._keeps_slo(v, CPU, m, 1):
                skip.add(v.jid)
                continue
            st.move(CPU, m, v, e, 1)
            if v not in victims:
                victims.append(v)

    def _keeps_slo(self, v: Entry, r: int, m: str, k: int) -> bool:
        """Would guaranteed ``v`` still reach its SLO with ``k`` units of ``r`` less on ``m``?"""
        units = (dict(v.units[GPU]), dict(v.units[CPU]))
        units[r][m] -= k
        choice = best_plan(v, units[GPU], units[CPU])
        return choice is not None and choice[1].throughput >= v.jm.ref * (1 - EPS)


__all__ = ["ScheduleJobSearch"]
