"""What a report reads from the store: the compared runs (with their telemetry notes)
and, per test, what each run measured and the drive's health around it. Tests keep the
order of the first run that has them; a test appears when any run has it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ssdlab.documents import placed_note
from ssdlab.errors import SsdlabError
from ssdlab.model import Phase, Run
from ssdlab.store import StepRecord, Store, TestRecord
from ssdlab.text import printable


@dataclass(frozen=True)
class RunData:
    run: Run
    engine: dict[str, Any]
    telemetry_notes: tuple[str, ...] = ()  # each prefixed with the test and step it concerns
    repeat: int = 1  # each measured step run this many times (`run --repeat`)

    @property
    def label(self) -> str:
        """The legend entry: the run's name, else its target, with its id (unique).
        Every chart and table of a report names runs by this label, and chart renderers
        cannot lay out control characters (vl-convert aborts on an ESC): escaped here, once."""
        return printable(f"#{self.run.id} {self.run.name or self.run.target}")


@dataclass(frozen=True)
class TestRun:
    """One test as one run recorded it."""

    __test__ = False  # not a pytest test class
    run: RunData
    record: TestRecord
    steps: tuple[StepRecord, ...]

    @property
    def measured(self) -> tuple[StepRecord, ...]:
        return tuple(s for s in self.steps if s.step.phase is Phase.MEASURE)

    @property
    def before(self) -> str:
        """The state of the drive at the first measurement: the purge and precondition
        steps before it (later states are named on their steps)."""
        first = next((k for k, s in enumerate(self.steps) if s.step.phase is Phase.MEASURE),
                     len(self.steps))
        return " → ".join(s.step.label for s in self.steps[:first])


@dataclass(frozen=True)
class TestGroup:
    """One test across the compared runs (only the runs that have it)."""

    __test__ = False
    id: str
    title: str
    runs: tuple[TestRun, ...]

    @property
    def measured(self) -> list[tuple[TestRun, StepRecord]]:
        return [(tr, s) for tr in self.runs for s in tr.measured]


@dataclass(frozen=True)
class ReportData:
    runs: tuple[RunData, ...]
    tests: tuple[TestGroup, ...]

    @property
    def alarms(self) -> list[tuple[str, str, str]]:
        """(run label, test id, alarm) of every test whose health raised one."""
        return [(tr.run.label, group.id, alarm) for group in self.tests for tr in group.runs
                if tr.record.health for alarm in tr.record.health.alarms()]


def gather(store: Store, run_ids: list[int]) -> ReportData:
    """Read the runs (raising SsdlabError for an unknown id) and group their tests."""
    if repeated := sorted({i for i in run_ids if run_ids.count(i) > 1}):
        raise SsdlabError(f"run {', '.join(map(str, repeated))} is given more than once: "
                          "give each run once")
    runs = tuple(RunData(store.run(i), (extras := store.run_extras(i))["engine"], _notes(store, i),
                         int(extras["options"].get("repeat", 1))) for i in run_ids)
    by_test: dict[str, list[TestRun]] = {}
    titles: dict[str, str] = {}
    for run in runs:
        for record in store.tests(run.run.id):
            steps = tuple(store.steps(run.run.id, record.seq))
            by_test.setdefault(record.test.id, []).append(TestRun(run, record, steps))
            titles.setdefault(record.test.id, record.test.title)
    return ReportData(runs, tuple(TestGroup(test, titles[test], tuple(test_runs))
                                  for test, test_runs in by_test.items()))


def _notes(store: Store, run_id: int) -> tuple[str, ...]:
    tests = {record.seq: record.test.id for record in store.tests(run_id)}
    return tuple(placed_note(tests.get(n.seq), n.idx, n.note) for n in store.telemetry_notes(run_id))
