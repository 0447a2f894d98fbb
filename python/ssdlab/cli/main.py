"""The `ssdlab` command. Errors the user can fix become a message and an exit
status here; anything else is a bug and keeps its traceback.

A subcommand's module is imported only when that subcommand runs (all of them when the
command line names none, for the list of --help or a mistake's suggestion): starting
`ssdlab runs` does not load numpy, altair or the simulator's modules."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import typer

from ssdlab import signals
from ssdlab.cli.output import err_console, shown
from ssdlab.cli.startup import restore_settings_left_changed
from ssdlab.errors import SsdlabError

# Every subcommand, in the order --help lists them: its name and "module:attribute", the
# attribute a function (a command) or a typer.Typer (a group of commands).
COMMANDS = {
    "run": "ssdlab.cli.run:run_command",
    "resume": "ssdlab.cli.resume:resume_command",
    "runs": "ssdlab.cli.runs:runs_command",
    "show": "ssdlab.cli.show:show_command",
    "export": "ssdlab.cli.export:export_command",
    "report": "ssdlab.cli.report:report_command",
    "compare": "ssdlab.cli.compare:compare_command",
    "sweep": "ssdlab.cli.sweep:sweep_command",
    "sweeps": "ssdlab.cli.sweeps:sweeps_app",
    "fit": "ssdlab.cli.fit:fit_command",
    "fleet": "ssdlab.cli.fleet:fleet_app",
    "worker": "ssdlab.cli.worker:worker_command",
    "tests": "ssdlab.cli.tests:tests_command",
    "suites": "ssdlab.cli.suites:suites_command",
    "analyze": "ssdlab.cli.analyze:analyze_app",
    "db": "ssdlab.cli.db:db_app",
    "drives": "ssdlab.cli.drives:drives_app",
    "import": "ssdlab.cli.importing:import_app",
    "sim": "ssdlab.cli.sim:sim_app",
    "trace": "ssdlab.cli.trace:trace_app",
}


def app_for(argv: Sequence[str]) -> typer.Typer:
    """`ssdlab` with the subcommand that argv names, or with every one when it names none."""
    app = typer.Typer(name="ssdlab", no_args_is_help=True, add_completion=False,
                      pretty_exceptions_enable=False,
                      help="An SSD test lab in a box: review-grade suites on a real drive or file "
                           "(through fio) or a simulated drive, every result stored.")
    app.callback()(_no_options)  # a group of commands, even of one
    for name in [argv[0]] if argv and argv[0] in COMMANDS else COMMANDS:
        module, attribute = COMMANDS[name].split(":")
        command = getattr(importlib.import_module(module), attribute)
        if isinstance(command, typer.Typer):
            app.add_typer(command, name=name)
        else:
            app.command(name)(command)
    return app


def _no_options() -> None:
    pass


def main() -> None:
    # SIGTERM and SIGHUP (a shutdown, a closed terminal) stop a run as Ctrl-C does: fio is
    # stopped, finished tests stay stored and the run can be resumed
    signals.install()
    app = app_for(sys.argv[1:])
    # typer (standalone) reports usage errors and Ctrl-C itself; ours are SsdlabError.
    try:
        restore_settings_left_changed(sys.argv[1:])
        app(prog_name="ssdlab")
    except SsdlabError as exc:
        err_console.print(f"[bold red]error:[/] {shown(exc, multiline=True)}", highlight=False)
        sys.exit(exc.exit_code)
