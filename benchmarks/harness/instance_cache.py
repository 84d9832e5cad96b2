"""A disk cache of the instances gap cases answer: every method of a sweep answers the same instance (a
generated one or a replay-sampled state), and building it — perf-model option tables, a whole replay — can
cost seconds, paid again by each worker process. The first worker writes the instance as the kind's JSON
(``KindRegistry.save_instance``); the others read it back.

The key is a SHA-256 of everything that determines the instance (kind, cluster, size, seed, generator
options, replay-state reference) **and the code version** (:func:`~schedlab.benchmarks.harness.record.
code_version`), so changed code never reads a stale instance. Files are written to a temporary name and
renamed (two workers building the same instance both write it; either copy is the same); files older than
a day are removed when a new one is written. The folder is
``$SCHEDLAB_INSTANCE_CACHE`` (``off`` disables the cache), else ``<tmp>/schedlab-instances-<uid>``.
An unreadable cached file is rebuilt, never an error. The provenance a builder returns (where a replay
state came from) is stored beside the instance.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from schedlab.benchmarks.harness.record import code_version
from schedlab.benchmarks.merged import all_kinds
from schedlab.topology.errors import SchedlabError


def cache_dir() -> Path | None:
    """Where instances are cached, or ``None`` when ``SCHEDLAB_INSTANCE_CACHE=off``."""
    env = os.environ.get("SCHEDLAB_INSTANCE_CACHE")
    if env is not None and env.strip().lower() in ("off", "0", "no", ""):
        return None
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(env) if env else Path(tempfile.gettempdir()) / f"schedlab-instances-{uid}"


def cache_key(what: Mapping[str, Any]) -> str:
    blob = json.dumps({**dict(what), "code": code_version()}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def cached(what: Mapping[str, Any], build: Callable[[], tuple[Any, dict[str, Any]]]) -> tuple[Any, dict[str, Any], bool]:
    """``(instance, provenance, hit)``: the cached instance of ``what`` or ``build()``'s, then cached."""
    d = cache_dir()
    if d is None:
        return (*build(), False)
    kinds = all_kinds()
    path = d / f"{cache_key(what)}.json"
    meta = path.with_suffix(".meta.json")
    if path.is_file() and meta.is_file():
        try:
            return kinds.load_instance(path), json.loads(meta.read_text()), True
        except (SchedlabError, OSError, ValueError, KeyError, TypeError):
            pass  # a torn or foreign file: rebuild it
    inst, prov = build()
    try:
        d.mkdir(parents=True, exist_ok=True)
        prune(d)
        for target, write in ((meta, lambda p: p.write_text(json.dumps(prov, default=str))),
                              (path, lambda p: kinds.save_instance(inst, p))):
            fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
            os.close(fd)
            write(Path(tmp))
            os.replace(tmp, target)
    except (OSError, SchedlabError, TypeError, ValueError):
        pass  # a read-only or full disk: the run goes on without the cache
    return inst, prov, False


#: cached files older than this (seconds) are removed when a new one is written (each code version has its own)
MAX_AGE_S = 24 * 3600.0


def prune(d: Path, max_age_s: float = MAX_AGE_S) -> None:
    """Remove cached files (and torn temporaries) older than ``max_age_s``."""
    now = time.time()
    for f in d.iterdir():
        try:
            if f.suffix in (".json", ".tmp") and now - f.stat().st_mtime > max_age_s:
                f.unlink()
        except OSError:
            continue


__all__ = ["MAX_AGE_S", "cache_dir", "cache_key", "cached", "prune"]
