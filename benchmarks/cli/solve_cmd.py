"""``schedlab solve``: build an exact formulation on an instance (a JSON file or a generated one), solve
it with a backend, verify the extracted allocation/schedule and print the result."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import typer

from schedlab.benchmarks.cli.options import OutputFormat
from schedlab.topology.errors import SolverError, SpecError
from schedlab.topology.presets import load_cluster

# schedlab.formulations (numpy, pydantic, solver bindings) is imported inside the command: `schedlab --help`
# stays fast. The kinds (with their default cluster and size), methods and backends are listed by
# `schedlab list kinds|formulations|backends`.


#: bytes per generated job (an instance alone, before any model is built: 0.4-1.1 KiB per job measured
#: with tracemalloc for every kind at 200 and 2,000 jobs), and seconds per generated job (0.1-1.2 ms)
BYTES_PER_JOB = 1024
SECONDS_PER_JOB = 2e-4
#: generations expected to take longer than this show a spinner with the elapsed time on stderr
PROGRESS_AFTER_S = 2.0


def available_memory() -> int | None:
    """Bytes this machine can still give (``MemAvailable``; else free physical pages), ``None`` unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} PiB"


def _size(inst) -> tuple[int, str]:
    """Jobs and cluster of an instance: its ``base`` scheduling instance, else (``offline-resizable``, which
    keeps only the free GPUs) its own ``jobs`` on ``"<G> GPUs"``."""
    base = getattr(inst, "base", None)
    if base is not None:
        return len(base.jobs), base.cluster.name
    return len(inst.jobs), f"{inst.gpus} GPUs"


def check_size(kind: str, jobs: int, available: int | None = None) -> float:
    """Refuse a generated instance the machine cannot hold: ``jobs x BYTES_PER_JOB`` (the instance alone;
    a model needs more) against the available memory. Returns the expected generation time in seconds."""
    need = jobs * BYTES_PER_JOB
    have = available_memory() if available is None else available
    if have is not None and need > have:
        raise SpecError(f"--jobs {jobs:,}: a {kind} instance of that size needs at least {_bytes(need)} "
                        f"(about {BYTES_PER_JOB} B per job for the instance alone, before any model) and would take "
                        f"about {_human_s(jobs * SECONDS_PER_JOB)} to generate; this machine has {_bytes(have)} "
                        "available", source="<cli>", field="jobs")
    return jobs * SECONDS_PER_JOB


def _human_s(s: float) -> str:
    if s < 120:
        return f"{s:,.0f} s"
    if s < 2 * 3600:
        return f"{s / 60:,.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:,.1f} h"
    return f"{s / 86400:,.0f} days"


def _time_limit(value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"must be a finite number of seconds > 0, got {value}")
    return value


def threads_text(res) -> str:
    """The thread count the backend used, in words where it chose itself."""
    if res.provenance.threads is not None:
        return str(res.provenance.threads)
    return {"highs": "HiGHS's own default (MathOpt passes no thread count)"}.get(res.provenance.backend, "the solver's default")


def solve_command(
    instance: Path | None = typer.Option(None, "--instance", help="Instance JSON file (see --save)."),
    generate: str | None = typer.Option(None, "--generate", metavar="KIND",
                                        help="Generate an instance of this kind (schedlab list kinds)."),
    jobs: int | None = typer.Option(None, "--jobs", min=1, help="Jobs to generate (default: the kind's, "
                                    "schedlab list kinds)."),
    cluster: str | None = typer.Option(None, "--cluster", metavar="PRESET|FILE",
                                       help="Cluster preset or spec file for --generate (default: the kind's, "
                                            "schedlab list kinds)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the generator and the solver."),
    method: str = typer.Option(..., "--method", metavar="METHOD", help="Formulation (schedlab list formulations)."),
    backend: str = typer.Option("cpsat", "--backend", metavar="BACKEND", help="Solver backend (schedlab list backends)."),
    time_limit: float | None = typer.Option(60.0, "--time-limit", callback=_time_limit, metavar="SECONDS",
                                            help="Wall-clock budget in seconds (> 0) for the whole solve: build, "
                                                 "translate, solve, extract and verify."),
    threads: int | None = typer.Option(None, "--threads", min=1,
                                       help="Solver threads (default: every core; clamped to the cores)."),
    source: str = typer.Option("synthetic", "--source", metavar="SOURCE",
                               help="Joint option tables: synthetic or perfmodel (PerfModel.options)."),
    save: Path | None = typer.Option(None, "--save", help="Also write the (generated) instance here."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="Output format."),
) -> None:
    """Solve an exact formulation and print status, objective, bound, gap, the time of every phase, the
    threads used and the verifier's verdict."""
    from schedlab.benchmarks.merged import all_kinds  # lazy: start-up
    from schedlab.formulations import BACKENDS, SolveParams  # lazy: start-up (solver layer)

    kinds = all_kinds()
    if (instance is None) == (generate is None):
        raise SpecError("give exactly one of --instance FILE or --generate KIND", source="<cli>", field="instance")
    meth = kinds.method(method, source="<cli>")
    if backend not in BACKENDS:
        raise SpecError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}", source="<cli>", field="backend")
    if generate is not None:
        kind = kinds.kind(generate, source="<cli>", field="generate")
        n = jobs or kind.default_jobs
        expected_s = check_size(generate, n)
        cl = load_cluster(cluster or kind.default_cluster)
        extra = {"source": source} if "source" in kind.options.model_fields else {}
        inst = _generate(kind, cl, n, seed, extra, expected_s)
    else:
        inst = kinds.load_instance(instance)
    if inst.KIND != meth.kind:
        raise SolverError(f"method {method!r} solves {meth.kind!r} instances, not {inst.KIND!r}")
    if save is not None:
        kinds.save_instance(inst, save)
    params = SolveParams(time_limit_s=time_limit, threads=threads, seed=seed)
    res = meth.solve(inst, backend, params)
    out = res.as_dict()
    out["method"] = method
    out["role"] = meth.role.value
    n_jobs, where = _size(inst)
    out["instance"] = {"kind": inst.KIND, "jobs": n_jobs, "cluster": where}
    if format is OutputFormat.json:
        typer.echo(json.dumps(out, indent=2, sort_keys=True, default=str))
    else:
        _print_text(inst, out, res, method, meth, time_limit)
    if res.verified is False:
        raise typer.Exit(1)


def _generate(kind, cl, n: int, seed: int, extra: dict, expected_s: float):
    """``kind.generate``; past :data:`PROGRESS_AFTER_S` expected seconds, a spinner on a terminal (a line
    before and after in a log)."""
    if expected_s <= PROGRESS_AFTER_S:
        return kind.generate(cl, n, seed=seed, **extra)
    import time  # lazy: start-up

    from rich.console import Console  # lazy: start-up

    err = Console(stderr=True)
    what = f"generating a {kind.name} instance of {n:,} jobs on {cl.name} (about {_human_s(expected_s)})"
    t0 = time.perf_counter()
    if err.is_terminal:
        with err.status(what):
            inst = kind.generate(cl, n, seed=seed, **extra)
    else:
        err.print(what, highlight=False)
        inst = kind.generate(cl, n, seed=seed, **extra)
    err.print(f"generated {n:,} jobs in {time.perf_counter() - t0:.1f} s", highlight=False)
    return inst


def _print_text(inst, out: dict, res, method: str, meth, time_limit: float | None) -> None:
    n_jobs, where = _size(inst)
    gap = "n/a" if out["gap"] is None else f"{100 * out['gap']:.4f} %"
    typer.echo(f"{inst.KIND} on {where} ({n_jobs} jobs): {method} [{meth.role}] with "
               f"{res.provenance.backend} ({res.provenance.backend_version}): {out['status']}")
    typer.echo(f"  objective {out['objective']}  bound {out['bound']}  gap {gap} "
               f"(tolerance {res.bounds.rel_gap_tolerance:g})")
    ph = res.timing.phases
    limit = "no limit" if time_limit is None else f"limit {time_limit:g} s"
    typer.echo(f"  wall {ph['wall_s']:.3f} s ({limit}): build {ph['build_s']:.3f}, translate "
               f"{ph['translate_s']:.3f}, solve {ph['solve_s']:.3f}, extract {ph['extract_s']:.3f}, verify "
               f"{ph['verify_s']:.3f}, other {ph['other_s']:.3f}")
    typer.echo(f"  threads {threads_text(res)}  verified {out['verified']}")
    for v in out["violations"]:
        typer.echo(f"  violation: {v}")
    for n in out["notes"]:
        typer.echo(f"  note: {n}")
