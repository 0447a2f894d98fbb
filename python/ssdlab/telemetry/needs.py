"""What a test needs from its target beyond I/O (the power suite's tests, slc-retirement), and
why a target lacks it. A simulated drive has nvme-cli's answers from the simulator
(telemetry/simulated.py)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from ssdlab.model.steps import REAL_DRIVES_AGE
from ssdlab.telemetry.probe import Telemetry


class Need(StrEnum):
    NVME = "nvme"                # Identify Controller and the features, through nvme-cli
    HEALTH = "health"            # a health log, before and after
    TEMPERATURE = "temperature"  # a temperature read beside the steps
    IDLE_POWER = "idle power"    # the drive's power while it idles: a meter, or the simulator's own
    AGE = "age"                  # the simulator's age step: a worn drive as a state


def missing(needs: Iterable[Need], telemetry: Telemetry, has_meter: bool, engine: str) -> str | None:
    """Why the target cannot give what `needs` asks, or None when it can."""
    why = "; ".join(telemetry.reasons) or "nothing reported it"
    for need in needs:
        if need is Need.NVME and telemetry.nvme is None:
            return f"it reads the drive's power states through nvme-cli, which this target has not ({why})"
        if need is Need.HEALTH and telemetry.health_source is None:
            return f"it needs the drive's health log, which this target has not ({why})"
        if need is Need.TEMPERATURE and not telemetry.temperature_each_second:
            return f"it needs the drive's temperature each second, which this target has not ({why})"
        if need is Need.IDLE_POWER and engine == "fio" and not has_meter:
            return "it cannot run without a power meter: give one with --power-meter"
        if need is Need.AGE and engine != "sim":
            return f"it ages the drive as a state, which only a simulated drive can; {REAL_DRIVES_AGE}"
    return None
