"""Options shared by several subcommands."""

from pathlib import Path
from typing import Annotated

import typer

DbOption = Annotated[Path | None, typer.Option(
    "--db", help="SQLite database (default: $SSDLAB_DB, else $XDG_DATA_HOME/ssdlab/ssdlab.db)")]
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]
RunIdArgument = Annotated[str, typer.Argument(
    help="run id from `ssdlab runs`, or `latest`")]
RunIdsArgument = Annotated[list[str], typer.Argument(
    help="run ids from `ssdlab runs`, or `latest`; the first is the reference")]
