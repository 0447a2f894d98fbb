"""`ssdlab resume RUN_ID`: continue an interrupted run from its first unfinished test (a
fleet's drive: on its host's worker, `--cluster`)."""

from pathlib import Path
from typing import Annotated

import typer

from ssdlab.cli.options import DbOption, MixedVersionsOption, RunIdArgument, SchedulerFileOption, TlsOption
from ssdlab.cli.output import console, err_console, shown
from ssdlab.cli.run import outcome
from ssdlab.errors import SsdlabError
from ssdlab.session import RunRequest, resume_run


def resume_command(
    run_id: RunIdArgument,
    db: DbOption = None,
    destroy_data: Annotated[str | None, typer.Option(
        "--destroy-data", metavar="SERIAL", help="consent again to erase the device with this serial")] = None,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", metavar="ADDRESS",
        help="a run on a fleet's drive (HOST:/dev/NAME): continue it on its host's worker, through the Dask "
             "scheduler at ADDRESS")] = None,
    scheduler_file: SchedulerFileOption = None,
    tls: TlsOption = None,
    allow_mixed_versions: MixedVersionsOption = False,
) -> None:
    """Continue a run that was interrupted, failed, or waits for its retention read-back; finished
    tests are kept, not rerun."""
    if cluster is not None or scheduler_file is not None:
        _resume_on_fleet(run_id, db, destroy_data, cluster, scheduler_file, tls, allow_mixed_versions)
        return
    finished = resume_run(run_id, db, destroy_data,
                          warn=lambda text: err_console.print(f"[yellow]warning:[/] {shown(text)}", highlight=False))
    console.print(outcome(db, finished), highlight=False)


def _resume_on_fleet(run_id_text: str, db: DbOption, destroy_data: str | None, cluster: str | None,
                     scheduler_file: Path | None, tls: Path | None, allow_mixed_versions: bool) -> None:
    from ssdlab.cli.run import follow_outcomes
    from ssdlab.distributed.fleet import FleetRunner
    from ssdlab.distributed.runner import RunJob
    from ssdlab.model import RunStatus
    from ssdlab.store import Store
    from ssdlab.targets.resolve import fleet_target

    db_path = Path(db) if db else None
    with Store.open_existing(db_path, readonly=True) as store:
        run_id = store.resolve_run_id(run_id_text)
        run = store.run(run_id)
    if fleet_target(run.target) is None:
        raise SsdlabError(f"run {run_id} ran on {run.target}, not on a fleet's drive: `ssdlab resume {run_id}` "
                          "without --cluster continues it here")
    if run.status is RunStatus.DONE:
        raise SsdlabError(f"run {run_id} is already complete: `ssdlab show {run_id}`")
    runner = FleetRunner.checked(cluster, scheduler_file, tls, allow_mixed_versions=allow_mixed_versions)
    runner.connect()
    request = RunRequest(target=run.target, destroy_data=destroy_data, db=db_path)
    follow_outcomes(lambda reporter_for: runner.run([RunJob(request, run_id)], reporter_for), db_path, False)
