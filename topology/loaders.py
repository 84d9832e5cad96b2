"""Cluster specs from files: YAML/JSON (homogeneous racks or explicit machine lists), the Tiresias
artifact's cluster-spec CSV, and the Alibaba PAI 2020 machine list.

All validation happens here, before anything is built; every error names the file and the field
(or line). File format (YAML or JSON)::

    name: my-cluster
    defaults:                      # per machine, overridable per rack or machine
      gpus: 8
      gpu_model: A100-80GB
      gpu_memory_gb: 80
      cpus: 96
      host_memory_gb: 1024
      pcie_gbps: 32
    links:                         # one entry per tier; bandwidth in GB/s (or *_gbit in Gb/s)
      machine: {bandwidth_gbps: 300, latency_us: 1}
      rack:    {bandwidth_gbit: 400, latency_us: 2}
      network: {bandwidth_gbit: 800, latency_us: 5}
    # either a homogeneous shape ...
    racks: 4
    machines_per_rack: 8
    # ... or explicit racks with explicit machines (``count`` repeats a machine entry)
    racks:
      - name: r0
        machines: [{name: a0, gpus: 4}, {count: 3, gpus: 8, gpu_model: V100-32GB, gpu_memory_gb: 32}]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from schedlab.topology.errors import SpecError
from schedlab.topology.spec import ClusterSpec, LinkSpec, MachineSpec, gbit_to_gbyte
from schedlab.topology.tables import read_table
from schedlab.topology.tiers import Tier


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinkModel(_Strict):
    bandwidth_gbps: float | None = Field(default=None, gt=0)
    bandwidth_gbit: float | None = Field(default=None, gt=0)
    latency_us: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _one_bandwidth(self) -> LinkModel:
        if (self.bandwidth_gbps is None) == (self.bandwidth_gbit is None):
            raise ValueError("give exactly one of bandwidth_gbps (GB/s) or bandwidth_gbit (Gb/s)")
        return self

    def to_spec(self) -> LinkSpec:
        bw = self.bandwidth_gbps if self.bandwidth_gbps is not None else gbit_to_gbyte(self.bandwidth_gbit)
        return LinkSpec(bw, self.latency_us)


class MachineDefaults(_Strict):
    gpus: int | None = Field(default=None, ge=0)
    gpu_model: str | None = None
    gpu_memory_gb: float | None = Field(default=None, ge=0)
    cpus: int | None = Field(default=None, ge=0)
    host_memory_gb: float | None = Field(default=None, ge=0)
    pcie_gbps: float | None = Field(default=None, gt=0)


class MachineModel(MachineDefaults):
    name: str | None = None
    count: int = Field(default=1, ge=1)


class RackModel(_Strict):
    name: str | None = None
    machines: list[MachineModel] | None = None
    machine_count: int | None = Field(default=None, ge=0)
    defaults: MachineDefaults = MachineDefaults()


class ClusterFile(_Strict):
    name: str = Field(min_length=1)
    defaults: MachineDefaults = MachineDefaults()
    links: dict[str, LinkModel]
    racks: int | list[RackModel]
    machines_per_rack: int | None = Field(default=None, ge=0)


_MACHINE_FIELDS = ("gpus", "gpu_model", "gpu_memory_gb", "cpus", "host_memory_gb", "pcie_gbps")
_FALLBACK = {"pcie_gbps": 32.0}


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _validated(data: Any, source: str) -> ClusterFile:
    if not isinstance(data, dict):
        raise SpecError("top level must be a mapping", source=source, field="<root>")
    try:
        return ClusterFile.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        raise SpecError(err["msg"], source=source, field=_loc(err["loc"]) or "<root>") from None


def spec_from_dict(data: Any, *, source: str = "<dict>") -> ClusterSpec:
    """Validate a cluster description (the YAML/JSON schema above) and return its spec."""
    cf = _validated(data, source)
    links: dict[Tier, LinkSpec] = {}
    for key, lm in cf.links.items():
        tier = Tier.parse(key, source=source, field=f"links.{key}")
        links[tier] = lm.to_spec()

    if isinstance(cf.racks, int):
        if cf.racks <= 0:
            raise SpecError("racks must be >= 1", source=source, field="racks")
        if cf.machines_per_rack is None:
            raise SpecError("racks given as a count needs machines_per_rack", source=source,
                            field="machines_per_rack")
        racks = [RackModel(name=f"rack{r}", machine_count=cf.machines_per_rack) for r in range(cf.racks)]
    else:
        if cf.machines_per_rack is not None:
            raise SpecError("machines_per_rack only goes with racks given as a count", source=source,
                            field="machines_per_rack")
        racks = cf.racks
        if not racks:
            raise SpecError("racks list is empty", source=source, field="racks")

    machines: list[MachineSpec] = []
    rack_names: list[str] = []
    for ri, rack in enumerate(racks):
        rname = rack.name or f"rack{ri}"
        rfield = f"racks[{ri}]" if not isinstance(cf.racks, int) else "racks"
        if rname in rack_names:
            raise SpecError(f"duplicate rack name {rname!r}", source=source, field=f"{rfield}.name")
        rack_names.append(rname)
        if rack.machines is not None and rack.machine_count is not None:
            raise SpecError("give machines or machine_count, not both", source=source, field=rfield)
        entries = rack.machines if rack.machines is not None else [
            MachineModel() for _ in range(rack.machine_count or 0)]
        if not entries:
            raise SpecError(f"rack {rname!r} has no machines", source=source, field=f"{rfield}.machines")
        for mi, entry in enumerate(entries):
            mfield = f"{rfield}.machines[{mi}]" if rack.machines is not None else rfield
            vals = {}
            for fld in _MACHINE_FIELDS:
                v = getattr(entry, fld)
                if v is None:
                    v = getattr(rack.defaults, fld)
                if v is None:
                    v = getattr(cf.defaults, fld)
                if v is None:
                    v = _FALLBACK.get(fld)
                if v is None:
                    raise SpecError(f"missing {fld} (give it on the machine, its rack or in defaults)",
                                    source=source, field=f"{mfield}.{fld}")
                vals[fld] = v
            for k in range(entry.count):
                if entry.name is not None:
                    mname = entry.name if entry.count == 1 else f"{entry.name}-{k}"
                else:
                    mname = f"{rname}-m{len([m for m in machines if m.rack == rname])}"
                need = [Tier.MACHINE, Tier.RACK]
                for t in need:
                    if t not in links:
                        raise SpecError(f"missing bandwidth for tier {t.label}", source=source,
                                        field=f"links.{t.label}")
                machines.append(MachineSpec(
                    name=mname, rack=rname, gpus=int(vals["gpus"]), gpu_model=str(vals["gpu_model"]),
                    gpu_memory_gb=float(vals["gpu_memory_gb"]), cpus=int(vals["cpus"]),
                    host_memory_gb=float(vals["host_memory_gb"]), intra=links[Tier.MACHINE],
                    uplink=links[Tier.RACK], pcie_gbps=float(vals["pcie_gbps"])))
    uplinks: dict[str, LinkSpec] = {}
    if len(rack_names) > 1:
        if Tier.NETWORK not in links:
            raise SpecError("missing bandwidth for tier network (cluster has several racks)",
                            source=source, field="links.network")
        uplinks = {r: links[Tier.NETWORK] for r in rack_names}
    elif Tier.NETWORK in links:
        uplinks = {rack_names[0]: links[Tier.NETWORK]}
    return ClusterSpec(name=cf.name, machines=tuple(machines), rack_uplinks=uplinks, source=source)


def load_spec_file(path: str | Path) -> ClusterSpec:
    """Load a cluster spec from ``.yaml``/``.yml``/``.json`` or a Tiresias cluster-spec ``.csv``."""
    p = Path(path)
    source = str(p)
    if not p.is_file():
        raise SpecError("no such file", source=source)
    suffix = p.suffix.lower()
    if suffix == ".csv":
        return spec_from_tiresias_csv(p)
    text = p.read_text()
    try:
        data = json.loads(text) if suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        line = getattr(e, "lineno", None)
        mark = getattr(e, "problem_mark", None)
        if mark is not None:
            line = mark.line + 1
        raise SpecError(f"cannot parse: {e}", source=source, line=line) from None
    return spec_from_dict(data, source=source)


TIRESIAS_COLUMNS = ("num_switch", "num_node_p_switch", "num_gpu_p_node", "num_cpu_p_node", "mem_p_node")


def spec_from_tiresias_csv(path: str | Path, *, name: str | None = None,
                           gpu_model: str = "P100-16GB", gpu_memory_gb: float = 16.0,
                           rack_gbit: float = 100.0, network_gbit: float = 100.0,
                           intra_gbps: float = 40.0) -> ClusterSpec:
    """The Tiresias artifact's cluster spec: one row of
    ``num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node`` (a switch = a rack).

    The file gives no GPU type or link speeds; defaults follow the Tiresias testbed (P100, 100 Gbps
    EDR InfiniBand, NVLink inside a machine).
    """
    p = Path(path)
    source = str(p)
    table = read_table(p, what="cluster spec", error=SpecError)
    missing = [c for c in TIRESIAS_COLUMNS if c not in table.columns]
    if missing:
        raise SpecError(f"missing column(s) {missing}", source=source, line=1, field=missing[0])
    if len(table) != 1:
        raise SpecError(f"expected one data row, found {len(table)}", source=source,
                        line=int(table.lines[-1]) if len(table) else 1)
    ln, row = next(table.records())
    vals: dict[str, int] = {}
    for c in TIRESIAS_COLUMNS:
        raw = row[c]
        try:
            v = int(float(raw))
        except (ValueError, OverflowError):
            raise SpecError(f"not a number: {raw!r}", source=source, line=ln, column=c) from None
        if v < 0 or (c in ("num_switch", "num_node_p_switch") and v == 0):
            raise SpecError(f"invalid value {v}", source=source, line=ln, column=c)
        vals[c] = v
    data = {
        "name": name or p.stem,
        "defaults": {"gpus": vals["num_gpu_p_node"], "gpu_model": gpu_model,
                     "gpu_memory_gb": gpu_memory_gb, "cpus": vals["num_cpu_p_node"],
                     "host_memory_gb": vals["mem_p_node"], "pcie_gbps": 16.0},
        "links": {"machine": {"bandwidth_gbps": intra_gbps, "latency_us": 1.0},
                  "rack": {"bandwidth_gbit": rack_gbit, "latency_us": 2.0},
                  "network": {"bandwidth_gbit": network_gbit, "latency_us": 5.0}},
        "racks": vals["num_switch"],
        "machines_per_rack": vals["num_node_p_switch"],
    }
    return spec_from_dict(data, source=source)


# GPU memory by PAI gpu_type (GB); "MISC" is undocumented in the trace (assumed 16 GB, ours).
PAI_GPU_MEMORY_GB = {"P100": 16.0, "T4": 16.0, "V100": 16.0, "V100M32": 32.0, "MISC": 16.0, "CPU": 0.0}


def spec_from_pai_machines(path: str | Path, *, machines_per_rack: int = 32,
                           name: str = "pai-2020") -> ClusterSpec:
    """The Alibaba PAI 2020 machine list (no header: ``machine,gpu_type,cap_cpu,cap_mem,cap_gpu``).

    The trace has no rack information; machines are grouped into racks of ``machines_per_rack`` in
    file order (ours). Links: NVLink-class 50 GB/s inside a machine for V100 types, PCIe 16 GB/s for
    the others; 25 GB/s rack fabric and 12.5 GB/s spine (ours; the trace gives none).
    """
    p = Path(path)
    source = str(p)
    machines: list[MachineSpec] = []
    rack_link = LinkSpec(25.0, 2.0)
    cols = ("machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu")
    for lineno, rec in read_table(p, what="machine list", header=cols, error=SpecError).records():
        row = [rec[c] for c in cols]
        mname, gtype = row[0], row[1]
        if lineno == 1 and mname == "machine":
            continue  # tolerate a header row
        try:
            cpus, mem, gpus = int(float(row[2])), float(row[3]), int(float(row[4]))
        except (ValueError, OverflowError):
            raise SpecError(f"non-numeric capacity in {row[2:]!r}", source=source, line=lineno,
                            column="cap_cpu/cap_mem/cap_gpu") from None
        if gtype not in PAI_GPU_MEMORY_GB:
            raise SpecError(f"unknown gpu_type {gtype!r}", source=source, line=lineno, column="gpu_type")
        if gpus < 0 or cpus < 0 or mem < 0:
            raise SpecError("negative capacity", source=source, line=lineno, column="cap_gpu")
        intra = LinkSpec(50.0, 1.0) if gtype.startswith("V100") else LinkSpec(16.0, 2.0)
        machines.append(MachineSpec(
            name=mname, rack=f"rack{len(machines) // machines_per_rack}", gpus=gpus,
            gpu_model=gtype if gpus else "none", gpu_memory_gb=PAI_GPU_MEMORY_GB[gtype] if gpus else 0.0,
            cpus=cpus, host_memory_gb=mem, intra=intra, uplink=rack_link, pcie_gbps=16.0))
    racks = sorted({m.rack for m in machines})
    uplinks = {r: LinkSpec(12.5, 5.0) for r in racks} if len(racks) > 1 else {}
    return ClusterSpec(name=name, machines=tuple(machines), rack_uplinks=uplinks, source=source)
