"""`ssdlab report RUN_ID [RUN_ID ...] -o report.html`: one self-contained HTML page
comparing the runs, and optionally every chart as PNG and SVG files. `ssdlab sweeps report`
writes a sweep's page through the same functions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ssdlab.cli.options import DbOption, RunIdsArgument
from ssdlab.cli.output import console, shown
from ssdlab.errors import SsdlabError
from ssdlab.store import Store
from ssdlab.units import format_bytes

if TYPE_CHECKING:
    from ssdlab.report.charts import Chart

OutputOption = Annotated[Path, typer.Option("-o", "--output", help="the HTML file to write")]
PngOption = Annotated[Path | None, typer.Option(
    "--png", help="also write every chart as a PNG file into this directory")]
SvgOption = Annotated[Path | None, typer.Option(
    "--svg", help="also write every chart as an SVG file into this directory")]


def report_command(
        run_ids: RunIdsArgument,
        output: OutputOption,
        png: PngOption = None,
        svg: SvgOption = None,
        db: DbOption = None) -> None:
    """Write an HTML report of one run, or of several runs compared chart by chart."""
    # the report's modules load altair (a fifth of a second): only the commands that use them
    from ssdlab.report.data import gather
    from ssdlab.report.page import chart_count, render
    from ssdlab.report.sections import sections

    with Store.open_existing(db, readonly=True) as store:
        data = gather(store, [store.resolve_run_id(text) for text in run_ids])
    parts = sections(data)
    html = render(data, parts)
    write_page(output, html, f"{len(parts)} tests, {chart_count(parts)} charts")
    export_files([c for s in parts for c in s.charts], png, svg)


def write_page(output: Path, html: str, contents: str) -> None:
    """The page to `output`, and a line saying what it holds (`contents`) and its size."""
    try:
        output.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise SsdlabError(f"cannot write the report to {output}: {exc.strerror or exc}; "
                          "give another path with -o") from None
    console.print(f"wrote {shown(output)}: {contents}, {format_bytes(len(html.encode()))}", highlight=False)


def export_files(charts: Sequence[Chart], png: Path | None, svg: Path | None) -> None:
    """Every chart as a file into the directories --png and --svg give."""
    from ssdlab.report.export import export_charts

    for fmt, directory in (("png", png), ("svg", svg)):
        if directory is not None:
            export_charts(charts, directory, fmt)
            console.print(f"wrote {len(charts)} {fmt.upper()} charts to {shown(directory)}",
                          highlight=False)
