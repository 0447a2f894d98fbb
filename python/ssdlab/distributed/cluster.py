"""The runner of a Dask cluster (`ssdlab sweep --cluster ADDRESS`): each run of a simulated
drive is a task on one of the cluster's workers; only the client writes its database.

A worker runs the whole run as `ssdlab run` does (session.start_run, or resume_run for a run
to continue), against a private database in a temporary directory of its own, and returns the
run's stored rows (store/transfer.py). The client writes them into its database as one
transaction, under the run id its database gives (a run continued keeps its id), and then
tells the run's reporter what the run did: progress is reported a run at a time, as each run
ends, not step by step. New runs are numbered in the order they end, not in the order of the
jobs.

A worker lost while it runs a task: Dask runs the task once more elsewhere (`retries`); if
that fails too, the job's outcome says so, nothing of that run is stored (a continued run
keeps what it had), and `ssdlab sweep --resume N` runs it again. Runs finished before are
stored as they end.

Dask is imported here only, and this module only when a cluster is asked for: `ssdlab`
without `--cluster` never loads it. A plain-TCP cluster beyond the loopback is refused
before any connection; a `tls://` one is connected to with the client's certificate of
`ssdlab fleet certs` (`--tls DIR`, certs.py), which the scheduler requires, as it requires
its workers'. What that protects, and what it does not (a client's certificate lets its
holder run any code on the workers): certs.py.
"""

from __future__ import annotations

import ipaddress
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ssdlab.distributed.runner import Outcome, ReporterFor, RunJob
from ssdlab.errors import Interrupted, SsdlabError
from ssdlab.execution import Reporter, SilentReporter
from ssdlab.model import Test, TestStatus
from ssdlab.session import RunRequest, resume_run, start_run
from ssdlab.store import Store
from ssdlab.store.transfer import RunRows, read_run, write_run

TLS_NEEDED = ("TLS with mutual certificates is needed beyond the loopback: `ssdlab fleet certs DIR` makes them, "
              "then tls://HOST:PORT with --tls DIR")
CONNECT_TIMEOUT_S = 30
SCHEMES = ("tcp", "tls")


@dataclass(frozen=True)
class WorkerResult:
    """What a worker sends back: the run's rows (None: no run was made) and, when it did not
    complete, why."""
    rows: RunRows | None
    error: str | None = None
    exit_code: int = 0


def run_on_worker(request: RunRequest, stored: RunRows | None = None, run_id: int | None = None) -> WorkerResult:
    """The task a worker runs: `request` as a new run, or, with `stored` (the rows of run
    `run_id`), that run continued; in a private database, whose rows of the run it returns."""
    with tempfile.TemporaryDirectory(prefix="ssdlab-worker-") as directory:
        db = Path(directory) / "ssdlab.db"
        made: list[int] = []

        def silent(new_id: int, tests: list[Test]) -> Reporter:
            made.append(new_id)
            return SilentReporter()

        if stored is not None and run_id is not None:
            with Store(db) as store:
                write_run(store, stored, run_id)
            made.append(run_id)
        try:
            if stored is None:
                start_run(replace(request, db=db), show_progress=silent)
            else:
                resume_run(str(run_id), db, None, show_progress=silent)
            error, code = None, 0
        except SsdlabError as exc:
            error, code = str(exc), exc.exit_code
        if not made:
            return WorkerResult(None, error, code)
        with Store.open_existing(db, readonly=True) as store:
            return WorkerResult(read_run(store, made[0]), error, code)


def scheduler_address(address: str | None, scheduler_file: Path | None, tls: Path | None = None) -> str:
    """The scheduler's address, from --cluster or the `address` of a Dask scheduler file,
    checked before any connection: tcp:// on the loopback only (TLS_NEEDED), tls:// with
    the certificates' directory `tls` (--tls), and --tls with tls:// only."""
    if (address is None) == (scheduler_file is None):
        raise SsdlabError("give the cluster as --cluster ADDRESS or --scheduler-file FILE, one of them")
    if scheduler_file is not None:
        try:
            address = json.loads(scheduler_file.read_text())["address"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SsdlabError(f"cannot read the scheduler's address from {scheduler_file}: {exc}") from None
        if not isinstance(address, str):
            raise SsdlabError(f"{scheduler_file} has no scheduler address")
    assert address is not None
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if parts.scheme not in SCHEMES or not host or port is None:
        raise SsdlabError(f"the cluster address {address!r} is not tcp://HOST:PORT or tls://HOST:PORT")
    if parts.scheme == "tls" and tls is None:
        raise SsdlabError(f"the cluster address {address} is tls://: give the client's certificates with --tls DIR "
                          "(`ssdlab fleet certs DIR` makes them)")
    if parts.scheme == "tcp" and not _loopback(host):
        raise SsdlabError(f"the cluster address {address} is beyond the loopback: {TLS_NEEDED}")
    if parts.scheme == "tcp" and tls is not None:
        raise SsdlabError(f"--tls is for a tls:// address, and {address} is not one")
    return f"{parts.scheme}://{parts.netloc}"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve anywhere


class ClusterRunner:
    """Runs jobs on the Dask cluster at `address` (checked by scheduler_address), connected
    with `security` (a tls:// address: the client's, certs.cluster_security)."""

    def __init__(self, address: str, retries: int = 1, task: Any = run_on_worker, security: Any = None):
        self.address, self.retries, self.task, self.security = address, retries, task, security
        self.note: str | None = None
        self._client: Any = None

    @classmethod
    def checked(cls, address: str | None, scheduler_file: Path | None = None, tls: Path | None = None,
                **kwargs: Any) -> ClusterRunner:
        """Not yet connected; its address and certificates checked."""
        from ssdlab.distributed.certs import cluster_security
        checked = scheduler_address(address, scheduler_file, tls)
        return cls(checked, security=None if tls is None else cluster_security(tls, "client"), **kwargs)

    @classmethod
    def connected(cls, address: str | None, scheduler_file: Path | None = None, tls: Path | None = None,
                  **kwargs: Any) -> ClusterRunner:
        """Connected to the scheduler, its workers' ssdlab versions checked (`connect`)."""
        runner = cls.checked(address, scheduler_file, tls, **kwargs)
        runner.connect()
        return runner

    def connect(self) -> None:
        """Connects; the workers' ssdlab versions that differ from this one are the runner's
        note (simulated drives give their results whatever the version; the note says which
        workers may differ)."""
        from distributed import Client

        import ssdlab
        try:
            self._client = Client(self.address, timeout=CONNECT_TIMEOUT_S, set_as_default=False,
                                  security=self.security)
        except OSError as exc:  # a certificate refused, by either side, too (Dask's CommClosedError)
            hint = "" if self.security is None else (" (with TLS: the scheduler's certificates and --tls DIR's "
                                                     "must come from the same `ssdlab fleet certs`)")
            raise SsdlabError(f"cannot reach the Dask scheduler at {self.address}: {exc}{hint}") from None
        versions = self._client.run(_ssdlab_version)
        if not versions:
            self.close()
            raise SsdlabError(f"the Dask scheduler at {self.address} has no workers: start some with "
                              f"`dask worker {self.address}`")
        mine = ssdlab.__version__
        if differ := {worker: v for worker, v in versions.items() if v != mine}:
            listed = ", ".join(f"{worker} has {v}" for worker, v in sorted(differ.items()))
            self.note = f"workers run another ssdlab than this one ({mine}): {listed}"

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def run(self, jobs: Sequence[RunJob], reporter_for: ReporterFor) -> list[Outcome]:
        from distributed import as_completed

        if self._client is None:
            self.connect()
        client = self._client
        outcomes: list[Outcome | None] = [None] * len(jobs)
        pending: dict[int, list[Test]] = {}
        futures = {}
        try:
            for i, job in enumerate(jobs):
                stored = None
                if job.resume is not None:
                    with Store.open_existing(job.request.db, readonly=True) as store:
                        stored = read_run(store, job.resume)
                        pending[i] = [r.test for r in store.tests(job.resume)
                                      if r.status not in (TestStatus.DONE, TestStatus.SKIPPED)]
                future = client.submit(self.task, job.request, stored, job.resume, pure=False, retries=self.retries)
                futures[future] = i
            for future in as_completed(list(futures), loop=client.loop):
                i = futures[future]
                outcomes[i] = self._stored(jobs[i], future, pending.get(i), reporter_for)
        except KeyboardInterrupt:
            client.cancel(list(futures))
        finally:
            self.close()
        return [o if o is not None else Outcome(job.request.target, job.resume, "not started: interrupted",
                                                Interrupted.exit_code)
                for job, o in zip(jobs, outcomes)]

    def _stored(self, job: RunJob, future: Any, pending: list[Test] | None, reporter_for: ReporterFor) -> Outcome:
        target = job.request.target
        try:
            result: WorkerResult = future.result()
        except Exception as exc:  # the worker lost (KilledWorker), or the task's own failure
            return Outcome(target, job.resume, f"its worker failed ({type(exc).__name__}: {exc}); nothing of it "
                                               "was stored from there: a resume runs it again", Interrupted.exit_code)
        if result.rows is None:
            return Outcome(target, job.resume, result.error, result.exit_code)
        with Store(job.request.db) as store:
            run_id = write_run(store, result.rows, job.resume)
            records = store.tests(run_id)
            steps = {r.seq: store.steps(run_id, r.seq) for r in records}
        tests = pending if pending is not None else [r.test for r in records]
        _replay(reporter_for(job.request, run_id, tests), records, steps, {t.id for t in tests})
        return Outcome(target, run_id, result.error, result.exit_code)


def _replay(reporter: Reporter, records: list[Any], steps: dict[int, list[Any]], ran: set[str]) -> None:
    """What the run did on its worker, told to its reporter once the run is stored."""
    for position, record in enumerate(records, start=1):
        if record.test.id not in ran or record.status is TestStatus.SKIPPED:
            continue
        reporter.test_started(position, len(records), record.test)
        for step in steps[record.seq]:
            reporter.step_started(step.idx, step.step)
            reporter.step_finished(step.step, step.result)
        if record.status is TestStatus.DONE and record.score is not None:
            reporter.test_finished(record.test, record.score)


def _ssdlab_version() -> str:
    import ssdlab
    return str(ssdlab.__version__)
