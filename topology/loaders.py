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

import gc
import json
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, model_validator

from schedlab.topology.errors import SpecError
from schedlab.topology.files import read_text
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


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


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
                        field=_loc(err["loc"]) or "<root>") from None


def _limit(what: str, n: int, most: int, source: str, field: str) -> None:
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
        _limit("racks", cf.racks, MAX_RACKS, source, "racks")
        if cf.machines_per_rack is None:
            raise SpecError("racks given as a count needs machines_per_rack", source=source,
                            field="machines_per_rack")
        if cf.machines_per_rack == 0:
            raise SpecError("machines_per_rack must be >= 1", source=source, field="machines_per_rack")
        _limit("machines", cf.racks * cf.machines_per_rack, MAX_MACHINES, source, "machines_per_rack")
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
                _limit("machines", rack.machine_count or 0, MAX_MACHINES, source, f"{rfield}.machine_count")
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
            _limit("GPUs on one machine", vals["gpus"], MAX_GPUS_PER_MACHINE, source, f"{mfield}.gpus")
            n_machines += entry.count
            n_gpus += entry.count * vals["gpus"]
            resolved.append((rname, mfield, entry, vals))
    _limit("machines", n_machines, MAX_MACHINES, source, "racks")
    _limit("GPUs in total", n_gpus, MAX_TOTAL_GPUS, source, "racks")

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


def _parse_structured(text: str, *, source: str, json_format: bool) -> Any:
    """YAML or JSON text -> Python data; a :class:`SpecError` naming the line on a syntax error."""
    import yaml

    try:
        return json.loads(text) if json_format else yaml.safe_load(text)
    except json.JSONDecodeError as e:
        raise SpecError(f"cannot parse JSON: {e.msg}", source=source, line=e.lineno) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise SpecError(f"cannot parse YAML: {problem}", source=source,
                        line=mark.line + 1 if mark is not None else None) from None
    except RecursionError:
        raise SpecError("nested too deeply to be a cluster spec", source=source) from None


def load_spec_file(path: str | Path, *, progress: Progress | None = None) -> ClusterSpec:
    """Load a cluster spec from ``.yaml``/``.yml``/``.json`` or a Tiresias cluster-spec ``.csv``
    (read through :func:`schedlab.topology.files.read_text`: missing, binary or empty files are
    :class:`SpecError` naming the file)."""
    p = Path(path)
    source = str(p)
    text = read_text(p, what="cluster spec")
    suffix = p.suffix.lower()
    if suffix == ".csv":
        return _tiresias_from_text(text, source=source, name=p.stem, progress=progress)
    data = _parse_structured(text, source=source, json_format=suffix == ".json")
    return spec_from_dict(data, source=source, progress=progress)


TIRESIAS_COLUMNS = ("num_switch", "num_node_p_switch", "num_gpu_p_node", "num_cpu_p_node", "mem_p_node")


def _csv_rows(text: str, source: str, *, header: tuple[str, ...] | None = None,
              what: str = "cluster spec") -> list[tuple[int, list[str]]]:
    """``(line number, cells)`` of the rows of a CSV text, read by the one CSV reader
    (:func:`schedlab.topology.tables.read_table`). Without ``header`` the first row is the file's header
    and comes first (as line 1); a row with a wrong number of fields is an error naming its line."""
    from schedlab.topology.tables import read_table

    table = read_table(source, text=text, header=header, error=SpecError, what=what)
    cols = list(table.columns)
    rows = [(line, [rec[c] for c in cols]) for line, rec in table.records()]
    return rows if header is not None else [(1, cols), *rows]


def csv_whole(raw: str, *, source: str, line: int, column: str, minimum: int = 0) -> int:
    """A whole number from a CSV cell: ``"8"`` or ``"8.0"``; fractions, infinities, NaN and text are
    :class:`SpecError` naming the line and column (never truncated)."""
    s = raw.strip()
    try:
        v = int(s)
    except ValueError:
        try:
            f = float(s)
        except ValueError:
            raise SpecError(f"not a number: {raw!r}", source=source, line=line, column=column) from None
        if f != f or f in (float("inf"), float("-inf")):
            raise SpecError(f"must be a finite whole number, got {raw.strip()!r}", source=source, line=line,
                            column=column) from None
        if not f.is_integer():
            raise SpecError(f"must be a whole number, got {raw.strip()!r} (fractions are not truncated)",
                            source=source, line=line, column=column) from None
        v = int(f)
    if v < minimum:
        raise SpecError(f"must be >= {minimum}, got {v}", source=source, line=line, column=column)
    return v


def csv_amount(raw: str, *, source: str, line: int, column: str) -> float:
    """A finite number >= 0 from a CSV cell (NaN, infinities and text are :class:`SpecError`)."""
    try:
        v = float(raw.strip())
    except ValueError:
        raise SpecError(f"not a number: {raw!r}", source=source, line=line, column=column) from None
    if v != v or v in (float("inf"), float("-inf")) or v < 0:
        raise SpecError(f"must be a finite number >= 0, got {raw.strip()!r}", source=source, line=line,
                        column=column)
    return v


def spec_from_tiresias_csv(path: str | Path, *, name: str | None = None,
                           gpu_model: str = "P100-16GB", gpu_memory_gb: float = 16.0,
                           rack_gbit: float = 100.0, network_gbit: float = 100.0,
                           intra_gbps: float = 40.0, progress: Progress | None = None) -> ClusterSpec:
    """The Tiresias artifact's cluster spec: one row of
    ``num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node`` (a switch = a rack).

    The file gives no GPU type or link speeds; defaults follow the Tiresias testbed (P100, 100 Gbps
    EDR InfiniBand, NVLink inside a machine). Counts must be whole numbers (``4.5`` is an error, not
    4); ``mem_p_node`` (GB) may be fractional; NaN and infinities are errors.
    """
    p = Path(path)
    return _tiresias_from_text(read_text(p, what="cluster spec"), source=str(p), name=name or p.stem,
                               gpu_model=gpu_model, gpu_memory_gb=gpu_memory_gb, rack_gbit=rack_gbit,
                               network_gbit=network_gbit, intra_gbps=intra_gbps, progress=progress)


def _tiresias_from_text(text: str, *, source: str, name: str, gpu_model: str = "P100-16GB",
                        gpu_memory_gb: float = 16.0, rack_gbit: float = 100.0, network_gbit: float = 100.0,
                        intra_gbps: float = 40.0, progress: Progress | None = None) -> ClusterSpec:
    rows = _csv_rows(text, source)
    if not rows:
        raise SpecError("no rows", source=source)
    header = [c.strip() for c in rows[0][1]]
    missing = [c for c in TIRESIAS_COLUMNS if c not in header]
    if missing:
        raise SpecError(f"missing column(s) {missing}", source=source, line=rows[0][0], field=missing[0])
    if len(rows) != 2:
        raise SpecError(f"expected one data row, found {len(rows) - 1}", source=source, line=rows[-1][0])
    line, row = rows[1]
    cells: dict[str, str] = {}
    for c in TIRESIAS_COLUMNS:
        i = header.index(c)
        cells[c] = row[i] if i < len(row) else ""
    counts = {c: csv_whole(cells[c], source=source, line=line, column=c,
                           minimum=1 if c in ("num_switch", "num_node_p_switch") else 0)
              for c in TIRESIAS_COLUMNS[:4]}
    mem = csv_amount(cells["mem_p_node"], source=source, line=line, column="mem_p_node")
    data = {
        "name": name,
        "defaults": {"gpus": counts["num_gpu_p_node"], "gpu_model": gpu_model,
                     "gpu_memory_gb": float(gpu_memory_gb), "cpus": counts["num_cpu_p_node"],
                     "host_memory_gb": mem, "pcie_gbps": 16.0},
        "links": {"machine": {"bandwidth_gbps": float(intra_gbps), "latency_us": 1.0},
                  "rack": {"bandwidth_gbit": float(rack_gbit), "latency_us": 2.0},
                  "network": {"bandwidth_gbit": float(network_gbit), "latency_us": 5.0}},
        "racks": counts["num_switch"],
        "machines_per_rack": counts["num_node_p_switch"],
    }
    try:
        return spec_from_dict(data, source=source, progress=progress)
    except SpecError as e:  # name the CSV line (and column) the generated field came from
        column = {"gpus": "num_gpu_p_node", "cpus": "num_cpu_p_node", "host_memory_gb": "mem_p_node",
                  "machines_per_rack": "num_node_p_switch"}.get((e.field or "").rpartition(".")[2])
        raise SpecError(e.message, source=source, line=line, column=column) from None


# GPU memory by PAI gpu_type (GB); "MISC" is undocumented in the trace (assumed 16 GB, ours).
PAI_GPU_MEMORY_GB = {"P100": 16.0, "T4": 16.0, "V100": 16.0, "V100M32": 32.0, "MISC": 16.0, "CPU": 0.0}


def spec_from_pai_machines(path: str | Path, *, machines_per_rack: int = 32,
                           name: str = "pai-2020") -> ClusterSpec:
    """The Alibaba PAI 2020 machine list (no header: ``machine,gpu_type,cap_cpu,cap_mem,cap_gpu``).

    The trace has no rack information; machines are grouped into racks of ``machines_per_rack`` in
    file order (ours). Links: NVLink-class 50 GB/s inside a machine for V100 types, PCIe 16 GB/s for
    the others; 25 GB/s rack fabric and 12.5 GB/s spine (ours; the trace gives none). ``cap_cpu`` and
    ``cap_gpu`` must be whole numbers, ``cap_mem`` a finite number >= 0.
    """
    p = Path(path)
    source = str(p)
    if isinstance(machines_per_rack, bool) or not isinstance(machines_per_rack, int) or machines_per_rack < 1:
        raise SpecError(f"machines_per_rack must be an integer >= 1, got {machines_per_rack!r}", source=source,
                        field="machines_per_rack")
    text = read_text(p, what="PAI machine list")
    machines: list[MachineSpec] = []
    rack_link = LinkSpec(25.0, 2.0)
    links = {True: LinkSpec(50.0, 1.0), False: LinkSpec(16.0, 2.0)}
    cols = ("machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu")
    for lineno, row in _csv_rows(text, source, header=cols, what="PAI machine list"):
        if len(row) != 5:
            raise SpecError(f"expected 5 columns (machine,gpu_type,cap_cpu,cap_mem,cap_gpu), got {len(row)}",
                            source=source, line=lineno)
        mname, gtype = row[0].strip(), row[1].strip()
        if not machines and mname == "machine":
            continue  # tolerate a header row
        if gtype not in PAI_GPU_MEMORY_GB:
            raise SpecError(f"unknown gpu_type {gtype!r}; known: {', '.join(PAI_GPU_MEMORY_GB)}", source=source,
                            line=lineno, column="gpu_type")
        cpus = csv_whole(row[2], source=source, line=lineno, column="cap_cpu")
        mem = csv_amount(row[3], source=source, line=lineno, column="cap_mem")
        gpus = csv_whole(row[4], source=source, line=lineno, column="cap_gpu")
        _limit("machines", len(machines) + 1, MAX_MACHINES, source, f"line {lineno}")
        try:
            machines.append(MachineSpec(
                name=mname, rack=f"rack{len(machines) // machines_per_rack}", gpus=gpus,
                gpu_model=gtype if gpus else "none", gpu_memory_gb=PAI_GPU_MEMORY_GB[gtype] if gpus else 0.0,
                cpus=cpus, host_memory_gb=mem, intra=links[gtype.startswith("V100")], uplink=rack_link,
                pcie_gbps=16.0))
        except SpecError as e:
            raise SpecError(e.message, source=source, line=lineno,
                            column={"gpus": "cap_gpu", "name": "machine"}.get(e.field or "", e.field)) from None
    if not machines:
        raise SpecError("no machines", source=source)
    racks = sorted({m.rack for m in machines})
    uplinks = {r: LinkSpec(12.5, 5.0) for r in racks} if len(racks) > 1 else {}
    return ClusterSpec(name=name, machines=tuple(machines), rack_uplinks=uplinks, source=source)


__all__ = ["Amount", "ClusterFile", "Count", "LinkModel", "MachineDefaults", "MachineModel",
           "PAI_GPU_MEMORY_GB", "PROGRESS_EVERY", "Progress", "RackModel", "Rate", "TIRESIAS_COLUMNS",
           "csv_amount", "csv_whole", "load_spec_file", "spec_from_dict", "spec_from_pai_machines",
           "spec_from_tiresias_csv"]
