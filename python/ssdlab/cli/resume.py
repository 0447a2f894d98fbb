"""`ssdlab resume RUN_ID`: continue an interrupted run from its first unfinished test."""

from typing import Annotated

import typer

from ssdlab.cli.options import DbOption, RunIdArgument
from ssdlab.cli.output import console, err_console, shown
from ssdlab.cli.run import outcome
from ssdlab.session import resume_run


def resume_command(
    run_id: RunIdArgument,
    db: DbOption = None,
    destroy_data: Annotated[str | None, typer.Option(
        "--destroy-data", metavar="SERIAL", help="consent again to erase the device with this serial")] = None,
) -> None:
    """Continue a run that was interrupted, failed, or waits for its retention read-back; finished
    tests are kept, not rerun."""
    finished = resume_run(run_id, db, destroy_data,
                          warn=lambda text: err_console.print(f"[yellow]warning:[/] {shown(text)}", highlight=False))
    console.print(outcome(db, finished), highlight=False)
