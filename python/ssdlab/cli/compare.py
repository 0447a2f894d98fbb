"""`ssdlab compare A B ...`: the primary score of every test, run beside run, with
the relative difference to the first run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from ssdlab.cli.options import DbOption, JsonOption, RunIdsArgument
from ssdlab.cli.output import console, err_console, print_json, shown
from ssdlab.store import Store

if TYPE_CHECKING:
    from ssdlab.report.data import ReportData


def compare_command(run_ids: RunIdsArgument, db: DbOption = None,
                    json_out: JsonOption = False) -> None:
    """Compare the primary scores of runs; differences are relative to the first run."""
    # the report's modules load altair (a fifth of a second): only the commands that use them
    from ssdlab.report.data import gather
    from ssdlab.report.summary import format_relative, format_spread, format_value, score_rows, summary_json

    with Store.open_existing(db, readonly=True) as store:
        data = gather(store, [store.resolve_run_id(text) for text in run_ids])
    warnings = [w for w in (scale_mismatch(data),) if w]
    if json_out:
        print_json({**summary_json(data), "warnings": warnings})
        return
    for warning in warnings:
        err_console.print(f"[bold yellow]warning:[/] {shown(warning)}", highlight=False)
    table = Table()
    table.add_column("test", no_wrap=True)  # the ids are what people look for
    table.add_column("primary score")
    for run in data.runs:
        table.add_column(shown(run.label), justify="right")
    for row in score_rows(data):
        table.add_row(row.test, row.score_name,
                      *("\n".join(filter(None, (format_value(c), format_spread(c), format_relative(c))))
                        for c in row.cells))
    console.print(table)


def scale_mismatch(data: ReportData) -> str | None:
    """Runs at different --scale ran different workloads (a fill of 1 % of a drive may never
    leave its SLC cache), so their differences measure the scale, not the drives."""
    if len({r.run.scale for r in data.runs}) < 2:
        return None
    scales = ", ".join(f"run {r.run.id} at {r.run.scale:g}" for r in data.runs)
    return f"the runs were made at different scales ({scales}): their scores are not comparable"
