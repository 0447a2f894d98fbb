"""Which telemetry a target has, decided once before a run: nvme-cli, else smartctl, for
the health log and identify data, and the kernel's hwmon chip for a cheap temperature.

Each source is tried once, since being installed is not enough: both need root to open
the device, and a version may print what cannot be read. nvme-cli gives Identify Controller
and the features, and the health log when its smart-log reads; else smartctl gives the
health log (and Identify data when nvme-cli gave none). So a run knows before it starts
whether it has a health log. Every missing source leaves a short sentence in `reasons`,
which the caller prints as one note.

A simulated drive is read the same way, through nvme-cli's answers from the simulator
(telemetry/simulated.py); its temperature comes with each step's result, in drive time,
instead of from a sampler on the wall clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from ssdlab.errors import SsdlabError
from ssdlab.external import INSTALL_HINTS, Commands
from ssdlab.targets import Target, TargetKind, sysfs
from ssdlab.targets.sysfs import SYSFS
from ssdlab.telemetry.hwmon import composite_c, find_nvme_chip
from ssdlab.telemetry.nvme import NvmeCli, controller_node, latency_tolerance_file, read_version
from ssdlab.telemetry.records import ControllerInfo, HealthLog
from ssdlab.telemetry.simulated import CONTROLLER, SimulatedNvme
from ssdlab.telemetry.smartctl import Smartctl, SmartctlReport

T = TypeVar("T")

SIMULATOR = "simulator"  # the temperature source of a simulated drive
NVME_CLI, SMARTCTL = "nvme-cli", "smartctl"  # where a health log comes from


@dataclass(frozen=True)
class Telemetry:
    """The sources a target has; `health` and `temperature_c` read the drive each call."""

    nvme: NvmeCli | None = None
    smartctl: Smartctl | None = None
    health_source: str | None = None  # NVME_CLI or SMARTCTL: the one whose log the probe read
    hwmon_chip: Path | None = None
    controller_info: ControllerInfo | None = None  # read once by the probe
    apst_switch: Path | None = None  # the controller's live APST switch, when the kernel has one
    simulated: bool = False  # a simulated drive: virtual time, a temperature with each step's result
    reasons: tuple[str, ...] = ()

    @property
    def available(self) -> bool:
        return any(source is not None for source in (self.nvme, self.smartctl, self.hwmon_chip))

    def health(self) -> HealthLog | None:
        if self.health_source == NVME_CLI:
            return self.nvme.smart_log()
        if self.health_source == SMARTCTL:
            return self.smartctl.report().health
        return None

    def temperature_c(self) -> float | None:
        """hwmon when there is a chip (no program to start), else the health log."""
        if self.hwmon_chip is not None and (celsius := composite_c(self.hwmon_chip)) is not None:
            return celsius
        log = self.health()
        return None if log is None or log.temperature_c is None else float(log.temperature_c)

    @property
    def temperature_source(self) -> str | None:
        """Where temperature_c() reads: `hwmon`, else the program behind health(); for a
        simulated drive, the simulator when it has a thermal model (whose limits Identify
        Controller declares), else none."""
        if self.simulated:
            return SIMULATOR if self.controller_info and self.controller_info.wctemp_c is not None else None
        return "hwmon" if self.hwmon_chip is not None else self.health_source

    @property
    def temperature_each_second(self) -> bool:
        """Is there a temperature for every second of a step? Not through smartctl (see
        during_run)."""
        return self.temperature_source in ("hwmon", NVME_CLI, SIMULATOR)

    def controller(self) -> ControllerInfo | None:
        return self.controller_info


def probe(target: Target, commands: Commands, sys_root: Path = SYSFS) -> Telemetry:
    """`commands`: for a simulated target, the SimulatedNvme of its drive."""
    if target.kind is TargetKind.SIM:
        if not isinstance(commands, SimulatedNvme):
            raise TypeError("a simulated target is probed through its drive's SimulatedNvme")
        return _simulated(commands)
    if target.kind is TargetKind.FILE or target.path is None:
        return Telemetry(reasons=("a file target has no health log",))
    disk = sysfs.whole_disk(sysfs.kernel_name(target.path, sys_root), sys_root)
    if sysfs.is_nvme_namespace(disk):
        return _nvme(controller_node(disk), commands, sys_root)
    if re.fullmatch(r"sd[a-z]+", disk):  # SATA, or SAS and USB, which smartctl tells apart
        reasons: list[str] = []
        found = _smartctl(f"/dev/{disk}", commands, reasons)
        return _without_health(Telemetry(smartctl=found[0] if found else None,
                                         health_source=SMARTCTL if found else None), reasons)
    return Telemetry(reasons=(f"{target.path} is not an NVMe or SATA device",))


def _nvme(controller: str, commands: Commands, sys_root: Path) -> Telemetry:
    reasons: list[str] = []
    chip = find_nvme_chip(controller, sys_root)
    if chip is None:
        reasons.append(f"{controller} has no hwmon temperature sensor (Linux 5.5 or later has one)")
    nvme = NvmeCli(controller, commands, attempt(lambda: read_version(commands), reasons)) \
        if _installed("nvme", "nvme-cli", commands, reasons) else None
    info = attempt(nvme.id_ctrl, reasons) if nvme else None
    if info is None:
        nvme = None
    found = Telemetry(nvme=nvme, hwmon_chip=chip, controller_info=info)
    if nvme is not None:
        switch = latency_tolerance_file(controller, sys_root)
        found = replace(found, apst_switch=switch if switch.exists() else None)
        if attempt(nvme.smart_log, reasons) is not None:
            return replace(found, health_source=NVME_CLI, reasons=tuple(reasons))
    if smartctl := _smartctl(controller, commands, reasons):
        found = replace(found, smartctl=smartctl[0], health_source=SMARTCTL,
                        controller_info=info or smartctl[1].controller)
    return _without_health(found, reasons)


def _simulated(commands: SimulatedNvme) -> Telemetry:
    reasons: list[str] = []
    nvme = NvmeCli(CONTROLLER, commands, read_version(commands))
    found = Telemetry(nvme=nvme, controller_info=attempt(nvme.id_ctrl, reasons), simulated=True,
                      health_source=NVME_CLI if attempt(nvme.smart_log, reasons) else None)
    if found.controller_info is not None and found.temperature_source is None:
        reasons.append("the preset has no thermal model: no temperature")
    return _without_health(found, reasons)


def _without_health(found: Telemetry, reasons: list[str]) -> Telemetry:
    """`found` with its reasons, which say so when the drive answers but no health log was read."""
    if found.available and found.health_source is None:
        reasons.append("no health log, so no alarm for media errors, critical warnings or spare")
    return replace(found, reasons=tuple(reasons))


def _smartctl(device: str, commands: Commands, reasons: list[str]) -> tuple[Smartctl, SmartctlReport] | None:
    if not _installed("smartctl", "smartctl", commands, reasons):
        return None
    smartctl = Smartctl(device, commands)
    report = attempt(smartctl.report, reasons)
    if report is None:
        return None
    reasons.extend(report.notes)
    return smartctl, report


def _installed(program: str, name: str, commands: Commands, reasons: list[str]) -> bool:
    if commands.which(program) is None:
        reasons.append(f"{name} is not installed: {INSTALL_HINTS[program]}")
        return False
    return True


def attempt(read: Callable[[], T], reasons: list[str]) -> T | None:
    """What `read` gives; None when it fails, its SsdlabError's message added to `reasons`."""
    try:
        return read()
    except SsdlabError as exc:
        reasons.append(str(exc))
        return None
