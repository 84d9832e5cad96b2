"""The cluster as a networkx graph: network (spine) -> racks -> machines -> GPUs.

Nodes carry ``kind`` (``"network"``, ``"rack"``, ``"machine"``, ``"gpu"``) and typed attributes
(GPU model and memory, CPUs, host memory); edges carry ``bandwidth_gbps`` (GB/s), ``latency_us`` and
``tier``. The graph is built on first use of :attr:`Cluster.graph` (a cluster of a million GPUs is a
graph of two million nodes and edges, which nothing but the verifier, GraphML export and tools need)
and frozen; everything else in schedlab reads the cluster through :class:`Cluster`, which keeps O(1)
indices (machine -> rack, link bandwidths) for hot paths. ``networkx`` is imported only then.

A *placement* is either a mapping ``{machine: gpu_count}`` (zero counts ignored) or an iterable of
GPU node ids (``"m3/gpu1"``).
"""

from __future__ import annotations

import math
import numbers
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from schedlab.topology.checks import of_type
from schedlab.topology.errors import TopologyError
from schedlab.topology.spec import ClusterSpec, LinkSpec, MachineSpec
from schedlab.topology.tiers import Tier

if TYPE_CHECKING:
    import networkx as nx

NETWORK_NODE = "network"
Placement = Mapping[str, int] | Iterable[str]


def gpu_node(machine: str, index: int) -> str:
    """Node id of GPU ``index`` of ``machine``."""
    return f"{machine}/gpu{index}"


_MACHINE, _RACK, _NETWORK = Tier.MACHINE, Tier.RACK, Tier.NETWORK


class Cluster:
    """A built cluster. Construct with :func:`build_cluster` or ``Cluster(spec)``."""

    def __init__(self, spec: ClusterSpec) -> None:
        of_type(spec, ClusterSpec, "spec", source="<Cluster>")
        self.spec = spec
        self.name = spec.name
        self.machines: tuple[str, ...] = tuple([m.name for m in spec.machines])
        self._machines: dict[str, MachineSpec] = dict(zip(self.machines, spec.machines, strict=True))
        self.racks: tuple[str, ...] = spec.racks
        self.machine_index: dict[str, int] = dict(zip(self.machines, range(len(self.machines)), strict=True))
        by_rack: dict[str, list[str]] = {r: [] for r in self.racks}
        for m in spec.machines:
            by_rack[m.rack].append(m.name)
        self._rack_machines: dict[str, tuple[str, ...]] = {r: tuple(ms) for r, ms in by_rack.items()}

    def __reduce__(self):  # a cluster is its spec; indices and the graph are rebuilt on demand
        return (Cluster, (self.spec,))

    # ------------------------------------------------------------------ graph
    @cached_property
    def graph(self) -> nx.Graph:
        """The frozen networkx graph (built on first access; see the module docstring)."""
        return self.build_graph()

    def build_graph(self, progress: Callable[[str, int, int], None] | None = None) -> nx.Graph:
        """Build (once) and return :attr:`graph`; ``progress("gpus", done, total)`` is called every
        65,536 GPUs while it is built."""
        if "graph" not in self.__dict__:
            import networkx as nx

            self.__dict__["graph"] = nx.freeze(self._build_graph(progress))
        return self.__dict__["graph"]

    def _build_graph(self, progress: Callable[[str, int, int], None] | None) -> nx.Graph:
        import networkx as nx

        g = nx.Graph(name=self.name)
        multi_rack = len(self.racks) > 1
        g.add_node(NETWORK_NODE, kind="network")
        done = 0
        for r in self.racks:
            g.add_node(r, kind="rack")
            up = self.spec.rack_uplinks.get(r)
            if up is not None:
                g.add_edge(r, NETWORK_NODE, tier=Tier.NETWORK.label,
                           bandwidth_gbps=up.bandwidth_gbps, latency_us=up.latency_us)
            elif not multi_rack:
                # single rack: the spine exists only as the root; mark the link as unused
                g.add_edge(r, NETWORK_NODE, tier=Tier.NETWORK.label,
                           bandwidth_gbps=math.inf, latency_us=0.0)
        for m in self.spec.machines:
            g.add_node(m.name, kind="machine", rack=m.rack, gpus=m.gpus, gpu_model=m.gpu_model,
                       gpu_memory_gb=float(m.gpu_memory_gb), cpus=m.cpus,
                       host_memory_gb=float(m.host_memory_gb), pcie_gbps=float(m.pcie_gbps))
            g.add_edge(m.name, m.rack, tier=Tier.RACK.label,
                       bandwidth_gbps=m.uplink.bandwidth_gbps, latency_us=m.uplink.latency_us)
            for i in range(m.gpus):
                gid = gpu_node(m.name, i)
                g.add_node(gid, kind="gpu", machine=m.name, index=i, gpu_model=m.gpu_model,
                           gpu_memory_gb=float(m.gpu_memory_gb))
                g.add_edge(gid, m.name, tier=Tier.MACHINE.label,
                           bandwidth_gbps=m.intra.bandwidth_gbps, latency_us=m.intra.latency_us)
            done += m.gpus
            if progress is not None and done // 65536 != (done - m.gpus) // 65536:
                progress("gpus", done, self.total_gpus)
        if progress is not None:
            progress("gpus", done, self.total_gpus)
        return g

    # ------------------------------------------------------------- accessors
    def machine(self, name: str) -> MachineSpec:
        try:
            return self._machines[name]
        except KeyError:
            raise TopologyError(f"cluster {self.name!r} has no machine {name!r}") from None

    def _gpu_machine(self, gid: object) -> str:
        """The machine of GPU node id ``gid`` (``"<machine>/gpu<i>"``, as :func:`gpu_node` writes it)."""
        machine, sep, index = gid.rpartition("/gpu") if isinstance(gid, str) else ("", "", "")
        spec = self._machines.get(machine) if sep else None
        if spec is None or not (index.isascii() and index.isdigit()) or str(int(index)) != index or int(index) >= spec.gpus:
            raise TopologyError(f"cluster {self.name!r} has no GPU {gid!r}")
        return machine

    def rack_of(self, machine: str) -> str:
        return self.machine(machine).rack

    def machines_in(self, rack: str) -> tuple[str, ...]:
        try:
            return self._rack_machines[rack]
        except KeyError:
            raise TopologyError(f"cluster {self.name!r} has no rack {rack!r}") from None

    def link(self, tier: Tier, where: str) -> LinkSpec:
        """The link of ``tier`` at ``where``: a machine for MACHINE/RACK, a rack for NETWORK."""
        if tier is Tier.MACHINE:
            return self.machine(where).intra
        if tier is Tier.RACK:
            return self.machine(where).uplink
        self.machines_in(where)
        up = self.spec.rack_uplinks.get(where)
        if up is None:
            raise TopologyError(f"rack {where!r} of single-rack cluster {self.name!r} has no network link")
        return up

    @cached_property
    def total_gpus(self) -> int:
        return sum(m.gpus for m in self.spec.machines)

    @cached_property
    def total_cpus(self) -> int:
        return sum(m.cpus for m in self.spec.machines)

    @cached_property
    def total_host_memory_gb(self) -> float:
        return float(sum(m.host_memory_gb for m in self.spec.machines))

    @cached_property
    def max_gpus_per_machine(self) -> int:
        return max(m.gpus for m in self.spec.machines)

    def __repr__(self) -> str:
        return (f"Cluster({self.name!r}: {len(self.racks)} racks, {len(self.machines)} machines, "
                f"{self.total_gpus} GPUs)")

    # ------------------------------------------------------------ placements
    def machine_counts(self, placement: Placement) -> dict[str, int]:
        """Normalise a placement to ``{machine: gpu_count}`` with positive counts, checking names
        and per-machine GPU totals."""
        if isinstance(placement, Mapping):
            counts: dict[str, int] = {}
            for m, k in placement.items():
                k = getattr(k, "gpus", k)  # accept {machine: Resources}
                if type(k) is not int and (isinstance(k, bool) or not isinstance(k, numbers.Integral)):
                    raise TopologyError(f"placement gives machine {m!r} a GPU count that is not an integer: {k!r}")
                if k < 0:
                    raise TopologyError(f"placement gives machine {m!r} a negative GPU count {k}")
                if k:
                    counts[m] = counts.get(m, 0) + int(k)
        else:
            counts = {}
            seen: set[str] = set()
            for gid in placement:
                if gid in seen:
                    raise TopologyError(f"placement lists GPU {gid!r} twice")
                seen.add(gid)
                m = self._gpu_machine(gid)
                counts[m] = counts.get(m, 0) + 1
        for m, k in counts.items():
            cap = self.machine(m).gpus
            if k > cap:
                raise TopologyError(f"placement puts {k} GPUs on machine {m!r}, which has {cap}")
        return counts

    def tier_of(self, placement: Placement, *, default: Tier | None = None) -> Tier:
        """Smallest tier containing every GPU of ``placement``: the one rule of the framework.

        One machine -> MACHINE; several machines of one rack -> RACK; several racks -> NETWORK.
        A placement without GPUs returns ``default``, or raises :class:`TopologyError` when it is
        ``None``; an invalid one (unknown machine, a count that is not a non-negative integer or
        exceeds the machine) raises :class:`TopologyError`. A mapping ``{machine: count or
        Resources}`` takes a fast path of one pass (the simulator calls this on every allocation).
        """
        if type(placement) is dict or isinstance(placement, Mapping):
            info = self._gpus_and_rack
            racks: set[str] = set()
            n = 0
            for m, k in placement.items():
                try:
                    g = k if type(k) is int else k.gpus
                    cap, rack = info[m]
                except (AttributeError, KeyError):
                    g, cap = None, 0
                if type(g) is not int or not 0 <= g <= cap:  # raises, naming what is wrong (or counts numpy's ints)
                    g = self.machine_counts({m: k}).get(m, 0)
                    cap, rack = info[m]
                if g:
                    n += 1
                    racks.add(rack)
        else:
            counts = self.machine_counts(placement)
            n, racks = len(counts), {self._machines[m].rack for m in counts}
        if n:
            return _MACHINE if n == 1 else _RACK if len(racks) == 1 else _NETWORK
        if default is None:
            raise TopologyError("tier_of: empty placement")
        return default

    @cached_property
    def _gpus_and_rack(self) -> dict[str, tuple[int, str]]:
        return {m.name: (m.gpus, m.rack) for m in self.spec.machines}

    def bottleneck_bandwidth(self, placement: Placement) -> float:
        """The slowest link (GB/s) that some pair of the placement's GPUs must cross.

        The graph is a tree, so the links two GPUs cross are those on their paths up to the lowest
        common ancestor: the machine fabric for GPUs of one machine; plus each involved machine's rack
        uplink across machines; plus each involved rack's spine link across racks. A single GPU
        crosses no link: ``math.inf``.
        """
        counts = self.machine_counts(placement)
        if not counts:
            raise TopologyError("bottleneck_bandwidth: empty placement")
        specs = [self._machines[m] for m in counts]
        if len(specs) == 1:
            return math.inf if counts[specs[0].name] == 1 else specs[0].intra.bandwidth_gbps
        # GPUs of a machine with >1 placed GPU talk over the intra fabric; every GPU's path to a
        # remote GPU crosses its own GPU<->machine edge (intra fabric) and the machine uplink.
        bw = min(min(m.intra.bandwidth_gbps, m.uplink.bandwidth_gbps) for m in specs)
        racks = {m.rack for m in specs}
        if len(racks) > 1:
            bw = min(bw, min(self.spec.rack_uplinks[r].bandwidth_gbps for r in racks))
        return bw

    def latency(self, placement: Placement) -> float:
        """Largest one-way path latency (microseconds) between two GPUs of ``placement``."""
        counts = self.machine_counts(placement)
        if not counts:
            raise TopologyError("latency: empty placement")
        specs = [self._machines[m] for m in counts]
        if len(specs) == 1:
            return 0.0 if counts[specs[0].name] == 1 else 2 * specs[0].intra.latency_us
        up = sorted((m.intra.latency_us + m.uplink.latency_us + (
            self.spec.rack_uplinks[m.rack].latency_us if len({s.rack for s in specs}) > 1 else 0.0))
            for m in specs)
        return up[-1] + up[-2]

    # ---------------------------------------------------------------- output
    def summary(self) -> dict:
        """Counts, capacities, per-tier bandwidths and latencies (JSON-ready; one pass over the machines).

        Units are in the keys: ``bandwidth_gb_per_s`` (gigabytes per second, per direction, per link;
        ``{"min", "max"}`` per tier, ``None`` where the tier has no link), ``latency_us``, ``*_gb``.
        """
        ms = self.spec.machines
        kinds = Counter((m.gpu_model, m.gpus) for m in ms)  # few distinct kinds; counted in C
        by_model: Counter = Counter()
        per_machine: Counter = Counter()
        for (model, gpus), n in kinds.items():
            if gpus:
                by_model[model] += gpus * n
            per_machine[gpus] += n
        gpu_mem = sum(m.gpus * m.gpu_memory_gb for m in ms)
        links = {"machine": {id(m.intra): m.intra for m in ms}, "rack": {id(m.uplink): m.uplink for m in ms}}
        pcie = {m.pcie_gbps for m in ms}
        tiers = {"machine": list(links["machine"].values()), "rack": list(links["rack"].values()),
                 "network": list(self.spec.rack_uplinks.values())}

        def bw_range(values: Iterable[float]) -> dict[str, float] | None:
            vals = [v for v in values if math.isfinite(v)]
            return {"min": min(vals), "max": max(vals)} if vals else None

        return {
            "name": self.name,
            "racks": len(self.racks),
            "machines": len(self.machines),
            "gpus": self.total_gpus,
            "cpus": self.total_cpus,
            "host_memory_gb": self.total_host_memory_gb,
            "gpu_memory_gb_total": float(gpu_mem),
            "gpus_by_model": dict(sorted(by_model.items())),
            "gpus_per_machine": dict(sorted(per_machine.items())),
            "bandwidth_gb_per_s": {
                **{t: bw_range(ln.bandwidth_gbps for ln in ls) for t, ls in tiers.items()},
                "pcie": bw_range(pcie),
            },
            "latency_us": {t: max((ln.latency_us for ln in ls), default=None) for t, ls in tiers.items()},
        }

    def to_graphml(self, path: str | Path) -> None:
        """Write the graph as GraphML (infinite bandwidths are written as -1)."""
        import networkx as nx

        g = nx.Graph(self.graph)
        for _, _, d in g.edges(data=True):
            if not math.isfinite(d["bandwidth_gbps"]):
                d["bandwidth_gbps"] = -1.0
        nx.write_graphml(g, str(path))


def build_cluster(spec: ClusterSpec) -> Cluster:
    """Build (and freeze) the graph of ``spec``."""
    return Cluster(spec)


__all__ = ["Cluster", "NETWORK_NODE", "Placement", "build_cluster", "gpu_node"]
