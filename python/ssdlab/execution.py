"""Executing a stored run: every unfinished test, in order, step by step.

A test is the unit of resumption. Its steps are committed as they finish, and
it becomes `done` only with its score; a test interrupted half-way is started
again from its purge, so its results never mix two attempts.

Telemetry goes beside it: the health log before and after every test (after a
failing step too: a media error may be why it failed), temperature and energy with
every step, throttle events once the test's health after is known, and notes,
stored where they happened, for whatever telemetry could not read.
"""

from __future__ import annotations

from typing import Any, Protocol

from ssdlab.backends import Backend
from ssdlab.catalogue import lookup
from ssdlab.errors import SsdlabError
from ssdlab.model import Phase, RunStatus, Step, StepResult, Test, TestStatus
from ssdlab.store import Store, TestRecord
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.probe import Telemetry
from ssdlab.telemetry.records import HealthLog
from ssdlab.telemetry.results import StepTelemetry, TestHealth


class Reporter(Protocol):
    """What a run tells its watcher (the progress bar, or nothing)."""

    def test_started(self, position: int, total: int, test: Test) -> None: ...
    def step_started(self, index: int, step: Step) -> None: ...
    def step_progress(self, fraction: float, status: str) -> None: ...
    def step_finished(self, step: Step, result: StepResult) -> None: ...
    def test_finished(self, test: Test, score: dict[str, Any]) -> None: ...
    def telemetry_notes(self, notes: list[str]) -> None: ...
    def alarms(self, test: Test, alarms: list[str]) -> None: ...


class SilentReporter:
    def test_started(self, position: int, total: int, test: Test) -> None: ...
    def step_started(self, index: int, step: Step) -> None: ...
    def step_progress(self, fraction: float, status: str) -> None: ...
    def step_finished(self, step: Step, result: StepResult) -> None: ...
    def test_finished(self, test: Test, score: dict[str, Any]) -> None: ...
    def telemetry_notes(self, notes: list[str]) -> None: ...
    def alarms(self, test: Test, alarms: list[str]) -> None: ...


def execute(store: Store, run_id: int, backend: Backend, reporter: Reporter,
            telemetry: RunTelemetry | None = None) -> None:
    """Run every test of the run that is not done; mark the run done at the end.

    A failing step marks its test and the run failed and re-raises, so the
    user sees why; `ssdlab resume` retries from that test."""
    telemetry = telemetry or RunTelemetry(Telemetry())
    _store_notes(store, run_id, telemetry, reporter)
    records = store.tests(run_id)
    for position, record in enumerate(records, start=1):
        if record.status is TestStatus.DONE:
            continue
        test, seq = record.test, record.seq
        reporter.test_started(position, len(records), test)
        store.start_test(run_id, seq)
        before = telemetry.health()
        store.save_test_telemetry(run_id, seq, TestHealth(before=before))
        _store_notes(store, run_id, telemetry, reporter, seq)
        measured: list[tuple[Step, StepResult]] = []
        watched: list[tuple[int, StepResult, StepTelemetry]] = []
        try:
            for index, step in enumerate(test.steps):
                reporter.step_started(index, step)
                with telemetry.watching_step():
                    outcome = backend.run_step(step, reporter.step_progress)
                result, beside = telemetry.step_result(outcome.result)
                store.save_step(run_id, seq, index, step, result, outcome.commands, beside)
                _store_notes(store, run_id, telemetry, reporter, seq, index)
                reporter.step_finished(step, result)
                watched.append((index, result, beside))
                if step.phase is Phase.MEASURE:
                    measured.append((step, result))
            score = lookup(test.id).score(measured)
        except SsdlabError as exc:
            _test_ended(store, run_id, record, telemetry, reporter, before, watched)
            store.fail_test(run_id, seq, str(exc))
            raise
        _test_ended(store, run_id, record, telemetry, reporter, before, watched)
        store.finish_test(run_id, seq, score)
        reporter.test_finished(test, score)
    store.finish_run(run_id, RunStatus.DONE)


def _test_ended(store: Store, run_id: int, record: TestRecord, telemetry: RunTelemetry, reporter: Reporter,
                before: HealthLog | None, watched: list[tuple[int, StepResult, StepTelemetry]]) -> None:
    """The health log after the test, the throttle events of its steps, and its alarms, at once."""
    health = TestHealth(before=before, after=telemetry.health())
    store.save_test_telemetry(run_id, record.seq, health, telemetry.throttles(health, watched))
    _store_notes(store, run_id, telemetry, reporter, record.seq)
    if alarms := health.alarms():
        reporter.alarms(record.test, alarms)


def _store_notes(store: Store, run_id: int, telemetry: RunTelemetry, reporter: Reporter,
                 seq: int | None = None, idx: int | None = None) -> None:
    if notes := telemetry.take_notes():
        store.add_telemetry_notes(run_id, notes, seq, idx)
        reporter.telemetry_notes(notes)
