"""The runner of a Dask cluster (`ssdlab sweep --cluster ADDRESS`): each run of a simulated
drive is a task on one of the cluster's workers; only the client writes its database.

A worker runs the whole run as `ssdlab run` does (session.start_run, or resume_run for a run
to continue), against a private database in a temporary directory of its own (a fleet's
drive: its host's database, fleet.py), and sends the run's stored rows (store/transfer.py) as
it goes and when it ends (streamed.py). The client writes each sending into its database as
one transaction, under the run id its database gives (a run continued keeps its id), and
tells the run's reporter the steps it has not yet told. New runs are numbered in the order
they are first sent, not in the order of the jobs.

A worker lost while it runs a task: the scheduler runs the task again elsewhere (as often as
its `allowed-failures` says; a task that fails on its own is tried once more, `retries`),
the run made anew under the same id; if it is lost that often, the job's outcome says so and
the run stays as far as it was sent, interrupted, for `ssdlab sweep --resume N`. Runs
finished before are stored as they end. A worker asked to stop starts no more tasks (fleet.py):
a task that had not yet started its run goes to another worker.

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
import queue
import tempfile
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ssdlab.distributed.memory_budget import simulated_drives
from ssdlab.distributed.runner import Outcome, ReporterFor, RunJob
from ssdlab.distributed.streamed import Following, StreamingReporter
from ssdlab.errors import Interrupted, SsdlabError
from ssdlab.execution import Reporter
from ssdlab.model import Test, TestStatus
from ssdlab.session import RunRequest, resume_run, start_run
from ssdlab.side_by_side import Stop, StopBetweenSteps, memory_need
from ssdlab.store import Store
from ssdlab.store.transfer import RunRows, read_run, write_run

TLS_NEEDED = ("TLS with mutual certificates is needed beyond the loopback: `ssdlab fleet certs DIR` makes them, "
              "then tls://HOST:PORT with --tls DIR")
CONNECT_TIMEOUT_S = 30
MAX_SHIPPED_TRACES = 2 << 30  # trace files sent to the workers, in all
# set when this worker's process is asked to stop (`ssdlab worker`, fleet.serve): its runs stop at once, resumably
stopping = threading.Event()
SCHEMES = ("tcp", "tls")


@dataclass(frozen=True)
class WorkerResult:
    """What a worker sends back: the run's rows (None: no run was made) and, when it did not
    complete, why."""
    rows: RunRows | None
    error: str | None = None
    exit_code: int = 0


class TaskStop:
    """Set once this worker is asked to stop (`stopping`) or the client no longer wants the
    task (it cancelled it: Ctrl-C there), which Dask cannot interrupt itself: what stops a
    worker's run at its next step. Made in the task's own thread (called as a function, not
    a task: `stopping` alone)."""

    def __init__(self) -> None:
        from distributed import get_worker
        from distributed.worker import thread_state
        try:
            self._tasks: dict[Any, Any] | None = get_worker().state.tasks
            self._key = thread_state.key
        except (ValueError, AttributeError):  # not in a task
            self._tasks = None

    def is_set(self) -> bool:
        if stopping.is_set():
            return True
        if self._tasks is None:
            return False
        task = self._tasks.get(self._key)
        return task is None or task.state != "executing"


def run_on_worker(request: RunRequest, stored: RunRows | None = None, topic: str | None = None,
                  traces: dict[str, bytes] | None = None) -> WorkerResult:
    """The task of a simulated drive: `request` as a new run, or, with `stored` (a run's rows),
    that run continued; in a private database, whose rows of the run it returns (and sends
    on `topic` as it goes: streamed.py), once its drive fits in this worker's memory beside
    the drives of its other tasks (memory_budget.py). `traces`: the contents of the request's
    trace files (the client's paths), which this host may not have; written beside the
    database, each under its own name."""
    from distributed import Reschedule

    with tempfile.TemporaryDirectory(prefix="ssdlab-worker-") as directory:
        if traces:
            request = replace(request, traces=_traces_here(request.traces, traces, Path(directory)))
        try:
            need = memory_need(request)
        except SsdlabError as exc:
            return WorkerResult(None, str(exc), exc.exit_code)
        stop = TaskStop()
        with simulated_drives.held(need, stop) as held:
            if not held:  # its worker stops (another runs it), or it was cancelled
                raise Reschedule()
            return run_in(Path(directory) / "ssdlab.db", request, stored, topic, stop, every_test=False)


def _traces_here(paths: tuple[str, ...], contents: dict[str, bytes], directory: Path) -> tuple[str, ...]:
    here = []
    for i, path in enumerate(paths):
        if path not in contents:  # a built-in trace, by its name
            here.append(path)
            continue
        copy = directory / "traces" / str(i) / Path(path).name
        copy.parent.mkdir(parents=True)
        copy.write_bytes(contents[path])
        here.append(str(copy))
    return tuple(here)


def trace_contents(request: RunRequest) -> dict[str, bytes] | None:
    """The request's trace files (not the built-in traces, named), read to travel to a worker;
    None without any."""
    files = {t: Path(t).expanduser() for t in request.traces if Path(t).expanduser().is_file()}
    size = sum(f.stat().st_size for f in files.values())
    if size > MAX_SHIPPED_TRACES:
        raise SsdlabError(f"the trace files are {size / (1 << 30):.1f} GiB: at most {MAX_SHIPPED_TRACES >> 30} GiB "
                          "travel to a cluster's workers; replay shorter traces there, or sweep on this machine")
    return {t: f.read_bytes() for t, f in files.items()} or None


def run_in(db: Path | None, request: RunRequest, stored: RunRows | None = None,
           topic: str | None = None, stop: Stop | None = None, every_test: bool = True) -> WorkerResult:
    """`request` run, or the `stored` run continued (written in as a new run first), in the
    database `db` (None: this host's default), sent on `topic` as it goes (`every_test`:
    streamed.py), interrupted once `stop` is set (and then sent as it was left, should its
    result not reach the client); the run's rows, and why it did not complete."""
    reporter = StreamingReporter(db, topic, every_test)
    made: list[int] = []

    def following(run_id: int, tests: list[Test]) -> Reporter:
        made.append(run_id)
        reporter.started(run_id, tests)
        return reporter if stop is None else StopBetweenSteps(reporter, stop)

    if stored is not None:
        with Store(db) as store:
            made.append(write_run(store, stored))
    try:
        if stored is None:
            start_run(replace(request, db=db), show_progress=following)
        else:
            resume_run(str(made[0]), db, request.destroy_data, show_progress=following)
        error, code = None, 0
    except SsdlabError as exc:
        error, code = str(exc), exc.exit_code
    if not made:
        return WorkerResult(None, error, code)
    if stop is not None and stop.is_set():
        reporter.send()
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
    if parts.scheme == "tcp" and not is_loopback(host):
        raise SsdlabError(f"the cluster address {address} is beyond the loopback: {TLS_NEEDED}")
    if parts.scheme == "tcp" and tls is not None:
        raise SsdlabError(f"--tls is for a tls:// address, and {address} is not one")
    return f"{parts.scheme}://{parts.netloc}"


def is_loopback(host: str) -> bool:
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
        self._shipped: dict[tuple[str, ...], Any] = {}  # each set of trace files scattered to the workers once

    @classmethod
    def checked(cls, address: str | None, scheduler_file: Path | None = None, tls: Path | None = None,
                **kwargs: Any) -> ClusterRunner:
        """Not yet connected; its address and certificates checked."""
        from ssdlab.distributed.certs import cluster_security
        checked = scheduler_address(address, scheduler_file, tls)
        return cls(checked, security=None if tls is None else cluster_security(tls, "client"), **kwargs)

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
        try:
            versions = self._client.run(_ssdlab_version)
        except Exception as exc:  # a worker without ssdlab cannot load the question
            self.close()
            raise SsdlabError(f"a worker of the cluster at {self.address} cannot run ssdlab's tasks "
                              f"({type(exc).__name__}: {exc}): install ssdlab, the same version as here, on every "
                              "worker") from None
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
        if self._client is None:
            self.connect()
        client = self._client
        outcomes: list[Outcome | None] = [None] * len(jobs)
        events: queue.Queue[tuple[int, dict | None]] = queue.Queue()  # (job, a sending, or None: it ended)
        follows: list[Following] = []
        futures = []
        stores = _Stores()
        self._shipped.clear()
        try:
            stored_runs: list[RunRows | None] = []
            for job in jobs:  # every continued run held before anything is sent
                stored, pending = None, None
                if job.resume is not None:
                    with Store.open_existing(job.request.db, readonly=True) as store:
                        stored = read_run(store, job.resume)
                        pending = [r.test for r in store.tests(job.resume)
                                   if r.status not in (TestStatus.DONE, TestStatus.SKIPPED)]
                follows.append(Following(job, pending))
                stored_runs.append(stored)
                if job.resume is not None:
                    follows[-1].hold(stores.of(job).path)
            for i, (job, stored) in enumerate(zip(jobs, stored_runs)):
                topic = f"ssdlab-run-{uuid.uuid4().hex}"
                client.subscribe_topic(topic, lambda event, i=i: events.put((i, event[1])))
                future = self.submit(client, job, stored, topic)
                future.add_done_callback(lambda _, i=i: events.put((i, None)))
                futures.append(future)
            while any(o is None for o in outcomes):
                try:
                    i, sent = events.get(timeout=0.5)  # a timeout: Ctrl-C is seen at once
                except queue.Empty:
                    running = {i: job for i, (job, o) in enumerate(zip(jobs, outcomes)) if o is None}
                    for i, why in self.stranded(client, running).items():
                        follows[i].lost = why
                        futures[i].cancel()  # it ends: (i, None)
                    continue
                follow = follows[i]
                if follow.over:
                    continue  # a sending after the end: the end's rows are the last
                if sent is not None:
                    follow.store(stores.of(follow.job), self.received(follow.job, sent["rows"]), reporter_for)
                else:
                    outcomes[i] = self._ended(follow, futures[i], stores, reporter_for)
        except KeyboardInterrupt:
            client.cancel(futures)
        finally:
            for follow in follows:
                follow.end()
            stores.close()
            self.close()
        follows += [Following(job, None) for job in jobs[len(follows):]]  # interrupted before they were sent
        return [o if o is not None else self._interrupted(follow) for follow, o in zip(follows, outcomes)]

    def submit(self, client: Any, job: RunJob, stored: RunRows | None, topic: str) -> Any:
        """The task of `job` sent (`stored`: the rows of the run it continues; `topic`: where
        it sends the run as it goes)."""
        traces = job.request.traces
        if traces and traces not in self._shipped:
            contents = trace_contents(job.request)
            # one piece of data, named by Dask after its contents: another sweep's file of the same
            # name, sent to the same cluster, is another piece
            self._shipped[traces] = None if contents is None else client.scatter([contents], broadcast=True)[0]
        shipped = (self._shipped[traces],) if self._shipped.get(traces) is not None else ()
        return client.submit(self.task, job.request, stored, topic, *shipped, pure=False, retries=self.retries)

    def received(self, job: RunJob, rows: RunRows) -> RunRows:
        """A run's rows from its worker, as the client stores them."""
        return rows

    def stranded(self, client: Any, running: dict[int, RunJob]) -> dict[int, str]:
        """The running jobs that can no longer end, and why (Dask retries a simulated run
        elsewhere itself)."""
        return {}

    def _ended(self, follow: Following, future: Any, stores: _Stores, reporter_for: ReporterFor) -> Outcome:
        target = follow.job.request.target
        try:
            result: WorkerResult = future.result()
        except Exception as exc:  # the worker lost (KilledWorker), or the task's own failure
            why = follow.lost or f"its worker failed ({type(exc).__name__}: {exc})"
            return replace(self._interrupted(follow), error=f"{why}; {self._left(follow)}")
        if result.rows is None:
            return Outcome(target, follow.job.resume, result.error, result.exit_code)
        run_id = follow.store(stores.of(follow.job), self.received(follow.job, result.rows), reporter_for)
        follow.end()
        if result.exit_code == Interrupted.exit_code:  # its worker's message names its worker's run id
            return self._interrupted(follow)
        return Outcome(target, run_id, result.error, result.exit_code)

    def _interrupted(self, follow: Following) -> Outcome:
        return Outcome(follow.job.request.target, follow.run_id, f"interrupted; {self._left(follow)}",
                       Interrupted.exit_code)

    def _left(self, follow: Following) -> str:
        if follow.run_id is None:
            return ("nothing of it was stored: it runs again from its start (`ssdlab sweep --resume`, or the same "
                    "command)")
        return f"run {follow.run_id} is stored as far as its worker sent it: a resume continues it"


class _Stores:
    """The client's databases, each opened at its first sending and kept open for all the
    others (an opening for writing checks the whole file first)."""

    def __init__(self) -> None:
        self._open: dict[Path | None, Store] = {}

    def of(self, job: RunJob) -> Store:
        db = job.request.db
        if db not in self._open:
            self._open[db] = Store(db)
        return self._open[db]

    def close(self) -> None:
        for store in self._open.values():
            store.close()
        self._open.clear()


def _ssdlab_version() -> str:
    import ssdlab
    return str(ssdlab.__version__)
