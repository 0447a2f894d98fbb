"""`ssdlab compare A B ...`: the primary score of every test, run beside run, with
the relative difference to the first run."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from ssdlab.cli.options import DbOption, JsonOption, RunIdsArgument
from ssdlab.cli.output import console, print_json
from ssdlab.report.data import gather
from ssdlab.report.summary import format_relative, format_value, score_rows, summary_json
from ssdlab.store import Store


def compare_command(run_ids: RunIdsArgument, db: DbOption = None,
                    json_out: JsonOption = False) -> None:
    """Compare the primary scores of runs; differences are relative to the first run."""
    with Store(db) as store:
        data = gather(store, [store.resolve_run_id(text) for text in run_ids])
    if json_out:
        print_json(summary_json(data))
        return
    table = Table()
    table.add_column("test", no_wrap=True)  # the ids are what people look for
    table.add_column("primary score")
    for run in data.runs:
        table.add_column(escape(run.label), justify="right")
    for row in score_rows(data):
        table.add_row(row.test, row.score_name,
                      *(f"{format_value(c)}\n{format_relative(c)}".strip() for c in row.cells))
    console.print(table)
