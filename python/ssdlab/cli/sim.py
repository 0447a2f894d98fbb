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
from ssdlab.simfio.run import (
    batches,
    plan_all,
    prefill_steps,
    queue_note,
    run_batch,
    unwritten_note,
    whole_drive_note,
    write_logs,
)
from ssdlab.text import read_text_file

sim_app = typer.Typer(help="The simulator on its own.", no_args_is_help=True)


@sim_app.command("fio")
def sim_fio(jobfile: Annotated[Path, typer.Argument(help="a fio job file")],
            drive: Annotated[str, typer.Option(help="a preset name from `ssdlab drives`, or a .toml path")],
            prefill: Annotated[bool, typer.Option(
                "--prefill", help="write the ranges the jobs read first (128 KiB QD32), as fio lays out a "
                                  "file before reading it; else reads of a fresh drive find no data")] = False,
            ) -> None:
    """Run a fio job file's jobs on a fresh simulated drive as fio runs them (at once between
    stonewalls); print fio's JSON (json+) and write the logs the jobs ask for."""
    jobs = parse_job_file(read_text_file(jobfile, "the job file"), str(jobfile))
    backend = SimBackend(load_preset(drive))
    plans = plan_all(jobs, backend.capacity, str(jobfile))  # all checked before any runs
    for note in (ignored_note(jobs), *dict.fromkeys(map(queue_note, plans))):
        if note:
            _note(f"{jobfile}: {note}")
    for step in prefill_steps(plans) if prefill else ():
        backend.run_step(step)
    runs = []
    for index, batch in enumerate(batches(plans)):
        for p in batch:
            if p.whole_drive:  # the simulator runs a step in one call: a note instead of a bar
                _note(whole_drive_note(p))
        for p, run in zip(batch, run_batch(backend, batch, index)):
            if note := unwritten_note(p.step.label, run):
                _note(note)
            runs.append(run)
    for note in write_logs(plans, runs):
        _note(note)
    sys.stdout.write(json.dumps(fio_json(list(zip(plans, runs)), drive), indent=2) + "\n")


def _note(text: str) -> None:
    err_console.print(f"note: {shown(text)}", highlight=False)
