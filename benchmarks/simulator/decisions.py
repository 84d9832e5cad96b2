"""A policy's :class:`~scheduling.policy.Decision` checked and applied (:class:`DecisionsMixin`):
preemptions (with or without a checkpoint), starts and moves (released first, so that moves between jobs
fit; then allocated, restored or reconfigured), shares (:mod:`benchmarks.simulator.sharing`) and timers.
The verifier (:mod:`benchmarks.simulator.verifying`) sees every decision that places a job.

A decision that starts queued jobs and preempts running or restoring ones (no guests, no shares, timers
in the future: most decisions, every one of 2D-LAS and 2D-Gittins) skips ``_check_and_stop``: its checks
come to those in ``_apply`` and the verifier's, and ``_stop`` preempts. Duplicated for speed: a queued
job's ``_advance`` is inline in ``_apply``, a preempted one's in ``_stop`` (one call less per job).
"""

from __future__ import annotations

from schedlab.benchmarks.simulator.lifecycle import (  # the engine's enum constants, defined once
    _CHECKPOINTING,
    _E_PREEMPT,
    _E_RECONF,
    _E_TIMER,
    _QUEUED,
    _RESTORING,
    _RUNNING,
)
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import Decision
from schedlab.topology.errors import PolicyError


class DecisionsMixin:
    """The :class:`~benchmarks.simulator.engine.Simulator`'s ``_apply`` (module docstring)."""

    def _apply(self, d: Decision, t: float) -> None:
        if self._swap_pool is not None and self._apply_swap(d, t):
            return  # starts and preemptions on the one-machine pool (:mod:`benchmarks.simulator.swaps`)
        rts = self._rt
        start = d.start
        preempt = d.preempt
        # a decision that starts queued jobs and preempts running or restoring ones (no job a guest or a
        # host's guest to start, no shares; timers in the future): the checks of ``_check_and_stop`` come
        # to these and the verifier's, so it takes ``_stop``; any other decision, ``_check_and_stop``
        simple = not d.share
        if simple:
            for jid, ja in start.items():
                rt = rts.get(jid)
                if rt is None or rt.status is not _QUEUED or rt.host is not None or ja.job_id != jid:
                    simple = False
                    break
        if simple and preempt:
            for jid in preempt:
                rt = rts.get(jid)
                if rt is None or rt.host is not None or not (rt.status is _RUNNING or rt.status is _RESTORING):
                    simple = False
                    break
        if simple:
            for tm in d.timers:
                if not tm.at > t:
                    simple = False
                    break
        if simple:
            changes = start
            if start:
                self.verifier.verify(self.state, start, rts, released=preempt if self.costs.checkpoint_s == 0 else (),
                                     quotas=self.quotas, holding=self._holding, policy=self.policy_name, now=t)
            if preempt:
                self._stop(preempt, t)
        else:
            changes = self._check_and_stop(d, t)
        costs = self.costs
        segments = self._segments
        for jid, ja in changes.items():
            rt = rts[jid]
            was_queued = rt.status is _QUEUED
            if was_queued:  # (``_advance`` of a queued job, inline)
                dt = t - rt.t_mark
                if dt > 0:
                    rt.waited += dt
                rt.t_mark = t
            else:
                self._advance(rt, t)
            self._allocate(rt, ja)
            rt.last_change = t
            rt.last_start = t
            rt.version += 1
            if was_queued:
                del self._queue[jid]
                delay = costs.restore_s if rt.preemptions > 0 else 0.0
                if rt.first_start is None:
                    rt.first_start = t
            else:
                rt.reconfigurations += 1
                delay = costs.reconfigure_s
            if delay > 0:
                rt.status = _RESTORING
                rt.rate = 0.0
                self.events.push(t + delay, _E_RECONF, jid, rt.version)
            else:
                self._set_running(rt, t)
            if segments:
                self._open_segment(rt, t)
        for gid, sh in d.share.items():
            self._start_guest(rts[gid], rts[sh.host], sh.speed, t)
        for tm in d.timers:
            self.events.push(tm.at, _E_TIMER, None, tm.tag)

    def _stop(self, preempt: tuple[str, ...], t: float) -> None:
        """``_check_and_stop``'s preemptions, for jobs that are no guests and are already checked (running
        or restoring)."""
        rts = self._rt
        cp = self.costs.checkpoint_s
        segments = self._segments
        guests = self._guest
        push = self.events.push
        for jid in preempt:
            rt = rts[jid]
            if guests:
                self._unshare_host(jid, t)
            self._advance(rt, t)
            if segments:
                self._close_segment(rt, t)
            rt.preemptions += 1
            rt.version += 1
            rt.rate = 0.0
            rt.last_change = t
            if cp > 0:
                rt.status = _CHECKPOINTING
                if segments:
                    self._open_segment(rt, t)
                push(t + cp, _E_PREEMPT, jid, rt.version)
            else:
                self._release(rt)
                rt.status = _QUEUED
                rt.enqueued_at = t
                self._queue[jid] = rt

    def _check_and_stop(self, d: Decision, t: float) -> dict[str, JobAllocation]:
        """Any decision's checks (the verifier's included), then its preemptions and the releases of the
        jobs it moves: the allocations to start or move, in the decision's order."""
        name = self.policy_name
        rts = self._rt
        changes: dict[str, JobAllocation] = {}
        hosted = False  # a started job shares another's GPUs (an error, reported after the checks before it)
        for jid, ja in d.start.items():
            rt = rts.get(jid)
            if rt is None:
                raise PolicyError(f"policy {name!r} at t={t:g} s started unknown job {jid!r}")
            st = rt.status
            if st is _QUEUED or ((st is _RUNNING or st is _RESTORING) and rt.alloc != ja):
                if ja.job_id != jid:
                    raise PolicyError(f"policy {name!r} at t={t:g} s: start[{jid!r}] holds the allocation of "
                                      f"{ja.job_id!r}")
                changes[jid] = ja
            elif st is not _RUNNING and st is not _RESTORING:
                raise PolicyError(f"policy {name!r} at t={t:g} s started job {jid!r}, which is {st.value}")
            if rt.host is not None:
                hosted = True
        for jid in d.preempt:
            rt = rts.get(jid)
            if rt is None or not (rt.status is _RUNNING or rt.status is _RESTORING):
                what = "unknown" if rt is None else rt.status.value
                raise PolicyError(f"policy {name!r} at t={t:g} s preempted job {jid!r}, which is {what}")
            if jid in d.start:
                raise PolicyError(f"policy {name!r} at t={t:g} s both starts and preempts job {jid!r}")
        for tm in d.timers:
            if not tm.at > t:
                raise PolicyError(f"policy {name!r} at t={t:g} s asked for a timer at {tm.at:g}, not in the future")
        if d.share:
            self._check_shares(d, changes, t)
        for jid in d.start if hosted else ():
            if rts[jid].host is not None:
                raise PolicyError(f"policy {name!r} at t={t:g} s started job {jid!r}, which shares the GPUs of "
                                  f"{rts[jid].host!r} (preempt it first)")
        if changes:
            released = d.preempt if self.costs.checkpoint_s == 0 else ()
            self.verifier.verify(self.state, changes, rts, released=released, quotas=self.quotas,
                            holding=self._holding, policy=name, now=t)
        costs = self.costs
        for jid in d.preempt:
            rt = rts[jid]
            if rt.host is not None:
                self._suspend_guest(rt, t)
                continue
            self._unshare_host(jid, t)
            self._advance(rt, t)
            self._close_segment(rt, t)
            rt.preemptions += 1
            rt.version += 1
            rt.rate = 0.0
            rt.last_change = t
            if costs.checkpoint_s > 0:
                rt.status = _CHECKPOINTING
                self._open_segment(rt, t)
                self.events.push(t + costs.checkpoint_s, _E_PREEMPT, jid, rt.version)
            else:
                self._release(rt)
                rt.status = _QUEUED
                rt.enqueued_at = t
                self._queue[jid] = rt
        for jid in changes:  # release first, so that moves between jobs fit
            rt = rts[jid]
            if rt.status is not _QUEUED:
                self._unshare_host(jid, t)
                self._advance(rt, t)
                self._close_segment(rt, t)
                self._release(rt)
        return changes


__all__ = ["DecisionsMixin"]
