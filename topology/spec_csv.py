"""Cluster specs from CSV files: the Tiresias artifact's cluster-spec CSV and the Alibaba PAI 2020
machine list, read by the one CSV reader (:func:`schedlab.topology.tables.read_table`); cells are
checked by :func:`csv_whole` / :func:`csv_amount`, and every error names the file, line and column."""

from __future__ import annotations

from pathlib import Path

from schedlab.topology.errors import SpecError
from schedlab.topology.files import read_text
from schedlab.topology.spec import MAX_MACHINES, ClusterSpec, LinkSpec, MachineSpec
from schedlab.topology.spec_dict import Progress, check_limit, spec_from_dict

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
    return spec_from_tiresias_text(read_text(p, what="cluster spec"), source=str(p), name=name or p.stem,
                                   gpu_model=gpu_model, gpu_memory_gb=gpu_memory_gb, rack_gbit=rack_gbit,
                                   network_gbit=network_gbit, intra_gbps=intra_gbps, progress=progress)


def spec_from_tiresias_text(text: str, *, source: str, name: str, gpu_model: str = "P100-16GB",
                            gpu_memory_gb: float = 16.0, rack_gbit: float = 100.0,
                            network_gbit: float = 100.0, intra_gbps: float = 40.0,
                            progress: Progress | None = None) -> ClusterSpec:
    """:func:`spec_from_tiresias_csv` on the file's text (``source`` names it in errors)."""
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
        check_limit("machines", len(machines) + 1, MAX_MACHINES, source, f"line {lineno}")
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


__all__ = ["PAI_GPU_MEMORY_GB", "TIRESIAS_COLUMNS", "csv_amount", "csv_whole", "spec_from_pai_machines",
           "spec_from_tiresias_csv", "spec_from_tiresias_text"]
