"""The progress bar of a run: test, step, QD, elapsed and ETA; and the telemetry's notes and
alarms, printed as they happen (with or without the bar).

The bar's total is the estimated time of the remaining tests (catalogue.estimated_seconds),
so rich's ETA starts from nominal rates and follows the measured pace. Each test starts the
bar where the estimates of the tests before it end: a skipped test, or the time a power test
spends beyond its steps (idle-power's idle), moves it on."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ssdlab.catalogue import Scale, estimated_seconds
from ssdlab.catalogue.estimate import step_seconds
from ssdlab.cli.output import err_console, print_alarm, shown
from ssdlab.execution import SilentReporter
from ssdlab.model import Step, StepResult, Test

if TYPE_CHECKING:
    from ssdlab.session import RunRequest


class AlarmReporter(SilentReporter):
    """No progress bar (--json), but telemetry notes and alarms still reach the terminal,
    named by `target` when runs go side by side (rich markup: a user's name escaped, `shown`)."""

    console: Console = err_console

    def __init__(self, target: str = "") -> None:
        self._prefix = f"{target}: " if target else ""

    def telemetry_notes(self, notes: list[str]) -> None:
        for note in notes:
            self.console.print(f"[yellow]telemetry:[/] {self._prefix}{shown(note)}", highlight=False)

    def alarms(self, test: Test, alarms: list[str]) -> None:
        for alarm in alarms:
            print_alarm(self.console, f"{self._prefix}{test.id}", alarm)


def progress_rows(side_by_side: bool = False) -> Progress:
    """The bar of a run, or one row per run (named by its target) for runs side by side."""
    target = [TextColumn("{task.fields[target]}")] if side_by_side else []
    return Progress(
        *target, TextColumn("[bold]{task.fields[test]}[/]"), TextColumn("{task.fields[step]}"),
        BarColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
        console=err_console, transient=False)


class ProgressReporter(AlarmReporter):
    """A run's bar: its own, or a row of `rows` (runs side by side, each named by `target`,
    which also names it in the lines printed)."""

    def __init__(self, tests: list[Test], scale: Scale, rows: Progress | None = None, target: str = ""):
        super().__init__(target)
        self._owns_rows = rows is None
        self._progress = rows or progress_rows()
        self._starts: dict[str, float] = {}
        total = 0.0
        for test in tests:
            self._starts[test.id] = total
            total += estimated_seconds(test, scale)
        self._task = self._progress.add_task("run", total=total, target=target, test="", step="")
        self._done = 0.0
        self._current = 0.0
        self._label = ""

    def __enter__(self) -> ProgressReporter:
        if self._owns_rows:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._owns_rows:
            self._progress.stop()

    def test_started(self, position: int, total: int, test: Test) -> None:
        self._done = self._starts[test.id]
        self._progress.update(self._task, test=f"{position}/{total} {test.id}", completed=self._done)

    def step_started(self, index: int, step: Step, thinktime_s: float = 0.0) -> None:
        self._current = step_seconds(step, thinktime_s)
        self._label = f"{step.label} (QD{step.iodepth}, {step.phase.value})"
        self._progress.update(self._task, step=self._label, completed=self._done)

    def step_progress(self, fraction: float, status: str) -> None:
        self._progress.update(self._task, completed=self._done + self._current * fraction,
                              step=f"{self._label} {status}")

    def step_finished(self, step: Step, result: StepResult) -> None:
        self._done += self._current
        self._progress.update(self._task, completed=self._done)

    def test_finished(self, test: Test, score: dict[str, Any]) -> None:
        self._progress.console.print(f"  {self._prefix}{test.id}: {score['value']:.1f} {score['unit']} "
                                     f"({score['name']})", highlight=False)


class SweepProgress:
    """A sweep's bar: one row for the whole sweep, its ETA from the estimated time of every
    variant's remaining tests, and a row for each variant while it runs (removed once its
    last test ends: a sweep may have a thousand)."""

    def __init__(self, title: str, estimated_s: float, variants: int, done: int = 0):
        self.rows = progress_rows(side_by_side=True)
        self._variants, self._done, self._completed = variants, done, 0.0
        self._sweep = self.rows.add_task("sweep", total=max(estimated_s, 1e-9), target=title, test="", step="")
        self._lock = threading.Lock()  # variants report from their own threads
        self._count()

    def __enter__(self) -> SweepProgress:
        self.rows.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.rows.stop()

    def reporter_for(self, request: RunRequest, run_id: int, tests: list[Test]) -> ProgressReporter:
        """The reporter of one variant's run (side_by_side.ReporterFor)."""
        return _VariantRow(tests, request.scale, self, f"run {run_id} {shown(request.target)}")

    def moved(self, by: float) -> None:
        """A variant's run moved on `by` (estimated seconds): so did the sweep."""
        with self._lock:
            self._completed += by
            self.rows.update(self._sweep, completed=self._completed)

    def finished(self) -> None:
        with self._lock:
            self._done += 1
            self._count()
            if self._done == self._variants:  # the estimates never add up exactly
                self.rows.update(self._sweep, completed=self.rows.tasks[0].total)

    def _count(self) -> None:
        self.rows.update(self._sweep, test=f"{self._done}/{self._variants} variants")


class _VariantRow(ProgressReporter):
    """A variant's row, which moves the sweep's row as it moves."""

    def __init__(self, tests: list[Test], scale: Scale, sweep: SweepProgress, target: str):
        super().__init__(tests, scale, sweep.rows, target)
        self._sweep = sweep
        self._last = tests[-1].id if tests else None
        self._reached = 0.0

    def _moved(self, completed: float) -> None:
        self._sweep.moved(completed - self._reached)
        self._reached = completed

    def test_started(self, position: int, total: int, test: Test) -> None:
        super().test_started(position, total, test)
        self._moved(self._done)

    def step_progress(self, fraction: float, status: str) -> None:
        super().step_progress(fraction, status)
        self._moved(self._done + self._current * fraction)

    def step_finished(self, step: Step, result: StepResult) -> None:
        super().step_finished(step, result)
        self._moved(self._done)

    def test_finished(self, test: Test, score: dict[str, Any]) -> None:
        # no line per test: the sweep's table shows every score at the end
        if test.id == self._last:
            self._progress.remove_task(self._task)
            self._sweep.finished()
