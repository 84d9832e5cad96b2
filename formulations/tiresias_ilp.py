r"""Tiresias ILP placement (Appendix D), single- and multi-job, with the bilinear term linearised exactly.

For each job :math:`a` (:math:`W_a` workers, model size :math:`M_a`, parameter servers :math:`j`
holding :math:`s_{aj}`; :math:`\sum_j s_{aj} = M_a`) and node :math:`i` (free GPUs :math:`g_i`, free
CPUs :math:`c_i`, existing traffic :math:`t_i`): integer :math:`w_{ai}` workers, binary
:math:`p_{aji}` (PS :math:`j` on node :math:`i`). Node traffic

.. math::

   T_i = t_i + \sum_a \Big[ w_{ai}\big(M_a - \sum_j p_{aji}s_{aj}\big) + \sum_j p_{aji}s_{aj}(W_a - w_{ai}) \Big]
       = t_i + \sum_a \Big[ M_a w_{ai} + W_a \sum_j s_{aj}p_{aji} - 2\sum_j s_{aj} q_{aji} \Big]

with :math:`q_{aji} = w_{ai} p_{aji}` linearised exactly (:math:`U = \min(W_a, g_i)`):
:math:`q \le w,\ q \le U p,\ q \ge w - U(1 - p),\ q \ge 0`. Minimise :math:`T \ge T_i\ \forall i`
subject to :math:`\sum_a w_{ai} \le g_i`, :math:`\sum_a (c^w_a w_{ai} + c^{ps}_a \sum_j p_{aji}) \le c_i`,
:math:`\sum_i w_{ai} = W_a`, :math:`\sum_i p_{aji} = 1`.

**Aggregation (exact)**: nodes with equal :math:`(g_i, c_i, t_i)` are interchangeable and a solution
uses at most :math:`\sum_a (W_a + K_a)` nodes, so only that many representatives of each class are
kept (plus :math:`T \ge \max_i t_i` over all nodes), and representatives are ordered by worker count.
Traffic is in integer MB so CP-SAT needs no scaling.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from schedlab.formulations.base import Built, check_deadline
from schedlab.formulations.model import LinExpr, Model
from schedlab.formulations.tiresias import (
    TiresiasInstance,
    TiresiasSolution,
    neutral_terms,
    tiresias_objective,
    unplaced_penalty,
)
from schedlab.formulations.tiresias_gen import greedy_placement, point_bilinear, point_configs
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.resources import Resources
from schedlab.scheduling.verify import validate_allocation
from schedlab.topology.errors import SolverError


class TiresiasFormulation:
    """``method``: ``"bilinear"`` (the linearised model above, any number of jobs),
    ``"configurations"`` (single job only, see :meth:`_build_configs`) or ``"auto"`` (configurations
    for one job, else bilinear)."""

    name = "tiresias-ilp"

    def __init__(self, method: str = "auto", *, prune: bool = True) -> None:
        if method not in ("auto", "bilinear", "configurations"):
            raise SolverError(f"unknown Tiresias ILP method {method!r}")
        self.method = method
        self.prune = prune  # configurations: drop those above a greedy placement's traffic (never optimal)

    def _nodes(self, inst: TiresiasInstance) -> list[str]:
        need = sum(j.requested.gpus + len(inst.ps[j.id].ps_sizes) for j in inst.base.jobs)
        classes: dict[tuple, list[str]] = defaultdict(list)
        for m in inst.eligible_machines:
            c = inst.base.capacity(m)
            if c.gpus <= 0 and c.cpus <= 0:
                continue
            classes[(c.gpus, c.cpus, inst.traffic.get(m, 0))].append(m)
        keep = set()
        for ms in classes.values():
            keep.update(ms[:need])
        return [m for m in inst.eligible_machines if m in keep], [ms[:need] for ms in classes.values()]

    @staticmethod
    def optional(inst: TiresiasInstance) -> bool:
        """Whether the model may leave a job unplaced (binary :math:`z_a`, priced): under the neutral
        objective, or where the jobs' workers or CPUs exceed the free total (a replay state's queue)."""
        if inst.neutral:
            return True
        caps = [inst.base.capacity(m) for m in inst.eligible_machines]
        jobs = inst.base.jobs
        gpus = sum(j.requested.gpus for j in jobs)
        cpus = sum(j.requested.gpus * inst.ps[j.id].cpus_per_worker
                   + len(inst.ps[j.id].ps_sizes) * inst.ps[j.id].cpus_per_ps for j in jobs)
        return gpus > sum(max(0, c.gpus) for c in caps) or cpus > sum(max(0, c.cpus) for c in caps)

    def build(self, inst: TiresiasInstance, deadline: float | None = None) -> Built:
        one = len(inst.base.jobs) == 1
        if self.method == "configurations" or (self.method == "auto" and one and not self.optional(inst)):
            if not one:
                raise SolverError("the configuration model places exactly one job")
            if self.optional(inst):
                raise SolverError("the configuration model places its job: use the bilinear model for the neutral "
                                  "objective or a job that may not fit")
            return self._build_configs(inst)
        return self._build_bilinear(inst, deadline)

    def _build_configs(self, inst: TiresiasInstance) -> Built:
        r"""Exact single-job model over node *configurations* (no bilinear term, no symmetry).

        A configuration of a node class :math:`c` (equal free GPUs, CPUs and traffic; :math:`N_c`
        nodes) is a worker count :math:`w` and a set :math:`S` of PS it hosts, with constant traffic
        :math:`T_{c,w,S} = t_c + M w + (W - 2w) \sum_{j \in S} s_j` (the same formula). Integer
        :math:`n_{cws}` nodes use it, binary :math:`u_{cws}` marks it used:
        :math:`\sum_{w,S} n_{cwS} \le N_c`, :math:`\sum w\, n_{cwS} = W`,
        :math:`\sum_{S \ni j} n_{cwS} = 1\ \forall j`, :math:`n \le N_c u`,
        :math:`T \ge T_{c,w,S}\, u_{cwS}`; GPU/CPU limits filter the configurations."""
        (job,) = inst.base.jobs
        ps = inst.ps[job.id]
        W, M, K = job.requested.gpus, ps.model_size, len(ps.ps_sizes)
        groups: dict[tuple, list[str]] = defaultdict(list)
        for m in inst.eligible_machines:
            c = inst.base.capacity(m)
            if c.gpus > 0 or c.cpus > 0:
                groups[(max(0, c.gpus), max(0, c.cpus), inst.traffic.get(m, 0))].append(m)
        mdl = Model("tiresias-configurations", sense="min")
        base_t = max((inst.traffic.get(m, 0) for m in inst.eligible_machines), default=0)
        greedy = greedy_placement(inst) if self.prune else None
        ub = tiresias_objective(inst, greedy) if greedy is not None else base_t + 2 * W * M
        T = mdl.integer("T", base_t, ub)
        workers, nodes_used = LinExpr(), {}
        ps_rows = [LinExpr() for _ in range(K)]
        cfgs, ns, us = [], {}, {}
        for key, ms in groups.items():
            g, cpu, t = key
            N = len(ms)
            used = LinExpr()
            for w in range(min(g, W) + 1):
                for mask in range(1 << K):
                    S = [j for j in range(K) if mask >> j & 1]
                    if (w == 0 and not S) or w * ps.cpus_per_worker + len(S) * ps.cpus_per_ps > cpu:
                        continue
                    h = sum(ps.ps_sizes[j] for j in S)
                    cap = 1 if S else min(N, W // max(w, 1))
                    if cap < 1:
                        continue
                    tc = t + M * w + (W - 2 * w) * h
                    if tc > ub:
                        continue
                    n = mdl.integer(f"n[{key},{w},{mask}]", 0, cap)
                    if tc <= base_t:
                        pass
                    elif cap == 1:
                        mdl.add(T - tc * n >= 0)
                    else:
                        u = us[key, w, mask] = mdl.binary(f"u[{key},{w},{mask}]")
                        mdl.add(n - cap * u <= 0)
                        mdl.add(T - tc * u >= 0)
                    used.add_term(n.index, 1)
                    workers.add_term(n.index, w)
                    for j in S:
                        ps_rows[j].add_term(n.index, 1)
                    cfgs.append((key, w, tuple(S), n))
                    ns[key, w, mask] = n
            if used.terms:
                mdl.add(used <= N, f"nodes[{key}]")
            nodes_used[key] = ms
        mdl.add(workers == W, "workers")
        for j, e in enumerate(ps_rows):
            mdl.add(e == 1, f"ps[{j}]")
        mdl.minimize(T)
        return Built(mdl, {"mode": "configurations", "cfgs": cfgs, "groups": nodes_used, "n": ns, "u": us, "T": T})

    def _build_bilinear(self, inst: TiresiasInstance, deadline: float | None = None) -> Built:
        r"""The linearised model (module docstring). Where :meth:`optional`, binary :math:`z_a` (job placed):
        :math:`\sum_i w_{ai} = W_a z_a`, :math:`\sum_i p_{aji} = z_a`, and the objective is either the family
        one, :math:`T + P \sum_a W_a (1 - z_a)` (:func:`~formulations.tiresias.unplaced_penalty`), or on a
        ``neutral`` instance the est-avg-jct (:func:`~formulations.tiresias.tiresias_neutral`), linear in
        :math:`z` and :math:`q`:

        .. math:: \frac{1}{|J|} \sum_a \Big[ C^q_a + z_a\big(d_a (1 + o_a) - C^q_a\big)
                  - \frac{d_a o_a}{W_a M_a} \sum_{i,j} s_{aj} q_{aji} \Big]."""
        nodes, classes = self._nodes(inst)
        optional = self.optional(inst)
        z_of: dict[str, Any] = {}
        mdl = Model("tiresias-ilp", sense="min")
        base_t = max((inst.traffic.get(m, 0) for m in inst.eligible_machines), default=0)
        big = base_t + sum(j.requested.gpus * inst.ps[j.id].model_size * 2 for j in inst.base.jobs)
        T = mdl.integer("T", base_t, big)
        traffic = {i: LinExpr({}, inst.traffic.get(i, 0)) for i in nodes}
        gpu = {i: LinExpr() for i in nodes}
        cpu = {i: LinExpr() for i in nodes}
        w_of: dict[tuple[str, str], Any] = {}
        p_of: dict[tuple[str, int, str], Any] = {}
        q_of: dict[tuple[str, int, str], Any] = {}
        for job in inst.base.jobs:
            check_deadline(deadline)
            ps = inst.ps[job.id]
            W, M = job.requested.gpus, ps.model_size
            tot = LinExpr()
            for i in nodes:
                cap = inst.base.capacity(i)
                U = max(0, min(W, cap.gpus))
                w = mdl.integer(f"w[{job.id},{i}]", 0, U)
                w_of[job.id, i] = w
                tot.add_term(w.index, 1)
                gpu[i].add_term(w.index, 1)
                cpu[i].add_term(w.index, ps.cpus_per_worker)
                traffic[i].add_term(w.index, M)
                for j, s in enumerate(ps.ps_sizes):
                    p = mdl.binary(f"p[{job.id},{j},{i}]")
                    p_of[job.id, j, i] = p
                    cpu[i].add_term(p.index, ps.cpus_per_ps)
                    traffic[i].add_term(p.index, W * s)
                    if U > 0:
                        q = q_of[job.id, j, i] = mdl.integer(f"q[{job.id},{j},{i}]", 0, U)
                        mdl.add(q - w <= 0)
                        mdl.add(q - U * p <= 0)
                        mdl.add(q - w - U * p >= -U)
                        traffic[i].add_term(q.index, -2 * s)
            if optional:
                z = z_of[job.id] = mdl.binary(f"z[{job.id}]")
                mdl.add(tot - W * z == 0, f"workers[{job.id}]")
            else:
                mdl.add(tot == W, f"workers[{job.id}]")
            for j in range(len(ps.ps_sizes)):
                e = LinExpr()
                for i in nodes:
                    e.add_term(p_of[job.id, j, i].index, 1)
                if optional:
                    mdl.add(e - z_of[job.id] == 0, f"ps[{job.id},{j}]")
                else:
                    mdl.add(e == 1, f"ps[{job.id},{j}]")
        for i in nodes:
            cap = inst.base.capacity(i)
            mdl.add(gpu[i] <= cap.gpus, f"gpu[{i}]")
            mdl.add(cpu[i] <= cap.cpus, f"cpu[{i}]")
            mdl.add(traffic[i] - T <= 0, f"traffic[{i}]")
        # lexicographic (workers, hosted PS MB) order inside each class: key = w * (S + 1) + hosted
        S = sum(inst.ps[j.id].model_size for j in inst.base.jobs)
        key = {i: LinExpr() for i in nodes}
        for (jid, j, i), p in p_of.items():
            key[i].add_term(p.index, inst.ps[jid].ps_sizes[j])
        for i in nodes:
            key[i].iadd(gpu[i], S + 1)
        for cls in classes:
            for a, b in zip(cls, cls[1:], strict=False):
                mdl.add(key[a] - key[b] >= 0, f"sym[{a},{b}]")
        mdl.minimize(self._objective(inst, T, z_of, q_of) if optional else T)
        return Built(mdl, {"mode": "bilinear", "nodes": nodes, "w": w_of, "p": p_of, "q": q_of, "T": T, "z": z_of})

    @staticmethod
    def _objective(inst: TiresiasInstance, T: Any, z_of: dict[str, Any], q_of: dict[tuple[str, int, str], Any]) -> LinExpr:
        """The objective of the model with optional jobs (:meth:`_build_bilinear`)."""
        obj = LinExpr()
        if not inst.neutral:
            P = unplaced_penalty(inst)
            obj.add_term(T.index, 1)
            for job in inst.base.jobs:
                obj.const += P * job.requested.gpus
                obj.add_term(z_of[job.id].index, -P * job.requested.gpus)
            return obj
        terms = neutral_terms(inst)
        n = len(inst.base.jobs)
        for job in inst.base.jobs:
            d, cq = terms[job.id]
            o = inst.spread[job.id]
            W, M = job.requested.gpus, inst.ps[job.id].model_size
            obj.const += cq / n
            obj.add_term(z_of[job.id].index, (d * (1 + o) - cq) / n)
            if o > 0 and W > 0 and M > 0:
                for (jid, j, _), q in q_of.items():
                    if jid == job.id:
                        obj.add_term(q.index, -d * o * inst.ps[jid].ps_sizes[j] / (W * M) / n)
        return obj

    def extract(self, inst: TiresiasInstance, built: Built, values: list[float]) -> TiresiasSolution:
        if built.data["mode"] == "configurations":
            return self._extract_configs(inst, built, values)
        out, hosts = [], {}
        for job in inst.base.jobs:
            z = built.data.get("z", {}).get(job.id)
            if z is not None and values[z.index] < 0.5:
                continue  # left unplaced (priced)
            ps = inst.ps[job.id]
            where = []
            for j in range(len(ps.ps_sizes)):
                where.append(next(i for i in built.data["nodes"] if values[built.data["p"][job.id, j, i].index] > 0.5))
            hosts[job.id] = tuple(where)
            pl = {}
            for i in built.data["nodes"]:
                w = int(round(values[built.data["w"][job.id, i].index]))
                n_ps = where.count(i)
                if w or n_ps:
                    pl[i] = Resources(w, w * ps.cpus_per_worker + n_ps * ps.cpus_per_ps, 0.0)
            out.append(JobAllocation(job.id, ExecutionPlan(dp=job.requested.gpus), pl))
        return TiresiasSolution(Allocation.of(out), hosts)

    def objective(self, inst: TiresiasInstance, solution: TiresiasSolution) -> float:
        return tiresias_objective(inst, solution)

    def allocation_of(self, solution: TiresiasSolution) -> Allocation:
        return solution.allocation

    def verify(self, inst: TiresiasInstance, solution: TiresiasSolution) -> list[str]:
        out = [str(v) for v in validate_allocation(inst.base, solution.allocation)]
        if not self.optional(inst):  # else an unplaced job is priced by the objective, not an error
            out += [f"[placement] job {j.id!r} not placed" for j in inst.base.jobs if j.id not in solution.allocation]
        return out

    @staticmethod
    def _extract_configs(inst: TiresiasInstance, built: Built, values: list[float]) -> TiresiasSolution:
        (job,) = inst.base.jobs
        ps = inst.ps[job.id]
        free = {key: list(ms) for key, ms in built.data["groups"].items()}
        pl: dict[str, Resources] = {}
        where: list[str | None] = [None] * len(ps.ps_sizes)
        for key, w, S, n in built.data["cfgs"]:
            for _ in range(int(round(values[n.index]))):
                m = free[key].pop(0)
                pl[m] = Resources(w, w * ps.cpus_per_worker + len(S) * ps.cpus_per_ps, 0.0)
                for j in S:
                    where[j] = m
        ja = JobAllocation(job.id, ExecutionPlan(dp=job.requested.gpus), pl)
        return TiresiasSolution(Allocation.of([ja]), {job.id: tuple(where)})

    def point(self, inst: TiresiasInstance, built: Built, sol: TiresiasSolution) -> tuple[dict[int, float], list[str]]:
        """The model's variables at ``sol`` (nodes of a class permuted into the model's order)."""
        if built.data["mode"] == "configurations":
            return point_configs(inst, built, sol)
        return point_bilinear(inst, built, sol, self._nodes(inst)[1])

    def hints(self, inst: TiresiasInstance, built: Built, allocation: Allocation) -> dict[int, float]:
        if built.data["mode"] == "configurations":
            return {}
        h = {}
        for (jid, i), w in built.data["w"].items():
            ja = allocation.get(jid)
            h[w.index] = float(ja.placement[i].gpus) if ja is not None and i in ja.placement else 0.0
        return h


__all__ = ["TiresiasFormulation"]
