"""The power suite (METHODOLOGY.md section 4): power states, idle wake-up, idle power,
thermal soak, health.

Unlike the other tests these measure more than a backend's steps: telemetry reads, timed
idle, APST switched off for a while. Each compiles to the steps the execution loop runs
(purge, data, workload), then `run` does the rest through the TestRun that execution
gives it, and `result` makes its score once the test's health after and throttle events
are known. `needs` says what the target must have; a target without it skips the test
with the reason. Choices where METHODOLOGY.md leaves them open:

- idle-wake reads fresh data: the test writes a 16 GiB span first, and each fio run reads
  random blocks of it without repeating one (fio's random map), with its own seed. fio
  idles between the reads itself (`thinktime`, see backends/fio/jobfile.py); a run's first
  read follows fio's start-up, not a timed idle, so each run reads once more than its
  repetitions. Warm reads: 1000 back-to-back 4 KiB QD1 random reads, before each policy's
  idle lengths. With the host's policy first, then with APST off when the host allows it.
  The power state after each idle length: on a simulated drive the one it reached; on a
  real drive the one its APST table allows (analysis/power_states.py), read before the idles.
  On a simulated drive each read is a step of its own followed by the idle, in drive time
  (backends/sim.py), and "APST off" switches the simulated host's limit.
- idle-power and thermal-soak scale their times (--scale, at least 1 s); idle-wake scales
  its repetitions (at least 3) and warm reads (at least 100), never its idle lengths.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from ssdlab.analysis.power_states import ALLOWED_BY_APST, REACHED, apst_allowed_state, deepest_state
from ssdlab.analysis.scores import Measured
from ssdlab.analysis.wake import IdleStates, wake_table
from ssdlab.catalogue.definitions import PRECONDITION_BS, PRECONDITION_QD, data_present, purge
from ssdlab.catalogue.estimate import step_seconds
from ssdlab.catalogue.scaling import Scale
from ssdlab.documents import health_document, health_rows
from ssdlab.errors import SsdlabError
from ssdlab.model import Op, Step, StepResult, Test
from ssdlab.telemetry.apst import ApstUnavailable
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.needs import Need
from ssdlab.telemetry.nvme import APST, HOST_THERMAL_MANAGEMENT, POWER_MANAGEMENT
from ssdlab.telemetry.probe import attempt
from ssdlab.telemetry.records import ApstEntry, HealthLog
from ssdlab.telemetry.results import TestHealth
from ssdlab.telemetry.throttle import ThrottleEvent
from ssdlab.units import MB, GiB, KiB

IDLE_LENGTHS_S = (0.01, 0.05, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
WAKE_REPETITIONS, WAKE_REPETITIONS_FLOOR = 10, 3
WARM_READS, WARM_READS_FLOOR = 1000, 100
WAKE_SPAN = 16 * GiB
WAKE_BS = 4 * KiB
IDLE_POWER_S = 120.0
SOAK_S = 1200.0
HOST_POLICY, APST_OFF = "host APST policy", "APST off"

Throttles = Mapping[int, Sequence[ThrottleEvent]]


class TestRun(Protocol):
    """A power test being executed, as its `run` sees it (execution implements it)."""

    scale: Scale
    telemetry: RunTelemetry

    def timed_reads(self, step: Step, thinktime_s: float, randseed: int) -> tuple[tuple[int, ...], StepResult]:
        """Each read's latency (ns), through fio idling `thinktime_s` after every I/O, no
        sensor read meanwhile, and the fio run's result, stored as the test's next step."""

    def apst_off(self) -> AbstractContextManager[None]:
        """APST off inside the block (telemetry/apst.py); ApstUnavailable when it cannot be."""

    def run_health_before(self) -> HealthLog | None:
        """The health log before the run's first test."""

    def idle_power_w(self, seconds: float, label: str) -> float | None:
        """The drive's mean power while it idles `seconds` (None: no figure, with a note):
        the simulated drive's own, its idle stored as the test's next step; else the power
        meter's."""


@dataclass(frozen=True)
class PowerTest(ABC):
    __test__ = False  # not a pytest test class
    id: str
    title: str
    primary_score: str

    def span(self, scale: Scale) -> int:
        return 0

    @abstractmethod
    def needs(self) -> tuple[Need, ...]: ...

    def steps(self, scale: Scale, capacity: int) -> list[Step]:
        """The steps the execution loop runs before `run`."""
        return []

    def compile(self, scale: Scale, capacity: int) -> Test:
        return Test(id=self.id, title=self.title, primary_score=self.primary_score,
                    steps=tuple(self.steps(scale, capacity)))

    def run(self, run: TestRun) -> dict[str, Any]:
        """What the test measures beyond its steps, for `result`."""
        return {}

    def run_seconds(self, scale: Scale) -> float:
        """How long `run` keeps the drive, roughly (catalogue/estimate.py)."""
        return 0.0

    @abstractmethod
    def result(self, found: dict[str, Any], measured: Measured, throttles: Throttles) -> dict[str, Any]: ...


def _score(name: str, value: float, unit: str, **figures: Any) -> dict[str, Any]:
    return {"name": name, "value": value, "unit": unit, **figures}


@dataclass(frozen=True)
class PowerStates(PowerTest):
    def needs(self) -> tuple[Need, ...]:
        return (Need.NVME,)

    def run(self, run: TestRun) -> dict[str, Any]:
        probed, notes = run.telemetry.probed, []
        info = probed.controller_info
        current, apst, thermal = (attempt(lambda f=fid: probed.nvme.get_feature(f), notes)
                                  for fid in (POWER_MANAGEMENT, APST, HOST_THERMAL_MANAGEMENT))
        for note in notes:
            run.telemetry.note(note)
        return {"states": [ps.model_dump() for ps in info.power_states],
                "current_state": current.power_state if current else None,
                "apst_supported": info.apsta, "apst_enabled": apst.enabled if apst else None,
                "apst_table": [e.model_dump() for e in apst.entries] if apst else [],
                "wctemp_c": info.wctemp_c, "cctemp_c": info.cctemp_c, "hctma": info.hctma,
                "tmt1_c": thermal.tmt1_c if thermal else None, "tmt2_c": thermal.tmt2_c if thermal else None}

    def result(self, found: dict[str, Any], measured: Measured, throttles: Throttles) -> dict[str, Any]:
        return _score(self.primary_score, len(found["states"]), "power states", **found)


@dataclass(frozen=True)
class IdleWake(PowerTest):
    def span(self, scale: Scale) -> int:
        return scale.span(WAKE_SPAN)

    def needs(self) -> tuple[Need, ...]:
        return ()  # fio's latency log, or the simulator's reads in drive time

    def steps(self, scale: Scale, capacity: int) -> list[Step]:
        return [purge(capacity), data_present(self.span(scale))]

    def run(self, run: TestRun) -> dict[str, Any]:
        apst = _apst_conditions(run)  # before any idle: no admin command inside one
        found = {"host_policy": self._policy(run, HOST_POLICY, seed=1, apst=apst)}
        try:
            with run.apst_off():
                off = None if apst is None else ApstConditions((), apst.start_state)  # no transition
                found["apst_off"] = self._policy(run, APST_OFF, seed=1001, apst=off)
        except ApstUnavailable as exc:
            run.telemetry.note(f"idle-wake measured with the host's APST policy only: {exc}")
        return found

    def run_seconds(self, scale: Scale) -> float:
        return sum(step_seconds(step, idle_s) for policy in (HOST_POLICY, APST_OFF)
                   for step, idle_s in self._fio_runs(scale, policy))

    def _fio_runs(self, scale: Scale, policy: str) -> list[tuple[Step, float]]:
        """One policy's fio runs in order, each with the idle after every read: the warm
        reads, then one run per idle length."""
        span = self.span(scale)

        def reads(label: str, count: int) -> Step:
            return Step(label=f"{label} ({policy})", rw=Op.RANDREAD, bs=WAKE_BS, size=span, io_size=count * WAKE_BS)

        count = scale.repetitions(WAKE_REPETITIONS, WAKE_REPETITIONS_FLOOR) + 1  # the first follows fio's start
        return [(reads("warm reads", scale.repetitions(WARM_READS, WARM_READS_FLOOR)), 0.0),
                *((reads(f"reads after {idle_s:g} s idle", count), idle_s) for idle_s in IDLE_LENGTHS_S)]

    def _policy(self, run: TestRun, policy: str, seed: int, apst: ApstConditions | None) -> dict[str, Any]:
        (warm, _), *after = [run.timed_reads(step, idle_s, seed + k)
                             for k, (step, idle_s) in enumerate(self._fio_runs(run.scale, policy))]
        first = {idle_s: reads[1:] for idle_s, (reads, _) in zip(IDLE_LENGTHS_S, after, strict=True)}
        devices = {idle_s: result.device for idle_s, (_, result) in zip(IDLE_LENGTHS_S, after, strict=True)}
        return wake_table(warm, first, _power_states(devices, apst))

    def result(self, found: dict[str, Any], measured: Measured, throttles: Throttles) -> dict[str, Any]:
        longest = found["host_policy"]["by_idle_s"][f"{IDLE_LENGTHS_S[-1]:g}"]["wake_us"]
        return _score(self.primary_score, longest, "µs", **found)


@dataclass(frozen=True)
class ApstConditions:
    """What a real drive's APST allows while idle-wake measures: the host's table (no entries
    when APST is off) and the state the drive idles from."""

    entries: tuple[ApstEntry, ...]
    start_state: int


def _apst_conditions(run: TestRun) -> ApstConditions | None:
    """Read through nvme-cli (features 0x0c and 0x02); None without it, with a note why."""
    nvme, notes = run.telemetry.probed.nvme, []
    if nvme is None:
        return None
    apst = attempt(lambda: nvme.get_feature(APST), notes)
    current = attempt(lambda: nvme.get_feature(POWER_MANAGEMENT), notes)
    for note in notes:
        run.telemetry.note(f"idle-wake cannot say which power state APST allows: {note}")
    if apst is None or current is None:
        return None
    return ApstConditions(apst.entries if apst.enabled else (), current.power_state)


def _power_states(devices: Mapping[float, Mapping[str, float] | None],
                  apst: ApstConditions | None) -> IdleStates | None:
    """Per idle length, the state the simulated drive reached (its counters of the fio run
    of that length), else the state a real drive's APST allows; None when neither is known."""
    reached = {idle_s: deepest_state(device) for idle_s, device in devices.items()}
    if all(state is not None for state in reached.values()):
        return REACHED, reached
    if apst is None:
        return None
    return ALLOWED_BY_APST, {idle_s: apst_allowed_state(apst.entries, apst.start_state, idle_s) for idle_s in devices}


@dataclass(frozen=True)
class IdlePower(PowerTest):
    def needs(self) -> tuple[Need, ...]:
        return (Need.IDLE_POWER,)

    def steps(self, scale: Scale, capacity: int) -> list[Step]:
        return [purge(capacity)]

    def run_seconds(self, scale: Scale) -> float:
        return 2 * scale.runtime(IDLE_POWER_S)  # APST off, then on

    def run(self, run: TestRun) -> dict[str, Any]:
        seconds = run.scale.runtime(IDLE_POWER_S)
        found: dict[str, Any] = {"seconds": seconds}
        try:
            with run.apst_off():
                found["active_idle_w"] = run.idle_power_w(seconds, f"idle {seconds:g} s (APST off)")
        except ApstUnavailable as exc:
            run.telemetry.note(f"no active-idle power (APST off): {exc}")
        found["idle_w"] = run.idle_power_w(seconds, f"idle {seconds:g} s (APST on)")
        return found

    def result(self, found: dict[str, Any], measured: Measured, throttles: Throttles) -> dict[str, Any]:
        if found["idle_w"] is None:
            raise SsdlabError("the power meter gave no figure while the drive idled: see the telemetry notes")
        active = found.get("active_idle_w")
        return _score(self.primary_score, round(found["idle_w"] * 1000, 1), "mW",
                      active_idle_mw=None if active is None else round(active * 1000, 1), seconds=found["seconds"])


@dataclass(frozen=True)
class ThermalSoak(PowerTest):
    def needs(self) -> tuple[Need, ...]:
        return (Need.TEMPERATURE,)

    def steps(self, scale: Scale, capacity: int) -> list[Step]:
        seconds = scale.runtime(SOAK_S)
        return [purge(capacity),
                Step(label=f"write {seconds:g} s", rw=Op.WRITE, bs=PRECONDITION_BS, iodepth=PRECONDITION_QD,
                     size=scale.whole_drive(capacity), runtime=seconds, time_based=True)]

    def result(self, found: dict[str, Any], measured: Measured, throttles: Throttles) -> dict[str, Any]:
        (_, written), = measured
        events = sorted((e for found_events in throttles.values() for e in found_events), key=lambda e: e.start_s)
        first = events[0] if events else None
        until = [p.mbps for p in written.per_second if first is None or p.t_s <= first.start_s]
        return _score(self.primary_score, round(written.mbps, 2), "MB/s", throttle_events=len(events),
                      seconds_to_first_throttle=first.start_s if first else None,
                      gb_before_first_throttle=round(sum(until) * MB / 1e9, 3) if first else None,
                      throttled_mbps=round(first.mbps_during, 2) if first else None)


@dataclass(frozen=True)
class Health(PowerTest):
    def needs(self) -> tuple[Need, ...]:
        return (Need.HEALTH,)

    def run(self, run: TestRun) -> dict[str, Any]:
        doc = health_document(TestHealth(before=run.run_health_before(), after=run.telemetry.health()))
        return {"before_after": health_rows(doc), "alarms": doc["alarms"]}

    def result(self, found: dict[str, Any], measured: Measured, throttles: Throttles) -> dict[str, Any]:
        return _score(self.primary_score, len(found["alarms"]), "alarms", **found)


POWER_TESTS = (
    PowerStates(id="power-states", title="Advertised power states, APST and thermal thresholds",
                primary_score="power states advertised"),
    IdleWake(id="idle-wake", title="Wake-up latency after 0.01 to 30 s idle, 4 KiB QD1 random read",
             primary_score="wake-up latency after 30 s idle, host APST policy"),
    IdlePower(id="idle-power", title="Power in idle (APST on) and active idle (APST off)",
              primary_score="idle power with APST on"),
    ThermalSoak(id="thermal-soak", title="128 KiB QD32 sequential write for 20 minutes, temperature beside it",
                primary_score="mean MB/s over the soak"),
    Health(id="health", title="Health log before the run and after its tests",
           primary_score="health alarms over the run"),
)
