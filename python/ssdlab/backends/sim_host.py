"""The host a simulated drive runs on: what a real drive gets from the machine it is in
(the kernel's APST latency limit, whether the platform reaches the drive's low power
states, how the drive is cooled and the air around it) and a simulated one from the run's
options (`ssdlab run sim:PRESET --apst-latency-us ...`). It is stored with the run, so
that a resumed run rebuilds the very same drive.

Cooling and ambient temperature belong to the simulator's thermal model; they are given
to the simulator only when set (else its defaults: a heatsink, 35 °C).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ssdlab.errors import SsdlabError, validation_problems

LINUX_APST_LATENCY_US = 100_000  # nvme_core.default_ps_max_latency_us (TELEMETRY.md)
# The most a preset's exit latency may be (crates/ssdsim bounds::POWER_LATENCY_US): a
# larger limit lets the drive use every state, as this one does.
MAX_APST_LATENCY_US = 10_000_000
# The air around a drive (crates/ssdsim bounds::AMBIENT_C): an M.2 drive's operating range.
MIN_AMBIENT_C, MAX_AMBIENT_C = -40.0, 85.0

THERMAL_OPTIONS = ("cooling", "ambient_c")  # the Drive's keyword arguments of the thermal model


class Cooling(StrEnum):
    BARE = "bare"          # a bare M.2 board in a case with little airflow
    HEATSINK = "heatsink"
    FAN = "fan"            # a heatsink in a fan's airflow


class SimHost(BaseModel):
    """The host of a simulated drive; None where the simulator's default applies."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    apst_latency_us: int = Field(default=LINUX_APST_LATENCY_US, ge=0, le=MAX_APST_LATENCY_US,
                                 description="APST uses no state with a longer exit latency; 0 turns APST off")
    low_power_states: bool = Field(default=True, description="False: a platform on which the drive cannot reach "
                                                             "its non-operational states (no PCIe L1.2)")
    cooling: Cooling | None = None
    ambient_c: float | None = Field(default=None, ge=MIN_AMBIENT_C, le=MAX_AMBIENT_C)

    @classmethod
    def parse(cls, values: dict, where: str) -> SimHost:
        try:
            return cls(**values)
        except ValidationError as exc:
            raise SsdlabError(f"{where}: {validation_problems(exc)}") from None

    def drive_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of `_ssdsim.Drive` for this host."""
        thermal = {name: getattr(self, name) for name in THERMAL_OPTIONS if getattr(self, name) is not None}
        return {"apst_max_latency_us": self.apst_latency_us, "low_power_states": self.low_power_states,
                **{name: str(value) if name == "cooling" else value for name, value in thermal.items()}}


DEFAULT_HOST = SimHost()  # Linux's defaults on a platform that reaches every state

