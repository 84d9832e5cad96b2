"""What the iteration-time model needs from the topology for one placement, and the canonical
placements ("shapes") used for sensitivity curves and resource options.

For a placement ``{machine: gpus}``: ``bw_dp`` = :meth:`Cluster.bottleneck_bandwidth` (GB/s; DP and PP
traffic; ``inf`` for one GPU), ``bw_tp`` = the slowest intra-machine fabric among its machines (TP stays
inside a machine), ``bw_pcie`` = the slowest host<->GPU link, ``gpu_memory_gb`` = the smallest GPU,
``cpu_capacity`` = the CPU cores of the machines spanned.

Per-group bandwidths of a 3D plan (:func:`group_bandwidths`, paper Sec. 4.1: "for each type of
communication we use the bottleneck bandwidth of the GPUs involved in the communication"): ranks are
laid out machine after machine (machines in name order) in Megatron's order, TP fastest, then DP, then
PP (``rank = i_pp d t + i_dp t + i_tp``). The DP bandwidth is the slowest bottleneck over the ``t p``
DP groups, the PP bandwidth the slowest over the ``d t`` pipelines. E.g. ``p = 2, t = 4, d = 2`` on two
machines of 8 GPUs: each pipeline stage is one machine, so DP all-reduces stay on NVLink while the
PP hand-offs cross the machine uplink. Without TP/PP the DP group is the whole placement (``bw_dp``).

Shapes: for ``g`` GPUs, the curve considers ``g`` packed on the fewest machines and every even split
``g = k x (g/k)`` over ``k`` machines, on machines of the cluster's largest machine type, filling one
rack before the next (so the tier is the lowest possible for ``k`` machines).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import PlanError
from schedlab.topology.tiers import Tier


@dataclass(frozen=True, slots=True)
class Env:
    placement: tuple[tuple[str, int], ...]
    counts: tuple[int, ...]
    gpus: int
    machines: int
    tier: Tier
    bw_dp: float
    bw_tp: float
    bw_pcie: float
    gpu_memory_gb: float
    cpu_capacity: int



def placement_env(cluster: Cluster, placement: Mapping[str, int]) -> Env:
    counts = cluster.machine_counts(placement)
    names = sorted(counts)
    specs = [cluster.machine(m) for m in names]
    return Env(placement=tuple((m, counts[m]) for m in names), counts=tuple(counts[m] for m in names),
               gpus=sum(counts.values()), machines=len(names), tier=cluster.tier_of(counts),
               bw_dp=cluster.bottleneck_bandwidth(counts),
               bw_tp=min(s.intra.bandwidth_gbps for s in specs), bw_pcie=min(s.pcie_gbps for s in specs),
               gpu_memory_gb=min(s.gpu_memory_gb for s in specs), cpu_capacity=sum(s.cpus for s in specs))


def _group_placements(counts: tuple[int, ...], d: int, t: int, p: int) -> tuple[tuple, tuple]:
    """Distinct sub-placements (``((machine index, gpus), ...)``) of the DP groups and of the PP groups
    of plan ``(d, t, p)`` on ``counts`` (GPUs per machine, in machine order); see the module docstring."""
    machine_of = [i for i, c in enumerate(counts) for _ in range(c)]

    def groups(ranks_of) -> tuple:
        out = set()
        for ranks in ranks_of:
            sub: dict[int, int] = {}
            for r in ranks:
                sub[machine_of[r]] = sub.get(machine_of[r], 0) + 1
            out.add(tuple(sorted(sub.items())))
        return tuple(sorted(out))

    dp_groups = groups([i * d * t + j * t + k for j in range(d)] for i in range(p) for k in range(t))
    pp_groups = groups([i * d * t + j * t + k for i in range(p)] for j in range(d) for k in range(t))
    return dp_groups, pp_groups


def group_links(cluster: Cluster, env: Env, d: int, t: int, p: int) -> tuple[float, float, bool, bool]:
    """``(B_dp, B_pp, dp_inter, pp_inter)`` of plan ``(d, t, p)`` on ``env``'s placement: the bottleneck
    bandwidth (GB/s) of the slowest DP group and of the slowest pipeline (module docstring), and whether
    some DP group / some pipeline crosses machines (then its bottleneck is a machine uplink, and a
    fitted inter-machine effective bandwidth applies to it, else the intra-machine one). Without TP/PP
    the DP group is the whole placement."""
    multi = env.machines > 1
    if not multi or (t == 1 and p == 1) or d * t * p != env.gpus:
        return env.bw_dp, env.bw_dp, multi, multi
    names = [m for m, _ in env.placement]
    dp_g, pp_g = _group_placements(env.counts, d, t, p)

    def worst(gs) -> float:
        return min(cluster.bottleneck_bandwidth({names[i]: c for i, c in g}) for g in gs)

    def crosses(gs) -> bool:
        return any(len(g) > 1 for g in gs)

    return ((worst(dp_g) if d > 1 else env.bw_dp), (worst(pp_g) if p > 1 else env.bw_dp),
            (crosses(dp_g) if d > 1 else multi), (crosses(pp_g) if p > 1 else multi))


def odd_counts(counts: Sequence[int]) -> int:
    """1 when some machine holds an odd GPU count and some machine more than one GPU (``35``, ``112``,
    ``233``; not ``11111111``, one GPU per machine, nor ``2222``), else 0: the parity term's placements."""
    return int(any(c % 2 for c in counts) and max(counts) > 1)


def dp_group_shape(env: Env, d: int, t: int, p: int) -> tuple[int, int, int, int]:
    """``(k, n_max, n_min, odd)`` of plan ``(d, t, p)``'s slowest DP group on ``env``'s placement: the
    machines it spans, its largest / smallest GPU count per machine and :func:`odd_counts` (the
    hierarchical all-reduce and the parity term of :mod:`perfmodel.iteration`). Without
    TP/PP the DP group is the whole placement; with them, the group spanning the most machines (ties:
    odd before even, the smallest ``n_min``, then the largest ``n_max``)."""
    if (t == 1 and p == 1) or d * t * p != env.gpus or env.machines == 1:
        return env.machines, max(env.counts), min(env.counts), odd_counts(env.counts)
    dp_g, _ = _group_placements(env.counts, d, t, p)
    shapes = [(len(g), max(c for _, c in g), min(c for _, c in g), odd_counts([c for _, c in g])) for g in dp_g]
    return max(shapes, key=lambda s: (s[0], s[3], -s[2], s[1]))


def group_bandwidths(cluster: Cluster, env: Env, d: int, t: int, p: int) -> tuple[float, float]:
    """``(B_dp, B_pp)`` in GB/s (:func:`group_links` without the crossing flags)."""
    return group_links(cluster, env, d, t, p)[:2]


def link_figures(cluster: Cluster) -> tuple[float, float]:
    """The cluster's own ``(intra, inter)`` bandwidth figures in GB/s: the fastest intra-machine fabric,
    and the fastest path between two machines (the bounds and starting values of fitted effective
    bandwidths; ``inter`` = ``intra`` on a one-machine cluster)."""
    names = reference_machines(cluster)
    intra = float(max(cluster.machine(m).intra.bandwidth_gbps for m in cluster.machines))
    if len(names) < 2:
        return intra, intra
    return intra, float(cluster.bottleneck_bandwidth({names[0]: 1, names[1]: 1}))


def counts_placement(cluster: Cluster, counts: str | Sequence[int]) -> dict[str, int]:
    """``{machine: gpus}`` of GPU counts per machine (``"44"`` or ``(4, 4)``) on the cluster's reference
    machines (:func:`reference_machines`, rack by rack); raises :class:`PlanError` when they do not fit."""
    c = [int(x) for x in counts] if not isinstance(counts, str) else (
        [int(x) for x in counts] if counts.isdigit() else [])
    ms = reference_machines(cluster)
    if not c or any(x < 1 for x in c):
        raise PlanError(f"placement {counts!r} is not a GPU count (>= 1) per machine")
    if len(c) > len(ms) or max(c) > cluster.max_gpus_per_machine:
        raise PlanError(f"placement {counts!r} does not fit {cluster.name!r} ({len(ms)} machines of "
                        f"{cluster.max_gpus_per_machine} GPUs)")
    return {ms[i]: x for i, x in enumerate(c)}


def reference_machines(cluster: Cluster) -> tuple[str, ...]:
    """Machines of the largest type (most GPUs), ordered rack by rack."""
    top = cluster.max_gpus_per_machine
    out: list[str] = []
    for r in cluster.racks:
        out += [m for m in cluster.machines_in(r) if cluster.machine(m).gpus == top]
    return tuple(out)


def shape_splits(gpus: int, per_machine: int, available: int) -> list[tuple[int, ...]]:
    """GPU counts per machine: packed (fewest machines) and every even split, at most ``available``
    machines of ``per_machine`` GPUs."""
    out: list[tuple[int, ...]] = []
    k0 = math.ceil(gpus / per_machine)
    if k0 <= available:
        q, r = divmod(gpus, per_machine)
        out.append(tuple([per_machine] * q + ([r] if r else [])))
    for k in range(1, min(gpus, available) + 1):
        if gpus % k == 0 and gpus // k <= per_machine:
            split = tuple([gpus // k] * k)
            if split not in out:
                out.append(split)
    return out


def shape_placements(cluster: Cluster, gpus: int) -> list[dict[str, int]]:
    """Canonical placements of ``gpus`` GPUs on the cluster (see the module docstring)."""
    ms = reference_machines(cluster)
    per = cluster.max_gpus_per_machine
    return [dict(zip(ms, split, strict=False)) for split in shape_splits(gpus, per, len(ms))]


__all__ = ["Env", "counts_placement", "dp_group_shape", "group_bandwidths", "group_links", "link_figures",
           "odd_counts", "placement_env", "reference_machines", "shape_placements", "shape_splits"]
