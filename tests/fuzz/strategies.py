"""Hypothesis strategies and helpers for fuzzing schedlab's inputs, shared by every fuzz test.

Importable from any test as ``from fuzz.strategies import ...`` (``pythonpath = ["tests"]`` in the
pytest configuration). What is here:

* values: :func:`nasty_values` (NaN, infinities, huge and negative numbers, booleans, strings, None,
  containers), :func:`flag_strings` (what a user can type after ``--flag``: numbers in odd spellings,
  non-ASCII and undecodable text);
* files: :func:`as_file_bytes` (a text in every encoding schedlab must read or refuse: UTF-8 with and
  without BOM, UTF-16/32 with BOM, UTF-16 without BOM, Latin-1, truncated, binary, empty);
* documents: :func:`valid_specs` / :func:`broken_specs` (YAML/JSON cluster specs), :func:`tiresias_csv`,
  :func:`pai_csv`, :func:`mutated` (any JSON-like document with keys deleted, added or given nasty
  values), :func:`instance_documents` (``schedlab solve --instance`` files);
* running: :func:`run_cli` (the real entry point, in process), :func:`assert_clean_cli` (exit 0 with
  output, or exit 2 with exactly one ``error:`` line and no traceback), :func:`watchdog` (a hang
  detector: raises :class:`Hang` when a run exceeds its budget; a budget, not a speed assertion).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import signal
from collections.abc import Iterator
from functools import cache
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# ----------------------------------------------------------------------------- settings

FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])
"""Every fuzz test: deterministic (derandomized: the same examples on every run and machine), no
deadline (the watchdog catches hangs), no example database."""


def fuzz(max_examples: int) -> settings:
    """``@fuzz(N)``: :data:`FUZZ` with a bounded example count (the whole fuzz suite costs < 60 s)."""
    return settings(FUZZ, max_examples=max_examples)

# ----------------------------------------------------------------------------- values

NASTY_FLOATS = (math.nan, math.inf, -math.inf, 1e308, -1e308, 1e300, 5e-324, -1.0, -0.0, 0.0, 0.5, 2.5)
NASTY_INTS = (-1, 0, 1, 2**31, 2**63, 10**30, -(10**30), 10**9)
NASTY_OTHER: tuple[Any, ...] = (True, False, None, "", "8", "eight", "nan", "inf", "-1", [], {}, [1, 2],
                                {"a": 1}, "\u00e9\u4e2d", "\udcff")


def nasty_values() -> st.SearchStrategy[Any]:
    """Values that are wrong (or nearly wrong) for a number, a name or a nested field."""
    return st.one_of(
        st.sampled_from(NASTY_FLOATS + NASTY_INTS + NASTY_OTHER),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.text(max_size=8),
        st.lists(st.integers(-3, 3), max_size=3),
    )


NUMBER_SPELLINGS = ("nan", "NaN", "inf", "-inf", "Infinity", "1e309", "-1e309", "1e308", "-1", "-0", "0", "1",
                    "2", "0.5", "1.5", "-5", "3", "64", "65", "1000", "1e3", "0x10", "1_000", "9" * 40,
                    "-" + "9" * 40, "", " ", "+1", "1 ", "abc", "\u0663", "\u00bd", "\udcff\udcfe", "\u202e12",
                    "2147483647", "2147483648", "4294967296", "1e-320")


def flag_strings() -> st.SearchStrategy[str]:
    """What a user can type after a numeric flag (argv strings, so no NUL bytes)."""
    return st.one_of(
        st.sampled_from(NUMBER_SPELLINGS),
        st.integers(-(10**12), 10**12).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12),
    )


def parse_number(text: str) -> float | None:
    """The number ``text`` spells the way the CLI reads it (Python ``int``/``float``), else None."""
    for conv in (int, float):
        try:
            return conv(text)
        except (ValueError, OverflowError):
            continue
    return None


# ----------------------------------------------------------------------------- files

ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1")


@st.composite
def as_file_bytes(draw, text: str) -> bytes:
    """``text`` as file bytes: in one of :data:`ENCODINGS`, possibly truncated, or replaced by binary
    junk or nothing at all."""
    how = draw(st.sampled_from(("plain", "plain", "plain", "encoded", "truncated", "binary", "empty")))
    if how == "plain":
        return text.encode("utf-8", "surrogatepass")
    if how == "encoded":
        return text.encode(draw(st.sampled_from(ENCODINGS)), "replace")
    data = text.encode("utf-8", "surrogatepass")
    if how == "truncated":
        return data[: draw(st.integers(0, max(0, len(data) - 1)))]
    if how == "binary":
        return draw(st.binary(min_size=1, max_size=64)) + b"\x00" + data[:32]
    return b""


# ----------------------------------------------------------------------------- documents

def _paths(doc: Any, prefix: tuple = ()) -> Iterator[tuple]:
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _parent(doc: Any, path: tuple) -> Any:
    for k in path[:-1]:
        doc = doc[k]
    return doc


@st.composite
def mutated(draw, base: Any, *, max_changes: int = 3) -> Any:
    """``base`` (a JSON-like document) with 1..max_changes changes: a key or list item deleted, a value
    replaced by a nasty one, an unknown key added, or a container emptied."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, max_changes))):
        paths = list(_paths(doc))
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(("replace", "replace", "delete", "add", "empty")))
        if not path:
            if op == "replace":
                doc = draw(nasty_values())
            continue
        parent = _parent(doc, path)
        key = path[-1]
        if op == "replace":
            parent[key] = draw(nasty_values())
        elif op == "delete":
            del parent[key]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(("extra", "bandwidth_gbit", "count", "name", "__proto__")))] = \
                draw(nasty_values())
        elif op == "empty" and isinstance(parent[key], (dict, list)):
            parent[key] = type(parent[key])()
        if not isinstance(doc, (dict, list)):
            break
    return doc


_LINK = st.fixed_dictionaries(
    {}, optional={"latency_us": st.sampled_from((0, 1, 2.5))}).flatmap(
    lambda extra: st.one_of(
        st.builds(lambda v: {"bandwidth_gbps": v, **extra}, st.sampled_from((10, 25.0, 300))),
        st.builds(lambda v: {"bandwidth_gbit": v, **extra}, st.sampled_from((100, 400)))))


@st.composite
def valid_specs(draw) -> dict[str, Any]:
    """A small valid cluster spec (the YAML/JSON schema of ``schedlab.topology.loaders``)."""
    gpus = draw(st.sampled_from((1, 2, 4, 8)))
    defaults = {"gpus": gpus, "gpu_model": draw(st.sampled_from(("A100-80GB", "V100", "x"))),
                "gpu_memory_gb": draw(st.sampled_from((16, 32.0, 80))), "cpus": draw(st.integers(0, 96)),
                "host_memory_gb": draw(st.sampled_from((0, 64, 512.5)))}
    spec: dict[str, Any] = {"name": draw(st.sampled_from(("lab", "c-1", "\u00e9t\u00e9"))), "defaults": defaults,
                            "links": {"machine": draw(_LINK), "rack": draw(_LINK)}}
    racks = draw(st.integers(1, 3))
    if racks > 1 or draw(st.booleans()):
        spec["links"]["network"] = draw(_LINK)
    if draw(st.booleans()):
        spec["racks"] = racks
        spec["machines_per_rack"] = draw(st.integers(1, 3))
    else:
        spec["racks"] = [
            {"name": f"r{i}", "machines": [{"count": draw(st.integers(1, 2)), "gpus": draw(st.integers(1, 4))}
                                           for _ in range(draw(st.integers(1, 2)))]}
            for i in range(racks)]
    return spec


def spec_gpus(spec: dict[str, Any]) -> int:
    """GPUs of a :func:`valid_specs` document, counted by hand (independently of the loader)."""
    d = spec["defaults"]["gpus"]
    if isinstance(spec["racks"], int):
        return spec["racks"] * spec["machines_per_rack"] * d
    return sum(m.get("count", 1) * m.get("gpus", d) for r in spec["racks"] for m in r["machines"])


def broken_specs() -> st.SearchStrategy[Any]:
    """Cluster specs with one to three things wrong (or, by chance, still right)."""
    return valid_specs().flatmap(lambda s: mutated(s))


def dump(doc: Any, fmt: str) -> str:
    """``doc`` as YAML or JSON text (NaN and infinities spelled as each format does)."""
    import yaml

    if fmt == "json":
        return json.dumps(doc, ensure_ascii=False)
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


@st.composite
def spec_documents(draw) -> tuple[str, bytes]:
    """``(suffix, file bytes)`` of a cluster spec file: valid or broken YAML/JSON, syntax damage,
    Tiresias CSV, odd encodings."""
    kind = draw(st.sampled_from(("yaml", "json", "yaml", "json", "csv", "damaged")))
    if kind == "csv":
        return ".csv", draw(tiresias_csv().flatmap(as_file_bytes))
    doc = draw(st.one_of(valid_specs(), broken_specs()))
    fmt = "json" if kind == "json" else "yaml"
    text = dump(doc, fmt)
    if kind == "damaged":
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(("", "[", "{", ":", "\t", "- -", "\"", "&a *a", "!!python/none")))
    return ("." + fmt if fmt == "json" else draw(st.sampled_from((".yaml", ".yml")))), draw(as_file_bytes(text))


TIRESIAS_HEADER = ("num_switch", "num_node_p_switch", "num_gpu_p_node", "num_cpu_p_node", "mem_p_node")


@st.composite
def tiresias_csv(draw) -> str:
    """A Tiresias cluster-spec CSV: valid counts, or cells that are fractions, NaN, infinities, huge,
    negative or text; columns missing, reordered or extra; rows missing or doubled."""
    cells = {"num_switch": "1", "num_node_p_switch": "2", "num_gpu_p_node": "4", "num_cpu_p_node": "8",
             "mem_p_node": "64"}
    for c in draw(st.lists(st.sampled_from(TIRESIAS_HEADER), max_size=2, unique=True)):
        cells[c] = draw(st.sampled_from(NUMBER_SPELLINGS + ("2.0", "4.5", "1e6", "10000", "10001")))
    header = list(draw(st.permutations(TIRESIAS_HEADER)))
    if draw(st.integers(0, 4)) == 0:
        header.pop(draw(st.integers(0, len(header) - 1)))
    if draw(st.booleans()):
        header.append("extra")
        cells["extra"] = "x"
    rows = [",".join(header), ",".join(cells.get(c, "") for c in header)]
    rows *= draw(st.sampled_from((1, 1, 1, 2)))
    return "\n".join(rows[: draw(st.integers(1, len(rows)))]) + "\n"


@st.composite
def pai_csv(draw) -> str:
    """An Alibaba PAI machine list (``machine,gpu_type,cap_cpu,cap_mem,cap_gpu``) with odd cells."""
    lines = []
    for i in range(draw(st.integers(1, 4))):
        row = [f"m{i}", draw(st.sampled_from(("V100", "T4", "P100", "CPU", "H100", ""))), "96", "512", "8"]
        if draw(st.booleans()):
            k = draw(st.integers(0, 4))
            row[k] = draw(st.sampled_from(NUMBER_SPELLINGS))
        if draw(st.integers(0, 5)) == 0:
            row = row[: draw(st.integers(0, 4))]
        lines.append(",".join(row))
    return "\n".join(lines) + "\n"


@cache
def base_instances() -> tuple[dict[str, Any], ...]:
    """One small valid instance document per instance kind (what ``schedlab solve --save`` writes)."""
    from schedlab.formulations import GENERATORS
    from schedlab.topology.presets import preset

    sizes = {"joint": ("rubick-64", 3), "tiresias-placement": ("tiresias-60", 1),
             "tier-placement": ("dally-2", 3), "offline": ("tiresias-60", 3)}
    out = []
    for kind, gen in GENERATORS.items():
        cluster, jobs = sizes.get(kind, ("tiresias-60", 2))
        inst = gen(preset(cluster), jobs, seed=1)
        out.append(json.loads(json.dumps({"kind": kind, **inst.to_dict()})))
    return tuple(out)


@st.composite
def instance_documents(draw, *, broken: bool = True) -> dict[str, Any] | Any:
    """An instance document (JSON-like) of any kind, with things wrong when ``broken``."""
    base = draw(st.sampled_from(base_instances()))
    return draw(mutated(base)) if broken else copy.deepcopy(base)


# ----------------------------------------------------------------------------- running

class Hang(Exception):
    """A run exceeded its budget (see :func:`watchdog`)."""


@contextlib.contextmanager
def watchdog(seconds: float = 30.0):
    """Raise :class:`Hang` in the main thread if the block runs longer than ``seconds``. A generous
    budget that only a hang (an event loop that spins, a quadratic blow-up) exceeds; no timing is
    asserted otherwise."""

    def on_alarm(signum, frame):
        raise Hang(f"run exceeded its {seconds:g} s budget")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_cli(*argv: str, budget: float = 30.0) -> tuple[int, str, str]:
    """``schedlab ARGV`` through the real entry point, in process: ``(exit code, stdout, stderr)``.
    Exceptions other than ``SystemExit`` propagate (a traceback is a failure)."""
    from schedlab.benchmarks.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with watchdog(budget), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in argv])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue()


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


def assert_clean_cli(code: int, out: str, err: str, *, argv: tuple = ()) -> None:
    """Exit 0 with output and no ``error:`` line, or exit 2 with exactly one ``error:`` line; never
    a traceback."""
    where = f"schedlab {' '.join(map(str, argv))}"
    assert "Traceback" not in err, f"{where}: traceback\n{err[-2000:]}"
    errors = error_lines(err)
    if code == 0:
        assert not errors, f"{where}: exit 0 but {errors}"
        assert out.strip(), f"{where}: exit 0 with no output"
    else:
        assert code == 2, f"{where}: exit {code}\n{err[-2000:]}"
        assert len(errors) == 1, f"{where}: {len(errors)} error lines\n{err[-2000:]}"


__all__ = [
    "ENCODINGS", "FUZZ", "fuzz", "Hang", "NASTY_FLOATS", "NASTY_INTS", "NASTY_OTHER", "NUMBER_SPELLINGS", "TIRESIAS_HEADER",
    "as_file_bytes", "assert_clean_cli", "base_instances", "broken_specs", "dump", "error_lines", "flag_strings",
    "instance_documents", "mutated", "nasty_values", "pai_csv", "parse_number", "run_cli", "spec_documents",
    "spec_gpus", "tiresias_csv", "valid_specs", "watchdog",
]
