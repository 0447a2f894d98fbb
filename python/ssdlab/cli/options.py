"""Options shared by several subcommands."""

from pathlib import Path
from typing import Annotated

import typer

from ssdlab.backends.sim_host import Cooling
from ssdlab.errors import SsdlabError
from ssdlab.model import Age
from ssdlab.units import parse_size

DbOption = Annotated[Path | None, typer.Option(
    "--db", help="SQLite database (default: $SSDLAB_DB, else $XDG_DATA_HOME/ssdlab/ssdlab.db)")]
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]
# what `run` and `sweep` run: the suite, which of its tests, at what scale
SuiteOption = Annotated[str, typer.Option(help="built-in suite name (`ssdlab suites`) or a suite .toml file")]
TestsOption = Annotated[str | None, typer.Option(help="only these test ids, comma-separated, in this order")]
ScaleOption = Annotated[float, typer.Option(help="0 < F <= 1: multiply spans, byte and time limits and idle times")]
# the simulated drive's host and prior life, for `run` (sim:PRESET targets) and `sweep`
ApstLatencyOption = Annotated[int | None, typer.Option(
    "--apst-latency-us", metavar="US",
    help="sim:PRESET only: the host's APST latency limit in µs (Linux's default 100000; 0: APST off)")]
NoLowPowerStatesOption = Annotated[bool, typer.Option(
    "--no-low-power-states",
    help="sim:PRESET only: a platform on which the drive cannot reach its non-operational power states "
         "(no PCIe L1.2)")]
CoolingOption = Annotated[Cooling | None, typer.Option(
    help="sim:PRESET only: how the drive is cooled (the simulator's default: a heatsink)")]
AmbientOption = Annotated[float | None, typer.Option(
    "--ambient-c", metavar="C", help="sim:PRESET only: the air around the drive, °C (default 35)")]
AgeOption = Annotated[str | None, typer.Option(
    metavar="AGE", help="sim:PRESET only: the drive worn before the first test, as its life before the run "
                        "would have left it: 2000pe (P/E cycles), 80% (of its rated cycles) or 400TBW")]
# where `run`, `resume` and `sweep` reach a Dask cluster (distributed/), besides their own --cluster
SchedulerFileOption = Annotated[Path | None, typer.Option(
    "--scheduler-file", metavar="FILE",
    help="as --cluster, the address read from a Dask scheduler file (`dask scheduler --scheduler-file`)")]
TlsOption = Annotated[Path | None, typer.Option(
    "--tls", metavar="DIR",
    help="for a tls:// cluster: the directory of its certificates (`ssdlab fleet certs DIR`), whose client "
         "certificate this command shows")]
MixedVersionsOption = Annotated[bool, typer.Option(
    "--allow-mixed-versions", help="run on a fleet's workers whose ssdlab or fio differs from this machine's")]
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


def parse_age(text: str | None) -> Age | None:
    """--age: the simulated drive's prior life; None when not given."""
    if text is None:
        return None
    try:
        return Age.parse(text)
    except ValueError as exc:
        raise SsdlabError(f"--age: {exc}") from None
