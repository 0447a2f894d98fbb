"""What telemetry adds to a run's results, as stored: per test, the drive's health log before
and after it; per step, its temperature series and its energy (throttle events, decided when
the test ends, are stored beside them, see during_run)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ssdlab.errors import SsdlabError
from ssdlab.telemetry.health import HealthDelta, health_delta
from ssdlab.telemetry.meters import StepEnergy
from ssdlab.telemetry.records import HealthLog


class TemperatureSeries(BaseModel):
    """A step's temperature, second by second of its busy time (the seconds of its
    per-second throughput series); None for a second without a reading."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(description="hwmon, nvme-cli, smartctl or simulator")
    celsius: tuple[float | None, ...]
    transitions: tuple[int, ...] | None = Field(
        default=None, description="the drive's thermal-transition count (TMT1 + TMT2) at each of those seconds, "
                                  "where the source reads it with the temperature (the simulator)")

    @property
    def peak_c(self) -> float | None:
        return max((c for c in self.celsius if c is not None), default=None)


class StepTelemetry(BaseModel):
    """What was measured beside one step; None where nothing was."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: TemperatureSeries | None = None
    energy: StepEnergy | None = None
    health: HealthLog | None = Field(default=None, description="the health log read right after the step, where "
                                                               "its test asks (the endurance test's probes)")


class TestHealth(BaseModel):
    """The drive's health log before and after a test (after the failing step when it
    failed); None where it could not be read."""

    __test__: ClassVar[bool] = False  # not a pytest test class
    model_config = ConfigDict(frozen=True, extra="forbid")

    before: HealthLog | None = None
    after: HealthLog | None = None

    def delta(self) -> HealthDelta | None:
        """None without both logs; SsdlabError when they are not one drive's."""
        return None if self.before is None or self.after is None else health_delta(self.before, self.after)

    def alarms(self) -> list[str]:
        """What must be flagged loudly; two logs that are not one drive's are flagged too
        (the drive was replaced or reset during the test)."""
        try:
            delta = self.delta()
        except SsdlabError as exc:
            return [str(exc)]
        return delta.alarms() if delta else []

    @property
    def thermal_transitions_rose(self) -> bool:
        before, after = _transitions(self.before), _transitions(self.after)
        return before is not None and after is not None and after > before


def _transitions(log: HealthLog | None) -> int | None:
    """TMT1 plus TMT2 transitions; None when the log does not count them."""
    if log is None or log.tmt1_transitions is None and log.tmt2_transitions is None:
        return None
    return (log.tmt1_transitions or 0) + (log.tmt2_transitions or 0)
