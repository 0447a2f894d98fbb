"""Where the simulated runs of `sweep` and `fit` go: this machine's cores, or a Dask cluster's
workers (`--cluster`, `--scheduler-file`, `--tls`; distributed/)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from ssdlab.distributed.runner import RunJob, Runner, RunnerFor
from ssdlab.errors import SsdlabError
from ssdlab.text import require_utf8

ClusterOption = Annotated[str | None, typer.Option(
    "--cluster", metavar="ADDRESS",
    help="run the simulations on the Dask cluster whose scheduler is at ADDRESS (tcp://127.0.0.1:8786 on the "
         "loopback; beyond it tls://HOST:PORT with --tls): its workers run them, this command stores them")]


def runner_for(cluster: str | None, scheduler_file: Path | None, tls: Path | None, jobs: int | None) -> RunnerFor:
    """This machine's runner, or, with --cluster or --scheduler-file, the cluster's (whose
    address and certificates are checked here, before anything else, and connected to once
    every job's drive is built here)."""
    from ssdlab.distributed.local import LocalRunner
    from ssdlab.side_by_side import plan_requests

    if cluster is None and scheduler_file is None:
        if tls is not None:
            raise SsdlabError("--tls is for a cluster: give its tls:// address with --cluster")
        return LocalRunner.planned
    if jobs is not None:
        raise SsdlabError("--jobs is for this machine's cores: on a cluster, its workers' threads say how many "
                          "simulations run at once")
    from ssdlab.distributed.cluster import ClusterRunner
    runner = ClusterRunner.checked(None if cluster is None else require_utf8(cluster, "--cluster"), scheduler_file,
                                   tls)

    def on_cluster(run_jobs: Sequence[RunJob], asked: int | None) -> Runner:
        plan_requests([job.request for job in run_jobs], None)  # every job's drive built here first
        runner.connect()
        return runner

    return on_cluster
