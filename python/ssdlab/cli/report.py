"""`ssdlab report RUN_ID [RUN_ID ...] -o report.html`: one self-contained HTML page
comparing the runs, and optionally every chart as PNG and SVG files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ssdlab.cli.options import DbOption, RunIdsArgument
from ssdlab.cli.output import console, shown
from ssdlab.errors import SsdlabError
from ssdlab.store import Store
from ssdlab.units import format_bytes


def report_command(
        run_ids: RunIdsArgument,
        output: Annotated[Path, typer.Option("-o", "--output", help="the HTML file to write")],
        png: Annotated[Path | None, typer.Option(
            "--png", help="also write every chart as a PNG file into this directory")] = None,
        svg: Annotated[Path | None, typer.Option(
            "--svg", help="also write every chart as an SVG file into this directory")] = None,
        db: DbOption = None) -> None:
    """Write an HTML report of one run, or of several runs compared chart by chart."""
    # the report's modules load altair (a fifth of a second): only the commands that use them
    from ssdlab.report.data import gather
    from ssdlab.report.export import export_charts
    from ssdlab.report.page import chart_count, render
    from ssdlab.report.sections import sections

    with Store.open_existing(db, readonly=True) as store:
        data = gather(store, [store.resolve_run_id(text) for text in run_ids])
    parts = sections(data)
    html = render(data, parts)
    try:
        output.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise SsdlabError(f"cannot write the report to {output}: {exc.strerror}; "
                          "give another path with -o") from None
    console.print(f"wrote {shown(output)}: {len(parts)} tests, {chart_count(parts)} charts, "
                  f"{format_bytes(len(html.encode()))}", highlight=False)
    charts = [c for s in parts for c in s.charts]
    for fmt, directory in (("png", png), ("svg", svg)):
        if directory is not None:
            export_charts(charts, directory, fmt)
            console.print(f"wrote {len(charts)} {fmt.upper()} charts to {shown(directory)}",
                          highlight=False)
