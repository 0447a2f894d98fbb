"""`ssdlab sweeps`: the stored sweeps; `ssdlab sweeps show N`: a sweep's table, a row per
variant with its overrides and primary scores (`--csv FILE` writes it); `ssdlab sweeps report N
-o FILE`: its HTML page, the table and each score charted against each swept key.

The sweep's page is a command of `sweeps`, as `show` is, rather than an option of `ssdlab
report`: a sweep's id and a run's are numbered apart, and `report 3` always means run 3."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ssdlab.cli.options import DbOption, JsonOption
from ssdlab.cli.output import console, print_json, shown
from ssdlab.cli.report import OutputOption, PngOption, SvgOption, export_files, write_page
from ssdlab.distributed.overrides import short_key, shown_value
from ssdlab.distributed.results import SweepTable, sweep_table
from ssdlab.errors import SsdlabError
from ssdlab.model import RunStatus
from ssdlab.store import Store

sweeps_app = typer.Typer(help="Sweeps: a suite over variants of a simulated drive (`ssdlab sweep`).",
                         invoke_without_command=True)


@sweeps_app.callback()
def sweeps_command(ctx: typer.Context, db: DbOption = None, json_out: JsonOption = False) -> None:
    """List stored sweeps."""
    if ctx.invoked_subcommand is not None:
        return
    with Store.open_existing(db, readonly=True) as store:
        rows = []
        for sweep in store.sweeps():
            variants = store.sweep_variants(sweep.id)
            done = sum(v.run_id is not None and store.run(v.run_id).status is RunStatus.DONE for v in variants)
            rows.append((sweep, done, len(variants)))
    if json_out:
        print_json([{"id": s.id, "base": s.base, "suite": s.suite, "spec": s.spec, "scale": s.options["scale"],
                     "variants_done": done, "variants": total, "created_at": s.created_at}
                    for s, done, total in rows])
        return
    table = Table("id", "base", "suite", "scale", "variants", "created")
    for sweep, done, total in rows:
        table.add_row(str(sweep.id), shown(sweep.base), shown(sweep.suite), f"{sweep.options['scale']:g}",
                      f"{done}/{total} done", sweep.created_at[:19])
    console.print(table)


@sweeps_app.command("show")
def show_sweep(
    sweep_id: Annotated[str, typer.Argument(metavar="SWEEP_ID", help="a sweep id from `ssdlab sweeps`, or latest")],
    csv_path: Annotated[Path | None, typer.Option(
        "--csv", metavar="FILE", help="also write the table as CSV to FILE (- for standard output)")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """A sweep's variants: each one's overrides, run, state and primary scores."""
    with Store.open_existing(db, readonly=True) as store:
        table = sweep_table(store, store.resolve_sweep_id(sweep_id))
    if csv_path is not None and str(csv_path) == "-":
        typer.echo(table.csv(), nl=False)
        return
    if csv_path is not None:
        try:
            csv_path.write_text(table.csv(), encoding="utf-8")
        except OSError as exc:
            raise SsdlabError(f"cannot write {csv_path}: {exc.strerror or exc}") from None
    if json_out:
        print_json(table.document())
    else:
        print_table(table)


@sweeps_app.command("report")
def report_sweep(
    sweep_id: Annotated[str, typer.Argument(metavar="SWEEP_ID", help="a sweep id from `ssdlab sweeps`, or latest")],
    output: OutputOption,
    png: PngOption = None,
    svg: SvgOption = None,
    db: DbOption = None,
) -> None:
    """Write an HTML page of a sweep: its variants' table, each score charted against each swept key."""
    with Store.open_existing(db, readonly=True) as store:
        table = sweep_table(store, store.resolve_sweep_id(sweep_id))
    from ssdlab.report.page import render_sweep  # loads altair: once the sweep is found
    from ssdlab.report.sweep_sections import sweep_view

    view = sweep_view(table)
    write_page(output, render_sweep(view), f"{len(view.table.rows)} variants, {len(view.charts)} charts")
    export_files(view.charts, png, svg)


def print_table(table: SweepTable) -> None:
    """A row per variant: its run and state, each swept key's value, each test's primary score."""
    from ssdlab.report.sweep_sections import score_text  # the report's number format; it loads altair

    sweep = table.sweep
    console.print(f"sweep {sweep.id}: {shown(sweep.base)}, suite {shown(sweep.suite)} at scale "
                  f"{sweep.options['scale']:g}, {len(table.rows)} variants", highlight=False)
    out = Table("run", "state")
    for key in table.keys:
        out.add_column(shown(short_key(key)), justify="right")
    for column in table.tests:
        out.add_column(f"{shown(column.test)}\n{shown(column.name)}", justify="right")
    for row in table.rows:
        scores = [score_text(row.scores.get(column.test), column.unit) for column in table.tests]
        out.add_row("" if row.run_id is None else str(row.run_id), row.status,
                    *(shown(shown_value(row.overrides[k])) if k in row.overrides else "" for k in table.keys),
                    *scores)
    console.print(out)
