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
from ssdlab.simfio.jobfile import parse_job_file
from ssdlab.simfio.run import fio_json, plan, run_job, whole_drive_note
from ssdlab.text import read_text_file

sim_app = typer.Typer(help="The simulator on its own.", no_args_is_help=True)


@sim_app.command("fio")
def sim_fio(jobfile: Annotated[Path, typer.Argument(help="a fio job file")],
            drive: Annotated[str, typer.Option(help="a preset name from `ssdlab drives`, or a .toml path")]) -> None:
    """Run a fio job file's jobs, in order, on a fresh simulated drive; print fio's JSON."""
    jobs = parse_job_file(read_text_file(jobfile, "the job file"), str(jobfile))
    backend = SimBackend(load_preset(drive))
    plans = [plan(job, backend.capacity, str(jobfile)) for job in jobs]  # all checked before any runs
    results = []
    for job, p in zip(jobs, plans):
        if p.whole_drive:  # the simulator runs a step in one call: a note instead of a bar
            err_console.print(f"note: {shown(whole_drive_note(p))}", highlight=False)
        results.append((job, run_job(backend, p)))
    sys.stdout.write(json.dumps(fio_json(results, drive), indent=2) + "\n")
