"""What ``schedlab list`` printed, kept per source digest so the next ``list`` starts in a fraction of the
time (issue 25: importing every policy, formulation and workload module took 0.44 s of the 0.5 s).

The key is a SHA-256 of everything the listing is computed from: schedlab's own files (the six layers and
``schedlab/``: ``.py`` and package data), the Python version, the installed distributions on
import search path (names with versions: a solver or plugin installed or removed) and the command's
arguments. A hit prints the stored text unchanged (the listing is a pure function of that input); a miss
computes the listing as before and stores it. The cache is not used when plugins can change the
listing behind that key (``--plugin``/``SCHEDLAB_PLUGINS``, an installed distribution declaring
``schedlab.*`` entry points), nor in a process that already imported a registry (its registries may
have been changed in place), nor with ``SCHEDLAB_NO_CACHE=1``.

Where: ``$SCHEDLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/schedlab``, else ``~/.cache/schedlab``; a folder
that cannot be written only means no cache (the listing is printed all the same).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from sys import path as _search_path  # read only, never changed

CACHE_ENV = "SCHEDLAB_CACHE_DIR"
NO_CACHE_ENV = "SCHEDLAB_NO_CACHE"
#: listings kept (the oldest are removed past it)
KEEP = 16
_LAYERS = ("schedlab", "topology", "perfmodel", "scheduling", "formulations", "heuristics", "benchmarks")
_SUFFIXES = (".py", ".json", ".yaml", ".yml", ".csv")
#: a registry module imported already: its registry may have been changed in this process
_REGISTRY_MODULES = ("schedlab.benchmarks.registry", "schedlab.benchmarks.harness.plugins", "schedlab.heuristics",
                     "schedlab.formulations", "schedlab.benchmarks.workloads", "schedlab.benchmarks.harness.suites",
                     "schedlab.scheduling.registry")


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "schedlab"


def _source_root() -> Path:
    import schedlab.benchmarks as bench  # lazy: start-up

    return Path(bench.__file__).resolve().parent.parent


def _distributions(h) -> bool:
    """Feed the installed distributions into ``h``; False when one declares schedlab plugin entry points."""
    for entry in list(_search_path):
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            h.update(f"{entry}/{name}\n".encode())
            try:
                eps = Path(entry or ".", name, "entry_points.txt").read_text(errors="replace")
            except OSError:
                continue
            if "[schedlab." in eps:
                return False
    return True


def usable() -> bool:
    if os.environ.get(NO_CACHE_ENV) or os.environ.get("SCHEDLAB_PLUGINS", "").strip():
        return False
    return not any(m in sys.modules for m in _REGISTRY_MODULES)


def key(args: tuple[str, ...]) -> str | None:
    """The listing's cache key, or ``None`` when the listing must be computed (see the module doc)."""
    if not usable():
        return None
    h = hashlib.sha256()
    h.update(f"{sys.version}\n{args!r}\n".encode())
    root = _source_root()
    for layer in _LAYERS:
        base = root / layer
        for f in sorted(base.rglob("*")):
            if f.suffix in _SUFFIXES and f.is_file():
                h.update(f.relative_to(root).as_posix().encode())
                h.update(f.read_bytes())
    if not _distributions(h):
        return None
    return h.hexdigest()[:32]


def load(k: str | None) -> str | None:
    if k is None:
        return None
    try:
        return (cache_dir() / f"list-{k}.txt").read_text()
    except OSError:
        return None


def store(k: str | None, text: str) -> None:
    """Keep ``text`` under ``k`` (written whole, then renamed: a reader never sees half of it)."""
    if k is None:
        return
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".list-{k}.{os.getpid()}.tmp"
        tmp.write_text(text)
        tmp.replace(d / f"list-{k}.txt")
        old = sorted(d.glob("list-*.txt"), key=lambda p: p.stat().st_mtime)
        for p in old[:-KEEP]:
            p.unlink(missing_ok=True)
    except OSError:
        return


__all__ = ["CACHE_ENV", "KEEP", "NO_CACHE_ENV", "cache_dir", "key", "load", "store", "usable"]
