"""Executing a stored run: every unfinished test, in order, step by step.

A test is the unit of resumption. Its steps are committed as they finish, and
it becomes `done` only with its score; a test interrupted half-way is started
again from its purge, so its results never mix two attempts.

A PTS test (catalogue/pts.py) runs its own steps too, stopping each loop at steady state; resumed,
it goes on from the last round it completed, on a simulated drive after running the rounds kept
again (not stored again) to rebuild the drive's state.

A power test (catalogue/power.py) measures more after its steps, through `_TestRun`. A test
that needs more than I/O (telemetry; the simulator's age step) is skipped, with the reason
stored, on a target without it, before any of its steps.

The retention test (catalogue/retention.py) runs its own steps: on a real drive the run stops
at its wait (`RunWaits`), the wait stored with the pattern's seed, and `ssdlab resume` goes on
from the test's stored steps rather than its purge: the data written before the wait is what
it reads back. The endurance test (catalogue/endurance.py) runs its own steps too, and on a real
drive goes on from those it stored, whatever stopped it: the drive kept the wear they made.

Telemetry goes beside it: the health log before and after every test (after a
failing step too: a media error may be why it failed), temperature and energy with
every step, throttle events once the test's health after is known, and notes,
stored where they happened, for whatever telemetry could not read.
"""

from __future__ import annotations

import secrets
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any, Protocol

from ssdlab import repeats, signals
from ssdlab.backends import Backend, StepOutcome
from ssdlab.backends.fio.verify import MAX_SEED
from ssdlab.backends.sim import SimBackend
from ssdlab.catalogue import Endurance, PowerTest, PtsTest, Scale, lookup
from ssdlab.catalogue.retention import Retention, begun_wait, waited_result
from ssdlab.errors import SsdlabError
from ssdlab.model import Op, Phase, RunStatus, Step, StepResult, Test, TestStatus, Wait
from ssdlab.store import StepRecord, Store, TestRecord
from ssdlab.telemetry.apst import ApstUnavailable, apst_disabled
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.probe import Telemetry
from ssdlab.telemetry.records import HealthLog
from ssdlab.telemetry.results import StepTelemetry, TestHealth
from ssdlab.telemetry.throttle import ThrottleEvent
from ssdlab.units import KiB
from ssdlab.write_cache import WriteCache

IDLE_READ_BYTES = 4 * KiB


class RunWaits(Exception):
    """Not an error: a retention test's real drive must now be left as the user stated, so the
    run stops as planned, its wait stored."""

    def __init__(self, wait: Wait):
        super().__init__(f"waiting until {wait.until}")
        self.wait = wait


class Reporter(Protocol):
    """What a run tells its watcher (the progress bar, or nothing). A step's `thinktime_s` is
    the idle after each of its reads (idle-wake's timed reads)."""

    def test_started(self, position: int, total: int, test: Test) -> None: ...
    def step_started(self, index: int, step: Step, thinktime_s: float = 0.0) -> None: ...
    def step_progress(self, fraction: float, status: str) -> None: ...
    def step_finished(self, step: Step, result: StepResult) -> None: ...
    def test_finished(self, test: Test, score: dict[str, Any]) -> None: ...
    def telemetry_notes(self, notes: list[str]) -> None: ...
    def alarms(self, test: Test, alarms: list[str]) -> None: ...


class SilentReporter:
    def test_started(self, position: int, total: int, test: Test) -> None: ...
    def step_started(self, index: int, step: Step, thinktime_s: float = 0.0) -> None: ...
    def step_progress(self, fraction: float, status: str) -> None: ...
    def step_finished(self, step: Step, result: StepResult) -> None: ...
    def test_finished(self, test: Test, score: dict[str, Any]) -> None: ...
    def telemetry_notes(self, notes: list[str]) -> None: ...
    def alarms(self, test: Test, alarms: list[str]) -> None: ...


def execute(store: Store, run_id: int, backend: Backend, reporter: Reporter,
            telemetry: RunTelemetry | None = None, scale: Scale | None = None, repeat: int = 1) -> None:
    """Run every test of the run that is not done; mark the run done at the end, or leave it
    waiting when a retention test waits (the store says until when).

    A test the target cannot run (without the telemetry, or the age step, it needs) is
    skipped with the reason. A failing step marks its test and the run failed and re-raises,
    so the user sees why; `ssdlab resume` retries from that test."""
    telemetry = telemetry or RunTelemetry(Telemetry())
    scale = scale or Scale()
    _store_notes(store, run_id, telemetry, reporter)
    records = store.tests(run_id)
    for position, record in enumerate(records, start=1):
        if record.status in (TestStatus.DONE, TestStatus.SKIPPED):
            continue
        test, seq = record.test, record.seq
        definition = lookup(test.id)
        reporter.test_started(position, len(records), test)
        if reason := telemetry.missing(definition.needs(), backend.name):
            store.skip_test(run_id, seq, reason)
            reporter.telemetry_notes([f"{test.id} cannot run on this target: {reason}"])
            continue
        # a retention test that waited goes on from the steps it stored before its wait; an
        # endurance test on a real drive from those it stored
        waited = store.wait(run_id, seq)
        goes_on = (waited is not None or isinstance(definition, PtsTest)
                   or isinstance(definition, Endurance) and not isinstance(backend, SimBackend))
        kept = store.steps(run_id, seq) if goes_on else []
        if isinstance(definition, PtsTest):  # from the last round it completed
            kept = kept[:definition.resumable([(k.step, k.result) for k in kept])]
        if kept and (waited is None or len(kept) >= waited.idx):
            store.continue_test(run_id, seq, keep=len(kept))
            before = record.health.before if record.health else None
        else:
            waited, kept = None, []
            store.start_test(run_id, seq)
            before = telemetry.health()
            store.save_test_telemetry(run_id, seq, TestHealth(before=before))
        _store_notes(store, run_id, telemetry, reporter, seq)
        # its procedure sets its own repetitions
        own = isinstance(definition, PowerTest | Retention | Endurance | PtsTest)
        run = _TestRun(store, run_id, seq, backend, telemetry, reporter, scale, 1 if own else repeat, kept, waited)
        cache = WriteCache.asked(test.settings.get("write_cache"), backend, store, run_id, telemetry.probed.nvme)
        try:
            with cache.held():
                if isinstance(definition, Retention | Endurance | PtsTest):
                    found = definition.run(run, test.steps)
                else:
                    for step in test.steps:
                        run.run_step(step)
                    found = definition.run(run) if isinstance(definition, PowerTest) else {}
        except RunWaits:
            _store_notes(store, run_id, telemetry, reporter, seq)
            return  # stored as running, its wait open: the run is waiting
        except SsdlabError as exc:
            _test_ended(store, run_id, record, telemetry, reporter, before, run.watched)
            store.fail_test(run_id, seq, str(exc))
            raise
        throttles = _test_ended(store, run_id, record, telemetry, reporter, before, run.watched)
        try:
            if isinstance(definition, PowerTest):
                score = definition.result(found, run.measured, throttles)
            elif isinstance(definition, Retention):
                score = definition.result(found, run.done)
            elif isinstance(definition, Endurance):
                score = definition.configured(test).result(found, run.done, run.healths)
            elif isinstance(definition, PtsTest):
                score = definition.result(found, run.done)
            else:
                score = repeats.spread(definition.score(run.measured), run.measured, definition.score)
            if cache.wanted is not None:
                score |= {"write_cache": cache.said()}
        except SsdlabError as exc:
            store.fail_test(run_id, seq, str(exc))
            raise
        store.finish_test(run_id, seq, score)
        reporter.test_finished(test, score)
    store.finish_run(run_id, RunStatus.DONE)


class _TestRun:
    """One test's steps as they run and are stored, in order, after those it `kept` (a retention
    test back from its wait, an endurance test resumed); what a power test's `run` uses
    (catalogue.power.TestRun), a retention test's (catalogue.retention.RetentionRun) and an
    endurance test's (catalogue.endurance.EnduranceRun)."""

    def __init__(self, store: Store, run_id: int, seq: int, backend: Backend, telemetry: RunTelemetry,
                 reporter: Reporter, scale: Scale, repeat: int = 1, kept: list[StepRecord] | None = None,
                 waited: Wait | None = None) -> None:
        self.store, self.run_id, self.seq, self.backend = store, run_id, seq, backend
        self.telemetry, self.reporter, self.scale, self.repeat = telemetry, reporter, scale, repeat
        self.measured: list[tuple[Step, StepResult]] = []
        self.watched: list[tuple[int, StepResult, StepTelemetry]] = []
        self.done: list[tuple[Step, StepResult]] = []
        self.healths: list[HealthLog | None] = []  # read after each of `done`, where its test asked
        for record in kept or []:
            self._record(record.idx, record.step, record.result, record.telemetry)
        self.waited = waited
        self._replayed = 0  # kept steps replayed so far (PTS on a simulated drive)
        # the retention pattern's: drawn anew for each attempt, kept with its wait
        self.seed = waited.seed if waited is not None else secrets.randbelow(MAX_SEED + 1)

    @property
    def preset_text(self) -> str | None:
        return self.backend.preset.text if isinstance(self.backend, SimBackend) else None

    def run_step(self, step: Step, read_health: bool = False) -> None:
        """A step with the sampler and the meter beside it; a measured one `repeat` times
        (repeats.py); with the health log read right after it when asked."""
        self.reporter.step_started(len(self.watched), step)
        times = self.repeat if step.phase is Phase.MEASURE else 1
        with self.telemetry.watching_step():
            outcomes = [self.backend.run_step(step, self.reporter.step_progress) for _ in range(times)]
        outcome = outcomes[0] if times == 1 else repeats.repeated(outcomes)
        result, beside = self.telemetry.step_result(outcome.result, outcome.temperature_c,
                                                    outcome.thermal_transitions)
        if read_health:
            beside = beside.model_copy(update={"health": self.health()})
        self._save(step, outcome, result, beside)

    def health(self) -> HealthLog | None:
        return self.telemetry.health()

    def replay(self, step: Step, stored: StepResult) -> None:
        """A kept step of a PTS test run again on a simulated drive, whose state lives in this
        process: the same seed brings the fresh drive to the same state, which its figures
        check; not stored again. A real drive kept its state: nothing to do."""
        if not isinstance(self.backend, SimBackend):
            return
        self.reporter.step_started(self._replayed, step)
        outcome = self.backend.run_step(step, self.reporter.step_progress)
        self._replayed += 1
        again = outcome.result
        if (again.ios, again.bytes) != (stored.ios, stored.bytes):
            raise SsdlabError(f"{step.label}: the simulated drive, run again to resume, did {again.ios} I/Os "
                              f"({again.bytes} bytes) where the stored step did {stored.ios} ({stored.bytes}): "
                              "its preset or the simulator changed since; start the run again (`ssdlab run`)")
        self.reporter.step_finished(step, stored)

    def run_pattern(self, step: Step) -> None:
        """The retention test's pattern of `self.seed`, written or read back checking every block."""
        self.reporter.step_started(len(self.watched), step)
        with self.telemetry.watching_step():
            outcome = self.backend.run_pattern(step, self.seed, self.reporter.step_progress)
        self._save(step, outcome, *self.telemetry.step_result(outcome.result, outcome.temperature_c,
                                                             outcome.thermal_transitions))

    def wait(self, step: Step) -> None:
        """The retention test's off step. A simulated drive is off in drive time; a real drive's
        run stops here (RunWaits), its wait stored, or, resumed, stores the wait as over."""
        if isinstance(self.backend, SimBackend):
            self.run_step(step)
            return
        now = datetime.now(UTC)
        if self.waited is None:
            wait = begun_wait(self.seq, len(self.watched), self.seed, step, now)
            self.store.begin_wait(self.run_id, wait)
            raise RunWaits(wait)
        self.reporter.step_started(len(self.watched), step)
        outcome = StepOutcome(waited_result(step, self.waited, now), ())
        self._save(step, outcome, outcome.result, StepTelemetry())

    def timed_reads(self, step: Step, thinktime_s: float, randseed: int) -> tuple[tuple[int, ...], StepResult]:
        """fio with the sampler quiet throughout: its idles are the measurement."""
        self.reporter.step_started(len(self.watched), step, thinktime_s)
        with self.telemetry.quiet():
            outcome, latencies = self.backend.run_timed_reads(step, thinktime_s, randseed)
        self._save(step, outcome, outcome.result, StepTelemetry())
        return latencies, outcome.result

    def idle_power_w(self, seconds: float, label: str) -> float | None:
        """A simulated drive's own idle power (its idle run and stored as a step, the energy
        of its idle time among the drive's figures), else the meter's."""
        if not isinstance(self.backend, SimBackend):
            return self.telemetry.idle_power_w(seconds)
        # a step must do I/O: one read, then the idle
        self.run_step(Step(label=label, rw=Op.READ, bs=IDLE_READ_BYTES, size=IDLE_READ_BYTES, idle_after=seconds))
        _, result, _ = self.watched[-1]
        idle_j = (result.device or {}).get("idle_energy_j")  # None without a power model
        return idle_j / result.idle_s if idle_j is not None and result.idle_s > 0 else None

    def _save(self, step: Step, outcome: StepOutcome, result: StepResult, beside: StepTelemetry) -> None:
        index = len(self.watched)
        self.store.save_step(self.run_id, self.seq, index, step, result, outcome.commands, beside)
        _store_notes(self.store, self.run_id, self.telemetry, self.reporter, self.seq, index)
        self.reporter.step_finished(step, result)
        self._record(index, step, result, beside)
        if signals.stop_asked():  # a stop whose KeyboardInterrupt landed where it was swallowed (a finalizer)
            raise KeyboardInterrupt

    def _record(self, index: int, step: Step, result: StepResult, beside: StepTelemetry) -> None:
        self.watched.append((index, result, beside))
        self.done.append((step, result))
        self.healths.append(beside.health)
        if step.phase is Phase.MEASURE:
            self.measured.append((step, result))

    def apst_off(self) -> AbstractContextManager[None]:
        if isinstance(self.backend, SimBackend):  # the simulated drive's own host (backends/sim.py)
            return self.backend.apst_off()
        switch = self.telemetry.probed.apst_switch
        if switch is None:
            raise ApstUnavailable("this target has no APST switch the kernel manages "
                                  "(/sys/class/nvme/nvmeX/power/pm_qos_latency_tolerance_us)")
        return apst_disabled(self.store, self.run_id, switch)

    def run_health_before(self) -> HealthLog | None:
        first = next((r.health.before for r in self.store.tests(self.run_id) if r.health and r.health.before), None)
        return first or self.telemetry.health()


def _test_ended(store: Store, run_id: int, record: TestRecord, telemetry: RunTelemetry, reporter: Reporter,
                before: HealthLog | None, watched: list[tuple[int, StepResult, StepTelemetry]]
                ) -> dict[int, tuple[ThrottleEvent, ...]]:
    """The health log after the test, the throttle events of its steps (returned), and its
    alarms, at once."""
    health = TestHealth(before=before, after=telemetry.health())
    throttles = telemetry.throttles(health, watched)
    store.save_test_telemetry(run_id, record.seq, health, throttles)
    _store_notes(store, run_id, telemetry, reporter, record.seq)
    if alarms := health.alarms():
        reporter.alarms(record.test, alarms)
    return throttles


def _store_notes(store: Store, run_id: int, telemetry: RunTelemetry, reporter: Reporter,
                 seq: int | None = None, idx: int | None = None) -> None:
    if notes := telemetry.take_notes():
        store.add_telemetry_notes(run_id, notes, seq, idx)
        reporter.telemetry_notes(notes)
