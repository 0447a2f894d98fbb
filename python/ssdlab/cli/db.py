"""`ssdlab db recover DAMAGED -o NEW`: every run, test and step that can still be read of a
damaged database, copied into a new one (store/recovery.py), and what could not be.

Exit status 0: everything was copied; 1: NEW was written without what the summary lists;
2: nothing was written (a message says why)."""

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from ssdlab.cli.output import console, shown
from ssdlab.store.recovery import Recovery, SweepLoss, recover, row_counts

db_app = typer.Typer(help="The database itself: `recover` copies what can be read of a damaged one.",
                     no_args_is_help=True)

SOMETHING_LOST = 1


@db_app.command("recover")
def recover_command(
        damaged: Annotated[Path, typer.Argument(help="the damaged database; it is only read")],
        new: Annotated[Path, typer.Option("-o", "--output", help="the database to write; it must not exist")],
) -> None:
    """Copy every run, test and step that can be read of a damaged database into a new one.
    Exit status 0: all of it was copied; 1: NEW lacks what the summary lists; 2: nothing was
    written (the message says why)."""
    recovered = recover(damaged, new)
    copied = recovered.copied
    sweeps = f", and {copied['sweeps']} sweeps of {copied['sweep_variants']} variants," if copied["sweeps"] else ""
    console.print(f"recovered {copied['runs']} runs, {copied['tests']} tests and {copied['steps']} steps{sweeps} "
                  f"from {shown(damaged)} into {shown(new)}"
                  + (": everything could be read" if recovered.complete else ""), highlight=False)
    for line in _losses(recovered):
        console.print(line, highlight=False)
    if not recovered.complete:
        raise typer.Exit(SOMETHING_LOST)


def _losses(recovered: Recovery) -> list[str]:
    lines = []
    for damage in recovered.damage:
        if damage.unreadable:
            lines.append(f"[yellow]could not read:[/] {damage.table}, rowids {', '.join(map(str, damage.unreadable))}")
        if damage.damaged_rows:
            lines.append(f"[yellow]could not read:[/] {damage.table}, rows with damaged values: {damage.damaged_rows}")
    for loss, described in recovered.incomplete:
        marked = (f"is incomplete, now failed (`ssdlab resume {loss.run_id}` measures its failed tests again)"
                  if loss.measurements else "keeps its status, with a note")
        lines.append(f"[yellow]run {loss.run_id}[/] {marked}: {shown(described)}")
    for run_id, rows in sorted(recovered.left_out.items()):
        counts = row_counts(rows - Counter(runs=rows["runs"]))
        lines.append(f"[yellow]left out: run {run_id}[/], whose own row could not be read"
                     + (f", with its rows ({counts})" if counts else ""))
    return lines + [line for loss in recovered.sweeps for line in _sweep_losses(loss)]


def _sweep_losses(loss: SweepLoss) -> list[str]:
    sweep = f"sweep {loss.sweep_id}"
    if loss.own_row:
        return [f"[yellow]left out: {sweep}[/], whose own row could not be read, with the {loss.variants} variants "
                "read of it (their runs are kept)"]
    lines = [f"[yellow]{sweep}[/] lost {loss.variants} of its variants: their rows could not be read, and "
             "`ssdlab sweep --resume` cannot run them"] if loss.variants else []
    if loss.runs:
        lines.append(f"[yellow]{sweep}[/]: the runs of {len(loss.runs)} of its variants are lost "
                     f"({shown(', '.join(loss.runs))}): `ssdlab sweep --resume {loss.sweep_id}` runs them anew")
    return lines
