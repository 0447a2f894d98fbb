"""`ssdlab worker --scheduler ADDRESS`: a Dask worker on this host, for sweeps and for the
drives it is given (distributed/fleet.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ssdlab.cli.options import DbOption
from ssdlab.cli.output import err_console, shown
from ssdlab.text import require_utf8


def worker_command(
    scheduler: Annotated[str, typer.Option(
        "--scheduler", metavar="ADDRESS",
        help="the Dask scheduler: tcp://127.0.0.1:8786 on the loopback, beyond it tls://HOST:PORT with --tls")],
    drive: Annotated[list[str] | None, typer.Option(
        "--drive", metavar="SERIAL|/dev/NAME",
        help="a drive this worker may test, by its serial (or its path, for a device without a serial such as a "
             "loop device); repeated. None: simulated drives only. Nothing is offered unless named here")] = None,
    tls: Annotated[Path | None, typer.Option(
        "--tls", metavar="DIR", help="the cluster's certificates (`ssdlab fleet certs DIR`): this worker shows "
                                     "worker.pem")] = None,
    name: Annotated[str | None, typer.Option(help="the worker's name in the cluster")] = None,
    threads: Annotated[int | None, typer.Option(
        metavar="N", help="tasks at once (1-64; default one per drive, or one per usable core without drives)")] = None,
    db: DbOption = None,
) -> None:
    """Serve a Dask cluster from this host: its simulated runs, and runs on the drives named here, with every
    safety check made on this host; the runs are made in --db (this host's record) and go to the client."""
    from ssdlab.distributed.certs import cluster_security
    from ssdlab.distributed.cluster import scheduler_address
    from ssdlab.distributed.fleet import Offered, offered_drives, serve
    from ssdlab.errors import SsdlabError

    if threads is not None and not 1 <= threads <= 64:
        raise SsdlabError(f"--threads {threads}: give 1 to 64")
    address = scheduler_address(require_utf8(scheduler, "--scheduler"), None, tls)
    security = None if tls is None else cluster_security(tls, "worker")
    drives = offered_drives([require_utf8(d, "--drive") for d in drive or []])
    listed = ", ".join(f"{shown(path)} ({shown(serial)})" for serial, path in drives.items()) or "no drive"
    err_console.print(f"worker for {shown(address)}, offering {listed}; Ctrl-C stops it", highlight=False)
    serve(address, Offered(drives, Path(db) if db else None), security,
          None if name is None else require_utf8(name, "--name"), threads)
