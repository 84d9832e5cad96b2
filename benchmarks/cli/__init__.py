"""The ``schedlab`` command line. Each command group lives in its own module and is registered in
``COMMANDS`` (name -> Typer app) or ``LEAF_COMMANDS`` (name -> function)."""

from __future__ import annotations

import sys

import typer

from schedlab.benchmarks.cli.bench_cmd import bench_command
from schedlab.benchmarks.cli.compare_cmd import compare_command
from schedlab.benchmarks.cli.list_cmd import list_command
from schedlab.benchmarks.cli.perf_cmd import perf_app
from schedlab.benchmarks.cli.report_cmd import report_command
from schedlab.benchmarks.cli.simulate_cmd import simulate_command
from schedlab.benchmarks.cli.solve_cmd import solve_command
from schedlab.benchmarks.cli.topology_cmd import topology_command
from schedlab.benchmarks.cli.workload_cmd import workload_app
from schedlab.topology.errors import SchedlabError

LEAF_COMMANDS = {
    "list": list_command,
    "topology": topology_command,
    "solve": solve_command,
    "simulate": simulate_command,
    "bench": bench_command,
    "report": report_command,
    "compare": compare_command,
}
COMMANDS: dict[str, typer.Typer] = {
    "perf": perf_app,
    "workload": workload_app,
}


def plugin_option(
    plugin: list[str] = typer.Option([], "--plugin", help="Import a plugin module (its POLICIES, FORMULATIONS, "
                                      "WORKLOADS, SUITES) before the command; repeatable."),
) -> None:
    """Options for every command (installed plugins' entry points load by themselves)."""
    if plugin:
        from schedlab.benchmarks.harness.plugins import add_env_plugins, load_plugins

        add_env_plugins(plugin)
        load_plugins()


def build_app() -> typer.Typer:
    app = typer.Typer(help="schedlab: optimization-based scheduling of DL training jobs on GPU clusters.",
                      no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
    app.callback()(plugin_option)
    for name, fn in LEAF_COMMANDS.items():
        app.command(name)(fn)
    for name, sub in COMMANDS.items():
        app.add_typer(sub, name=name)
    return app


def main(argv: list[str] | None = None) -> None:
    """Entry point. Typer runs in standalone mode (usage errors exit 2 with its message, ``typer.Exit``
    codes are kept, Ctrl-C aborts); schedlab's own errors (:class:`SchedlabError`) print one clear
    ``error: ...`` line and exit 2. Anything else is a bug and keeps its traceback."""
    app = build_app()
    try:
        app(args=argv, prog_name="schedlab")
    except SchedlabError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(2)
