"""GPU sharing in the simulator (:class:`~scheduling.policy.Share`): a queued *guest* job runs on the GPUs
of a running *host* job, holding no resources of its own, at ``speed`` x its rate on them.

The verifier's contract is unchanged (it places only jobs that hold resources; a guest never does):
the simulator checks a decision's shares (guest queued, host running or starting in the same decision
and holding at least the guest's GPUs, one guest per host, ``0 < speed <= 1``), starts guests after the
decision's starts, and suspends a guest (re-queued, progress kept, a preemption counted, no checkpoint)
when its host finishes, is preempted or moves, or when the policy preempts it. A guest's GPU-seconds
are not counted as held (the host holds them); its segments are recorded on the host's GPUs.
"""

from __future__ import annotations

from collections.abc import Mapping

from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import Decision, JobRuntime, JobStatus
from schedlab.scheduling.resources import Resources
from schedlab.topology.errors import PolicyError

_QUEUED = JobStatus.QUEUED
_RUNNING = JobStatus.RUNNING


class SharingMixin:
    """The :class:`~benchmarks.simulator.engine.Simulator`'s sharing methods (module docstring); they use
    its ``_rt``, ``_queue``, ``_guest`` (host -> guest), ``rates`` and event helpers."""

    def _check_shares(self, d: Decision, changes: Mapping[str, JobAllocation], t: float) -> None:
        name = self.policy_name
        hosts: set[str] = set()
        for gid, sh in d.share.items():
            rt, host = self._rt.get(gid), self._rt.get(sh.host)
            where = f"policy {name!r} at t={t:g} s shares job {gid!r} on {sh.host!r}"
            if rt is None or rt.status is not _QUEUED or gid in d.start:
                raise PolicyError(f"{where}: the guest is not a queued job")
            starting = sh.host in changes and host is not None and host.status is _QUEUED
            if host is None or not (host.status is _RUNNING or starting) or host.host is not None:
                raise PolicyError(f"{where}: the host is not a running job holding its own GPUs")
            if sh.host in d.preempt or (sh.host in changes and not starting) or sh.host in self._guest \
                    or sh.host in hosts:
                raise PolicyError(f"{where}: the host is preempted, moved, or already shared")
            if not 0.0 < sh.speed <= 1.0:
                raise PolicyError(f"{where}: speed {sh.speed!r} not in (0, 1]")
            held = changes[sh.host].gpus if starting else host.gpus
            if rt.job.requested.gpus > held:
                raise PolicyError(f"{where}: the guest asks for {rt.job.requested.gpus} GPUs, the host holds "
                                  f"{held}")
            hosts.add(sh.host)

    def _start_guest(self, rt: JobRuntime, host: JobRuntime, speed: float, t: float) -> None:
        """``rt`` runs on ``host``'s GPUs at ``speed`` x its rate there (see ``scheduling.policy.Share``)."""
        if host.status is not _RUNNING:
            raise PolicyError(f"policy {self.policy_name!r} at t={t:g} s shares job {rt.job.id!r} on "
                              f"{host.job.id!r}, which is restoring, not running")
        self._advance(rt, t)
        del self._queue[rt.job.id]
        left, placement = rt.job.requested.gpus, {}
        for m, r in host.alloc.placement.items():
            k = min(r.gpus, left)
            if k > 0:
                placement[m] = Resources(k)
                left -= k
        ja = JobAllocation(rt.job.id, rt.job.requested_plan, placement)
        it, rt.comm_frac = self.rates.speed(rt.job, ja.plan, placement)
        rt.iter_time = it / speed
        rt.alloc, rt.gpus, rt.host = ja, ja.gpus, host.job.id
        self._guest[host.job.id] = rt.job.id
        rt.last_change = rt.last_start = t
        if rt.first_start is None:
            rt.first_start = t
        self.shared += 1
        self._set_running(rt, t)  # no restore: the opportunistic job's state stays in host memory (AntMan)
        self._open_segment(rt, t)

    def _suspend_guest(self, rt: JobRuntime, t: float) -> None:
        self._advance(rt, t)
        self._close_segment(rt, t)
        del self._guest[rt.host]
        rt.host = None
        rt.preemptions += 1
        rt.version += 1
        rt.rate = 0.0
        rt.last_change = t
        rt.status = _QUEUED
        rt.enqueued_at = t
        self._queue[rt.job.id] = rt
        self.unshared += 1

    def _unshare_host(self, host_id: str, t: float) -> None:
        gid = self._guest.get(host_id)
        if gid is not None:
            self._suspend_guest(self._rt[gid], t)


__all__ = ["SharingMixin"]
