"""Fleets of real drives: `ssdlab worker` on each test host offers the drives it was given, and
`ssdlab run HOST:/dev/NAME --cluster ADDRESS` runs a suite on one of them there.

A worker offers only the drives named on its command line (`--drive SERIAL`, or `--drive
/dev/NAME` for a device without a serial, such as a loop device): nothing is discovered and
offered by itself. Everything that touches a drive happens on the host that holds it, in the
worker's process, as `ssdlab run` does it there: the safety checks, the lock, the consent
(`--destroy-data` travels with the request and is checked against the drive's own serial
there), purge, telemetry and fio. The run is made in the worker's own database (`ssdlab
worker --db`, that host's default otherwise), which also keeps the record of drive settings
to write back after a kill (drive_settings.py), and its rows go back to the client, which
stores them under its own id, with the target named `HOST:/dev/NAME`.

A worker lost mid-run leaves its run in the client's database as far as it was last sent
(streamed.py), interrupted; its host's database keeps what it did. Runs that did complete
are stored as they end. A worker asked to stop starts no more tasks (_runs_stopped).
Versions: a worker whose ssdlab or fio differs from this machine's is refused for real
drives before anything runs, unless `--allow-mixed-versions`.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import ssdlab
from ssdlab.distributed.cluster import ClusterRunner, TaskStop, WorkerResult, is_loopback, run_in, stopping
from ssdlab.distributed.runner import Outcome, ReporterFor, RunJob
from ssdlab.distributed.streamed import Following
from ssdlab.errors import SsdlabError, UnsafeTarget
from ssdlab.external import Commands
from ssdlab.session import RunRequest
from ssdlab.side_by_side import usable_cores
from ssdlab.store.transfer import RunRows
from ssdlab.targets import sysfs
from ssdlab.targets.consent import consent_string
from ssdlab.targets.identity import device_identity
from ssdlab.targets.resolve import fleet_target
from ssdlab.text import printable

NOT_OFFERED_EXIT = UnsafeTarget.exit_code
WATCH_EVERY_S = 2.0
STOP_SETTLE_S = 0.5


@dataclass(frozen=True)
class Offered:
    """What an `ssdlab worker` process offers: its drives (consent name: the serial, or the
    kernel name of a device without one, to its path) and the database its runs are made in."""
    drives: dict[str, str]
    db: Path | None


_offered: Offered | None = None  # set by `serve` in the worker's process


def offered_drives(specs: Sequence[str], commands: Commands | None = None,
                   sys_root: Path = sysfs.SYSFS) -> dict[str, str]:
    """The drives `ssdlab worker --drive` names, each found on this host now: a serial (looked
    for among this host's block devices), or a /dev path; by consent name to path."""
    commands = commands or Commands()
    drives: dict[str, str] = {}
    for spec in specs:
        if spec.startswith("/dev/"):
            path = Path(spec)
            if not path.is_block_device():
                raise SsdlabError(f"--drive {spec}: not a block device on this host")
            ident = device_identity(path, commands, sys_root)
            name = consent_string(ident, ident["name"])
        else:
            path, name = _device_with_serial(spec, commands, sys_root), spec
        if name in drives:
            raise SsdlabError(f"--drive {spec}: {name} is offered twice")
        drives[name] = str(path)
    return drives


def _device_with_serial(serial: str, commands: Commands, sys_root: Path) -> Path:
    disks = sorted(p.name for p in (sys_root / "block").iterdir()) if (sys_root / "block").is_dir() else []
    for name in disks:
        path = Path("/dev") / name
        if device_identity(path, commands, sys_root).get("serial") == serial:
            return path
    raise SsdlabError(f"--drive {printable(serial)}: no block device of this host has that serial (`lsblk -o "
                      "NAME,SERIAL` lists them; a device without one is offered by its path, --drive /dev/NAME)")


def serve(address: str, offered: Offered, security: Any = None, name: str | None = None,
          nthreads: int | None = None) -> None:
    """Run a Dask worker in this process, offering `offered`, until it is stopped (Ctrl-C), with
    Dask's own diagnostics turned down (worker_settings.py). It listens on the address this
    host reaches the scheduler from (the loopback for a scheduler there), and its HTTP server
    (metrics, no authentication) on the loopback only."""
    import dask
    from distributed import Worker
    from distributed.utils import get_ip

    import ssdlab.distributed.preload  # noqa: F401  (the simulator, before the first task)
    from ssdlab.distributed.worker_settings import WORKER

    global _offered
    _offered = offered
    scheduler_host = _address_host(address)
    listen = "127.0.0.1" if is_loopback(scheduler_host) else get_ip(scheduler_host)

    async def work() -> None:
        async with Worker(address, nthreads=worker_threads(nthreads, offered), security=security, name=name,
                          host=listen, dashboard_address="127.0.0.1:0") as worker:
            asked = asyncio.Event()
            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                asyncio.get_running_loop().add_signal_handler(signum, lambda: (stopping.set(), asked.set()))
            ended = asyncio.create_task(worker.finished())
            await asyncio.wait([ended, asyncio.create_task(asked.wait())], return_when=asyncio.FIRST_COMPLETED)
            if not ended.done():
                await _runs_stopped(worker)

    try:
        with dask.config.set(WORKER):
            asyncio.run(work())
    except OSError as exc:
        raise SsdlabError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


def worker_threads(asked: int | None, offered: Offered) -> int:
    """Tasks at once: `asked` (--threads), else one per drive offered, else (simulated drives
    only) one per usable core, as `--jobs` has on one machine."""
    return asked or len(offered.drives) or usable_cores()


async def _runs_stopped(worker: Any) -> None:
    """A stop asked (Ctrl-C, SIGTERM, SIGHUP): no task starts here any more (the scheduler
    sends those not yet started to other workers when this one leaves); the runs under way
    stop at their next step or fio poll, as `ssdlab run` stops (fio ended, drive settings
    written back, the run left interrupted and resumable here), and send their rows as they
    were left; then the worker leaves the cluster."""
    from distributed.core import Status
    worker.status = Status.closing_gracefully  # Dask's own: it pauses the worker and tells the scheduler
    while worker.state.executing_count:
        await asyncio.sleep(0.1)
    await asyncio.sleep(STOP_SETTLE_S)  # the last sendings leave before the connection closes
    await worker.close()


def worker_facts() -> dict[str, Any]:
    """What a worker tells the client: its host, versions and offered drives (none on a
    plain `dask worker`)."""
    from ssdlab.backends.fio.runner import fio_version
    try:
        fio = fio_version(Commands())
    except SsdlabError:
        fio = None
    return {"host": socket.gethostname(), "ssdlab": ssdlab.__version__, "fio": fio,
            "drives": dict(_offered.drives) if _offered else {}}


def run_drive_on_worker(request: RunRequest, stored: RunRows | None = None, topic: str | None = None) -> WorkerResult:
    """The task of a real drive: `request` (its target the drive's path on this host) run, or
    the stored run continued, in this worker's database, if this worker offers that drive."""
    if refused := _not_offered(request.target):
        return refused
    assert _offered is not None
    return run_in(_offered.db, request, stored, topic, TaskStop())


def plan_drive_on_worker(request: RunRequest) -> dict[str, Any] | WorkerResult:
    """The task of `ssdlab run HOST:/dev/NAME --dry-run`: the plan of `request` on this host
    (`ssdlab run /dev/NAME --dry-run` there: its safety checks read, nothing written), if this
    worker offers the drive; else, or when the plan cannot be made, why."""
    from ssdlab.session import dry_run_document
    if refused := _not_offered(request.target):
        return refused
    try:
        return dry_run_document(request)
    except SsdlabError as exc:
        return WorkerResult(None, str(exc), exc.exit_code)


def _not_offered(path: str) -> WorkerResult | None:
    if _offered is not None and path in _offered.drives.values():
        return None
    offered = ", ".join(sorted(_offered.drives.values())) if _offered else "none"
    return WorkerResult(None, f"this worker does not offer {path} (it offers: {offered}; "
                              "`ssdlab worker --drive` names them)", NOT_OFFERED_EXIT)


@dataclass(frozen=True)
class Placed:
    """Where a fleet target runs: the worker's address and the drive's path on its host."""
    worker: str
    path: str


class FleetRunner(ClusterRunner):
    """Runs jobs on the drives of a fleet (targets HOST:/dev/NAME) on the workers that offer them."""

    def __init__(self, address: str, allow_mixed_versions: bool = False, **kwargs: Any):
        super().__init__(address, retries=0, **kwargs)  # a drive is on one host: nowhere else to retry
        self.allow_mixed_versions = allow_mixed_versions
        self.facts: dict[str, dict[str, Any]] = {}
        self.placed: dict[str, Placed] = {}
        self.watched = 0.0

    def connect(self) -> None:
        super().connect()
        self.facts = self._client.run(worker_facts)

    def run(self, jobs: Sequence[RunJob], reporter_for: ReporterFor) -> list[Outcome]:
        """Every job placed before any is sent: a drive no worker offers, or a worker of
        other versions, stops them all before anything runs."""
        self._place_all([job.request.target for job in jobs])
        return super().run(jobs, reporter_for)

    def plans(self, requests: Sequence[RunRequest]) -> list[dict[str, Any]]:
        """The dry-run plan of each request, made on its drive's host (placed as `run` places
        them), named by its fleet target and host; the first that cannot be made stops them."""
        self._place_all([request.target for request in requests])
        try:
            placed = [self.placed[request.target] for request in requests]
            futures = [self._client.submit(plan_drive_on_worker, replace(request, target=p.path, db=None), pure=False,
                                           workers=[p.worker], allow_other_workers=False, retries=0)
                       for request, p in zip(requests, placed)]
            plans = self._client.gather(futures)
        finally:
            self.close()
        for request, p, plan in zip(requests, placed, plans):
            if isinstance(plan, WorkerResult):
                refused = SsdlabError(f"{request.target}: {plan.error}")
                refused.exit_code = plan.exit_code
                raise refused
            plan.update(target=request.target, host=self.facts[p.worker]["host"])
        return plans

    def _place_all(self, targets: list[str]) -> None:
        if self._client is None:
            self.connect()
        try:
            if len(set(targets)) < len(targets):
                raise SsdlabError(f"a drive is named twice: {', '.join(targets)}; one run at a time on a drive")
            self.placed = {target: self.place(target) for target in targets}
        except SsdlabError:
            self.close()
            raise

    def place(self, target: str) -> Placed:
        """The worker offering `target` (HOST:/dev/NAME), its versions checked against this
        machine's; refused, saying what the fleet offers, when none does."""
        host, path = fleet_target(target) or (None, None)
        if host is None:
            raise SsdlabError(f"{target} is not HOST:/dev/NAME, a drive of the fleet")
        for worker, facts in sorted(self.facts.items()):
            if host in (facts["host"], _address_host(worker)) and path in facts["drives"].values():
                self._check_versions(worker, facts)
                return Placed(worker, path)
        offered = [f"{facts['host']}:{p}" for facts in self.facts.values() for p in sorted(facts["drives"].values())]
        raise SsdlabError(f"no worker offers {target}; the fleet offers: {', '.join(offered) or 'no drive'} "
                          "(`ssdlab worker --drive` on the drive's host offers it)")

    def stranded(self, client: Any, running: dict[int, RunJob]) -> dict[int, str]:
        """Jobs whose worker has left the cluster (killed, its host down): their task, bound
        to it, would wait for it forever. Asked of the scheduler every WATCH_EVERY_S."""
        if time.monotonic() - self.watched < WATCH_EVERY_S:
            return {}
        self.watched = time.monotonic()
        here = set(client.scheduler_info()["workers"])
        placed = {i: self.placed[job.request.target] for i, job in running.items()}
        return {i: f"its worker {p.worker} left the cluster" for i, p in placed.items() if p.worker not in here}

    @cached_property
    def versions(self) -> dict[str, str]:
        """This machine's ssdlab and fio, asked once (fio's is a program run)."""
        from ssdlab.backends.fio.runner import fio_version
        return {"ssdlab": ssdlab.__version__, "fio": fio_version(Commands())}

    def _check_versions(self, worker: str, facts: dict[str, Any]) -> None:
        differ = [f"{k} {facts[k]} (here {v})" for k, v in self.versions.items() if facts[k] != v]
        if differ and not self.allow_mixed_versions:
            raise SsdlabError(f"the worker {worker} ({facts['host']}) runs {', '.join(differ)}: results of "
                              "different versions may differ; install the same there, or --allow-mixed-versions")

    def submit(self, client: Any, job: RunJob, stored: RunRows | None, topic: str) -> Any:
        placed = self.placed[job.request.target]
        request = replace(job.request, target=placed.path, db=None)
        sent = None if stored is None else _renamed(stored, placed.path)
        return client.submit(run_drive_on_worker, request, sent, topic, pure=False, workers=[placed.worker],
                             allow_other_workers=False, retries=0)

    def received(self, job: RunJob, rows: RunRows) -> RunRows:
        return _renamed(rows, job.request.target)

    def _left(self, follow: Following) -> str:
        if follow.run_id is None:
            return super()._left(follow)
        return (f"run {follow.run_id} is stored as far as its worker sent it: `ssdlab resume {follow.run_id} "
                f"--cluster {self.address}` continues it on its host")


def _renamed(rows: RunRows, target: str) -> RunRows:
    """`rows` with the run's target named `target` (its path on the worker's host, or its
    fleet name in the client's database)."""
    (run,) = rows["runs"]
    return {**rows, "runs": [{**run, "target": target}]}


def _address_host(address: str) -> str:
    from urllib.parse import urlsplit
    return urlsplit(address).hostname or ""
