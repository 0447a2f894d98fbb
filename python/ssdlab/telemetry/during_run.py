"""Telemetry beside a run (METHODOLOGY.md section 4), from what the probe found: the health
log before and after every test, the temperature during every step, the power meter's
energy per step, and each step's throttle events.

Telemetry never fails a run: whatever cannot be read becomes a note (`take_notes`), and
the run goes on without it.

Clocks. A step's per-second throughput counts busy time: its I/O laid end to end, without
the idle between bursts nor fio's start-up (about 0.3 s per fio run). So do its
temperature series and its energy here. The sampler and the meter run on the wall clock
from the step's start; the backend reports the span of each fio run's I/O (`io_window`),
and leaves the drive idle through `idle`, inside which no sensor is read. A step that
reports no I/O span (a purge) is busy whenever it does not idle. Energy is integrated
over the busy windows; a temperature reading is placed where its time falls in them, one
taken while fio starts at the start of the I/O that follows.

A simulated drive runs in drive time, in which no wall-clock sampler measures anything:
its temperature comes with each step's result (`StepOutcome.temperature_c`), one reading
per second of the step, on the same seconds as its per-second throughput, and is stored
as it is.

Thermal-transition counters come with the health log, before and after each test, so on a
real drive a rise is known per test, not per second: when they rose, every second of the
test's steps coincides with a rise, and any drop of 20 % for 3 s there is a throttle event.
A simulated drive reports its count each second with its temperature, and a drop
coincides with a rise only where the count rose (a cache running out does not).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext

from ssdlab.errors import SsdlabError
from ssdlab.model import StepResult
from ssdlab.telemetry.meters import PowerMeter, PowerTrace, energy_over
from ssdlab.telemetry.needs import Need, missing
from ssdlab.telemetry.nvme import HOST_THERMAL_MANAGEMENT
from ssdlab.telemetry.probe import Telemetry, attempt
from ssdlab.telemetry.records import HealthLog, ThermalManagement
from ssdlab.telemetry.results import StepTelemetry, TemperatureSeries, TestHealth
from ssdlab.telemetry.sampler import (
    DEFAULT_TEMPERATURE_PERIOD_S,
    MAX_TEMPERATURE_PERIOD_S,
    Readings,
    TemperatureSampler,
    per_second,
)
from ssdlab.telemetry.throttle import ThrottleEvent, detect_throttles, transition_seconds

Window = tuple[float, float]  # seconds since the step started


class RunTelemetry:
    """One run's telemetry, made once from the probe's findings and the power meter; the
    execution loop asks it for health logs and has it watch each step."""

    def __init__(self, telemetry: Telemetry, meter: PowerMeter | None = None) -> None:
        self._telemetry = telemetry
        self._meter = meter
        self._notes: list[str] = []
        if telemetry.reasons:
            lead = "telemetry in part only" if telemetry.available else "no telemetry"
            self._notes.append(f"{lead}: {'; '.join(telemetry.reasons)}")
        self._limits = self._thresholds()
        self._sampler = None
        if telemetry.temperature_source in ("hwmon", "nvme-cli"):
            # hwmon is a file read; nvme-cli a program started per reading: once a second
            period = DEFAULT_TEMPERATURE_PERIOD_S if telemetry.hwmon_chip else MAX_TEMPERATURE_PERIOD_S
            self._sampler = TemperatureSampler(telemetry.temperature_c, period)
        elif telemetry.temperature_source == "smartctl":
            self._notes.append("no temperature beside the steps: through smartctl each reading is several "
                               "commands (on SATA, commands that empty the drive's queue), which would disturb "
                               "the measurement; the health log before and after each test has it")
        self._t0, self._wall0 = time.monotonic(), time.time()
        self._idle: list[Window] = []
        self._io: list[Window] = []
        self._watched: tuple[list[Window], Readings | None, PowerTrace | None] = ([], None, None)

    def take_notes(self) -> list[str]:
        """The notes since the last call, for the caller to store where they happened."""
        notes, self._notes = self._notes, []
        return notes

    def _thresholds(self) -> dict[str, float | None]:
        """WCTEMP from Identify Controller; TMT1 and TMT2 from feature 0x10 (None: off)."""
        info = self._telemetry.controller()
        limits = {"wctemp_c": info.wctemp_c if info else None}
        if self._telemetry.nvme is not None:
            feature = attempt(lambda: self._telemetry.nvme.get_feature(HOST_THERMAL_MANAGEMENT), self._notes)
            if isinstance(feature, ThermalManagement):
                limits.update(tmt1_c=feature.tmt1_c, tmt2_c=feature.tmt2_c)
        return limits

    def health(self) -> HealthLog | None:
        return attempt(self._telemetry.health, self._notes) if self._telemetry.available else None

    @property
    def probed(self) -> Telemetry:
        """What the probe found: the sources, the APST switch, the reasons for what is missing."""
        return self._telemetry

    def missing(self, needs: Iterable[Need], engine: str) -> str | None:
        """Why a test that needs `needs` cannot run on this target (None: it can)."""
        return missing(needs, self._telemetry, self._meter is not None, engine)

    def note(self, text: str) -> None:
        self._notes.append(text)

    def quiet(self) -> AbstractContextManager[None]:
        """No sensor read starts inside the block (idle-wake's idles)."""
        return self._sampler.quiet() if self._sampler else nullcontext()

    def idle(self, seconds: float) -> None:
        """Leave the drive idle (the backend's sleep): no sensor is read meanwhile."""
        with self.quiet():
            start = time.monotonic()
            time.sleep(seconds)
            self._idle.append((start - self._t0, time.monotonic() - self._t0))

    def idle_power_w(self, seconds: float) -> float | None:
        """The meter's mean power while the drive idles `seconds` (None: no meter, or no figure)."""
        if self._start_meter() is None:
            return None
        try:
            self.idle(seconds)
        finally:
            trace = self._meter.stop()
        energy = attempt(lambda: energy_over(trace, [(0.0, seconds)]), self._notes)
        return None if energy is None else energy.mean_w

    def io_window(self, start: float, end: float) -> None:
        """The backend's I/O ran from `start` to `end`, seconds since the epoch."""
        self._io.append((start - self._wall0, end - self._wall0))

    @contextmanager
    def watching_step(self) -> Iterator[None]:
        """The sampler and the meter run while the step does, and are stopped whatever happens."""
        self._t0, self._wall0 = time.monotonic(), time.time()
        self._idle, self._io = [], []
        meter = self._start_meter()
        if self._sampler:
            self._sampler.start()
        try:
            yield
        finally:
            busy = self._io or busy_spans(self._idle, time.monotonic() - self._t0)
            trace = meter.stop() if meter else None
            self._watched = (busy, self._sampler.stop() if self._sampler else None, trace)

    def _start_meter(self) -> PowerMeter | None:
        if self._meter is None:
            return None
        try:
            self._meter.start()
        except SsdlabError as exc:
            self._notes.append(f"{exc}: no energy for the rest of the run")
            self._meter = None
        return self._meter

    def step_result(self, result: StepResult, drive_temperature_c: Sequence[float] | None = None,
                    drive_transitions: Sequence[int] | None = None) -> tuple[StepResult, StepTelemetry]:
        """The step's result with its energy, and what was measured beside it (the step
        last watched). The energy is the meter's mean power over the busy windows times
        the backend's busy time, so that the result's watts are that mean power.
        `drive_temperature_c`: the temperature the backend reported for each second of
        the step (a simulated drive), used instead of the sampler's; `drive_transitions`, its
        thermal-transition count at each of those seconds."""
        busy, readings, trace = self._watched
        temperature = energy = None
        if drive_temperature_c is not None:
            # the seconds of the per-second series; those of the idle after it are not stored
            seconds = len(result.per_second)
            celsius = tuple(drive_temperature_c[:seconds])
            transitions = tuple(drive_transitions[:seconds]) if drive_transitions is not None else None
            if celsius and self._telemetry.temperature_source is not None:
                temperature = TemperatureSeries(source=self._telemetry.temperature_source, celsius=celsius,
                                                transitions=transitions)
        elif readings is not None:
            self._notes += readings.notes
            if readings.samples and result.busy_s > 0:
                samples = [(busy_time(t, busy), celsius) for t, celsius in readings.samples]
                temperature = TemperatureSeries(source=self._telemetry.temperature_source,
                                                celsius=per_second(samples, result.busy_s))
        if trace is not None and result.busy_s > 0:
            energy = attempt(lambda: energy_over(trace, busy), self._notes)
            if energy is not None:  # else the failure's note says why, the trace's notes included
                self._notes += trace.notes
        if energy is not None and energy.energy_j > 0:
            result = result.model_copy(update={"energy_j": energy.mean_w * result.busy_s})
        return result, StepTelemetry(temperature=temperature, energy=energy)

    def throttles(self, health: TestHealth, steps: Sequence[tuple[int, StepResult, StepTelemetry]]
                  ) -> dict[int, tuple[ThrottleEvent, ...]]:
        """The throttle events of a test's steps, by step index, once its health after is known."""
        found = {}
        for idx, result, watched in steps:
            mbps = [p.mbps for p in result.per_second]
            series = watched.temperature
            if series is not None and series.transitions is not None:  # read each second: when they rose
                rises = transition_seconds(series.transitions)
            else:  # read before and after the test: every second of it may have seen the rise
                rises = range(len(mbps)) if health.thermal_transitions_rose else ()
            celsius = series.celsius if series else ()
            if events := detect_throttles(mbps, celsius, **self._limits, transition_s=rises):
                found[idx] = events
        return found


def busy_spans(idle: Sequence[Window], end_s: float) -> list[Window]:
    """[0, end_s] without the idle windows."""
    spans, start = [], 0.0
    for idle_start, idle_end in idle:
        if idle_start > start:
            spans.append((start, idle_start))
        start = idle_end
    if end_s > start:
        spans.append((start, end_s))
    return spans


def busy_time(t: float, busy: Sequence[Window]) -> float:
    """Where wall-clock `t` falls in the busy windows laid end to end; a time between two
    windows counts at the next one's start, one after the last at its end."""
    before = 0.0
    for start, end in busy:
        if t <= end:
            return before + max(0.0, t - start)
        before += end - start
    return before
