"""``schedlab perf``: sensitivity curves, fitting and validation of the performance model.

* ``schedlab perf curve MODEL --cluster PRESET [--resource gpu|cpu] [--cpus N] [--gpus N] [--max N]
  [--calibration flat|fitted|measured|artifact] [--format json]``: amount, best throughput (samples/s,
  monotone envelope) and best plan (``flat``, the default: the flat all-reduce the schedulers use;
  ``fitted``: the hierarchical all-reduce; ``measured``: the Rubick tables' times where they hold the query).
* ``schedlab perf fit SAMPLES.csv [--model M] [--cluster PRESET] [--format json]``: fitted parameters
  and the fit error (RMSLE, average and maximum relative error).
* ``schedlab perf validate [--dir PATH] [--protocol paper|holdout|kfold] [--folds K] [--seed S]
  [--forward auto|zoo|profiled] [--predictor ours|artifact] [--format json]``: prediction error on the
  Rubick placement tables per model and row category (JSON: ``{"protocol": ..., "models": {MODEL:
  {"avg_error": %, "max_error": %, "categories": {CATEGORY: {"rows": n, "avg_error": %, "max_error":
  %}}}}}``; ``kfold`` adds ``avg_error_sd``). Exits 2 with a clear message when the traces are not
  present.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer

from schedlab.benchmarks.cli.options import COUNT_MAX, SEED_MAX, OutputFormat
from schedlab.topology.errors import SpecError
from schedlab.topology.presets import load_cluster

# The perf model (numpy, scipy) is imported inside the commands: ``schedlab --help`` must start fast.

DEFAULT_PLACEMENTS = Path(__file__).resolve().parents[2].parent / "shared" / "traces" / "rubick" / "placements"

perf_app = typer.Typer(help="Performance model: sensitivity curves, fitting, validation.", no_args_is_help=True)


class Resource(StrEnum):
    gpu = "gpu"
    cpu = "cpu"


class Calibration(StrEnum):
    flat = "flat"
    fitted = "fitted"
    measured = "measured"
    artifact = "artifact"


@perf_app.command("curve")
def curve_command(
    model: str = typer.Argument(..., help="Zoo model (vit, bert, llama7, resnet50, ...)."),
    cluster: str = typer.Option("rubick-64", "--cluster", help="Preset name or spec file."),
    resource: Resource = typer.Option(Resource.gpu, "--resource", help="Resource on the x axis."),
    cpus: int | None = typer.Option(None, "--cpus", min=1, max=COUNT_MAX,
                                    help="GPU curve: fixed total CPUs, at most the cluster's (default: all cores "
                                    "of the machines spanned)."),
    gpus: int | None = typer.Option(None, "--gpus", min=1, max=COUNT_MAX,
                                    help="CPU curve: fixed GPU count, at most the cluster's (default: 1)."),
    max_amount: int | None = typer.Option(None, "--max", min=1, max=COUNT_MAX,
                                          help="Largest amount, at most the cluster's total (default: that total)."),
    calibration: Calibration = typer.Option(Calibration.flat, "--calibration",
                                            help="flat (default: the flat all-reduce, as the schedulers use), "
                                            "fitted (hierarchical all-reduce), measured (the Rubick tables' "
                                            "times where they hold the query) or artifact."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text or json"),
) -> None:
    """Sensitivity curve of a zoo model: amount, best throughput, best plan."""
    from schedlab.perfmodel import PerfModel  # lazy: start-up

    src = "<perf curve>"
    if resource is Resource.gpu and gpus is not None:
        raise SpecError("--gpus fixes the GPU count of a CPU curve (--resource cpu); a GPU curve takes --max",
                        source=src, field="--gpus")
    if resource is Resource.cpu and cpus is not None:
        raise SpecError("--cpus fixes the CPUs of a GPU curve (--resource gpu); a CPU curve takes --max",
                        source=src, field="--cpus")
    c = load_cluster(cluster)
    limits = {"--gpus": (gpus, c.total_gpus, "GPUs"), "--cpus": (cpus, c.total_cpus, "CPUs"),
              "--max": (max_amount, c.total_gpus if resource is Resource.gpu else c.total_cpus,
                        "GPUs" if resource is Resource.gpu else "CPUs")}
    for flag, (value, most, unit) in limits.items():
        if value is not None and value > most:
            raise SpecError(f"{flag} {value:,} is more than the {most:,} {unit} of cluster {c.name!r}", source=src,
                            field=flag)
    pm = PerfModel(c, calibration=calibration.value,
                   measured=str(DEFAULT_PLACEMENTS) if calibration is Calibration.measured else None)
    c = pm.curve(model, resource.value, cpus=cpus, gpus=gpus if gpus is not None else 1, max_amount=max_amount)
    if format is OutputFormat.json:
        typer.echo(json.dumps({"model": c.model, "cluster": pm.cluster.name, "resource": c.resource,
                               "fixed": c.fixed, "points": c.rows()}, indent=2))
        return
    other = "CPUs" if c.resource == "gpu" else "GPUs"
    typer.echo(f"{c.model} on {pm.cluster.name}: {c.resource.upper()} curve ({other} fixed at "
               f"{c.fixed if c.fixed is not None else 'the machines spanned'}), throughput in samples/s")
    typer.echo(f"{'amount':>7} {'throughput':>11} {'machines':>8}  plan")
    for r in c.rows():
        typer.echo(f"{r['amount']:>7} {r['throughput']:>11.3f} {r['machines']:>8}  {r['plan'] or '-'}")


@perf_app.command("fit")
def fit_command(
    samples: Path = typer.Argument(..., help="CSV: exec_plan, placement, throughput or iter_time[, cpus, model]."),
    model: str | None = typer.Option(None, "--model", help="Model of the samples (else the 'model' column)."),
    cluster: str = typer.Option("rubick-64", "--cluster", help="Preset name or spec file."),
    seed: int = typer.Option(0, "--seed", min=0, max=SEED_MAX, help="Seed of the multi-start design."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text or json"),
) -> None:
    """Fit the 7 parameters to measured samples; print them and the fit error."""
    from schedlab.perfmodel.fitting import fit  # lazy: start-up
    from schedlab.perfmodel.validation import read_samples  # lazy: start-up
    from schedlab.perfmodel.zoo import get_model  # lazy: start-up

    c = load_cluster(cluster)
    name, rows = read_samples(samples, c, model=model)
    res = fit(get_model(name), rows, c, seed=seed, require_offload=False)
    out = {"model": name, "samples": res.n_samples, "rmsle": res.rmsle, "avg_error": 100 * res.avg_error,
           "max_error": 100 * res.max_error, "params": res.params.to_dict(),
           "offload_samples": sum(s.plan.zero.value == "zero-offload" for s in rows)}
    if format is OutputFormat.json:
        typer.echo(json.dumps(out, indent=2))
        return
    typer.echo(f"{name}: fitted on {res.n_samples} samples ({out['offload_samples']} ZeRO-Offload)")
    for k, v in out["params"].items():
        typer.echo(f"  {k:10s} = {v:.6g}" if v is not None else f"  {k:10s} = - (not informed by the samples)")
    typer.echo(f"  RMSLE {res.rmsle:.4f}; relative error avg {out['avg_error']:.2f} %, max {out['max_error']:.2f} %")
    if out["offload_samples"] < 3:
        typer.echo("  note: fewer than 3 ZeRO-Offload samples: k_opt_off, k_off, k_swap are not identified")


class Protocol(StrEnum):
    paper = "paper"
    holdout = "holdout"
    kfold = "kfold"


class Forward(StrEnum):
    auto = "auto"
    zoo = "zoo"
    profiled = "profiled"


class Optimizer(StrEnum):
    fitted = "fitted"
    profiled = "profiled"


class Predictor(StrEnum):
    ours = "ours"
    artifact = "artifact"


def _cell(c: dict) -> str:
    if not c["rows"]:
        return "-"
    sd = f" +-{c['avg_error_sd']:.1f}" if c.get("avg_error_sd") is not None else ""
    return f"{c['rows']}: {c['avg_error']:.1f}{sd} / {c['max_error']:.1f}"


@perf_app.command("validate")
def validate_command(
    directory: Path = typer.Option(DEFAULT_PLACEMENTS, "--dir", help="Directory of <model>.csv placement tables."),
    cluster: str = typer.Option("rubick-64", "--cluster", help="Preset the tables were measured on."),
    protocol: Protocol = typer.Option(Protocol.paper, "--protocol", help="paper (fit 7 single-machine rows, "
                                      "score the other single-machine rows), holdout (fit single-machine rows + "
                                      "2 even multi-machine rows, score the rest) or kfold (cross-validation)."),
    fit_rows: int | None = typer.Option(None, "--fit-rows", min=7, max=64,
                                        help="paper protocol: rows fitted per table (default: "
                                        "perfmodel.validation.DEFAULT_FIT_ROWS)."),
    folds: int | None = typer.Option(None, "--folds", min=2, max=100,
                                     help="kfold protocol: number of folds (default: perfmodel.validation.DEFAULT_FOLDS)."),
    seed: int = typer.Option(0, "--seed", min=0, max=SEED_MAX,
                             help="Seed of the fit's multi-start design and of the kfold shuffle."),
    forward: Forward = typer.Option(Forward.auto, "--forward", help="Forward time: zoo (linear scaling), profiled "
                                    "(the fit rows' measured forward column, interpolated) or auto (per table)."),
    optimizer: Optimizer = typer.Option(Optimizer.fitted, "--optimizer", help="k_opt: fitted (the default) or "
                                        "profiled (the fit rows' measured optimize column, where their plain-DP "
                                        "steps agree across DP degrees; else fitted)."),
    predictor: Predictor = typer.Option(Predictor.ours, "--predictor", help="JSON: whose errors to print (ours, "
                                        "or the Rubick artifact's model on the same rows)."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text or json"),
) -> None:
    """Fit on some rows of each placement table and report the prediction error on the others, per model and
    category (single-machine, multi-machine-even, multi-machine-uneven, 3d, anomaly), ours beside the
    artifact's model. Errors in percent of the measured throughput; model-level figures exclude anomalies."""
    from schedlab.perfmodel.validation import (  # lazy: start-up
        DEFAULT_FIT_ROWS,
        DEFAULT_FOLDS,
        validate_directory,
    )

    fit_rows = DEFAULT_FIT_ROWS if fit_rows is None else fit_rows
    folds = DEFAULT_FOLDS if folds is None else folds
    if not Path(directory).is_dir():
        raise SpecError("the Rubick placement tables are not present (expected the artifact's placements/*.csv; "
                        "give --dir)", source=str(directory))
    results, skipped = validate_directory(directory, load_cluster(cluster), protocol=protocol.value,
                                          fit_rows=fit_rows, folds=folds, seed=seed,
                                          forward=None if forward is Forward.auto else forward.value,
                                          optimizer=optimizer.value)
    if format is OutputFormat.json:
        typer.echo(json.dumps({"protocol": protocol.value,
                               "models": {k: v.summary(predictor.value) for k, v in results.items()}}, indent=2))
        return
    typer.echo(f"protocol {protocol.value}: error % of measured throughput, rows: avg / max (ours | artifact's "
               "model on the same rows)" + ("; +- = sd over folds" if protocol is Protocol.kfold else ""))
    for k, v in results.items():
        ours, art = v.summary(), v.summary("artifact")
        a = f"{art['avg_error']:.1f}" if art["avg_error"] is not None else "-"
        o = f"{ours['avg_error']:.1f} / {ours['max_error']:.1f}" if ours["avg_error"] is not None else "-"
        typer.echo(f"{k} ({v.model}, {v.fit_rows} fit rows, {v.predicted_rows} scored, forward {v.forward}): "
                   f"avg / max {o} | artifact avg {a}")
        for cat, c in ours["categories"].items():
            if c["rows"]:
                typer.echo(f"  {cat:22s} {_cell(c):28s} | {_cell(art['categories'][cat])}")
    for k, why in skipped.items():
        typer.echo(f"{k}: skipped: {why}")
