"""`ssdlab sim fio JOBFILE --drive PRESET`: a fio job file on a simulated drive,
answered in fio's JSON so any tool that reads fio output reads the simulator's."""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ssdlab.backends.sim import SimBackend
from ssdlab.cli.output import err_console, shown
from ssdlab.presets import load_preset
from ssdlab.simfio.jobfile import ignored_note, parse_job_file
from ssdlab.simfio.output import fio_json
from ssdlab.simfio.run import plan_all, queue_note, run_job, whole_drive_note
from ssdlab.text import read_text_file

sim_app = typer.Typer(help="The simulator on its own.", no_args_is_help=True)


@sim_app.command("fio")
def sim_fio(jobfile: Annotated[Path, typer.Argument(help="a fio job file")],
            drive: Annotated[str, typer.Option(help="a preset name from `ssdlab drives`, or a .toml path")]) -> None:
    """Run a fio job file's jobs, in order, on a fresh simulated drive; print fio's JSON (json+)."""
    jobs = parse_job_file(read_text_file(jobfile, "the job file"), str(jobfile))
    backend = SimBackend(load_preset(drive))
    plans = plan_all(jobs, backend.capacity, str(jobfile))  # all checked before any runs
    for note in (ignored_note(jobs), *map(queue_note, plans)):
        if note:
            _note(f"{jobfile}: {note}")
    runs = []
    for job, p in zip(jobs, plans):
        if p.whole_drive:  # the simulator runs a step in one call: a note instead of a bar
            _note(whole_drive_note(p))
        runs.append((job, p, run_job(backend, p)))
    sys.stdout.write(json.dumps(fio_json(runs, drive), indent=2) + "\n")


def _note(text: str) -> None:
    err_console.print(f"note: {shown(text)}", highlight=False)
