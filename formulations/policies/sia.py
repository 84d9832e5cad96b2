r"""Sia-like goodput-driven elastic scheduler (Jayaram Subramanya et al., SOSP'23), as Rubick's
evaluation runs it: GPU counts scaled along the DP dimension, one MIP per round. Its configuration set
and objective follow the public artifact (siasosp23/artifacts, ``sia-simulator/sia.py``, ``SiaPolicy``).

**Configurations, per GPU type** (machines grouped by GPU model and GPUs per machine; ``populate_valid_
configs``: ``CONFIGS_4GPU`` / ``CONFIGS_8GPU``): powers of two up to a machine's GPUs ``G_t`` within one
machine, then whole machines, ``2 G_t, 3 G_t, ...`` up to the type's machines. A configuration is
``(type, GPUs, plan, throughput)``. The plan keeps the requested plan's GA, GC and ZeRO settings with
``dp`` = GPUs. A job whose request is 3D (TP or PP) uses the fastest data-parallel plan at its request
(any ZeRO/GA/GC) if one fits, else keeps its 3D plan at its request, unscaled (the Rubick paper's
footnote on Sia). Rigid jobs and models outside the perf model's zoo have one configuration per type
that can hold them: their request. ``request_config`` (ours, off) adds the request's GPU count to a
scaling job's set. CPUs follow the request's CPUs per GPU (Sia allocates GPUs only; our machines also
bound CPUs).

**Goodput** (the global batch never changes, so goodput = throughput), normalised as the artifact does:
a scaling job's goodputs are divided by its smallest one over all types and configurations (its
scale unit is 1 GPU), a rigid job's so that its slowest type is worth its GPU count. For a running
job, every configuration but its current one is scaled by the re-allocation factor ``r_j = max(age -
N delta, 0) / (age + delta)`` (``r_j = 1`` while ``age < delta``; ``age`` = seconds since arrival, ``N``
its restarts so far; the artifact's ``sia_use_pollux_realloc_factor``). ``delta`` = ``restart_s``: the
artifact uses the restart cost measured on its cluster (30 s by default, 25-250 s per model); ours
defaults to this simulator's checkpoint + restore, 78 s.

**MIP** (per round, solved exactly through ``formulations`` on a backend): binary ``x_jc``,

.. math:: \min \sum_{j,c} x_{jc}\, \min(\mathrm{round}(G_{jc}^{p}, 2), 3000) + \lambda_n \Bigl(N - \sum_{j,c}
   x_{jc}\Bigr) \quad\text{s.t.}\quad \sum_c x_{jc} \le 1,\ \ \sum_{j,c \in t} g_c x_{jc} \le
   \text{free GPUs of type } t,\ \sum_{j,c} cpu_{jc} x_{jc} \le \text{free CPUs},\ \text{tenant quotas}

with ``p = -0.5`` and ``lambda_n = 1.1`` (the artifact's ``sia_default_p_val``, ``sia_default_lambda_n``;
its rounding to 2 decimals and clip at ``sia_goodput_clip_val`` = 3000; its ``lambda_a`` is not in the
objective). With ``p < 0`` every ``G^p <= 1 < lambda_n``, so running a job always beats leaving it out.
Guaranteed jobs only take configurations at or above their minRes. Jobs restoring or checkpointing keep
what they have. The chosen GPU counts are then packed onto machines of the chosen type (unchanged jobs
keep their placement; the rest largest first, best fit, whole machines for multi-machine
configurations); a job that does not fit keeps its old allocation if it still can, else waits.
"""

from __future__ import annotations

from dataclasses import replace

from schedlab.formulations.backends import get_backend
from schedlab.formulations.model import Model, lsum
from schedlab.formulations.policies.base import RoundPolicy, ViewSnapshot
from schedlab.formulations.result import Reason, SolveParams
from schedlab.perfmodel.environment import shape_placements
from schedlab.perfmodel.facade import PerfModel
from schedlab.perfmodel.params import DEFAULT_CALIBRATION
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.perfmodel.zoo import resolve_name
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.feasible import plan_runs
from schedlab.scheduling.instance import Instance
from schedlab.scheduling.job import Job
from schedlab.scheduling.policy import split_resources
from schedlab.scheduling.registry import (
    BASE_DECISIONS,
    Decision,
    PolicyFamily,
    PolicyParams,
    PolicyRegistry,
    PolicySpec,
    ours,
    paper,
)
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster

Config = tuple[str, int, ExecutionPlan, float]  # (GPU type, GPUs, plan, throughput)
CLIP = 3000.0  # the artifact's sia_goodput_clip_val


class SiaParams(PolicyParams):
    interval_s: float = paper(60.0, gt=0.0, description="round length, seconds (Sia: 60)")
    p: float = paper(-0.5, lt=0.0, description="fairness power of the normalised goodputs (Sia: -0.5)")
    lambda_n: float = paper(1.1, gt=1.0, description="penalty per job left without GPUs (Sia: 1.1)")
    restart_s: float = paper(78.0, ge=0.0, description="restart cost delta in the re-allocation factor, seconds "
                             "(the simulator's checkpoint-resume cost; Sia's artifact: 30)")
    request_config: bool = ours(False, description="add the request's GPU count to a scaling job's "
                                "configurations (the artifact has only powers of two and whole machines)")
    backend: str = ours("highs", neutral="the solver: the same optimum on every backend",
                        description="MIP backend (formulations.BACKENDS)")
    time_limit_s: float = ours(10.0, gt=0.0, neutral="a solver budget; a round that hits it is counted",
                               description="wall-clock limit per round's MIP (a round that hits it uses the "
                                           "best solution found, counted)")


class SiaPolicy(RoundPolicy):
    """See the module docstring. ``counters`` counts rounds, MIP solves and fallbacks."""

    name = "sia"
    oracle = False

    def __init__(self, *, interval_s: float = 60.0, p: float = -0.5, lambda_n: float = 1.1, restart_s: float = 78.0,
                 request_config: bool = False, backend: str = "highs", time_limit_s: float = 10.0,
                 seed: int = 0) -> None:
        super().__init__(interval_s, seed=seed)
        self.p, self.lambda_n, self.restart_s = p, lambda_n, restart_s
        self.request_config = request_config
        self.backend, self.time_limit_s = backend, time_limit_s
        self._pm: PerfModel | None = None
        self._configs: dict[tuple, tuple[Config, ...]] = {}
        self._types: dict[str, tuple[str, ...]] = {}
        self._rigid: dict[tuple, bool] = {}

    # -------------------------------------------------------------- configs
    @staticmethod
    def gpu_types(cluster: Cluster) -> dict[str, tuple[str, ...]]:
        """GPU type -> its machines (in cluster order): machines with GPUs grouped by (GPU model, GPUs)."""
        out: dict[str, list[str]] = {}
        for m in cluster.machines:
            spec = cluster.machine(m)
            if spec.gpus > 0:
                out.setdefault(f"{spec.gpu_model}x{spec.gpus}", []).append(m)
        return {t: tuple(ms) for t, ms in out.items()}

    @staticmethod
    def sizes(per: int, machines: int) -> list[int]:
        """The artifact's GPU counts for a type: powers of two up to ``per``, then whole machines."""
        return [2 ** i for i in range(per.bit_length()) if 2 ** i <= per] + [j * per for j in range(2, machines + 1)]

    def configs(self, job: Job, cluster: Cluster, calibration: str | None = None) -> tuple[Config, ...]:
        """The job's configurations ``(type, GPUs, plan, throughput)`` (module docstring) under the perf
        model's ``calibration`` (None: the one bound last, else the default), cached."""
        self._bind(cluster, calibration)
        key = (job.model, job.global_batch, job.requested, job.requested_plan, job.reconfigurable)
        hit = self._configs.get(key)
        if hit is not None:
            return hit
        pm, req = self._pm, job.requested
        known = resolve_name(job.model) is not None
        family = self._family(job) if known and job.reconfigurable else None
        out: list[Config] = []
        for gtype, ms in self._types.items():
            per = cluster.machine(ms[0]).gpus
            if family is None:
                if req.gpus > per * len(ms):
                    continue
                counts = _counts(ms, per, req.gpus)
                t = pm.throughput(job.model, job.requested_plan, counts, self._cpus(job, req.gpus)) if known else 1.0
                out.append((gtype, req.gpus, job.requested_plan, t))
                continue
            sizes = self.sizes(per, len(ms))
            if self.request_config and req.gpus not in sizes and req.gpus <= per * len(ms):
                sizes = sorted([*sizes, req.gpus])
            for g in sizes:
                plan = replace(family, dp=g)
                counts = _counts(ms, per, g)
                if plan_runs(job, plan, counts, cluster):
                    out.append((gtype, g, plan, pm.throughput(job.model, plan, counts, self._cpus(job, g),
                                                              global_batch=job.global_batch)))
        if family is None and not known:
            self.counters["unknown-model-rigid"] += 1
        hit = tuple(out)
        self._configs[key] = hit
        self._rigid[key] = family is None
        return hit

    def _bind(self, cluster: Cluster, calibration: str | None = None) -> None:
        if calibration is None:
            calibration = self._pm.calibration if self._pm is not None else DEFAULT_CALIBRATION
        if self._pm is None or self._pm.cluster is not cluster or self._pm.calibration != calibration:
            self._pm, self._configs, self._rigid = PerfModel(cluster, calibration=calibration), {}, {}
            self._types = self.gpu_types(cluster)

    def rigid(self, job: Job) -> bool:
        """Whether ``job`` keeps its request (after :meth:`configs`)."""
        return self._rigid.get((job.model, job.global_batch, job.requested, job.requested_plan,
                                job.reconfigurable), True)

    def _family(self, job: Job) -> ExecutionPlan | None:
        """The data-parallel plan family Sia scales (None: keep the 3D request rigid)."""
        plan = job.requested_plan
        if plan.tp == 1 and plan.pp == 1:
            return plan
        pm, g = self._pm, job.requested.gpus
        counts = shape_placements(pm.cluster, g)[0]
        dp = [p for p in pm.enumerate_plans(job.model, counts, self._cpus(job, g), global_batch=job.global_batch)
              if p.tp == 1 and p.pp == 1]
        if not dp:
            self.counters["3d-rigid"] += 1
            return None
        t = pm.throughputs(job.model, dp, counts, self._cpus(job, g), global_batch=job.global_batch)
        return dp[int(t.argmax())]

    @staticmethod
    def _cpus(job: Job, g: int) -> int:
        req = job.requested
        return max(g, round(req.cpus * g / req.gpus)) if req.cpus else 0

    # -------------------------------------------------------------- the round
    def round(self, snap: ViewSnapshot) -> Allocation:
        inst = snap.instance
        cluster = inst.cluster
        m = Model("sia-round")
        xs: dict[str, list[tuple]] = {}
        self._bind(cluster, snap.calibration)
        type_of = {mm: t for t, ms in self._types.items() for mm in ms}
        for job in inst.jobs:
            cfgs = [c for c in self.configs(job, cluster) if self._admissible(job, c)]
            if not cfgs:
                continue
            cur = inst.current.get(job.id)
            cur_type = type_of.get(next(iter(cur.gpu_counts)), "") if cur is not None and cur.gpu_counts else None
            low = min(c[3] for c in cfgs)
            unit = job.requested.gpus if self.rigid(job) else 1  # the artifact's normalisation
            r = self._realloc(inst, job) if cur is not None else 1.0
            for gtype, g, plan, t in cfgs:
                gput = unit * t / low if t > 0 and low > 0 else 1e-4
                if cur is not None and not (cur_type == gtype and cur.gpus == g and cur.plan == plan):
                    gput *= r
                cost = min(round(max(gput, 1e-4) ** self.p, 2), CLIP)
                xs.setdefault(job.id, []).append((m.binary(f"x[{job.id},{gtype},{g}]"), g, plan, self.lambda_n - cost,
                                                  gtype))
        if not xs:
            return Allocation()
        m.maximize(lsum((w, x) for opts in xs.values() for x, _, _, w, _ in opts))
        for opts in xs.values():
            m.add(lsum(x for x, *_ in opts) <= 1)
        jobs = inst.job_by_id
        for gtype, ms in self._types.items():
            terms = [(g, x) for opts in xs.values() for x, g, _, _, t in opts if t == gtype]
            if terms:
                m.add(lsum(terms) <= sum(inst.capacity(mm).gpus for mm in ms), f"gpus[{gtype}]")
        m.add(lsum((self._cpus(jobs[j], g), x) for j, opts in xs.items() for x, g, _, _, _ in opts)
              <= sum(inst.capacity(mm).cpus for mm in cluster.machines), "cpus")
        for tenant, quota in inst.quotas.items():
            if not quota.gpus:
                continue  # a zero component means no quota on that resource (the verifier's reading)
            # jobs holding resources keep charging the quota this round (a preempted one until its
            # checkpoint is saved, as the verifier counts it): only queued jobs are decided against it
            holders = list(snap.frozen) + [jobs[ja.job_id] for ja in inst.current]
            held = sum(j.quota_usage.gpus for j in holders if j.guaranteed and j.tenant == tenant)
            usage = [(jobs[j].quota_usage.gpus, x) for j, opts in xs.items() if j not in inst.current
                     and jobs[j].guaranteed and jobs[j].tenant == tenant for x, *_ in opts]
            if usage:
                m.add(lsum(usage) <= quota.gpus - held, f"quota[{tenant}]")
        params = SolveParams(time_limit_s=self.time_limit_s, threads=1, seed=self.seed)
        raw = get_backend(self.backend).solve(m, params)
        self.counters["mip-solves"] += 1
        if raw.values is None or not raw.termination.status.has_solution:
            self.counters["mip-no-solution-kept-current"] += 1
            return inst.current
        if raw.termination.reason is not Reason.OPTIMAL:
            self.counters["mip-time-limit"] += 1
        chosen = {j: (g, plan, t) for j, opts in xs.items() for x, g, plan, _, t in opts if raw.values[x.index] > 0.5}
        return self._pack(inst, chosen)

    def _admissible(self, job: Job, cfg: Config) -> bool:
        mr = job.min_resources
        if not job.guaranteed or mr is None:
            return True
        return cfg[1] >= mr.gpus and self._cpus(job, cfg[1]) >= mr.cpus

    def _realloc(self, inst: Instance, job: Job) -> float:
        age = inst.time - job.arrival
        if age < self.restart_s:
            return 1.0
        pr = inst.progress.get(job.id)
        n = pr.preemptions if pr is not None else 0
        return max(age - n * self.restart_s, 0.0) / (age + self.restart_s)

    # -------------------------------------------------------------- packing
    def _pack(self, inst: Instance, chosen: dict[str, tuple[int, ExecutionPlan, str]]) -> Allocation:
        """Machines for the chosen GPU counts. Running jobs hold what they have until they are placed
        anew (a reconfiguration frees the old resources in the same decision; a preemption only after
        the checkpoint), so: unchanged jobs keep their placement; changed running jobs (largest first)
        are placed with their own old resources back in the pool, keeping them if nothing else fits;
        queued jobs (largest first) take what is left."""
        cluster = inst.cluster
        avail = {m: inst.capacity(m) for m in cluster.machines}
        for ja in inst.current:
            for mm, r in ja.placement.items():
                avail[mm] = avail[mm] - r
        out: dict[str, JobAllocation] = {}
        pos = {j.id: i for i, j in enumerate(inst.jobs)}
        moving, new = [], []
        type_of = {mm: t for t, ms in self._types.items() for mm in ms}
        for jid in sorted(chosen, key=lambda j: (-chosen[j][0], pos[j])):
            cur = inst.current.get(jid)
            if cur is not None and chosen[jid][:2] == (cur.gpus, cur.plan) \
                    and all(type_of.get(mm) == chosen[jid][2] for mm in cur.gpu_counts):
                out[jid] = cur  # no migration
            else:
                (moving if cur is not None else new).append(jid)
        for jid in moving + new:
            job, cur = inst.job(jid), inst.current.get(jid)
            g, plan, gtype = chosen[jid]
            if cur is not None:
                for mm, r in cur.placement.items():
                    avail[mm] = avail[mm] + r
            placement = _fit(cluster, self._types[gtype], avail, job, g, plan.tp, self._cpus(job, g))
            if placement is None:
                if cur is None:
                    self.counters["packing-failed-waits"] += 1
                    continue
                placement, plan = dict(cur.placement), cur.plan
                self.counters["packing-kept-current"] += 1
            for mm, r in placement.items():
                avail[mm] = avail[mm] - r
            out[jid] = JobAllocation(jid, plan, placement) if cur is None or placement != dict(cur.placement) \
                or plan != cur.plan else cur
        return Allocation(out)


def _counts(machines: tuple[str, ...], per: int, g: int) -> dict[str, int]:
    """``g`` GPUs packed on a type's machines: one machine, else whole machines (then the remainder)."""
    out: dict[str, int] = {}
    for mm in machines:
        k = min(per, g - sum(out.values()))
        if k <= 0:
            break
        out[mm] = k
    return out


def _fit(cluster: Cluster, machines: tuple[str, ...], avail: dict[str, Resources], job: Job, g: int, tp: int,
         cpus: int) -> dict[str, Resources] | None:
    """``g`` GPUs for ``job`` on ``machines`` (one GPU type): one machine, best fit, if ``g`` fits on one;
    else whole free machines plus a best-fit remainder; each share a multiple of ``tp``; CPUs and memory
    in proportion."""
    probe = replace(job, requested=Resources(g, cpus, job.requested.mem_gb * g / job.requested.gpus),
                    plan=None, min_resources=None)
    per = max(cluster.machine(m).gpus for m in machines)

    def fits(counts: dict[str, int]) -> dict[str, Resources] | None:
        placement = split_resources(probe, counts)
        return placement if all(r <= avail[m] for m, r in placement.items()) else None

    order = sorted(machines, key=lambda m: (avail[m].gpus, cluster.machine_index[m]))
    if g <= per:
        for m in order:
            if avail[m].gpus >= g:
                hit = fits({m: g})
                if hit is not None:
                    return hit
        return None
    counts: dict[str, int] = {}
    left = g
    for m in sorted(machines, key=lambda m: (-avail[m].gpus, cluster.machine_index[m])):
        k = min(avail[m].gpus - avail[m].gpus % tp, left)
        if k > 0:
            counts[m] = k
            left -= k
        if not left:
            return fits(counts)
    return None


SIA_POLICIES = PolicyRegistry()
SIA_POLICIES.register(PolicySpec(
    "sia", SiaPolicy, "Sia-like: round-based goodput-driven GPU scaling along DP, the artifact's configurations "
    "per GPU type and objective (p = -0.5, restart factor), one MIP per round solved exactly", PolicyFamily.BASELINE,
    SiaParams, preemptive=True, twins=("joint",),
    reference="Rubick (MLSys'25) Sec. 7.3 baseline; Sia (SOSP'23) Sec. 4; siasosp23/artifacts sia-simulator/sia.py",
    decisions=BASE_DECISIONS | {Decision.PREEMPTION, Decision.GPUS}))

__all__ = ["SIA_POLICIES", "SiaParams", "SiaPolicy"]
