"""Health through smartmontools: `smartctl -j -a DEV`, for NVMe and SATA drives.

smartctl converts temperatures to °C itself. For NVMe it gives the health log but not
the thermal-transition counters, and from 7.5 on the power states and composite
thresholds too (7.3, in Debian 12, has neither). A counter above 2^53 also comes as a
`KEY_s` string, which is read in preference. A SATA drive's vendor attributes map onto
the health log only where smartctl's drive database names their unit; the rest is None.
A drive the database does not know gets default names whatever it counts (`Total_LBAs_Written`
for a 241 that counts GiB): those are left out, with a note, rather than misread.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands, Completed
from ssdlab.telemetry.nvme import DATA_UNIT_BYTES
from ssdlab.telemetry.output import TIMEOUT_S, Json, build, failure
from ssdlab.telemetry.records import ControllerInfo, HealthLog, PowerState
from ssdlab.units import GB, GiB, MiB

# Exit status bits 0-1: the command line or opening the device failed. The higher bits
# report what smartctl found (a failing drive, errors in its logs): the JSON is still whole.
_FATAL_EXIT = 0b11
_PER_LOGICAL_BLOCK = 0  # the attribute counts logical blocks

# ATA attributes by the name smartctl gives them: (HealthLog field, bytes per unit counted)
_ATA_ATTRIBUTES = {
    "Total_LBAs_Written": ("host_written_bytes", _PER_LOGICAL_BLOCK),
    "Total_LBAs_Read": ("host_read_bytes", _PER_LOGICAL_BLOCK),
    "Host_Writes_32MiB": ("host_written_bytes", 32 * MiB),
    "Host_Reads_32MiB": ("host_read_bytes", 32 * MiB),
    **{f"{prefix}_Writes_GiB": ("host_written_bytes", GiB) for prefix in ("Host", "Lifetime", "Total")},
    **{f"{prefix}_Reads_GiB": ("host_read_bytes", GiB) for prefix in ("Host", "Lifetime", "Total")},
    "Total_Writes_GB": ("host_written_bytes", GB),  # SK hynix SC31x: "~GB, not GiB", says the database
    "Total_Reads_GB": ("host_read_bytes", GB),
    # what the drive wrote to flash, beside the host's writes (so the health log gives write amplification)
    **{name: ("nand_written_bytes", GiB) for name in ("NAND_Writes_1GiB", "Flash_Writes_GiB", "Total_NAND_Writes_GiB")},
    **{name: ("nand_written_bytes", 32 * MiB) for name in ("NAND_Writes_32MiB", "Flash_Writes_32MiB")},
    "Reported_Uncorrect": ("media_errors", 1),
    "Uncorrectable_Error_Cnt": ("media_errors", 1),  # Samsung
    "Unexpect_Power_Loss_Ct": ("unsafe_shutdowns", 1),
    "Unsafe_Shutdown_Count": ("unsafe_shutdowns", 1),
    "POR_Recovery_Count": ("unsafe_shutdowns", 1),  # Samsung
}
# The names smartctl's default table gives attributes 241 and 242 of a drive its database
# does not know: their unit is the drive's own (logical blocks, 32 MiB, GiB of host or of
# NAND writes), so they count only for a drive in the database.
_DEFAULT_NAMES = {"Total_LBAs_Written", "Total_LBAs_Read"}


@dataclass(frozen=True)
class SmartctlReport:
    protocol: str                       # "NVMe" or "ATA"
    health: HealthLog
    controller: ControllerInfo | None   # NVMe only
    notes: tuple[str, ...] = ()         # what was left out, and why


class Smartctl:
    """smartctl on one device (the controller node, /dev/nvme0, for NVMe); read-only."""

    def __init__(self, device: str | Path, commands: Commands) -> None:
        self.argv = ["smartctl", "-j", "-a", str(device)]
        self.commands = commands

    def report(self) -> SmartctlReport:
        done = self.commands.run(self.argv, timeout=TIMEOUT_S)
        if done.returncode & _FATAL_EXIT or done.returncode < 0:
            raise failure(self.argv, done, _messages(done))
        return parse_report(done.stdout, " ".join(self.argv))


def parse_report(text: str, command: str = "smartctl -j -a") -> SmartctlReport:
    doc = Json.parse(text, command)
    protocol = doc.child("device").text("protocol")
    if protocol == "NVMe":
        return SmartctlReport(protocol, _nvme_health(doc), _nvme_controller(doc))
    if protocol == "ATA":
        return _ata_report(doc)
    raise SsdlabError(f"`{command}` reports a {protocol} device: ssdlab reads the health of NVMe and SATA drives")


def _messages(done: Completed) -> str:
    """smartctl -j says why it failed in its JSON, not on stderr."""
    try:
        messages = json.loads(done.stdout)["smartctl"]["messages"]
        return "; ".join(str(m["string"]) for m in messages)
    except (ValueError, LookupError, TypeError):
        return done.stderr.strip()


def _counter(log: Json, key: str) -> int:
    return log.integer(f"{key}_s") if log.has(f"{key}_s") else log.integer(key)


def _nvme_health(doc: Json) -> HealthLog:
    if not doc.has("nvme_smart_health_information_log"):
        raise SsdlabError(f"`{doc.command}` printed no NVMe health log: `smartctl -a DEVICE` should show "
                          "\"SMART/Health Information\"; smartctl 7.0 or later is needed for its JSON")
    log = doc.child("nvme_smart_health_information_log")
    sensors = enumerate(log.optional_integers("temperature_sensors"), start=1)
    return build(HealthLog, doc.command,
                 temperature_c=log.optional_integer("temperature"),  # absent when the drive says 0 K
                 sensor_temperatures_c=tuple((n, t) for n, t in sensors if t is not None),
                 critical_warning=log.integer("critical_warning"),
                 available_spare_pct=log.integer("available_spare"),
                 spare_threshold_pct=log.integer("available_spare_threshold"),
                 percentage_used=log.integer("percentage_used"),
                 host_read_bytes=_counter(log, "data_units_read") * DATA_UNIT_BYTES,
                 host_written_bytes=_counter(log, "data_units_written") * DATA_UNIT_BYTES,
                 host_read_commands=_counter(log, "host_reads"),
                 host_write_commands=_counter(log, "host_writes"),
                 controller_busy_minutes=_counter(log, "controller_busy_time"),
                 power_cycles=_counter(log, "power_cycles"),
                 power_on_hours=_counter(log, "power_on_hours"),
                 unsafe_shutdowns=_counter(log, "unsafe_shutdowns"),
                 media_errors=_counter(log, "media_errors"),
                 error_log_entries=_counter(log, "num_err_log_entries"),
                 # left out when the drive has no such threshold and the time is 0
                 warning_temp_minutes=log.optional_integer("warning_temp_time"),
                 critical_temp_minutes=log.optional_integer("critical_comp_time"))


def _nvme_controller(doc: Json) -> ControllerInfo:
    thresholds = doc.optional_child("nvme_composite_temperature_threshold")  # 7.5+
    return build(ControllerInfo, doc.command,
                 model=doc.text("model_name"), serial=doc.text("serial_number"),
                 firmware=doc.text("firmware_version"),
                 wctemp_c=thresholds.optional_integer("warning") if thresholds else None,
                 cctemp_c=thresholds.optional_integer("critical") if thresholds else None,
                 power_states=tuple(_power_state(i, ps) for i, ps in enumerate(doc.children("nvme_power_states"))))


def _power_state(index: int, ps: Json) -> PowerState:
    return build(PowerState, ps.command, index=index, max_power_w=_watts(ps, "max_power"),
                 entry_latency_us=ps.integer("entry_latency_us"), exit_latency_us=ps.integer("exit_latency_us"),
                 idle_power_w=_watts(ps, "idle_power") if ps.has("idle_power") else None,
                 active_power_w=_watts(ps, "active_power") if ps.has("active_power") else None,
                 operational=not ps.flag("non_operational_state"))


def _watts(ps: Json, key: str) -> float | None:
    """{value, scale, units_per_watt}; a reserved scale comes without units_per_watt."""
    power = ps.child(key)
    units = power.optional_integer("units_per_watt")
    return power.integer("value") / units if units else None


def _ata_report(doc: Json) -> SmartctlReport:
    temperature, power_on = doc.optional_child("temperature"), doc.optional_child("power_on_time")
    attributes = doc.optional_child("ata_smart_attributes")
    if attributes is None and temperature is None and power_on is None:
        raise SsdlabError(f"`{doc.command}` printed no health data (no SMART attributes, temperature nor "
                          "power-on time): is SMART off on this drive? `smartctl -s on DEVICE` turns it on")
    block = doc.optional_integer("logical_block_size") or 512
    known = doc.has("in_smartctl_database") and doc.flag("in_smartctl_database")
    mapped: dict[str, int] = {}
    unknown_units: list[str] = []
    for row in attributes.children("table") if attributes else []:
        name = row.text("name")
        field, unit = _ATA_ATTRIBUTES.get(name, (None, 0))
        if field is not None and name in _DEFAULT_NAMES and not known:
            unknown_units.append(f"{row.integer('id')} {name}")
        elif field is not None:
            mapped[field] = row.child("raw").integer("value") * (unit or block)
    notes = ()
    if unknown_units:
        model = doc.text("model_name") if doc.has("model_name") else "this drive"
        notes = (f"smartctl's drive database does not know {model}, so the unit of its attributes "
                 f"{', '.join(unknown_units)} is unknown: host data read and written are left out "
                 "(`update-smart-drivedb` brings the newest database)",)
    health = build(HealthLog, doc.command, **mapped,
                   temperature_c=temperature.optional_integer("current") if temperature else None,
                   power_on_hours=power_on.optional_integer("hours") if power_on else None,
                   power_cycles=doc.optional_integer("power_cycle_count"))
    return SmartctlReport("ATA", health, None, notes)
