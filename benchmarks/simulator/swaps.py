"""The swap path (:class:`SwapMixin`): a decision that preempts running jobs and starts queued ones (either
part may be empty) on a one-machine pool with free preemption, applied with the per-job work of the
general path only.

The Tiresias artifact's ``gandiva`` (``--semantics tiresias``: the cluster is one pool, checkpoints,
restores and reconfigurations cost nothing, rates are the reference rates) time-slices over-subscribed
node sets every 60 s: at 5x arrivals nearly every pass preempts and restarts thousands of jobs, and a
restarted job brings back the very allocation object it last held. For such a decision this path does
what :meth:`~benchmarks.simulator.decisions.DecisionsMixin._apply` and its ``_check_and_stop`` do, in
the same order and with the same float operations (so the records are byte-identical), without the
calls per job that give nothing new here:

* the verifier's checks: a start whose allocation is the one the job last held (``rt.alloc is ja``)
  was verified when it was first applied, and on one machine its structure, gang, plan, memory and
  tier checks read only the job and the allocation; a new allocation goes through the verifier's own
  per-job checks (``DecisionVerifier._job_clean``). The capacity check is the verifier's, on the same
  numbers. Any doubt (a quota, a share, a job in another state, a failed check) returns ``False`` and
  the general path decides (and raises what it raises);
* the rate model's call: the reference rates are a function of the job and its GPU count, so a job
  restarted with the allocation it last held keeps the iteration time and communication fraction it
  had (``rt.iter_time``, ``rt.comm_frac`` are never cleared);
* the cluster state's free count: for GPU-only allocations held before, set once from the sums (the
  per-job placements are still kept one by one);
* the free index: on one machine the free count goes up by the preemptions, then down by the starts,
  and :meth:`FreeIndex._set <scheduling.free_index.FreeIndex._set>` of the top and of the final count
  leaves it as the per-job calls do (its bound is the maximum, its rack maximum unset when it fell).

Eligibility is decided once per simulator (one machine, zero costs, :class:`ReferenceRates`, no
quotas); the engine calls :meth:`_apply_swap` first for every decision there.
"""

from __future__ import annotations

from types import MappingProxyType

from schedlab.benchmarks.simulator.artifact import snap
from schedlab.benchmarks.simulator.lifecycle import _E_COMPLETION, _E_TIMER, _QUEUED, _RUNNING
from schedlab.benchmarks.simulator.rates import ReferenceRates
from schedlab.benchmarks.simulator.verifying import _MARGIN
from schedlab.scheduling.job import JobClass
from schedlab.scheduling.policy import Decision
from schedlab.scheduling.resources import _raw
from schedlab.topology.tiers import Tier

_GUARANTEED = JobClass.GUARANTEED
_MACHINE_LABEL = Tier.MACHINE.label

__all__ = ["SwapMixin"]


class SwapMixin:
    """The :class:`~benchmarks.simulator.engine.Simulator`'s swap path (module docstring)."""

    _swap_pool: str | None | bool = False  # the pool machine; None: not eligible; False: not decided yet
    swaps = 0                              # decisions applied on this path

    def _swap_machine(self) -> str | None:
        ms = self.cluster.machines
        c = self.costs
        if len(ms) != 1 or c.checkpoint_s != 0 or c.restore_s != 0 or c.reconfigure_s != 0 or self.quotas \
                or type(self.rates) is not ReferenceRates:
            return None
        return ms[0]

    def _apply_swap(self, d: Decision, t: float) -> bool:
        """Apply ``d`` as the general path would, if it is a swap on the pool; else ``False`` with nothing
        changed."""
        pool = self._swap_pool
        if pool is False:
            pool = self._swap_pool = self._swap_machine()
        if pool is None or d.share or self.shared:
            return False
        rts = self._rt
        start = d.start
        # ---- the checks (nothing changes until they all pass)
        ug = uc = 0
        um = 0.0
        fresh: list[str] | None = None
        for jid, ja in start.items():
            rt = rts.get(jid)
            if rt is None or rt.status is not _QUEUED or rt.host is not None:
                return False
            if rt.alloc is not ja:
                if ja.job_id != jid:
                    return False
                if fresh is None:
                    fresh = [jid]
                else:
                    fresh.append(jid)
                continue
            r = ja.placement[pool]
            ug += r.gpus
            uc += r.cpus
            um += r.mem_gb
        if fresh is not None:
            use: dict[str, list] = {}
            clean = self.verifier._job_clean
            for jid in fresh:
                if not clean(rts[jid].job, start[jid], use):
                    return False
            u = use.get(pool)
            if u is None or len(use) != 1:
                return False
            ug += u[0]
            uc += u[1]
            um += u[2]
        rg = rc = 0
        rm = 0.0
        for jid in d.preempt:
            rt = rts.get(jid)
            if rt is None or rt.status is not _RUNNING or rt.host is not None or jid in start:
                return False
            r = rt.alloc.placement.get(pool)
            if r is not None:
                rg += r.gpus
                rc += r.cpus
                rm += r.mem_gb
        for tm in d.timers:
            if not tm.at > t:
                return False
        if start:  # the verifier's capacity check (``DecisionVerifier._clean``), on the same numbers
            cap = self.verifier._m[pool]
            f = self._free_map[pool]
            g, c, mem = ug + cap[0] - f.gpus - rg, uc + cap[1] - f.cpus - rc, um + cap[2] - f.mem_gb - rm
            if g > cap[0] or c > cap[1] or mem > cap[2] - _MARGIN:
                return False
            self.verifier.fast += 1
        # ---- the preemptions (``_check_and_stop``: ``_advance``, segment, counts, ``_release``, re-queued)
        state = self.state
        holding, queue = self._holding, self._queue
        segments = self._segments
        # GPU-only allocations the jobs held before: the cluster state's per-job placements are kept one by
        # one and its free count once, as the sum of the per-job changes (integers; the CPUs and memory
        # stay as they are: every change adds or takes 0)
        bulk = fresh is None and not (rc or uc or rm or um)
        placements = state._placements
        for jid in d.preempt:
            rt = rts[jid]
            dt = t - rt.t_mark
            if dt > 0:  # (``_advance`` of a running job)
                rt.progress += rt.rate * dt
                rt.executed += dt
                gg = rt.gpus * dt
                rt.attained += gg
                rt.held += gg  # (not a guest: ``host`` is None)
                rt.comm += rt.comm_frac * dt
            rt.t_mark = t
            if segments:
                self._close_segment(rt, t)
            rt.preemptions += 1
            rt.version += 1
            rt.rate = 0.0
            rt.last_change = t
            if bulk:
                del placements[jid]
            else:
                state.release(jid)
            del holding[jid]
            rt.status = _QUEUED
            rt.enqueued_at = t
            queue[jid] = rt
        free = self._free_map
        if bulk and rg:
            f = free[pool]
            state._free[pool] = _raw(f.gpus + rg, f.cpus, f.mem_gb)
            state._free_gpus += rg
        idx_set = self.index._set
        idx_set(pool, free[pool].gpus)  # (after the releases: the top the per-job calls pass through)
        if start:
            # ---- the starts (``_apply``: waited, ``_allocate``, ``_set_running``), in the decision's order
            push = self.events.push
            snapped = self._snap
            fresh_set = set(fresh) if fresh is not None else ()
            for jid, ja in start.items():
                rt = rts[jid]
                dt = t - rt.t_mark
                if dt > 0:
                    rt.waited += dt
                rt.t_mark = t
                if jid in fresh_set:
                    self._allocate(rt, ja)  # (its own ``idx._set``: the same count as below at the end)
                else:
                    if bulk:
                        placements[jid] = MappingProxyType(dict(ja.placement))
                    else:
                        state.allocate(jid, ja.placement)
                    holding[jid] = rt
                    job = rt.job
                    if job.job_class is _GUARANTEED:
                        self.guarantee.observe(job, rt.iter_time)
                rt.last_change = t
                rt.last_start = t
                del queue[jid]
                if rt.first_start is None:
                    rt.first_start = t
                # (``_set_running``: no restore delay on the pool)
                rt.status = _RUNNING
                it = rt.iter_time
                rt.rate = 1.0 / it
                rt.version += 2  # (the start's and ``_set_running``'s)
                remaining = rt.job.iterations - rt.progress
                end = t + max(remaining, 0.0) * it
                if snapped:
                    end = snap(end)
                push(end, _E_COMPLETION, jid, rt.version)
                if segments:
                    self._open_segment(rt, t)
            if bulk:
                f = free[pool]
                state._free[pool] = _raw(f.gpus - ug, f.cpus, f.mem_gb)
                state._free_gpus -= ug
            idx_set(pool, free[pool].gpus)
        for tm in d.timers:
            self.events.push(tm.at, _E_TIMER, None, tm.tag)
        self.swaps += 1
        return True
