"""Which telemetry a target has, decided once before a run: nvme-cli, else smartctl, for
the health log and identify data, and the kernel's hwmon chip for a cheap temperature.

Each source is tried once (Identify Controller, or one smartctl report), since being
installed is not enough: both need root to open the device. Every missing source
leaves a short sentence in `reasons`, which the caller prints as one note.

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
from ssdlab.telemetry.nvme import NvmeCli, controller_node, latency_tolerance_file
from ssdlab.telemetry.records import ControllerInfo, HealthLog
from ssdlab.telemetry.simulated import CONTROLLER, SimulatedNvme
from ssdlab.telemetry.smartctl import Smartctl, SmartctlReport

T = TypeVar("T")

SIMULATOR = "simulator"  # the temperature source of a simulated drive


@dataclass(frozen=True)
class Telemetry:
    """The sources a target has; `health` and `temperature_c` read the drive each call."""

    nvme: NvmeCli | None = None
    smartctl: Smartctl | None = None
    hwmon_chip: Path | None = None
    controller_info: ControllerInfo | None = None  # read once by the probe
    apst_switch: Path | None = None  # the controller's live APST switch, when the kernel has one
    simulated: bool = False  # a simulated drive: virtual time, a temperature with each step's result
    reasons: tuple[str, ...] = ()

    @property
    def available(self) -> bool:
        return any(source is not None for source in (self.nvme, self.smartctl, self.hwmon_chip))

    def health(self) -> HealthLog | None:
        if self.nvme is not None:
            return self.nvme.smart_log()
        if self.smartctl is not None:
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
        if self.hwmon_chip is not None:
            return "hwmon"
        return "nvme-cli" if self.nvme is not None else "smartctl" if self.smartctl is not None else None

    @property
    def temperature_each_second(self) -> bool:
        """Is there a temperature for every second of a step? Not through smartctl (see
        during_run)."""
        return self.temperature_source in ("hwmon", "nvme-cli", SIMULATOR)

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
        return Telemetry(smartctl=found[0] if found else None, reasons=tuple(reasons))
    return Telemetry(reasons=(f"{target.path} is not an NVMe or SATA device",))


def _nvme(controller: str, commands: Commands, sys_root: Path) -> Telemetry:
    reasons: list[str] = []
    chip = find_nvme_chip(controller, sys_root)
    if chip is None:
        reasons.append(f"{controller} has no hwmon temperature sensor (Linux 5.5 or later has one)")
    nvme = NvmeCli(controller, commands) if _installed("nvme", "nvme-cli", commands, reasons) else None
    info = attempt(nvme.id_ctrl, reasons) if nvme else None
    if info is not None:
        switch = latency_tolerance_file(controller, sys_root)
        return Telemetry(nvme=nvme, hwmon_chip=chip, controller_info=info, reasons=tuple(reasons),
                         apst_switch=switch if switch.exists() else None)
    found = _smartctl(controller, commands, reasons)
    return Telemetry(smartctl=found[0] if found else None, hwmon_chip=chip,
                     controller_info=found[1].controller if found else None, reasons=tuple(reasons))


def _simulated(commands: SimulatedNvme) -> Telemetry:
    reasons: list[str] = []
    nvme = NvmeCli(CONTROLLER, commands)
    found = Telemetry(nvme=nvme, controller_info=attempt(nvme.id_ctrl, reasons), simulated=True)
    if found.controller_info is not None and found.temperature_source is None:
        reasons.append("the preset has no thermal model: no temperature")
    return replace(found, reasons=tuple(reasons))


def _smartctl(device: str, commands: Commands, reasons: list[str]) -> tuple[Smartctl, SmartctlReport] | None:
    if not _installed("smartctl", "smartctl", commands, reasons):
        return None
    smartctl = Smartctl(device, commands)
    report = attempt(smartctl.report, reasons)
    return None if report is None else (smartctl, report)


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
