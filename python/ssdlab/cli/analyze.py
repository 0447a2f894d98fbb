"""`ssdlab analyze fill FILE.csv`: read a whole-drive-fill curve from a CSV file."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ssdlab.analysis.fill import analyze_fill, format_gib
from ssdlab.cli.options import JsonOption
from ssdlab.cli.output import console, print_json
from ssdlab.errors import SsdlabError
from ssdlab.model import GibPoint

COLUMNS = ("gib", "mbps")

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
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SsdlabError(f"{path}: no such file; give a CSV with columns gib,mbps") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SsdlabError(f"cannot read {path} as a text CSV file: {exc}") from None
    points: list[GibPoint] = []
    header_allowed = True
    for line, row in enumerate(csv.reader(text.splitlines()), start=1):
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
        if gib <= 0:
            raise SsdlabError(f"{where}: gib must be greater than 0, found {cells[0]}")
        if mbps <= 0:
            raise SsdlabError(f"{where}: mbps must be greater than 0, found {cells[1]}")
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
