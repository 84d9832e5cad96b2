"""Cluster specs from files: YAML/JSON (homogeneous racks or explicit machine lists), the Tiresias
artifact's cluster-spec CSV, and the Alibaba PAI 2020 machine list.

All validation happens before anything is built; every error names the file and the field (or line).
This module reads a file and picks its format (:func:`load_spec_file`); the YAML/JSON schema and
:func:`spec_from_dict` are in :mod:`schedlab.topology.spec_dict`, the CSV formats in
:mod:`schedlab.topology.spec_csv`, and their public names are re-exported here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schedlab.topology.errors import SpecError
from schedlab.topology.files import read_text
from schedlab.topology.spec import ClusterSpec
from schedlab.topology.spec_csv import (
    PAI_GPU_MEMORY_GB,
    TIRESIAS_COLUMNS,
    csv_amount,
    csv_whole,
    spec_from_pai_machines,
    spec_from_tiresias_csv,
    spec_from_tiresias_text,
)
from schedlab.topology.spec_dict import (
    PROGRESS_EVERY,
    Amount,
    ClusterFile,
    Count,
    LinkModel,
    MachineDefaults,
    MachineModel,
    Progress,
    RackModel,
    Rate,
    spec_from_dict,
)


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
        return spec_from_tiresias_text(text, source=source, name=p.stem, progress=progress)
    data = _parse_structured(text, source=source, json_format=suffix == ".json")
    return spec_from_dict(data, source=source, progress=progress)


__all__ = ["Amount", "ClusterFile", "Count", "LinkModel", "MachineDefaults", "MachineModel",
           "PAI_GPU_MEMORY_GB", "PROGRESS_EVERY", "Progress", "RackModel", "Rate", "TIRESIAS_COLUMNS",
           "csv_amount", "csv_whole", "load_spec_file", "spec_from_dict", "spec_from_pai_machines",
           "spec_from_tiresias_csv"]
