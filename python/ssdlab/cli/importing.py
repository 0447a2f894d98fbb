"""`ssdlab import fio-json FILE...`: fio's JSON output measured elsewhere, each file stored as
one finished run (importing/fio_json.py) beside ssdlab's own runs.

Each file is read and stored on its own, in one transaction: it is stored whole or not at
all, and a file that cannot be imported is reported, with the reason, while the others are
stored. Exit status 0: every file was stored; 2: some were not (each said why)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ssdlab.cli.options import DbOption, JsonOption
from ssdlab.cli.output import console, err_console, print_json, shown
from ssdlab.errors import SsdlabError
from ssdlab.importing.fio_json import BARE_FLAGS_NOTE, read_fio_json, run_notes, step_notes
from ssdlab.store import Store
from ssdlab.store.imports import save_imported
from ssdlab.text import require_utf8

NOT_ALL_IMPORTED = SsdlabError.exit_code

import_app = typer.Typer(no_args_is_help=True,
                         help="Store results measured elsewhere as runs, to show, report and compare "
                              "beside ssdlab's own.")


@import_app.command("fio-json")
def fio_json_command(
        files: Annotated[list[Path], typer.Argument(
            metavar="FILE...", help="fio's output with --output-format=json or json+ (fio 3.x; `fio --client` too); "
                 "text fio printed around the JSON is allowed")],
        name: Annotated[str | None, typer.Option(
            "--name", help="the name of each run (default: its file's name)")] = None,
        drive: Annotated[str | None, typer.Option(
            "--drive", help="the drive the jobs measured, in your words (model, firmware...): fio's "
                            "JSON does not say")] = None,
        db: DbOption = None, json_out: JsonOption = False) -> None:
    """Store each fio JSON file as a finished run whose steps are its jobs: IOPS, MB/s and
    latencies per direction (with json+'s histogram), the workload from the job options fio
    printed, fio's version and the time it ran. What fio's JSON does not say is said, not made
    up; a file that cannot be imported whole is not stored, and the others are."""
    name = None if name is None else require_utf8(name, "--name")
    drive = None if drive is None else require_utf8(drive, "--drive")
    outcomes: list[dict[str, Any]] = []
    with Store(db) as store:
        for path in files:
            try:
                run = read_fio_json(path, name, drive)
                run_id = save_imported(store, run)
            except SsdlabError as exc:
                outcomes.append({"file": str(path), "error": str(exc)})
                if not json_out:
                    err_console.print(f"[bold red]error:[/] {shown(exc)}", highlight=False)
                continue
            outcome = {"file": str(path), "run": run_id, "steps": len(run.test.steps),
                       "fio_version": run.engine.get("fio_version"), "measured_at": run.started_at,
                       "notes": [n for n in run_notes(run) if n != BARE_FLAGS_NOTE],
                       "step_notes": [{"step": label, "note": note} for label, note in step_notes(run)]}
            outcomes.append(outcome)
            if not json_out:
                _print(outcome)
    failed = sum("error" in o for o in outcomes)
    if json_out:
        print_json(outcomes)
    else:
        if failed < len(outcomes):
            console.print(f"[dim]note: {BARE_FLAGS_NOTE}[/]", highlight=False)
        if failed:
            err_console.print(f"{len(outcomes) - failed} of {len(outcomes)} files imported; "
                              f"{failed} not (said above)", highlight=False)
    if failed:
        raise typer.Exit(NOT_ALL_IMPORTED)


def _print(outcome: dict[str, Any]) -> None:
    console.print(f"{shown(outcome['file'])}: run {outcome['run']}, {outcome['steps']} step(s), "
                  f"{shown(outcome['fio_version'])}, measured {outcome['measured_at'][:19].replace('T', ' ')} UTC",
                  highlight=False)
    for note in outcome["notes"]:
        console.print(f"  note: {shown(note)}", highlight=False)
    for item in outcome["step_notes"]:
        console.print(f"  {shown(item['step'])}: {shown(item['note'])}", highlight=False)
