"""A run on a cluster's worker, followed from the client as it goes.

The worker sends the run's rows (store/transfer.py) on a Dask event topic of the job's own
when the run is made and after each test but the last (whose rows the task's result brings a
moment later), and after a step when the last sending is STREAM_EVERY_S old; a simulated
drive's run, whose tests take a second, only every STREAM_EVERY_S from its start. The client
stores each sending under the run's id in its database, holds the run there while it goes
(so that `ssdlab runs` shows it running, and no other `ssdlab resume` takes it), and tells
the run's reporter the steps it has not yet told (only those are read back). So a
worker lost mid-run leaves the run as far as it was last sent, interrupted and resumable
from the client's database, on the worker of its drive's host or, simulated, on any worker.
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab import locks
from ssdlab.distributed.runner import ReporterFor, RunJob
from ssdlab.execution import Reporter, SilentReporter
from ssdlab.model import Step, StepResult, Test, TestStatus
from ssdlab.store import Store
from ssdlab.store.transfer import RunRows, read_run, write_run

STREAM_EVERY_S = 2.0


class StreamingReporter(SilentReporter):
    """The worker's side: sends run `run_id` of `db` on `topic` as it goes (no topic: sends
    nothing); `every_test`: when the run is made and at each test's end (a real drive's, whose
    tests take minutes to hours to run again), else only when the last sending, or the run's
    start, is STREAM_EVERY_S old (a simulated drive's, whose quick tests would otherwise be
    sent many times a second)."""

    def __init__(self, db: Path | None, topic: str | None, every_test: bool = True):
        self.db, self.topic, self.every_test = db, topic, every_test
        self.run_id: int | None = None
        self.last: str | None = None  # the last test to run, whose end the task's result sends
        self.sent_at = 0.0

    def started(self, run_id: int, tests: list[Test]) -> None:
        self.run_id, self.last = run_id, tests[-1].id if tests else None
        if self.every_test:
            self.send()
        else:
            self.sent_at = time.monotonic()  # the first sending STREAM_EVERY_S on, or the end's

    def step_finished(self, step: Step, result: StepResult) -> None:
        if time.monotonic() - self.sent_at >= STREAM_EVERY_S:
            self.send()

    def test_finished(self, test: Test, score: dict[str, Any]) -> None:
        if test.id != self.last and (self.every_test or time.monotonic() - self.sent_at >= STREAM_EVERY_S):
            self.send()

    def send(self) -> None:
        if self.topic is None or self.run_id is None:
            return
        from distributed import get_worker
        with Store.open_existing(self.db, readonly=True) as store:
            rows = read_run(store, self.run_id)
        get_worker().log_event(self.topic, {"rows": rows})
        self.sent_at = time.monotonic()


@dataclass
class Following:
    """The client's side, for one job: its run in the client's database as last sent, held
    while the job goes, and what of it its reporter has been told."""

    job: RunJob
    pending: list[Test] | None  # a continued run: the tests it has left to run
    holds: ExitStack = field(default_factory=ExitStack)
    run_id: int | None = None
    reporter: Reporter | None = None
    told: dict[int, int] = field(default_factory=dict)  # test seq: how many of its steps were told
    finished: set[int] = field(default_factory=set)
    held: bool = False
    over: bool = False
    lost: str | None = None  # why it cannot end: its worker left

    def __post_init__(self) -> None:
        self.run_id = self.job.resume

    def hold(self, db: Path) -> None:
        """The job's run held in the client's database `db` until the job's end: a continued
        run before any of it is sent (or written over), a new run from its first sending."""
        assert self.run_id is not None
        self.holds.enter_context(locks.hold_run(db, self.run_id))
        self.held = True

    def store(self, store: Store, rows: RunRows, reporter_for: ReporterFor) -> int:
        """`rows` stored in `store` (the job's database) as the job's run (the first sending of a
        new run numbers it here)."""
        self.run_id = write_run(store, rows, self.run_id)
        if not self.held:
            self.hold(store.path)
        records = store.tests(self.run_id)
        steps = {r.seq: store.steps(self.run_id, r.seq, first=self.told.get(r.seq, 0)) for r in records}
        self._tell(records, steps, reporter_for)
        return self.run_id

    def end(self) -> None:
        self.over = True
        self.holds.close()

    def _tell(self, records: list[Any], steps: dict[int, list[Any]], reporter_for: ReporterFor) -> None:
        """What the run did on its worker since the last sending, told to its reporter."""
        assert self.run_id is not None
        tests = self.pending if self.pending is not None else [r.test for r in records]
        if self.reporter is None:
            self.reporter = reporter_for(self.job.request, self.run_id, tests)
        ran = {t.id for t in tests}
        for position, record in enumerate(records, start=1):
            if record.test.id not in ran or record.status is TestStatus.SKIPPED:
                continue
            done = steps[record.seq]
            if done and record.seq not in self.told:  # told started with its first step told
                self.reporter.test_started(position, len(records), record.test)
            for step in done:
                self.told[record.seq] = step.idx + 1
                self.reporter.step_started(step.idx, step.step)
                self.reporter.step_finished(step.step, step.result)
            if record.status is TestStatus.DONE and record.score is not None and record.seq not in self.finished:
                self.finished.add(record.seq)
                self.reporter.test_finished(record.test, record.score)
