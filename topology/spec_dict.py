"""Cluster specs from a YAML/JSON mapping (:func:`spec_from_dict`): the file schema as pydantic models,
validated before anything is built; every error names the source and the field. The format::

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

Files are read by :func:`schedlab.topology.loaders.load_spec_file`; the CSV formats are in
:mod:`schedlab.topology.spec_csv`.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from contextlib import contextmanager
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, model_validator

from schedlab.topology.errors import SpecError, field_path
from schedlab.topology.spec import (
    MAX_GPUS_PER_MACHINE,
    MAX_MACHINES,
    MAX_RACKS,
    MAX_TOTAL_GPUS,
    ClusterSpec,
    LinkSpec,
    MachineSpec,
    gbit_to_gbyte,
)
from schedlab.topology.tiers import Tier

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: called now and then while a large spec is built (``stage`` is
``"machines"``); the CLI prints it on stderr."""

PROGRESS_EVERY = 1 << 16
"""Machines between two progress calls."""

# Strict: no booleans as numbers, no strings as numbers; allow_inf_nan=False: no NaN, no infinities.
Count = Annotated[int, Strict(), Field(ge=0)]
Amount = Annotated[float, Strict(), Field(ge=0)]
Rate = Annotated[float, Strict(), Field(gt=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


class LinkModel(_Strict):
    bandwidth_gbps: Rate | None = None
    bandwidth_gbit: Rate | None = None
    latency_us: Amount = 0.0

    @model_validator(mode="after")
    def _one_bandwidth(self) -> LinkModel:
        if (self.bandwidth_gbps is None) == (self.bandwidth_gbit is None):
            raise ValueError("give exactly one of bandwidth_gbps (GB/s) or bandwidth_gbit (Gb/s)")
        return self

    def to_spec(self) -> LinkSpec:
        bw = self.bandwidth_gbps if self.bandwidth_gbps is not None else gbit_to_gbyte(self.bandwidth_gbit)
        return LinkSpec(bw, self.latency_us)


class MachineDefaults(_Strict):
    gpus: Count | None = None
    gpu_model: str | None = None
    gpu_memory_gb: Amount | None = None
    cpus: Count | None = None
    host_memory_gb: Amount | None = None
    pcie_gbps: Rate | None = None


class MachineModel(MachineDefaults):
    name: str | None = Field(default=None, min_length=1)
    count: int = Field(default=1, ge=1)


class RackModel(_Strict):
    name: str | None = Field(default=None, min_length=1)
    machines: list[MachineModel] | None = None
    machine_count: Count | None = None
    defaults: MachineDefaults = MachineDefaults()


class ClusterFile(_Strict):
    name: str = Field(min_length=1)
    defaults: MachineDefaults = MachineDefaults()
    links: dict[str, LinkModel]
    racks: Annotated[int, Strict()] | list[RackModel]
    machines_per_rack: Count | None = None


_MACHINE_FIELDS = ("gpus", "gpu_model", "gpu_memory_gb", "cpus", "host_memory_gb", "pcie_gbps")
_FALLBACK = {"pcie_gbps": 32.0}


def _got(value: Any) -> str:
    if isinstance(value, (dict, list, tuple)):
        return ""
    r = repr(value)
    return f" (got {r if len(r) <= 60 else r[:57] + '...'})"


def _precheck_sizes(data: dict, source: str) -> None:
    """Refuse lists longer than the limits before pydantic walks them (a YAML alias can make a short
    file describe billions of entries)."""
    racks = data.get("racks")
    if not isinstance(racks, list):
        return
    if len(racks) > MAX_RACKS:
        raise SpecError(f"{len(racks):,} racks is more than schedlab supports (at most {MAX_RACKS:,})",
                        source=source, field="racks")
    entries = 0
    for r in racks:
        ms = r.get("machines") if isinstance(r, dict) else None
        entries += len(ms) if isinstance(ms, list) else 0
        if entries > MAX_MACHINES:
            raise SpecError(f"more than {MAX_MACHINES:,} machine entries (schedlab's limit)", source=source,
                            field="racks")


def _validated(data: Any, source: str) -> ClusterFile:
    if not isinstance(data, dict):
        raise SpecError(f"top level must be a mapping, got {type(data).__name__}", source=source, field="<root>")
    _precheck_sizes(data, source)
    try:
        return ClusterFile.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        raise SpecError(err["msg"] + _got(err.get("input")), source=source,
                        field=field_path(err["loc"]) or "<root>") from None


def check_limit(what: str, n: int, most: int, source: str, field: str) -> None:
    """A :class:`SpecError` naming ``field`` when ``n`` ``what`` exceed schedlab's limit ``most``."""
    if n > most:
        raise SpecError(f"{n:,} {what} is more than schedlab supports (at most {most:,})", source=source,
                        field=field)


def spec_from_dict(data: Any, *, source: str = "<dict>", progress: Progress | None = None) -> ClusterSpec:
    """Validate a cluster description (the YAML/JSON schema above) and return its spec.

    Sizes are checked before any machine is built (at most ``MAX_GPUS_PER_MACHINE`` GPUs per machine,
    ``MAX_TOTAL_GPUS`` GPUs, ``MAX_MACHINES`` machines, ``MAX_RACKS`` racks); building is linear in the
    number of machines, with ``progress("machines", done, total)`` every ``PROGRESS_EVERY`` machines.
    """
    cf = _validated(data, source)
    links: dict[Tier, LinkSpec] = {}
    for key, lm in cf.links.items():
        tier = Tier.parse(key, source=source, field=f"links.{key}")
        links[tier] = lm.to_spec()
    for t in (Tier.MACHINE, Tier.RACK):
        if t not in links:
            raise SpecError(f"missing bandwidth for tier {t.label}", source=source, field=f"links.{t.label}")

    # racks as (name, field, entries, rack defaults, entries named in the file?)
    plan: list[tuple[str, str, list[MachineModel], MachineDefaults, bool]] = []
    if isinstance(cf.racks, int):
        if cf.racks <= 0:
            raise SpecError("racks must be >= 1", source=source, field="racks")
        check_limit("racks", cf.racks, MAX_RACKS, source, "racks")
        if cf.machines_per_rack is None:
            raise SpecError("racks given as a count needs machines_per_rack", source=source,
                            field="machines_per_rack")
        if cf.machines_per_rack == 0:
            raise SpecError("machines_per_rack must be >= 1", source=source, field="machines_per_rack")
        check_limit("machines", cf.racks * cf.machines_per_rack, MAX_MACHINES, source, "machines_per_rack")
        entry = [MachineModel(count=cf.machines_per_rack)]
        plan = [(f"rack{r}", "racks", entry, MachineDefaults(), False) for r in range(cf.racks)]
    else:
        if cf.machines_per_rack is not None:
            raise SpecError("machines_per_rack only goes with racks given as a count", source=source,
                            field="machines_per_rack")
        if not cf.racks:
            raise SpecError("racks list is empty", source=source, field="racks")
        seen: set[str] = set()
        for ri, rack in enumerate(cf.racks):
            rname = rack.name or f"rack{ri}"
            rfield = f"racks[{ri}]"
            if rname in seen:
                raise SpecError(f"duplicate rack name {rname!r}", source=source, field=f"{rfield}.name")
            seen.add(rname)
            if rack.machines is not None and rack.machine_count is not None:
                raise SpecError("give machines or machine_count, not both", source=source, field=rfield)
            if rack.machines is not None:
                plan.append((rname, rfield, rack.machines, rack.defaults, True))
            else:
                check_limit("machines", rack.machine_count or 0, MAX_MACHINES, source, f"{rfield}.machine_count")
                entries = [MachineModel(count=rack.machine_count)] if rack.machine_count else []
                plan.append((rname, rfield, entries, rack.defaults, False))

    # resolve every entry's values and check the sizes before building anything
    resolved: list[tuple[str, str, MachineModel, dict[str, Any]]] = []
    n_machines = n_gpus = 0
    for rname, rfield, entries, rdefaults, named in plan:
        if not entries:
            raise SpecError(f"rack {rname!r} has no machines", source=source, field=f"{rfield}.machines")
        for mi, entry in enumerate(entries):
            mfield = f"{rfield}.machines[{mi}]" if named else rfield
            vals: dict[str, Any] = {}
            for fld in _MACHINE_FIELDS:
                v = getattr(entry, fld)
                if v is None:
                    v = getattr(rdefaults, fld)
                if v is None:
                    v = getattr(cf.defaults, fld)
                if v is None:
                    v = _FALLBACK.get(fld)
                if v is None:
                    raise SpecError(f"missing {fld} (give it on the machine, its rack or in defaults)",
                                    source=source, field=f"{mfield}.{fld}")
                vals[fld] = v
            check_limit("GPUs on one machine", vals["gpus"], MAX_GPUS_PER_MACHINE, source, f"{mfield}.gpus")
            n_machines += entry.count
            n_gpus += entry.count * vals["gpus"]
            resolved.append((rname, mfield, entry, vals))
    check_limit("machines", n_machines, MAX_MACHINES, source, "racks")
    check_limit("GPUs in total", n_gpus, MAX_TOTAL_GPUS, source, "racks")

    with _gc_paused():
        machines = _build_machines(resolved, links[Tier.MACHINE], links[Tier.RACK], n_machines, source, progress)
    rack_names = [p[0] for p in plan]
    uplinks: dict[str, LinkSpec] = {}
    if len(rack_names) > 1:
        if Tier.NETWORK not in links:
            raise SpecError("missing bandwidth for tier network (cluster has several racks)",
                            source=source, field="links.network")
        uplinks = {r: links[Tier.NETWORK] for r in rack_names}
    elif Tier.NETWORK in links:
        uplinks = {rack_names[0]: links[Tier.NETWORK]}
    with _gc_paused():
        return ClusterSpec(name=cf.name, machines=tuple(machines), rack_uplinks=uplinks, source=source)


@contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector while a million acyclic values are built (its passes would
    re-scan them again and again; reference counting still frees everything)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _build_machines(resolved: list, intra: LinkSpec, uplink: LinkSpec, n_machines: int, source: str,
                    progress: Progress | None) -> list[MachineSpec]:
    """Expand resolved machine entries into ``MachineSpec`` values (linear; names per rack counted)."""
    machines: list[MachineSpec] = []
    in_rack: dict[str, int] = {}
    for rname, mfield, entry, vals in resolved:
        args = (vals["gpus"], str(vals["gpu_model"]), float(vals["gpu_memory_gb"]), vals["cpus"],
                float(vals["host_memory_gb"]), intra, uplink, float(vals["pcie_gbps"]))
        try:  # one checked machine per entry; its copies differ only in name
            MachineSpec(entry.name or f"{rname}-m0", rname, *args)
        except SpecError as e:
            raise SpecError(e.message, source=source, field=f"{mfield}.{e.field}") from None
        k0 = in_rack.get(rname, 0)
        in_rack[rname] = k0 + entry.count
        for lo in range(0, entry.count, PROGRESS_EVERY):
            hi = min(entry.count, lo + PROGRESS_EVERY)
            if entry.name is not None:
                names = [entry.name] if entry.count == 1 else [f"{entry.name}-{k}" for k in range(lo, hi)]
            else:
                names = [f"{rname}-m{k}" for k in range(k0 + lo, k0 + hi)]
            before = len(machines)
            machines.extend([MachineSpec(n, rname, *args) for n in names])
            if progress is not None and len(machines) // PROGRESS_EVERY != before // PROGRESS_EVERY:
                progress("machines", len(machines), n_machines)
    if progress is not None:
        progress("machines", len(machines), n_machines)
    return machines


__all__ = ["Amount", "ClusterFile", "Count", "LinkModel", "MachineDefaults", "MachineModel", "PROGRESS_EVERY",
           "Progress", "RackModel", "Rate", "check_limit", "spec_from_dict"]
