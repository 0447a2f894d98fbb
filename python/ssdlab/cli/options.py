"""Options shared by several subcommands."""

from pathlib import Path
from typing import Annotated

import typer

from ssdlab.errors import SsdlabError
from ssdlab.units import parse_size

DbOption = Annotated[Path | None, typer.Option(
    "--db", help="SQLite database (default: $SSDLAB_DB, else $XDG_DATA_HOME/ssdlab/ssdlab.db)")]
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]
# what `run` and `sweep` run: the suite, which of its tests, at what scale
SuiteOption = Annotated[str, typer.Option(help="built-in suite name (`ssdlab suites`) or a suite .toml file")]
TestsOption = Annotated[str | None, typer.Option(help="only these test ids, comma-separated, in this order")]
ScaleOption = Annotated[float, typer.Option(help="0 < F <= 1: multiply spans, byte and time limits and idle times")]
RunIdArgument = Annotated[str, typer.Argument(
    help="run id from `ssdlab runs`, or `latest`")]
RunIdsArgument = Annotated[list[str], typer.Argument(
    help="run ids from `ssdlab runs`, or `latest`; the first is the reference")]


def size_option(option: str, text: str | None) -> int | None:
    """A size option's bytes (`64GiB`), refused with the option's name; None when not given."""
    if text is None:
        return None
    try:
        return parse_size(text)
    except ValueError as exc:
        raise SsdlabError(f"{option}: {exc}") from None


def parse_test_ids(text: str | None) -> tuple[str, ...] | None:
    """`--tests a, b`: the ids in order (the session refuses an empty or repeated list)."""
    if text is None:
        return None
    return tuple(t.strip() for t in text.split(",") if t.strip())
