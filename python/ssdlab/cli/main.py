"""The `ssdlab` command. Errors the user can fix become a message and an exit
status here; anything else is a bug and keeps its traceback."""

from __future__ import annotations

import sys

import typer

from ssdlab import signals
from ssdlab.cli.analyze import analyze_app
from ssdlab.cli.compare import compare_command
from ssdlab.cli.db import db_app
from ssdlab.cli.drives import drives_app
from ssdlab.cli.export import export_command
from ssdlab.cli.importing import import_app
from ssdlab.cli.output import err_console, shown
from ssdlab.cli.report import report_command
from ssdlab.cli.resume import resume_command
from ssdlab.cli.run import run_command
from ssdlab.cli.runs import runs_command
from ssdlab.cli.show import show_command
from ssdlab.cli.sim import sim_app
from ssdlab.cli.startup import restore_apst_left_off
from ssdlab.cli.suites import suites_command
from ssdlab.cli.tests import tests_command
from ssdlab.cli.trace import trace_app
from ssdlab.errors import SsdlabError

app = typer.Typer(name="ssdlab", no_args_is_help=True, add_completion=False,
                  pretty_exceptions_enable=False,
                  help="An SSD test lab in a box: review-grade suites on a real drive or file "
                       "(through fio) or a simulated drive, every result stored.")

app.command("run")(run_command)
app.command("resume")(resume_command)
app.command("runs")(runs_command)
app.command("show")(show_command)
app.command("export")(export_command)
app.command("report")(report_command)
app.command("compare")(compare_command)
app.command("tests")(tests_command)
app.command("suites")(suites_command)
app.add_typer(analyze_app, name="analyze")
app.add_typer(db_app, name="db")
app.add_typer(drives_app, name="drives")
app.add_typer(import_app, name="import")
app.add_typer(sim_app, name="sim")
app.add_typer(trace_app, name="trace")


def main() -> None:
    # SIGTERM and SIGHUP (a shutdown, a closed terminal) stop a run as Ctrl-C does: fio is
    # stopped, finished tests stay stored and the run can be resumed
    signals.install()
    # typer (standalone) reports usage errors and Ctrl-C itself; ours are SsdlabError.
    try:
        restore_apst_left_off(sys.argv[1:])
        app(prog_name="ssdlab")
    except SsdlabError as exc:
        err_console.print(f"[bold red]error:[/] {shown(exc, multiline=True)}", highlight=False)
        sys.exit(exc.exit_code)
