"""The ``schedlab`` command tree: each command group lives in its own module and is registered in
``COMMANDS`` (name -> Typer app) or ``LEAF_COMMANDS`` (name -> function); :func:`run` runs it with
schedlab's error handling. The entry point, ``schedlab.benchmarks.cli:main``, imports this module only
for a command it cannot answer without it (``schedlab list`` from ``list_meta.json`` needs none)."""

from __future__ import annotations

import errno
import functools
import signal
import sys
import threading

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


#: commands that resolve a registered name (policy, kind, workload, suite): the plugins load first
#: (``list`` loads them itself, when it is not printed from ``cli/list_meta.json``)
RESOLVING = frozenset({"simulate", "solve", "bench", "report", "compare", "workload"})


def plugin_option(
    ctx: typer.Context,
    plugin: list[str] = typer.Option([], "--plugin", help="Import a plugin module (its POLICIES, FORMULATIONS, "
                                      "WORKLOADS, SUITES) before the command; repeatable."),
) -> None:
    """Options for every command. The boundary where plugins load (installed entry points, ``--plugin``,
    ``SCHEDLAB_PLUGINS``), once, before a command that resolves a registered name."""
    if plugin or ctx.invoked_subcommand in RESOLVING:
        from schedlab.benchmarks.harness.plugins import (  # lazy: start-up (entry-point scan)
            add_env_plugins,
            load_plugins,
        )

        add_env_plugins(plugin)
        load_plugins()


def build_app() -> typer.Typer:
    app = typer.Typer(help="schedlab: optimization-based scheduling of DL training jobs on GPU clusters.",
                      no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                      rich_markup_mode=None)
    app.callback()(plugin_option)
    for name, fn in LEAF_COMMANDS.items():
        app.command(name)(fn)
    for name, sub in COMMANDS.items():
        app.add_typer(sub, name=name)
    return app


_PLAIN = {"int": "INTEGER", "float": "FLOAT", "str": "TEXT", "path": "PATH", "bool": "BOOLEAN"}


def _plain_metavar(label: str) -> str:
    """``<int>`` -> ``INTEGER``, ``<list[str]>`` -> ``TEXT`` (repeatable), ``<text|json>`` -> ``[text|json]``."""
    label = label.strip("<>")
    while label.startswith("list[") and label.endswith("]"):
        label = label[5:-1]
    if "|" in label:
        return f"[{label}]"
    return _PLAIN.get(label.split(" ")[0].lower(), label.upper())


def _no_type(ctx=None) -> str:
    return ""


def _set_plain_metavars(command) -> None:
    """Typer writes option types as ``<bool>``, ``<list[str]>``: replace them by plain metavars (flags
    take no value and show none)."""
    from typer.core import TyperArgument, TyperOption  # lazy: start-up

    ctx = typer.Context(command)
    for param in command.params:
        if isinstance(param, TyperOption) and param.is_flag:
            continue
        if isinstance(param, TyperOption) and param.metavar is None:
            param.metavar = _plain_metavar(param.display_type(ctx))
        elif isinstance(param, TyperArgument):
            if param.metavar is None:
                param.metavar = (param.name or "").upper()
            param.display_type_rich = _no_type  # the metavar names the argument; no "<str>" after it
    for sub in getattr(command, "commands", {}).values():
        _set_plain_metavars(sub)


def build_command():
    """The click command tree of :func:`build_app`, with plain metavars (what :func:`main` runs).
    Built once per set of registered commands (click commands keep no state between invocations)."""
    return _command_for(tuple(LEAF_COMMANDS.items()), tuple(COMMANDS.items()))


@functools.lru_cache(maxsize=4)
def _command_for(leaf: tuple, groups: tuple):
    command = typer.main.get_command(build_app())
    _set_plain_metavars(command)
    return command


def _one_line(message: str) -> str:
    return " ".join(str(message).split())


#: operating-system refusals that are the user's setting, not a bug: one line, exit 2
_REFUSED = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _on_sigterm_interrupt():
    """SIGTERM raises :class:`KeyboardInterrupt` (what Ctrl-C does) while a command runs, so a terminated
    ``bench`` stops its workers, closes its session and says so; returns the handler to restore."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _interrupt)


def run(argv: list[str] | None = None) -> None:
    """Run the command line (what ``schedlab.benchmarks.cli.main`` does). Every refusal is one ``error: ...`` line on stderr (some messages add indented detail
    lines after it) and exit status 2: schedlab's own
    errors (:class:`SchedlabError`, naming the file, line or field) and usage errors (unknown option,
    a value outside its range, a bad output path; the line names the option and ends with where help
    is), and a place the system refuses (permission denied, read-only file system, disk full: the path
    and the reason). ``typer.Exit`` codes are kept; Ctrl-C exits 130, and SIGTERM is handled as Ctrl-C.
    Anything else is a bug and keeps its traceback."""
    try:  # typer >= 0.2x vendors click
        from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError  # lazy: start-up
    except ImportError:  # pragma: no cover - older typer on click
        from click.exceptions import ClickException, NoArgsIsHelpError, UsageError  # lazy: start-up

    command = build_command()
    previous = _on_sigterm_interrupt()
    try:
        code = command.main(args=argv, prog_name="schedlab", standalone_mode=False)
    except OSError as e:
        if e.errno not in _REFUSED:
            raise
        where = f"{e.filename}: " if e.filename else ""
        typer.echo(f"error: cannot write {where}{e.strerror or e}", err=True)
        sys.exit(2)
    except SchedlabError as e:  # one `error:` line; a message may add detail lines below it (a hint to paste)
        typer.echo(f"error: {e}", err=True)
        sys.exit(2)
    except NoArgsIsHelpError as e:  # bare `schedlab` / `schedlab perf`: the help, as click shows it
        e.show()
        sys.exit(e.exit_code)
    except UsageError as e:
        where = e.ctx.command_path if e.ctx is not None else "schedlab"
        typer.echo(f"error: {_one_line(e.format_message())} (see '{where} --help')", err=True)
        sys.exit(2)
    except ClickException as e:
        typer.echo(f"error: {_one_line(e.format_message())}", err=True)
        sys.exit(e.exit_code)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(1)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if isinstance(code, int) and not isinstance(code, bool) and code:
        sys.exit(code)  # typer.Exit(code) / Ctrl-C (130), returned in non-standalone mode
