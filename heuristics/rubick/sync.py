"""Bringing a Rubick pass's running jobs up to the view (issue 25, round 6): the records and resident
lists kept across passes (:class:`~schedlab.heuristics.rubick.resident.Residents`) updated by what
changed since the last pass, or by reading every running job, or the pass built from scratch.

:class:`ResidentSync` is a mix-in of :class:`~schedlab.heuristics.rubick.policy.RubickPolicy` (it reads the
policy's job-model cache, templates and entry builders). ``check_residents`` compares the kept state with
one rebuilt from scratch at every pass (tests).
"""

from __future__ import annotations

from schedlab.heuristics.rubick.resident import Residents
from schedlab.heuristics.rubick.state import GPU, Entry, PassState
from schedlab.scheduling.policy import ClusterView, JobStatus, JobView

_RUNNING, _RESTORING, _CHECKPOINTING = JobStatus.RUNNING, JobStatus.RESTORING, JobStatus.CHECKPOINTING


class ResidentSync:
    """The running jobs of a pass: kept across passes and synced, or rebuilt (a mix-in of RubickPolicy)."""

    incremental = True       # keep the running jobs' pass records across passes (:mod:`.resident`)
    check_residents = False  # compare them with records rebuilt from scratch at every pass (tests)

    def _rebuild(self, st: PassState, view: ClusterView) -> tuple[list[Entry], list[Entry], list[str]]:
        """Add every active job to ``st`` from scratch: (queued entries, running entries a pass may move,
        running jobs checkpointing)."""
        queued: list[Entry] = []
        movable: list[Entry] = []  # running jobs a pass may shrink, grow or re-plan
        seq = 0
        if len(self._placed) > 2 * view.running_count + 1024:
            self._placed = {}
        for jv in view.queue():
            if jv.status.holds_resources:
                self._running_entry(st, jv, view, seq)
                queued.append(st.entries[jv.id])
            else:
                queued.append(self._entry(st.entries, jv, view, seq))
            seq += 1
        checkpointing: list[str] = []
        for jv in view.running():
            status = jv.status
            if not status.holds_resources:
                self._entry(st.entries, jv, view, seq)
            else:
                if status is JobStatus.CHECKPOINTING:
                    checkpointing.append(jv.id)
                if self._running_entry(st, jv, view, seq, lazy=True):
                    e = st.entries[jv.id]
                    if not e.locked and not e.frozen:
                        movable.append(e)
            seq += 1
        return queued, movable, checkpointing

    def _sync_residents(self, view: ClusterView, res: Residents) -> tuple[list[str], list[Entry]] | None:
        """Bring the kept running jobs up to ``view``: by what changed since the last pass when that is
        known (:meth:`_sync_changes`), else by reading every running job (:meth:`_sync_all`)."""
        try:
            got = self._sync_changes(view, res)
        except KeyError:  # (a job the view does not know: read every job)
            got = None
        return got if got is not None else self._sync_all(view, res)

    def _sync_changes(self, view: ClusterView, res: Residents) -> tuple[list[str], list[Entry]] | None:
        """The kept running jobs brought up to ``view`` by what changed since the last pass, when the last
        pass was on the same view (the simulator's, which shows every change as an event) and the job
        model cache was not renewed since: the jobs the last decision started or preempted and the jobs
        of this pass's completions, checkpoint ends and restores. A job whose allocation changed is
        placed after the kept ones (the view lists a job by when it got its allocation; the jobs started
        in the decision's order). ``None`` (read every job) otherwise, or when the count of running jobs
        then disagrees with the view's."""
        last = res.synced
        if last is None or last[0] is not view or last[1] is not self._models:
            return None
        _, models, started, preempted = last
        hits, ckpt = res.hits, res.checkpointing
        for jid in [*preempted, *(ev.job_id for ev in view.events if ev.job_id is not None)]:
            jv = view.job(jid)
            status = jv.status
            hit = hits.get(jid)
            if hit is not None:
                res.touch(hit[4])
            if status is _CHECKPOINTING:
                hit = hits.get(jid)
                if hit is None or hit[0] is not jv.allocation:
                    return None
                ckpt[jid] = None
            elif status is _RUNNING or status is _RESTORING:
                ckpt.pop(jid, None)
            elif jid in hits:
                res.remove(jid)
        for jid in started:
            jv = view.job(jid)
            status = jv.status
            if status is not _RUNNING and status is not _RESTORING:
                if jv.allocation is not None and res.stale is not None:  # (started and done since)
                    res.stale.update(jv.allocation.placement)
                continue
            hit = hits.get(jid)
            known = models.get(jid)
            if known is None or known[0] is not jv.job:
                return None
            if hit is not None:
                if hit[0] is jv.allocation and hit[1] is known[1]:
                    continue
                res.remove(jid)
            res.add(jid, lambda seq, jv=jv, known=known: self._record(jv, known, seq))
        if len(hits) != view.running_count:
            return None
        return sorted(ckpt, key=res.seq), []

    def _sync_all(self, view: ClusterView, res: Residents) -> tuple[list[str], list[Entry]] | None:
        """Bring the running jobs kept across passes (``res``) up to ``view``: drop the jobs gone, add the
        new ones and those whose allocation or model changed (their records as :meth:`_running_entry`
        makes them). ``(jobs checkpointing, [])``, or ``None`` when a running job holds nothing (the
        pass is then built from scratch). When the view's order of the kept jobs is not the recorded one,
        or a new job comes before a kept one, the kept state is rebuilt in the view's order."""
        if len(self._placed) > 2 * view.running_count + 1024:
            self._placed = {}
        res.stale = None  # (every machine's free resources read again)
        res.forget_lows()
        models = self._models
        hits = res.hits
        jobs: list[tuple] = []
        checkpointing: list[str] = []
        first_fresh = -1
        fresh = 0
        for jv in view.running():
            job = jv.job
            jid = job.id
            status = jv.status
            if status is not _RUNNING and status is not _RESTORING:
                if status is not _CHECKPOINTING:
                    return None
                checkpointing.append(jid)
            known = models.get(jid)  # (job_model's cache hit, inline, as in _running_entry)
            if known is not None and known[0] is job:
                jm = known[1]
            else:
                jm, floor, slo = self.job_model(job, view)
                known = (job, jm, floor, slo)  # as job_model keeps it (it may have replaced its cache)
                models = self._models
            hit = hits.get(jid)
            if hit is None or hit[0] is not jv.allocation or hit[1] is not jm:
                if first_fresh < 0:
                    first_fresh = len(jobs)
                fresh += 1
            jobs.append((jid, jv, known))
        n = len(jobs)
        kept = n - fresh
        if fresh and first_fresh != kept:
            res.clear()  # a new or changed job before a kept one: rebuild
            kept = 0
        else:
            ids = [t[0] for t in jobs[:kept]]
            if len(hits) != kept or list(hits) != ids:
                gone = hits.keys() - set(ids)
                if [jid for jid in hits if jid not in gone] != ids:
                    res.clear()  # the kept jobs' order changed: rebuild
                    kept = 0
                else:
                    for jid in gone:
                        res.remove(jid)
        for jid, jv, known in jobs[kept:]:
            if jid in hits:
                res.remove(jid)
            res.add(jid, lambda seq, jv=jv, known=known: self._record(jv, known, seq))
        res.checkpointing.clear()
        res.checkpointing.update(dict.fromkeys(checkpointing))
        return checkpointing, []

    def _record(self, jv: JobView, known: tuple, seq: int) -> tuple[tuple, bool]:
        """``(record, movable)`` of a running job, as :meth:`_running_entry` makes them."""
        job, jm, floor, slo = known
        orig = jv.allocation
        hit = self._template(job.id, jm, orig)
        moves = hit[8]
        if moves:
            return (hit[9], job.id, False, jv, seq, floor, slo, hit), True
        g = hit[5]
        return (hit[9], job.id, g > 0 and g - jm.granule >= floor[GPU], jv, seq, floor, slo, hit), False

    def _check_residents(self, st: PassState, view: ClusterView, movable: list[Entry],
                         checkpointing: list[str]) -> None:
        """The kept state against a pass built from scratch (``check_residents``; tests): the same
        records (but ``seq``, in the same order), resident lists and movable entries."""
        ref = PassState(view, self._index[1], self._build)
        placed = self._placed
        _, ref_movable, ref_checkpointing = self._rebuild(ref, view)
        self._placed = placed
        assert checkpointing == ref_checkpointing, "checkpointing"
        assert (st.free, st.free_mem, st.free_total) == (ref.free, ref.free_mem, ref.free_total), "free"
        run = {jv.id for jv in view.running()}
        got = {jid: r for jid, r in st.lazy.items()}
        want = {jid: r for jid, r in ref.lazy.items() if jid in run}
        assert list(got) == list(want), "lazy jobs"
        for jid, r in got.items():
            w = want[jid]
            assert r[:4] + r[5:7] == w[:4] + w[5:7] and r[7][2:] == w[7][2:], jid
        order = sorted(got, key=lambda j: got[j][4])
        assert order == sorted(want, key=lambda j: want[j][4]), "seq order"
        for m in st.machines:
            assert list(st.on_machine[m]) == list(ref.on_machine[m]), m
        assert [e.jid for e in movable] == [e.jid for e in ref_movable], "movable"
        seqs = [e.seq for e in movable]
        assert seqs == sorted(seqs)


__all__ = ["ResidentSync"]
