"""``gandiva``: the Tiresias artifact's ``gandiva`` scheduler (the Gandiva the Tiresias paper compared with).

The artifact's loop (:mod:`.gandiva_sets`, ``../shared/docs/gandiva-reference.md``) runs inside the
policy on its own clock: a step at ``T' = min(T + 10, next arrival)``; the jobs that gain time in
``(T, T']`` are the first ``min(jobs, C)`` of every node set after the adjust of ``T'``, which depends
only on the state after ``T``, so they are known at ``T``. The policy runs exactly those jobs in the
simulator (GPU time-slicing of an over-subscribed set = suspending the jobs past ``C``; free under
``tiresias`` semantics), with one rendering rule: the artifact logs a job's end at the first step at
or after its work is done, so a job with ``r <= T' - T`` seconds left runs in ``[T' - r, T')`` and ends
at ``T'`` as there (its set keeps its GPUs meanwhile, so nothing else changes). ``T'`` needs the next
arrival, which the simulator gives only under ``tiresias`` semantics (``ClusterView.next_arrival``).

Speed: a step that returns the state unchanged (no arrival, end or rotation) is repeated until the
next end or rotation, so those steps are credited at once instead of one by one. On the one-machine
pool (``tiresias`` semantics: instant preemption, GPU-only requests) the jobs a rotation starts are
counted in GPUs and each job's allocation is built once (:meth:`ArtifactGandiva._start_pooled`). A
step where no executing job can end credits them all at once (:meth:`GandivaSets.slice` with
``running``). The simulator applies these decisions on its swap path (``benchmarks/simulator/swaps.py``).

Under other semantics use ``gandiva-like`` (:mod:`.gandiva`): this policy is the artifact, whose
machines are GPU counts and whose jobs never slow down.
"""

from __future__ import annotations

import math
from itertools import compress, filterfalse, repeat
from operator import le, sub

from schedlab.heuristics.baselines.gandiva_sets import GandivaSets
from schedlab.heuristics.tiresias.artifact import whole
from schedlab.heuristics.tiresias.placement import JobTraits, Starter
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import JobAllocation
from schedlab.scheduling.policy import NO_DECISION, ClusterView, Decision, EventKind, JobStatus, Timer
from schedlab.scheduling.registry import PolicyParams, paper
from schedlab.scheduling.snapshot import PolicyBase
from schedlab.topology.errors import SpecError


class ArtifactGandivaParams(PolicyParams):
    step_s: int = paper(10, ge=1, description="the artifact's loop step (seconds)")
    quantum_s: int = paper(60, ge=1, description="an over-subscribed set rotates at steps whose clock is a "
                                                 "multiple of this (seconds)")


class ArtifactGandiva(PolicyBase):
    """See the module docstring."""

    oracle = False
    semantics_only = "tiresias"  # the artifact's view of the cluster (the conformance suite reads it)

    def __init__(self, *, seed: int = 0, step_s: int = 10, quantum_s: int = 60, name: str = "gandiva") -> None:
        super().__init__(seed=seed)
        self.name = name
        self.step_s = step_s
        self.quantum_s = quantum_s
        self.starter = Starter(JobTraits())
        self._view: ClusterView | None = None
        self.sets: GandivaSets | None = None
        self.steps = 0
        self.skipped = 0

    # ------------------------------------------------------------ setup
    def _init(self, view: ClusterView) -> None:
        if view.semantics != "tiresias" or view.next_arrival is None:
            raise SpecError(f"policy 'gandiva' is the Tiresias artifact's scheduler and runs under --semantics "
                            f"tiresias only (got {view.semantics!r}); 'gandiva-like' is the realistic one",
                            source="<gandiva>", field="semantics")
        gpn = set(view.machine_gpus)
        if len(gpn) != 1:
            raise SpecError(f"the artifact's gandiva needs machines of one size; got GPUs per machine {sorted(gpn)}",
                            source="<gandiva>", field="cluster")
        self._view = view
        self.sets = GandivaSets(gpn.pop(), len(view.machine_gpus), quantum_s=self.quantum_s)
        self.t: int | None = None
        self.steady = False
        self._exec: list[str] | None = None   # s.executing() since the sets last changed (read-only)
        self._over: bool | None = None        # s.oversubscribed() since then
        self._least: float | None = None      # the least seconds left of an executing job (inf: none)
        self._sig: tuple | None = None        # s.signature() since then, if taken
        self._asked: set[int] = set()
        # the simulator's holding jobs in its order (its running view, kept from this policy's decisions
        # and the completions), and the executing list the last decision ran (held == set of it after it)
        self._held: dict[str, None] = {jv.id: None for jv in view.running()}
        self._last_run: list[str] | None = None
        self.steps = self.skipped = 0
        # the one-machine pool with instant preemption (``tiresias`` semantics): starts counted in GPUs,
        # each job's allocation built once (:meth:`_start_pooled`)
        ms = view.cluster.machines
        self._pool: str | None = ms[0] if len(ms) == 1 and view.checkpoint_s == 0 else None
        self._allocs: dict[str, tuple[JobAllocation, int]] = {}
        self._plans: dict[int, ExecutionPlan] = {}

    # ------------------------------------------------------------- pass
    def schedule(self, view: ClusterView) -> Decision:
        if view is not self._view:
            self._init(view)
        s = self.sets
        assert s is not None
        now = whole(view.now)
        held = self._held
        for e in view.events:
            if e.kind is EventKind.COMPLETION and e.job_id in held:
                del held[e.job_id]
                self._allocs.pop(e.job_id, None)
                self._last_run = None
        if self.t is not None and self.t > now:
            return NO_DECISION  # the loop already ran ahead to a step where the simulator must change
        arrivals = [e.job_id for e in view.events if e.kind is EventKind.ARRIVAL]
        for jid in arrivals:
            job = view.job(jid).job
            d = job.duration if job.duration is not None else job.iterations * float(job.attrs["iter_time"])
            s.add(jid, job.requested.gpus, whole(d))
        self._advance(now, arrivals)
        return self._render(view, now)

    def _advance(self, now: int, arrivals: list[str]) -> None:
        s, step = self.sets, self.step_s
        assert s is not None
        if self.t is None:
            if arrivals:
                self._step(now, 0, arrivals)
            return
        todo: list[str] | None = arrivals
        while self.t + step <= now:
            nxt = self.t + step
            if nxt == now:
                self._step(now, step, todo or [])
                todo = None
                break
            n = self._skippable(now) if self.steady else 0
            if n > 0:
                for jid in self._executing():
                    s.executed[jid] += n * step
                self._credited(n * step)
                self.t += n * step
                self.skipped += n
            else:
                self._step(nxt, step, [])
        if todo and self.t < now:
            self._step(now, now - self.t, todo)

    def _step(self, t: int, dt: int, arrivals: list[str]) -> None:
        """One artifact step at ``t``, then the next step's adjust (so the jobs it credits are known)."""
        s = self.sets
        assert s is not None
        before = None
        if not arrivals:  # (the signature after the last step, if it was taken: nothing changed the sets since)
            before = self._sig if self._sig is not None else s.signature()
        rot = s.rotations
        running = None
        if self.t is not None and dt > 0 and self._least_left() > dt:
            running = self._executing()  # (what the slice credits: no job of it ends)
        ended = s.step(t, dt, arrivals, adjusted=self.t is not None, running=running)
        s.adjust()
        self._exec = self._over = self._least = self._sig = None  # (the only place this policy changes the sets)
        self.t = t
        self.steps += 1
        self.steady = False
        if before is not None and not ended and s.rotations == rot:
            self._sig = s.signature()
            self.steady = self._sig == before

    def _executing(self) -> list[str]:
        """``sets.executing()``, computed once per change of the sets (steps and adjusts, all in
        :meth:`_step`); callers only read it."""
        if self._exec is None:
            assert self.sets is not None
            self._exec = self.sets.executing()
        return self._exec

    def _least_left(self) -> float:
        """``min(duration - executed)`` over the executing jobs (``inf`` if none), kept with ``_exec``."""
        if self._least is None:
            s = self.sets
            assert s is not None
            run = self._executing()
            self._least = min(map(sub, map(s.duration.__getitem__, run), map(s.executed.__getitem__, run)),
                              default=math.inf)
        return self._least

    def _credited(self, dt: int) -> None:
        """Every executing job gained ``dt`` seconds (a steady run credited at once)."""
        if self._least is not None:
            self._least -= dt

    def _oversubscribed(self) -> bool:
        if self._over is None:
            assert self.sets is not None
            self._over = self.sets.oversubscribed()
        return self._over

    def _ends_in(self) -> int:
        """Steps until the first executing job ends (``ceil(left / step)``, at least 1)."""
        left = self._least_left()
        return math.inf if left == math.inf else max(1, -(-int(left) // self.step_s))

    def _rotates_in(self) -> float:
        """Steps until the next step whose clock is a multiple of the quantum, if a set is over-subscribed."""
        s = self.sets
        assert s is not None and self.t is not None
        if not self._oversubscribed():
            return math.inf
        return next((k for k in range(1, self.quantum_s + 1) if (self.t + k * self.step_s) % self.quantum_s == 0),
                    math.inf)

    def _skippable(self, now: int) -> int:
        """Steady steps before ``now`` that neither end a job nor rotate (they only credit time)."""
        assert self.t is not None
        n = min(self._ends_in() - 1, self._rotates_in() - 1, (now - self.t - 1) // self.step_s)
        return max(int(n), 0)

    # ----------------------------------------------------------- render
    def _tail(self, t_next: int) -> bool:
        """Whether a job of the executing set ends at the step ``t_next``."""
        assert self.t is not None
        return self._least_left() <= t_next - self.t

    def _run_ahead(self, arrival: float) -> None:
        """Steps before the next arrival that change nothing the simulator sees (same executing set, no
        job ending): done now. Steady runs of them are credited at once."""
        s, step = self.sets, self.step_s
        assert s is not None and self.t is not None
        first = self._executing()
        same = set(first)
        while self.t + step < arrival and not self._tail(self.t + step):
            if self.steady:
                n = min(self._ends_in() - 1, self._rotates_in() - 1, (arrival - self.t - 1) // step - 1)
                if n == math.inf:
                    return  # nothing will ever change
                if n > 0:
                    for jid in first:
                        s.executed[jid] += int(n) * step
                    self._credited(int(n) * step)
                    self.t += int(n) * step
                    self.skipped += int(n)
                    continue
            self._step(self.t + step, step, [])
            now_exec = self._executing()
            if now_exec != first and set(now_exec) != same:  # (an equal list is an equal set: no set built)
                return

    def _render(self, view: ClusterView, now: int) -> Decision:
        s = self.sets
        assert s is not None and view.next_arrival is not None
        run: list[str] = []
        wake: set[int] = set()
        arrival = view.next_arrival()
        if self.t is not None and s.active:
            if self.t == now:
                run = self._executing()
                self._run_ahead(arrival)
                if self.t > now:  # ``run`` holds until then
                    wake.add(self.t)
            if self.t <= now:
                t_next = min(self.t + self.step_s, arrival)
                if self._least_left() > t_next - self.t:
                    run = self._executing()  # no job ends at ``t_next``
                else:
                    ex = self._executing()
                    dur, done = s.duration, s.executed
                    late: set[str] = set()
                    lefts = map(sub, map(dur.__getitem__, ex), map(done.__getitem__, ex))
                    for jid in compress(ex, map(le, lefts, repeat(t_next - self.t))):  # (the jobs ending at t_next)
                        begin = t_next - (dur[jid] - done[jid])
                        if now < begin:
                            wake.add(int(begin))  # its last seconds run so that it ends on the artifact's step
                            late.add(jid)
                    run = list(filterfalse(late.__contains__, ex))
                if t_next < arrival and not (self.steady and self._ends_in() == self._rotates_in() == math.inf):
                    wake.add(int(t_next))  # else the arrival wakes it, or nothing will change
        holding = self._held  # ordered: the preemptions' order is deterministic
        starts: dict[str, JobAllocation] = {}
        if run is self._last_run:  # the same executing list, nothing ended since: the simulator runs it
            preempt: tuple[str, ...] = ()
        else:
            preempt = tuple(filterfalse(set(run).__contains__, holding))
        if run and len(holding) - len(preempt) < len(run):  # (held minus preempted = held and wanted)
            if self._pool is None or not self._start_pooled(view, now, run, holding, preempt, starts):
                ps = self.starter.pass_state(view, preempt)
                for jid in run:
                    if jid in holding:
                        continue
                    ja = self.starter.start(view, ps, self._startable(view, jid, now).job, consolidate=True)
                    if ja is None:
                        raise RuntimeError(f"gandiva: no room for job {jid!r} in the pool at t={now}")
                    starts[jid] = ja
        for jid in preempt:
            del holding[jid]
        for jid in starts:
            holding[jid] = None
        self._last_run = run
        self._asked = {t for t in self._asked if t > now}
        timers = tuple(Timer(float(t), "gandiva-step") for t in sorted(wake - self._asked) if t > now)
        self._asked.update(t for t in wake if t > now)
        return Decision(start=starts, preempt=preempt, timers=timers)

    @staticmethod
    def _startable(view: ClusterView, jid: str, now: int):
        jv = view.job(jid)
        if jv.status is JobStatus.FINISHED:
            raise RuntimeError(f"gandiva: job {jid!r} finished in the simulator before the artifact's "
                               f"step ended it (t={now})")
        return jv

    def _start_pooled(self, view: ClusterView, now: int, run: list[str], holding: dict[str, None],
                      preempt: tuple[str, ...], starts: dict[str, JobAllocation]) -> bool:
        """The starts of ``run`` on the one-machine pool as :class:`Starter` places them there (``place_pool``:
        the whole request on the pool if it fits what is free after the preemptions), counted in GPUs;
        ``False`` (nothing done) if a job asks for more than GPUs, where the general path decides. A job's
        allocation is the same at every start (the pool, its request, its plan), so it is built once (a
        rotation starts the same jobs again and again)."""
        allocs = self._allocs
        free = view.index.total  # the pool's free GPUs, plus those of the jobs preempted here (instant)
        for jid in preempt:
            a = allocs.get(jid)
            free += a[1] if a is not None else sum(r.gpus for r in view.job(jid).allocation.placement.values())
        for jid in run:
            if jid in holding:
                continue
            got = allocs.get(jid)  # (a job with one has not finished: its completion event drops it)
            if got is None:
                job = self._startable(view, jid, now).job
                req = job.requested
                if req.cpus or req.mem_gb:
                    starts.clear()
                    return False
                plan = job.plan
                if plan is None:
                    plan = self._plans.get(req.gpus)
                    if plan is None:
                        plan = self._plans[req.gpus] = ExecutionPlan(dp=req.gpus)
                got = allocs[jid] = (JobAllocation(jid, plan, {self._pool: req}), req.gpus)
            if got[1] > free:
                raise RuntimeError(f"gandiva: no room for job {jid!r} in the pool at t={now}")
            free -= got[1]
            starts[jid] = got[0]
        return True

    @property
    def counters(self) -> dict[str, int]:
        """Artifact steps simulated one by one and steady steps credited at once (in the metrics)."""
        return {"gandiva_steps": self.steps, "gandiva_skipped_steps": self.skipped}


__all__ = ["ArtifactGandiva", "ArtifactGandivaParams"]
