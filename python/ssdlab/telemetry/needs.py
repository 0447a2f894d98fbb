"""What a test needs from its target beyond I/O (the power suite's tests), and why a target
lacks it: the seam through which a simulated drive's telemetry will come (a later issue)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from ssdlab.telemetry.probe import Telemetry


class Need(StrEnum):
    NVME = "nvme"                # Identify Controller and the features, through nvme-cli
    HEALTH = "health"            # a health log, before and after
    TEMPERATURE = "temperature"  # a temperature read beside the steps
    POWER_METER = "power meter"  # --power-meter
    WALL_CLOCK = "wall clock"    # idle in real time, I/O through fio


def missing(needs: Iterable[Need], telemetry: Telemetry, has_meter: bool, engine: str) -> str | None:
    """Why the target cannot give what `needs` asks, or None when it can."""
    why = "; ".join(telemetry.reasons) or "nothing reported it"
    for need in needs:
        if need is Need.WALL_CLOCK and engine != "fio":
            return "the simulator does not model idle wake-up through ssdlab yet: it needs a real target"
        if need is Need.NVME and telemetry.nvme is None:
            return f"it reads the drive's power states through nvme-cli, which this target has not ({why})"
        if need is Need.HEALTH and telemetry.nvme is None and telemetry.smartctl is None:
            return f"it needs the drive's health log, which this target has not ({why})"
        if need is Need.TEMPERATURE and telemetry.temperature_source not in ("hwmon", "nvme-cli"):
            return f"it needs the drive's temperature each second, which this target has not ({why})"
        if need is Need.POWER_METER and not has_meter:
            return "it cannot run without a power meter: give one with --power-meter"
    return None
