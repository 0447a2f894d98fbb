"""`ssdlab fleet certs DIR`: the certificates of a Dask cluster with mutual TLS
(distributed/certs.py), and the commands that start its scheduler and workers with them."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from ssdlab.cli.output import console, shown
from ssdlab.distributed.certs import CA_FILE, DAYS_DEFAULT, DAYS_MAX, cert_file, key_file, make_certs

fleet_app = typer.Typer(help="A cluster beyond this machine: `certs` makes its TLS certificates.",
                        no_args_is_help=True)

PORT = 8786  # Dask's own default


@fleet_app.command("certs")
def certs_command(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="where to write them (made 0700 if new)")],
    host: Annotated[list[str] | None, typer.Option(
        "--host", metavar="HOST",
        help="a host name or IP address the certificates name (repeated), besides 127.0.0.1 and localhost; the "
             "first is the scheduler's in the commands printed")] = None,
    days: Annotated[int, typer.Option(
        metavar="N", help=f"how long they are valid, in days (1-{DAYS_MAX})")] = DAYS_DEFAULT,
    force: Annotated[bool, typer.Option("--force", help="replace certificates already in DIR")] = False,
) -> None:
    """Make a private CA and the certificates of a cluster's scheduler, workers and client (`ssdlab sweep --tls
    DIR`): each side of every connection must show one signed by that CA."""
    made = make_certs(directory, host or [], days, force)
    console.print(f"wrote {', '.join(shown(f.name) for f in made.files)} in {shown(directory)}, valid until "
                  f"{made.not_after:%Y-%m-%d}, for {', '.join(shown(h) for h in made.hosts)}", highlight=False)
    host = made.hosts[0]
    address = f"tls://[{host}]:{PORT}" if ":" in host else f"tls://{host}:{PORT}"  # an IPv6 address in brackets

    def tls(role: str) -> str:
        return " ".join(shlex.quote(str(p)) for p in ("--tls-ca-file", directory / CA_FILE, "--tls-cert",
                                                      cert_file(directory, role), "--tls-key",
                                                      key_file(directory, role)))

    # the dashboard is plain, unauthenticated HTTP: off in the commands shown
    console.print(
        f"the scheduler (with ca.pem and scheduler*.pem):\n"
        f"  dask scheduler --protocol tls --host {host} --port {PORT} --no-dashboard {tls('scheduler')}\n"
        f"each worker (with ca.pem and worker*.pem):\n"
        f"  dask worker {address} --no-dashboard {tls('worker')}\n"
        f"then: ssdlab sweep ... --cluster {address} --tls {shlex.quote(str(directory))}\n"
        f"Keep client-key.pem and worker-key.pem as you would a login: whoever holds one can run any code on "
        f"the workers.", highlight=False, markup=False)
