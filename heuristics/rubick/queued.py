"""The queued jobs of a Rubick pass without an entry per job (issue 25, round 8).

A pass used to build an :class:`~schedlab.heuristics.rubick.state.Entry` for every queued job, sort them all
by slope and call ``ScheduleJob`` on each, most of which the failure memo then answered at once (at 5x
arrivals on the Philly table the queue holds hundreds of rigid jobs of a few dozen kinds, and the cluster
is full). :class:`QueuedPass` reads the queue once per pass into plain rows (the job's model, floor, SLO
and sort key, kept per job while its model is the same), asks the failure memo before building anything,
and builds a queued job's entry only when it is tried or read (``PassState.entries`` builds it on first
read, as it does for the running jobs). The order, the memo's keys and every ``ScheduleJob`` are the
plain pass's (:meth:`~schedlab.heuristics.rubick.policy.RubickPolicy._plain_pass`, still used when the pass
is rebuilt from every job; ``tests/heuristics/test_rubick_queued.py`` compares the two replays).

:class:`QueuedPass` is a mix-in of :class:`~schedlab.heuristics.rubick.policy.RubickPolicy`.
"""

from __future__ import annotations

from schedlab.heuristics.rubick.commit import EPS
from schedlab.heuristics.rubick.state import GPU, Entry, PassState
from schedlab.perfmodel.curves import MIN_CPUS_PER_GPU
from schedlab.scheduling.policy import ClusterView


class QueueScan:
    """One pass's reading of the queue: the rows of the queued jobs (for lazily built entries), the
    guaranteed jobs in queue order, the starving and the other best-effort jobs with their sort keys, and
    the next starvation time after ``now`` (the starvation timer's candidate)."""

    __slots__ = ("records", "guaranteed", "starving", "others", "next_starving")

    def __init__(self) -> None:
        self.records: dict[str, tuple] = {}
        self.guaranteed: list[str] = []
        self.starving: list[tuple] = []
        self.others: list[tuple] = []
        self.next_starving: float | None = None


class QueuedPass:
    """The queued part of a Rubick pass, read once and tried in slope order (a mix-in of RubickPolicy)."""

    def _scan_queue(self, view: ClusterView) -> QueueScan | None:
        """Read the queue (``None`` if a queued job holds resources: the pass is then rebuilt). The job
        models are asked in queue order, as the plain pass's entries do (the model cache and its counters
        see the same calls)."""
        scan = QueueScan()
        records, guaranteed, starving, others = scan.records, scan.guaranteed, scan.starving, scan.others
        models, kinds = self._models, self._kinds
        s = self.starvation_s
        now = view.now
        nxt = None
        seq = 0
        for jv in view.queue():
            if jv.status.holds_resources:
                return None
            job = jv.job
            jid = job.id
            known = models.get(jid)  # (job_model's cache hit, inline)
            if known is not None and known[0] is job:
                _, jm, floor, slo = known
            else:
                jm, floor, slo = self.job_model(job, view)
                models = self._models
            kind = kinds.get(jid)
            if kind is None or kind[0] is not jm:
                kind = kinds[jid] = (jm, -jm.gain_g(0), -jm.gain_c(0, 0), _starving_floor(jm))
            if job.guaranteed:
                records[jid] = (jv, jm, floor, slo, seq, False)
                guaranteed.append(jid)
            else:
                since = jv.queued_since
                if s is not None and now - since >= s:
                    floor = kind[3]
                    records[jid] = (jv, jm, floor, slo, seq, True)
                    starving.append((since, seq, jid, jm, floor, slo))
                else:
                    records[jid] = (jv, jm, floor, slo, seq, False)
                    others.append((kind[1], kind[2], seq, jid, jm, floor, slo))
                if s is not None:
                    t = since + s
                    if t > now and (nxt is None or t < nxt):
                        nxt = t
            seq += 1
        if len(kinds) > 4 * (view.queue_length + view.running_count) + 1024:
            self._kinds = {}
        scan.next_starving = nxt
        return scan

    def _queued_entry(self, record: tuple) -> Entry:
        """A queued job's entry from its row, as :meth:`RubickPolicy._entry` builds it."""
        jv, jm, floor, slo, seq, starving = record
        e = Entry(jv.id, jv, jm, seq, None, ({}, {}), [0, 0], {}, None, 0.0, floor, False, False, slo,
                  jm.job.guaranteed)
        e.starving = starving
        return e

    def _queued_pass(self, st: PassState, view: ClusterView, scan: QueueScan, movable: list[Entry],
                     ledger) -> None:
        """Steps 1 and 2 of the pass (the plain pass's loops) on the scanned queue: a queued job's entry is
        built only if it is read; one whose failure memo answers (the same key failed on this state) is
        passed over without it, as ``ScheduleJob`` would return at once."""
        entries = st.entries
        if ledger is not None:
            gs = [entries[jid] for jid in scan.guaranteed]
            for e in gs:
                if e.frozen:
                    ledger.take(e.job)  # a claim holds its quota while it waits
            for e in gs:  # 1. privileged: guaranteed jobs within their tenant's remaining quota
                if not e.frozen and ledger.fits(e.job) and self.schedule_job(st, e):
                    ledger.charge(e.job)
        built = dict.get
        starving = [row for row in scan.starving if (v := built(entries, row[2])) is None or not v.frozen]
        others = [row for row in scan.others if (v := built(entries, row[3])) is None or not v.frozen]
        for e in movable:
            if not e.frozen:
                others.append((-e.jm.gain_g(e.g), -e.jm.gain_c(e.g, e.c), e.seq, e))
        starving.sort()  # (queued since, seq), as the plain pass sorts them
        others.sort()  # (the seqs are distinct: the rows' tails are never compared)
        sigs, memo, free_total = self._sigs, st.memo, st.free_total
        for rows, at in ((starving, 2), (others, 3)):  # 2. SortBySlope(best-effort + running)
            for row in rows:
                x = row[at]
                if x.__class__ is str and not dict.__contains__(entries, x):
                    # ScheduleJob's first two tests on the entry it would build (holding nothing): the failure
                    # memo, then the whole-cluster shortcut (nothing free, no job would give it a GPU)
                    jm, floor, slo = row[at + 1:]
                    hit = sigs.get(x)
                    if (hit is not None and hit[0] is jm and hit[1] == floor and hit[2] is slo
                            and memo.get(hit[3]) == st.version):
                        continue
                    if (floor[GPU] <= 0 and free_total[GPU] < jm.granule
                            and jm.gain_g(0) <= self._min_loss_of(st, x) + EPS):
                        continue
                    x = entries[x]
                elif x.__class__ is str:
                    x = entries[x]
                self.schedule_job(st, x)


def _starving_floor(jm) -> tuple[int, int]:
    """A starving best-effort job's floor (:meth:`RubickPolicy._entry`'s)."""
    amounts = jm.valid_amounts(jm.cap)
    g = amounts[-1] if amounts else jm.job.requested.gpus
    return (g, g * MIN_CPUS_PER_GPU if jm.elastic else 0)


__all__ = ["QueueScan", "QueuedPass"]
