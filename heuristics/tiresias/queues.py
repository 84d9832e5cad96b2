"""The multi-level queues of discretized 2D-LAS / 2D-Gittins, kept incrementally.

Each queue ``q`` holds its *waiting* jobs bucketed by GPU count, every bucket a sorted list of keys,
and its *running* jobs sorted by key. A key is ``(k0, band, stamp, job)``:

* ``k0`` = ``-G`` (the Gittins index, :mod:`.gittins`) in the Gittins queues, else 0;
* ``band`` 0 for a job that has run in this queue (ordered by ``stamp`` = when it first ran here:
  Tiresias' *FIFO by start time*), 1 for one that has not (ordered by when it entered the queue);
* ``stamp`` a counter, unique, increasing in the order of events.

So "the first waiting job of ``q`` with at most ``r`` GPUs" merges the heads of the buckets of size
``<= r`` (:meth:`MLFQ.walk`, a heap over at most as many buckets as distinct GPU counts): a pass costs
what it starts and preempts, not the number of queued or running jobs. ``held[q]`` is the GPUs held or
claimed by the queue's running and reserved jobs.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from collections.abc import Iterator

import numpy as np

WAIT, RESV, RUN, CKPT = 0, 1, 2, 3
STATE_NAMES = ("waiting", "reserved", "running", "checkpointing")


class QJob:
    """A job's place in the queues. ``svc0``/``exec0``: attained service and executed time at its last
    promotion (``a = attained - svc0``, ``t_J = executed - exec0``); ``wait0``: waiting time when it
    first ran after that (``δ_J = waiting - wait0``); ``ver`` invalidates its heap deadlines."""

    __slots__ = ("id", "job", "g", "q", "state", "band", "stamp", "k0", "ver", "svc0", "exec0", "wait0",
                 "pack_deadline", "pack_expired", "seq", "a_ref", "t_ref", "shape", "skew")

    def __init__(self, jid: str, job, seq: int) -> None:
        self.id = jid
        self.job = job
        self.g = job.requested.gpus
        self.q = 0
        self.state = WAIT
        self.band = 1
        self.stamp = 0
        self.k0 = 0.0
        self.ver = 0
        self.svc0 = 0.0
        self.exec0 = 0.0
        self.wait0: float | None = None
        self.pack_deadline: float | None = None
        self.pack_expired = False
        self.seq = seq
        self.a_ref = 0.0  # attained service when it last started running (Gittins victims' index)
        self.t_ref = 0.0
        self.shape: tuple | None = None  # what placement reads of the job (``TiresiasPolicy._place``)
        self.skew = 0.0  # its skew (set with ``shape``)

    @property
    def key(self) -> tuple:
        return (self.k0, self.band, self.stamp, self.id)


class RunArrays:
    """The running jobs of one queue as numpy columns (``a_ref``, ``t_ref``, GPUs, ``svc0``, stamp) with
    O(1) add / remove (swap with the last row), so a Gittins queue's indices are computed in numpy."""

    __slots__ = ("n", "cols", "jobs", "pos")

    def __init__(self) -> None:
        self.n = 0
        self.cols = np.zeros((5, 64))
        self.jobs: list[QJob] = []
        self.pos: dict[str, int] = {}

    def add(self, j: QJob) -> None:
        if self.n == self.cols.shape[1]:
            self.cols = np.concatenate([self.cols, np.zeros_like(self.cols)], axis=1)
        self.pos[j.id] = self.n
        self.jobs.append(j)
        self.n += 1
        self.refresh(j)

    def add_all(self, js: list[QJob]) -> None:
        """``add(j)`` for every ``j`` of ``js`` in order: the same rows (the same float64 values: each column
        built from the Python numbers as ``refresh`` stores them one by one)."""
        m = len(js)
        n = self.n
        while n + m > self.cols.shape[1]:
            self.cols = np.concatenate([self.cols, np.zeros_like(self.cols)], axis=1)
        pos = self.pos
        for i, j in enumerate(js, n):
            pos[j.id] = i
        self.jobs.extend(js)
        self.cols[:, n:n + m] = np.array([[j.a_ref for j in js], [j.t_ref for j in js], [j.g for j in js],
                                          [j.svc0 for j in js], [j.stamp for j in js]], dtype=float)
        self.n = n + m

    def refresh(self, j: QJob) -> None:
        # (one scalar store per column: the same float64 values as assigning the tuple to the column,
        # without building an array from it)
        c, i = self.cols, self.pos[j.id]
        c[0, i] = j.a_ref
        c[1, i] = j.t_ref
        c[2, i] = j.g
        c[3, i] = j.svc0
        c[4, i] = j.stamp

    def remove(self, j: QJob) -> None:
        i = self.pos.pop(j.id)
        last = self.n - 1
        if i != last:
            moved = self.jobs[last]
            self.jobs[i] = moved
            self.cols[:, i] = self.cols[:, last]
            self.pos[moved.id] = i
        self.jobs.pop()
        self.n -= 1

    def attained(self, now: float) -> np.ndarray:
        """``a_ref + GPUs x max(now - t_ref, 0) - svc0`` of every row."""
        c = self.cols[:, :self.n]
        return c[0] + c[2] * np.maximum(now - c[1], 0.0) - c[3]


class MLFQ:
    """``K`` queues of :class:`QJob` (see the module docstring)."""

    def __init__(self, k: int, *, arrays: bool = True) -> None:
        """``arrays``: keep the running jobs' numpy columns (:class:`RunArrays`, read by 2D-Gittins only;
        2D-LAS passes ``False`` and ``run_cols`` holds empty columns)."""
        self.k = k
        self.arrays = arrays
        self.jobs: dict[str, QJob] = {}
        self.wait: list[dict[int, list[tuple]]] = [dict() for _ in range(k)]
        self.run: list[list[tuple]] = [[] for _ in range(k)]
        self.resv: dict[str, None] = {}
        self.resv_q: list[dict[str, None]] = [dict() for _ in range(k)]  # ``resv`` by queue (victims)
        # ``resv`` sorted by ``(q, *key)``: a reserved job's queue and key do not change until it leaves
        self.resv_keys: list[tuple] = []
        self.held = [0] * k
        self.run_gpus = [0] * k  # GPUs of the running jobs of each queue (held = running + reserved)
        self.run_cols = [RunArrays() for _ in range(k)]
        self.ckpt_gpus = 0
        self.n_wait = 0
        self._stamp = 0

    def next_stamp(self) -> int:
        self._stamp += 1
        return self._stamp

    # ------------------------------------------------------------ membership
    def add_waiting(self, j: QJob) -> None:
        j.state = WAIT
        insort(self.wait[j.q].setdefault(j.g, []), j.key)
        self.n_wait += 1

    def add_waiting_all(self, js: list[QJob]) -> None:
        """``add_waiting(j)`` for every ``j`` of ``js`` (distinct jobs, none waiting): the same lists (keys
        are distinct, so a sort of a bucket with the new keys appended is the insorts' list), with one
        sort per bucket where many keys join it."""
        new: dict[tuple[int, int], list[tuple]] = {}
        for j in js:
            j.state = WAIT
            new.setdefault((j.q, j.g), []).append((j.k0, j.band, j.stamp, j.id))
        wait = self.wait
        for (q, g), keys in new.items():
            lst = wait[q].setdefault(g, [])
            if len(keys) * 8 > len(lst):
                lst.extend(keys)
                lst.sort()
            else:
                for k in keys:
                    insort(lst, k)
        self.n_wait += len(js)

    def remove_waiting(self, j: QJob) -> None:
        lst = self.wait[j.q][j.g]
        i = bisect_left(lst, j.key)
        del lst[i]
        self.n_wait -= 1
        if not lst:
            del self.wait[j.q][j.g]

    def add_running(self, j: QJob) -> None:
        j.state = RUN
        insort(self.run[j.q], j.key)
        self.held[j.q] += j.g
        self.run_gpus[j.q] += j.g
        if self.arrays:
            self.run_cols[j.q].add(j)

    def add_running_all(self, js: list[QJob]) -> None:
        """``add_running(j)`` for every ``j`` of ``js`` in order (distinct jobs, none running): the same
        sorted lists (distinct keys: one sort where many join a queue), the same :class:`RunArrays` rows in
        the same order (appended in one call per queue)."""
        by_q: dict[int, list[QJob]] = {}
        held, run_gpus = self.held, self.run_gpus
        for j in js:
            j.state = RUN
            by_q.setdefault(j.q, []).append(j)
            held[j.q] += j.g
            run_gpus[j.q] += j.g
        for q, lst in by_q.items():
            keys = [(j.k0, j.band, j.stamp, j.id) for j in lst]
            run = self.run[q]
            if len(keys) * 8 > len(run):
                run.extend(keys)
                run.sort()
            else:
                for k in keys:
                    insort(run, k)
            if self.arrays:
                self.run_cols[q].add_all(lst)

    def remove_running(self, j: QJob) -> None:
        lst = self.run[j.q]
        del lst[bisect_left(lst, j.key)]
        self.held[j.q] -= j.g
        self.run_gpus[j.q] -= j.g
        if self.arrays:
            self.run_cols[j.q].remove(j)

    def add_reserved(self, j: QJob) -> None:
        j.state = RESV
        self.resv[j.id] = None
        self.resv_q[j.q][j.id] = None  # (a reserved job's queue does not change until it leaves)
        insort(self.resv_keys, (j.q, j.k0, j.band, j.stamp, j.id))
        self.held[j.q] += j.g

    def remove_reserved(self, j: QJob) -> None:
        del self.resv[j.id]
        del self.resv_q[j.q][j.id]
        keys = self.resv_keys
        del keys[bisect_left(keys, (j.q, j.k0, j.band, j.stamp, j.id))]
        self.held[j.q] -= j.g

    def reserve_all(self, js: list[QJob]) -> None:
        """``remove_waiting(j)`` then ``add_reserved(j)`` for every ``j`` of ``js`` in order (waiting jobs
        with distinct ids): the same state, in bulk when there are many (one filter per waiting list and
        one sort of ``resv_keys``, whose keys are distinct, instead of a deletion and an insort each)."""
        if len(js) < 16:
            for j in js:
                self.remove_waiting(j)
                self.add_reserved(j)
            return
        out: dict[tuple[int, int], set[str]] = {}
        for j in js:
            out.setdefault((j.q, j.g), set()).add(j.id)
        wait = self.wait
        for (q, g), ids in out.items():
            lst = wait[q][g]
            lst[:] = [k for k in lst if k[3] not in ids]
            if not lst:
                del wait[q][g]
        self.n_wait -= len(js)
        resv, resv_q, held, keys = self.resv, self.resv_q, self.held, self.resv_keys
        for j in js:
            j.state = RESV
            resv[j.id] = None
            resv_q[j.q][j.id] = None
            keys.append((j.q, j.k0, j.band, j.stamp, j.id))
            held[j.q] += j.g
        keys.sort()

    def unreserve(self, j: QJob, gone: list[tuple]) -> None:
        """``remove_reserved(j)`` but for its key, appended to ``gone`` and left in ``resv_keys`` until
        :meth:`drop_keys` (a pass that starts many claims; nothing reads ``resv_keys`` in between)."""
        del self.resv[j.id]
        del self.resv_q[j.q][j.id]
        gone.append((j.q, j.k0, j.band, j.stamp, j.id))
        self.held[j.q] -= j.g

    def drop_keys(self, gone: list[tuple]) -> None:
        """``resv_keys`` without the keys of ``gone`` (a deletion each when few, else one filter)."""
        keys = self.resv_keys
        if len(gone) < 16:
            for k in gone:
                del keys[bisect_left(keys, k)]
        else:
            ids = {k[4] for k in gone}
            keys[:] = [k for k in keys if k[4] not in ids]

    def reserved_in_order(self) -> list[QJob]:
        """Reserved jobs by ``(q, key)``: queues from Q1 down, each in key order."""
        jobs = self.jobs
        return [jobs[key[4]] for key in self.resv_keys]

    def detach(self, j: QJob) -> None:
        """Take ``j`` out of whatever structure holds it."""
        if j.state == WAIT:
            self.remove_waiting(j)
        elif j.state == RUN:
            self.remove_running(j)
        elif j.state == RESV:
            self.remove_reserved(j)
        else:
            self.ckpt_gpus -= j.g
        j.ver += 1

    # --------------------------------------------------------------- queries
    def below(self, q: int) -> int:
        return sum(self.held[q + 1:])

    def walk(self, q: int, cap: list[int]) -> Iterator[tuple[int, int, tuple]]:
        """Waiting jobs of queue ``q`` with at most ``cap[0]`` GPUs, in key order, as ``(size, index, key)``.
        The caller may lower ``cap[0]`` as it goes (never raise it): buckets above it are dropped
        without being read. The buckets must not change during the walk."""
        buckets = self.wait[q]
        heap = [(lst[0], s, 0) for s, lst in buckets.items() if s <= cap[0]]
        heapq.heapify(heap)
        while heap:
            key, s, i = heapq.heappop(heap)
            if s > cap[0]:
                continue
            yield s, i, key
            if i + 1 < len(buckets[s]) and s <= cap[0]:
                heapq.heappush(heap, (buckets[s][i + 1], s, i + 1))

    def victims(self, q_from: int, order_running) -> Iterator[QJob]:
        """Jobs holding or claiming GPUs in queues ``> q_from``, lowest priority first: per queue from the
        last, reserved ones first (latest key first), then running ones in ``order_running(q)`` order."""
        keys, jobs = self.resv_keys, self.jobs
        for q in range(self.k - 1, q_from, -1):
            if self.resv_q[q]:  # queue q's block of ``resv_keys``, last first (read lazily: the caller
                # takes the victims it needs and changes the queues only once it stopped reading)
                lo, hi = bisect_left(keys, (q,)), bisect_left(keys, (q + 1,))
                for i in range(hi - 1, lo - 1, -1):
                    yield jobs[keys[i][4]]
            yield from order_running(q)


def drop_stale(heap: list[tuple], jobs: dict[str, QJob], state: int) -> None:
    """Keep only the valid entries ``(t, ver, job)`` of a deadline heap (the job still there, at that version,
    in ``state``), re-heapified: the valid entries then pop in the same order (tuples, totally ordered)."""
    keep = []
    for e in heap:
        j = jobs.get(e[2])
        if j is not None and j.ver == e[1] and j.state == state:
            keep.append(e)
    heapq.heapify(keep)
    heap[:] = keep


__all__ = ["CKPT", "MLFQ", "QJob", "RESV", "RUN", "STATE_NAMES", "WAIT", "RunArrays", "drop_stale"]
