"""`ssdlab analyze fill FILE.csv`: read a whole-drive-fill curve from a CSV file."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ssdlab.analysis.fill import analyze_fill, format_gib
from ssdlab.cli.options import JsonOption
from ssdlab.cli.output import console, print_json
from ssdlab.errors import SsdlabError
from ssdlab.model import GibPoint
from ssdlab.text import read_text_file

COLUMNS = ("gib", "mbps")
# Far beyond any drive (a petabyte written; from a kilobyte to a terabyte per second),
# so that no value read makes the analysis's arithmetic overflow.
MAX_GIB = 1e6
MBPS_RANGE = (1e-3, 1e6)

analyze_app = typer.Typer(no_args_is_help=True,
                          help="Analyse measured curves from files, without running anything.")


@analyze_app.command("fill")
def fill_command(
        file: Annotated[Path, typer.Argument(
            help="CSV with columns gib,mbps (header optional): GiB written at the end of each "
                 "segment and its MB/s")],
        json_out: JsonOption = False) -> None:
    """Estimate the SLC cache size and the phases of a whole-drive-fill curve."""
    analysis = analyze_fill(read_fill_csv(file))
    if json_out:
        print_json(analysis.to_json())
        return
    table = Table("phase", "from", "to", "MB/s", title="whole-drive fill")
    for phase in analysis.phases:
        table.add_row(phase.kind, format_gib(phase.start_gib), format_gib(phase.end_gib),
                      f"{phase.mean_mbps:.1f}")
    console.print(table)
    cache = ("none" if analysis.slc_cache_gib is None
             else f"about {format_gib(analysis.slc_cache_gib)}")
    console.print(f"SLC cache: {cache}   last 16 GiB: {analysis.last16_mbps:.1f} MB/s   "
                  f"overall: {analysis.mean_mbps:.1f} MB/s", highlight=False)
    console.print(analysis.finding, highlight=False)


def read_fill_csv(path: Path) -> list[GibPoint]:
    """The points of a `gib,mbps` CSV; anything wrong is an SsdlabError naming the line."""
    text = read_text_file(path, "the fill CSV")
    try:
        return _points(path, csv.reader(text.splitlines()))
    except csv.Error as exc:  # a NUL byte, a field over the csv module's size limit
        raise SsdlabError(f"{path}: not a CSV file of gib,mbps: {exc}") from None


def _points(path: Path, rows: Iterable[list[str]]) -> list[GibPoint]:
    points: list[GibPoint] = []
    header_allowed = True
    for line, row in enumerate(rows, start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if header_allowed and tuple(cell.lower() for cell in cells) == COLUMNS:
            header_allowed = False
            continue
        header_allowed = False
        where = f"{path}, line {line}"
        if len(cells) != len(COLUMNS):
            raise SsdlabError(f"{where}: expected 2 columns gib,mbps, found {len(cells)}")
        gib, mbps = (_number(where, name, cell) for name, cell in zip(COLUMNS, cells))
        if points and gib <= points[-1].gib:
            raise SsdlabError(f"{where}: gib {cells[0]} is not more than the {points[-1].gib:g} "
                              "before it; gib is the total written at the end of each segment, "
                              "so it must increase")
        if not 0 < gib <= MAX_GIB:
            raise SsdlabError(f"{where}: gib must be greater than 0 and at most {MAX_GIB:.0f}, "
                              f"found {cells[0]}")
        if not MBPS_RANGE[0] <= mbps <= MBPS_RANGE[1]:
            raise SsdlabError(f"{where}: mbps must be from {MBPS_RANGE[0]:g} to "
                              f"{MBPS_RANGE[1]:.0f}, found {cells[1]}")
        points.append(GibPoint(gib=gib, mbps=mbps))
    if len(points) < 2:
        raise SsdlabError(f"{path}: {len(points)} data line(s); a fill curve needs at least 2 "
                          "lines of gib,mbps")
    return points


def _number(where: str, column: str, cell: str) -> float:
    try:
        value = float(cell)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise SsdlabError(f"{where}: {column} is not a number: {cell!r}")
    return value
