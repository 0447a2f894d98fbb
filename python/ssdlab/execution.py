"""Executing a stored run: every unfinished test, in order, step by step.

A test is the unit of resumption. Its steps are committed as they finish, and
it becomes `done` only with its score; a test interrupted half-way is started
again from its purge, so its results never mix two attempts.
"""

from __future__ import annotations

from typing import Any, Protocol

from ssdlab.backends import Backend
from ssdlab.catalogue import lookup
from ssdlab.errors import SsdlabError
from ssdlab.model import Phase, RunStatus, Step, StepResult, Test, TestStatus
from ssdlab.store import Store


class Reporter(Protocol):
    """What a run tells its watcher (the progress bar, or nothing)."""

    def test_started(self, position: int, total: int, test: Test) -> None: ...
    def step_started(self, index: int, step: Step) -> None: ...
    def step_progress(self, fraction: float, status: str) -> None: ...
    def step_finished(self, step: Step, result: StepResult) -> None: ...
    def test_finished(self, test: Test, score: dict[str, Any]) -> None: ...


class SilentReporter:
    def test_started(self, position: int, total: int, test: Test) -> None: ...
    def step_started(self, index: int, step: Step) -> None: ...
    def step_progress(self, fraction: float, status: str) -> None: ...
    def step_finished(self, step: Step, result: StepResult) -> None: ...
    def test_finished(self, test: Test, score: dict[str, Any]) -> None: ...


def execute(store: Store, run_id: int, backend: Backend, reporter: Reporter) -> None:
    """Run every test of the run that is not done; mark the run done at the end.

    A failing step marks its test and the run failed and re-raises, so the
    user sees why; `ssdlab resume` retries from that test."""
    records = store.tests(run_id)
    for position, record in enumerate(records, start=1):
        if record.status is TestStatus.DONE:
            continue
        test = record.test
        reporter.test_started(position, len(records), test)
        store.start_test(run_id, record.seq)
        measured: list[tuple[Step, StepResult]] = []
        try:
            for index, step in enumerate(test.steps):
                reporter.step_started(index, step)
                outcome = backend.run_step(step, reporter.step_progress)
                store.save_step(run_id, record.seq, index, step, outcome.result, outcome.commands)
                reporter.step_finished(step, outcome.result)
                if step.phase is Phase.MEASURE:
                    measured.append((step, outcome.result))
            score = lookup(test.id).score(measured)
        except SsdlabError as exc:
            store.fail_test(run_id, record.seq, str(exc))
            raise
        store.finish_test(run_id, record.seq, score)
        reporter.test_finished(test, score)
    store.finish_run(run_id, RunStatus.DONE)
