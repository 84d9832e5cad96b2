r"""The horizon twin for waiting (method ``horizon-wait``): *wait or place now*, decided exactly over a
short horizon, the decision Dally's delay scheduling and Tiresias' skew waiting make online.

Time :math:`t_0` = ``base.time``; slots :math:`\tau = 0..T-1` of length :math:`\Delta` (horizon
:math:`H = T\Delta`). Known: running jobs (``running``: GPUs per machine and remaining seconds; they
hold their GPUs for :math:`\lceil \text{rem}/\Delta \rceil` slots), background capacity
(``base.reserved``, held all horizon), and the rigid jobs to decide (``base.jobs``: queued now or
arriving within :math:`H`, arrival :math:`a_j` = ``arrival`` - :math:`t_0` clipped at 0; GPU demand
:math:`g_j`; run time :math:`d_j` = ``duration`` with no communication overhead; per-tier overhead
:math:`o_j(\ell)`, :math:`\ell \in` {machine, rack, network}, non-decreasing, as in
:mod:`formulations.tier`: Dally's tier overhead from :func:`perfmodel.network.comm_overhead`).

Machine tier: binary :math:`y_{jtm}` (start in slot :math:`t \ge \lceil a_j/\Delta \rceil` on machine
:math:`m` alone, :math:`g_j \le G_m`). Rack / network tier: binary :math:`z_{jt\ell}` with the tier
model's choice :math:`b_{jr}` (rack) and integer GPUs :math:`x_{jm}` held for the whole run. Run length
:math:`D_{j\ell} = \lceil d_j(1+o_j(\ell))/\Delta \rceil` slots; :math:`\rho_{j\tau} = \sum_{\ell \ne M}
\sum_{t \le \tau < t + D_{j\ell}} z_{jt\ell}`; usage :math:`w_{jm\tau} \ge x_{jm} - U_{jm}(1 -
\rho_{j\tau})`, :math:`w \ge 0`:

.. math::

   \sum_{t,m} y_{jtm} + \sum_{t,\ell \ne M} z_{jt\ell} \le 1,\qquad \sum_r b_{jr} = \sum_t z_{jt,R},\qquad
   \sum_m x_{jm} = g_j \sum_{t,\ell \ne M} z_{jt\ell}

   x_{jm} \le U_{jm}\big(b_{j,r(m)} + \textstyle\sum_t z_{jt,N}\big),\qquad
   \sum_j \Big(g_j \sum_{t \le \tau < t + D_{jM}} y_{jtm} + w_{jm\tau}\Big) \le F_m(\tau)\ \ \forall m, \tau

   \min \sum_j \Big[\sum_{t,\ell} s_{jt\ell}\big(t\Delta - a_j + d_j(1 + o_j(\ell))\big)
   + \big(1 - \sum_{t,\ell} s_{jt\ell}\big)\big(H - a_j + d_j(1 + o_j(M))\big)\Big]

(:math:`s` = the start binaries :math:`y` summed over machines, or :math:`z`), and the valid cut
:math:`\sum_j g_j \cdot [\text{j runs in } \tau] \le \sum_m F_m(\tau)` per slot (no big-M: it gives the
relaxation a real bound; the machine-tier rows need none either). Symmetry: machines of one rack with the
same free GPUs in every slot carry non-increasing total loads (a permutation of such machines maps a
plan to one of equal value).
:math:`F_m(\tau)` = free GPUs of :math:`m` in slot :math:`\tau` (capacity minus reserved minus the running
jobs still there). The objective is the **total JCT** of the decided jobs (delay + slowed run time); a
job not started within the horizon is charged as if it started at :math:`H` on one machine (an
optimistic tail, the same for the model and for a heuristic scored by
:func:`benchmarks.harness.horizon_score`). A job's GPUs are held until the end of its last slot (the
rounding is conservative for capacity, the objective uses the exact run time). As in the tier model
the chosen level is never below the placement's real tier and overheads are monotone, so the optimum
equals the optimum over real tiers (:func:`horizon_objective` recomputes from real tiers). A job's
``max_tier`` is honoured.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from schedlab.formulations import io
from schedlab.formulations.base import Built, check_deadline
from schedlab.formulations.model import LinExpr, Model, lsum
from schedlab.formulations.tier import DALLY_MODELS
from schedlab.perfmodel.network import comm_overhead
from schedlab.scheduling.allocation import Allocation
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError, TopologyError
from schedlab.topology.tiers import Tier

_SRC = "<horizon>"
LEVELS = (Tier.MACHINE, Tier.RACK, Tier.NETWORK)


@dataclass(frozen=True)
class RunningJob:
    """A job already running: GPUs per machine, seconds left (from ``base.time``)."""

    id: str
    placement: Mapping[str, int]
    remaining: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "placement", MappingProxyType({m: int(k) for m, k in self.placement.items() if k}))
        if not self.remaining >= 0:
            raise SpecError(f"running job {self.id!r}: remaining must be >= 0", source=_SRC,
                            field=f"running.{self.id}.remaining")


@dataclass(frozen=True)
class HorizonInstance:
    KIND = "horizon-wait"
    base: Instance
    overhead: Mapping[str, tuple[float, float, float]]
    slot: float
    slots: int
    running: tuple[RunningJob, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "overhead", MappingProxyType({k: tuple(v) for k, v in self.overhead.items()}))
        object.__setattr__(self, "running", tuple(self.running))
        if not self.slot > 0 or self.slots < 1:
            raise SpecError(f"slot must be > 0 and slots >= 1, got {self.slot}, {self.slots}", source=_SRC,
                            field="slot")
        for j in self.base.jobs:
            o = self.overhead.get(j.id)
            if o is None or len(o) != 3 or not (0 <= o[0] <= o[1] <= o[2]):
                raise SpecError(f"job {j.id!r}: overhead must be 3 non-decreasing fractions >= 0, got {o}",
                                source=_SRC, field=f"overhead.{j.id}")
            if j.duration is None:
                raise SpecError(f"job {j.id!r} needs a duration (run time without overhead)", source=_SRC,
                                field=f"jobs.{j.id}.duration")
        for r in self.running:
            for m in r.placement:
                if m not in self.base.cluster.machine_index:
                    raise SpecError(f"running job {r.id!r} on unknown machine {m!r}", source=_SRC,
                                    field=f"running.{r.id}.placement")

    @property
    def horizon_s(self) -> float:
        return self.slot * self.slots

    def arrival(self, job_id: str) -> float:
        """Seconds after ``base.time`` (0 for a job already queued)."""
        return max(0.0, self.base.job(job_id).arrival - self.base.time)

    def release(self, job_id: str) -> int:
        return math.ceil(self.arrival(job_id) / self.slot - 1e-9)

    def run_time(self, job_id: str, tier: Tier) -> float:
        return float(self.base.job(job_id).duration) * (1 + self.overhead[job_id][int(tier) - 1])

    def run_slots(self, job_id: str, tier: Tier) -> int:
        return max(1, math.ceil(self.run_time(job_id, tier) / self.slot - 1e-9))

    def free(self, m: str, tau: int) -> int:
        """Free GPUs of ``m`` in slot ``tau``: capacity - reserved - running jobs still there."""
        f = max(0, self.base.capacity(m).gpus)
        for r in self.running:
            if r.placement.get(m) and tau < math.ceil(r.remaining / self.slot - 1e-9):
                f -= r.placement[m]
        return max(0, f)

    def levels(self, job_id: str) -> tuple[Tier, ...]:
        top = self.base.job(job_id).max_tier
        return tuple(t for t in LEVELS if top is None or t <= top)

    def tail_cost(self, job_id: str) -> float:
        """The charge of a job not started within the horizon."""
        return self.horizon_s - self.arrival(job_id) + self.run_time(job_id, Tier.MACHINE)

    def to_dict(self) -> dict[str, Any]:
        return {"base": io.instance_to_dict(self.base), "overhead": {k: list(v) for k, v in self.overhead.items()},
                "slot": self.slot, "slots": self.slots,
                "running": [{"id": r.id, "placement": dict(r.placement), "remaining": r.remaining}
                            for r in self.running]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = _SRC) -> HorizonInstance:
        return cls(io.instance_from_dict(d["base"], source), {k: tuple(v) for k, v in d["overhead"].items()},
                   float(d["slot"]), int(d["slots"]),
                   tuple(RunningJob(r["id"], r["placement"], float(r["remaining"])) for r in d.get("running", ())))


@dataclass(frozen=True)
class HorizonPlan:
    """Start slot and GPUs per machine of each job started within the horizon (others: absent)."""

    start: Mapping[str, int]
    placement: Mapping[str, Mapping[str, int]]


def real_tier(inst: HorizonInstance, placement: Mapping[str, int]) -> Tier:
    """Tier of a placement (:meth:`Cluster.tier_of`; one without GPUs: MACHINE)."""
    return inst.base.cluster.tier_of(placement, default=Tier.MACHINE)


def job_cost(inst: HorizonInstance, job_id: str, plan: HorizonPlan) -> float:
    """A job's JCT inside the model: ``start - arrival + run time at the real tier``, or the tail."""
    if job_id not in plan.start:
        return inst.tail_cost(job_id)
    tier = real_tier(inst, plan.placement[job_id])
    return plan.start[job_id] * inst.slot - inst.arrival(job_id) + inst.run_time(job_id, tier)


def horizon_objective(inst: HorizonInstance, plan: HorizonPlan) -> float:
    """THE objective: total JCT of the decided jobs (module docstring), from real tiers."""
    return sum(job_cost(inst, j.id, plan) for j in inst.base.jobs)


def horizon_violations(inst: HorizonInstance, plan: HorizonPlan) -> list[str]:
    """Starts within ``[release, T)``; full gangs on known machines; tier within ``max_tier``; per machine
    and slot, GPUs held (until the end of the last slot at the real tier) fit the free GPUs."""
    out = []
    use: dict[tuple[str, int], int] = defaultdict(int)
    for j in inst.base.jobs:
        if j.id not in plan.start:
            continue
        s, pl = plan.start[j.id], plan.placement.get(j.id, {})
        if not inst.release(j.id) <= s < inst.slots:
            out.append(f"[start] job {j.id!r} starts in slot {s}, allowed [{inst.release(j.id)}, {inst.slots})")
        if sum(pl.values()) != j.requested.gpus:
            out.append(f"[gang] job {j.id!r}: {sum(pl.values())} GPUs placed, needs {j.requested.gpus}")
        try:
            tier = real_tier(inst, pl)
        except TopologyError as e:  # a machine over its GPUs, an unknown machine: a violation, not a crash
            out.append(f"[placement] job {j.id!r}: {e}")
            continue
        if tier not in inst.levels(j.id):
            out.append(f"[tier] job {j.id!r} placed at {tier.name.lower()}, above its max_tier")
        for tau in range(s, min(inst.slots, s + inst.run_slots(j.id, tier))):
            for m, k in pl.items():
                use[m, tau] += k
    for (m, tau), k in sorted(use.items()):
        if m not in inst.base.cluster.machine_index:
            out.append(f"[placement] unknown machine {m!r}")
        elif k > inst.free(m, tau):
            out.append(f"[capacity] machine {m!r} slot {tau}: {k} GPUs > {inst.free(m, tau)} free")
    return out


class HorizonFormulation:
    name = "horizon-wait"

    def build(self, inst: HorizonInstance, deadline: float | None = None) -> Built:
        cl = inst.base.cluster
        nodes = cl.graph.nodes
        T = inst.slots
        caps = {m: max(0, inst.base.capacity(m).gpus) for m in cl.machines}
        mach = [m for m in cl.machines if caps[m] > 0]
        racks: dict[str, list[str]] = defaultdict(list)
        for m in mach:
            racks[nodes[m]["rack"]].append(m)
        mdl = Model("horizon-wait", sense="min")
        data: dict[str, Any] = {"z": {}, "zm": {}, "x": {}}
        obj = LinExpr()
        use: dict[tuple[str, int], LinExpr] = defaultdict(LinExpr)
        total: dict[int, LinExpr] = defaultdict(LinExpr)
        for j in inst.base.jobs:
            check_deadline(deadline)
            g = j.requested.gpus
            lv = inst.levels(j.id)
            obj.const += inst.tail_cost(j.id)
            started = LinExpr()
            spread = LinExpr()
            by_level: dict[Tier, LinExpr] = {t: LinExpr() for t in lv}
            run = {tau: LinExpr() for tau in range(T)}  # rack / network starts running in slot tau
            for tier in lv:
                D = inst.run_slots(j.id, tier)
                cost = inst.run_time(j.id, tier) - inst.arrival(j.id)
                for t in range(inst.release(j.id), T):
                    gain = t * inst.slot + cost - inst.tail_cost(j.id)
                    if tier is Tier.MACHINE:  # one binary per machine: its capacity row needs no big-M
                        for m in mach:
                            if g <= caps[m]:
                                z = data["zm"][j.id, t, m] = mdl.binary(f"zm[{j.id},{t},{m}]")
                                started.add_term(z.index, 1)
                                obj.add_term(z.index, gain)
                                for tau in range(t, min(T, t + D)):
                                    use[m, tau].add_term(z.index, g)
                                    total[tau].add_term(z.index, g)
                        continue
                    if tier is Tier.RACK and not any(len(ms) > 1 and g <= sum(caps[m] for m in ms)
                                                     for ms in racks.values()):
                        continue
                    if tier is Tier.NETWORK and not (len(racks) > 1 and g <= sum(caps.values())):
                        continue
                    z = data["z"][j.id, t, tier] = mdl.binary(f"z[{j.id},{t},{tier.name}]")
                    started.add_term(z.index, 1)
                    spread.add_term(z.index, 1)
                    by_level[tier].add_term(z.index, 1)
                    obj.add_term(z.index, gain)
                    for tau in range(t, min(T, t + D)):
                        run[tau].add_term(z.index, 1)
                        total[tau].add_term(z.index, g)  # cut: all GPUs in use fit the free GPUs
            if not started.terms:
                continue
            mdl.add(started <= 1, f"once[{j.id}]")
            if not spread.terms:
                continue
            gate: dict[str, LinExpr] = {m: LinExpr() for m in mach}
            if Tier.RACK in lv and by_level[Tier.RACK].terms:
                pick = LinExpr()
                for r, ms in racks.items():
                    if len(ms) > 1 and g <= sum(caps[m] for m in ms):
                        b = mdl.binary(f"b[{j.id},{r}]")
                        pick.add_term(b.index, 1)
                        for m in ms:
                            gate[m].add_term(b.index, 1)
                mdl.add(pick - by_level[Tier.RACK] == 0, f"lvlR[{j.id}]")
            if Tier.NETWORK in lv and by_level[Tier.NETWORK].terms:
                for m in mach:
                    gate[m].iadd(by_level[Tier.NETWORK])
            xs = LinExpr()
            for m in mach:
                if not gate[m].terms:
                    continue
                U = min(g, caps[m])
                x = data["x"][j.id, m] = mdl.integer(f"x[{j.id},{m}]", 0, U)
                xs.add_term(x.index, 1)
                mdl.add(x - gate[m] * U <= 0, f"gate[{j.id},{m}]")
                for tau in range(T):
                    if not run[tau].terms:
                        continue
                    w = mdl.integer(f"w[{j.id},{m},{tau}]", 0, U)
                    mdl.add(w - x - run[tau] * U >= -U, f"hold[{j.id},{m},{tau}]")
                    use[m, tau].add_term(w.index, 1)
            mdl.add(xs - spread * g == 0, f"gang[{j.id}]")
        for (m, tau), e in use.items():
            mdl.add(e <= inst.free(m, tau), f"cap[{m},{tau}]")
        for tau, e in total.items():
            mdl.add(e <= sum(inst.free(m, tau) for m in mach), f"total[{tau}]")
        # machines of one rack with the same free GPUs in every slot are interchangeable: order their loads
        classes: dict[tuple, list[str]] = defaultdict(list)
        for m in mach:
            classes[(nodes[m]["rack"], tuple(inst.free(m, tau) for tau in range(T)))].append(m)
        for ms in classes.values():
            loads = [lsum(use[m, tau] for tau in range(T) if (m, tau) in use) for m in ms]
            for i in range(len(ms) - 1):
                if loads[i].terms or loads[i + 1].terms:
                    mdl.add(loads[i] - loads[i + 1] >= 0, f"sym[{ms[i]}]")
        mdl.minimize(obj)
        return Built(mdl, data)

    def extract(self, inst: HorizonInstance, built: Built, values: list[float]) -> HorizonPlan:
        start = {j: t for (j, t, _), z in built.data["z"].items() if values[z.index] > 0.5}
        pl: dict[str, dict[str, int]] = {j: {} for j in start}
        for (j, m), x in built.data["x"].items():
            k = int(round(values[x.index]))
            if k and j in pl:
                pl[j][m] = k
        for (j, t, m), z in built.data["zm"].items():
            if values[z.index] > 0.5:
                start[j] = t
                pl[j] = {m: inst.base.job(j).requested.gpus}
        return HorizonPlan(start, pl)

    def objective(self, inst: HorizonInstance, solution: HorizonPlan) -> float:
        return horizon_objective(inst, solution)

    def allocation_of(self, solution: HorizonPlan) -> Allocation | None:
        return None

    def verify(self, inst: HorizonInstance, solution: HorizonPlan) -> list[str]:
        return horizon_violations(inst, solution)

    def hints(self, inst: HorizonInstance, built: Built, allocation: Allocation) -> dict[int, float]:
        return {}


def generate_horizon(cluster: Cluster, n_jobs: int, *, seed: int = 0, slot: float = 300.0, slots: int = 8,
                     busy: float = 0.5, arriving: float = 0.3) -> HorizonInstance:
    """A seeded horizon instance: each machine runs a job on a random share of its GPUs with
    probability ``busy`` (remaining 0.5-6 slots); jobs of Dally's Table 1 models with 1-16 GPUs (at
    most a rack), run time 1-6 slots, a fraction ``arriving`` arriving within the horizon, the rest
    queued now; overheads from :func:`perfmodel.network.comm_overhead`."""
    rng = random.Random(seed)
    running = []
    for m in cluster.machines:
        if rng.random() < busy:
            k = rng.randint(1, cluster.machine(m).gpus)
            running.append(RunningJob(f"bg-{m}", {m: k}, rng.uniform(0.5, 6.0) * slot))
    rack_gpus = max(sum(cluster.machine(m).gpus for m in cluster.machines_in(r)) for r in cluster.racks)
    jobs, ov = [], {}
    for i in range(n_jobs):
        g = rng.choice([x for x in (1, 2, 2, 4, 4, 8, 16) if x <= rack_gpus])
        model = rng.choice(DALLY_MODELS)
        arr = rng.uniform(0, slots * slot) if rng.random() < arriving else 0.0
        jid = f"h{i:03d}"
        jobs.append(Job(id=jid, requested=Resources(g, 0, 0.0), model=model, arrival=float(round(arr)), global_batch=32 * g,
                        duration=float(round(rng.uniform(1.0, 6.0) * slot))))
        ov[jid] = tuple(comm_overhead(model, t) for t in LEVELS)
    return HorizonInstance(Instance(cluster, tuple(jobs)), ov, slot, slots, tuple(running))


__all__ = ["HorizonFormulation", "HorizonInstance", "HorizonPlan", "RunningJob", "generate_horizon", "horizon_objective",
           "horizon_violations", "job_cost", "real_tier"]
