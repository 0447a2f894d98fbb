"""An NVMe drive's temperatures through the kernel's hwmon chip named `nvme` (Linux 5.5+).

Cheaper than nvme-cli (no program to start), but not free: **every read of a `*_input`
file sends a Get Log Page to the drive**, which may wake it, so no reads inside an idle
window whose wake-up is being measured.

The kernel converts the drive's kelvin as K - 273.15 (K - 273 on the first kernels), so
hwmon reads 0.15 °C below the health log's whole degrees.
"""

from __future__ import annotations

from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.targets.sysfs import SYSFS
from ssdlab.telemetry.records import HwmonTemperatures

SENSORS = 8  # temp1 is the composite temperature, temp2..temp9 sensors 1..8


def find_nvme_chip(controller: str, sys_root: Path = SYSFS) -> Path | None:
    """The hwmon directory of a controller (/dev/nvme0 or nvme0): under the controller on
    current kernels, under its PCI device on the first kernels that had it."""
    base = sys_root / "class" / "nvme" / Path(controller).name
    for chip in sorted([*base.glob("hwmon*"), *base.glob("device/hwmon/hwmon*")]):
        if _read(chip / "name") == "nvme":
            return chip
    return None


def composite_c(chip: Path) -> float | None:
    """The composite temperature in °C; None when the drive does not answer."""
    return _millidegrees(chip / "temp1_input")


def read_temperatures(chip: Path) -> HwmonTemperatures:
    sensors = ((n, _millidegrees(chip / f"temp{n + 1}_input")) for n in range(1, SENSORS + 1))
    alarm = _read(chip / "temp1_alarm")
    return HwmonTemperatures(composite_c=composite_c(chip),
                             sensors_c=tuple((n, c) for n, c in sensors if c is not None),
                             max_c=_millidegrees(chip / "temp1_max"), min_c=_millidegrees(chip / "temp1_min"),
                             crit_c=_millidegrees(chip / "temp1_crit"),
                             alarm=None if alarm is None else alarm == "1")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:  # absent (a sensor the drive lacks) or the drive did not answer
        return None


def _millidegrees(path: Path) -> float | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return int(text) / 1000
    except ValueError:
        raise SsdlabError(f"{path} holds {text[:20]!r}, not millidegrees Celsius") from None
