"""`ssdlab resume RUN_ID`: continue an interrupted run from its first unfinished test."""

from typing import Annotated

import typer

from ssdlab.cli.options import DbOption, RunIdArgument
from ssdlab.cli.output import console
from ssdlab.session import resume_run


def resume_command(
    run_id: RunIdArgument,
    db: DbOption = None,
    destroy_data: Annotated[str | None, typer.Option(
        "--destroy-data", metavar="SERIAL", help="consent again to erase the device with this serial")] = None,
) -> None:
    """Continue a run that was interrupted or failed; finished tests are kept, not rerun."""
    finished = resume_run(run_id, db, destroy_data)
    console.print(f"run {finished} done: `ssdlab show {finished}` for the results")
