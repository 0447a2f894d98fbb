"""NVMe telemetry through nvme-cli: Identify Controller, the SMART / Health log, and the
features that say how the drive manages power and heat.

Admin commands go to the controller node (/dev/nvme0), and every one here only reads, but
`set_feature`. The JSON of nvme-cli 1.x, 2.0, 2.1-2.5 and 2.6+ differ (see `_power_state`,
`_critical_warning` and output._COUNTER); all of them give the same records. The version
(`nvme version`, read once) settles the one layout the JSON alone does not tell apart.
The two settings ssdlab changes, APST on or off (through sysfs: `latency_tolerance_file`) and
the volatile write cache (`set_feature`), change only through drive_settings.py, the guard
that always writes the original back.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.targets.sysfs import SYSFS
from ssdlab.telemetry.output import TIMEOUT_S, Json, build, failure
from ssdlab.telemetry.records import (
    ApstEntry,
    ApstFeature,
    Capabilities,
    ControllerInfo,
    Feature,
    HealthLog,
    PowerState,
    PowerStateFeature,
    SanitizeLog,
    TemperatureThreshold,
    ThermalManagement,
    VolatileWriteCache,
)

DATA_UNIT_BYTES = 1000 * 512  # the health log counts data in thousands of 512-byte units

POWER_MANAGEMENT, TEMPERATURE_THRESHOLD, VOLATILE_WRITE_CACHE, APST, HOST_THERMAL_MANAGEMENT = (
    0x02, 0x04, 0x06, 0x0C, 0x10)
FEATURES = (POWER_MANAGEMENT, TEMPERATURE_THRESHOLD, VOLATILE_WRITE_CACHE, APST, HOST_THERMAL_MANAGEMENT)
SETTABLE = (VOLATILE_WRITE_CACHE,)  # the one feature ssdlab sets (drive_settings.py)

# nvme0 (a controller), nvme0n1 and nvme0n1p2 (namespace, partition), nvme0c1n1 (the hidden
# path of a multipath namespace, through controller nvme1).
_NODE = re.compile(r"nvme(\d+)(?:c(\d+))?(?:n\d+(?:p\d+)?)?")
# nvme-cli prints `%#0*x`, so a value of 0 has no 0x: "Current value:00000000"
_FEATURE_LINE = re.compile(r"^get-feature:\s*(?:0x)?([0-9a-f]{1,8}) \(.*\), \w+ value:\s*(?:0x)?([0-9a-f]{1,8})\s*$",
                           re.M | re.I)
_APST_ENTRY = re.compile(r"Entry\[\s*(\d{1,2})\]\s*\n\s*\.+\s*\n"
                         r"\s*Idle Time Prior to Transition \(ITPT\): (\d{1,10}) ms\s*\n"
                         r"\s*Idle Transition Power State\s+\(ITPS\): (\d{1,10})")
APST_ENTRIES = 32
# The sanitize log's status: "(2) Sanitize in Progress." (nvme-cli 1.x and 2.x)
_SANITIZE_STATUS = re.compile(r"\s*\((\d)\)")
NO_ESTIMATE = 0xFFFFFFFF  # a sanitize time the drive does not report; nvme-cli 2.0-2.3 print it as -1
_VERSION = re.compile(r"^nvme version (\d{1,3})\.(\d{1,3})", re.M)
# nvme-cli 2.11 and 2.12 (2.10 and 2.13+ with -H) print the critical warning as an object:
# its value and a member per bit
_WARNING_BITS = {"available_spare": 0, "temp_threshold": 1, "reliability_degraded": 2, "ro": 3,
                 "vmbu_failed": 4, "pmr_ro": 5}

Version = tuple[int, int]


def controller_node(device: str | Path) -> str:
    """The controller of an NVMe namespace or partition: /dev/nvme0n1p2 -> /dev/nvme0.
    Links (/dev/disk/by-id/...) are followed. With native multipath the number in
    nvme0n1 is the subsystem's, which on a single-port drive is usually its controller's."""
    name = Path(os.path.realpath(device)).name
    match = _NODE.fullmatch(name)
    if match is None:
        raise SsdlabError(f"{device} is not an NVMe device: give one such as /dev/nvme0n1")
    return f"/dev/nvme{match.group(2) or match.group(1)}"


def celsius(kelvin: int | None) -> int | None:
    """K - 273, as the NVMe specification and nvme-cli convert; 0 K means not reported."""
    return kelvin - 273 if kelvin else None


class NvmeCli:
    """nvme-cli on the controller of `device`; each method runs one admin command, read-only
    but for `set_feature`. `version`: nvme-cli's (`read_version`), None when it could not be
    told."""

    def __init__(self, device: str | Path, commands: Commands, version: Version | None = None) -> None:
        self.controller = controller_node(device)
        self.commands = commands
        self.version = version
        self._endurance_log = True  # asked until the drive refuses it once

    def id_ctrl(self) -> ControllerInfo:
        argv = ["nvme", "id-ctrl", self.controller, "-o", "json"]
        return parse_id_ctrl(self._run(argv), " ".join(argv), self.version)

    def capabilities(self) -> Capabilities:
        argv = ["nvme", "id-ctrl", self.controller, "-o", "json"]
        return parse_capabilities(self._run(argv), " ".join(argv))

    def smart_log(self) -> HealthLog:
        """The health log, with the NAND's writes from the Endurance Group log where the
        drive keeps one (so that write amplification shows)."""
        argv = ["nvme", "smart-log", self.controller, "-o", "json"]
        log = parse_smart_log(self._run(argv), " ".join(argv))
        written = self.media_written_bytes()
        return log if written is None else log.model_copy(update={"nand_written_bytes": written})

    def media_written_bytes(self) -> int | None:
        """Media Units Written of endurance group 1 (log page 09h), bytes; None where the
        drive (most client drives) or its nvme-cli does not give it: it is optional."""
        if not self._endurance_log:
            return None
        argv = ["nvme", "endurance-log", self.controller, "--group-id=1", "-o", "json"]
        done = self.commands.run(argv, timeout=TIMEOUT_S)
        try:
            if done.returncode == 0:
                return Json.parse(done.stdout, " ".join(argv)).integer("media_units_written") * DATA_UNIT_BYTES
        except SsdlabError:
            pass
        self._endurance_log = False
        return None

    def get_feature(self, fid: int) -> Feature:
        """Features 0x02, 0x04, 0x06, 0x0c and 0x10, decoded; -H prints the APST table."""
        argv = ["nvme", "get-feature", self.controller, "-f", f"0x{fid:02x}", "-H"]
        return parse_feature(fid, self._run(argv), " ".join(argv))

    def set_feature(self, fid: int, value: int) -> str:
        """Feature `fid` (one of SETTABLE) set to `value` until the next power cycle: never
        with --save, so the drive keeps its own saved setting. Only drive_settings.py calls
        it, which writes the original back. Returns the command that ran."""
        if fid not in SETTABLE or not 0 <= value <= 0xFFFFFFFF:
            raise ValueError(f"ssdlab does not set feature 0x{fid:02x} to {value}")
        # --value= spelled out: nvme-cli 2.10 made -v mean --verbose, and then sets 0 whatever follows
        argv = ["nvme", "set-feature", self.controller, "-f", f"0x{fid:02x}", f"--value={value}"]
        self._run(argv)
        return " ".join(argv)

    def _run(self, argv: list[str]) -> str:
        done = self.commands.run(argv, timeout=TIMEOUT_S)
        if done.returncode != 0:
            raise failure(argv, done)
        return done.stdout


def read_version(commands: Commands) -> Version | None:
    """nvme-cli's version, from `nvme version` ("nvme version 2.3 (git 2.3)"); None when it
    does not say."""
    done = commands.run(["nvme", "version"], timeout=TIMEOUT_S)
    match = _VERSION.search(done.stdout) if done.returncode == 0 else None
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def parse_id_ctrl(text: str, command: str = "nvme id-ctrl", version: Version | None = None) -> ControllerInfo:
    """`version`: nvme-cli's, which tells 2.0's power-state scales from 1.x's (None: 1.x)."""
    doc = Json.parse(text, command)
    hctma = doc.optional_integer("hctma")  # mntmt, mxtmt and hctma came with NVMe 1.3
    return build(ControllerInfo, command,
                 model=doc.text("mn"), serial=doc.text("sn"), firmware=doc.text("fr"),
                 wctemp_c=celsius(doc.integer("wctemp")), cctemp_c=celsius(doc.integer("cctemp")),
                 mntmt_c=celsius(doc.optional_integer("mntmt")), mxtmt_c=celsius(doc.optional_integer("mxtmt")),
                 hctma=None if hctma is None else bool(hctma & 1), apsta=bool(doc.integer("apsta") & 1),
                 rtd3_resume_us=doc.integer("rtd3r") or None, rtd3_entry_us=doc.integer("rtd3e") or None,
                 power_states=tuple(_power_state(i, psd, version) for i, psd in enumerate(doc.children("psds"))))


def _power_state(index: int, psd: Json, version: Version | None) -> PowerState:
    if psd.has("max_power_scale"):  # nvme-cli 2.6+
        max_scale, non_operational = psd.integer("max_power_scale"), psd.integer("non-operational_state")
    else:  # 1.x and 2.0-2.5: the descriptor's flags byte
        flags = psd.integer("flags")
        max_scale, non_operational = flags & 1, flags >> 1 & 1
    if psd.has("active_work_scale"):  # 1.x prints the raw bytes, the scale in bits 7:6; 2.0 the active one decoded
        idle_scale, active_scale = psd.integer("idle_scale") >> 6, psd.integer("active_work_scale")
        if version != (2, 0):
            active_scale >>= 6
    else:
        idle_scale, active_scale = psd.integer("idle_scale"), psd.integer("active_scale")
    return build(PowerState, psd.command, index=index,
                 max_power_w=psd.integer("max_power") / (10000 if max_scale & 1 else 100),
                 entry_latency_us=psd.integer("entry_lat"), exit_latency_us=psd.integer("exit_lat"),
                 idle_power_w=_scaled(psd.integer("idle_power"), idle_scale),
                 active_power_w=_scaled(psd.integer("active_power"), active_scale),
                 operational=not non_operational & 1)


def _scaled(value: int, scale: int) -> float | None:
    """Idle and active power: scale 1 counts 0.0001 W, 2 counts 0.01 W, 0 (and the
    reserved 3) means not reported."""
    units_per_watt = {1: 10000, 2: 100}.get(scale & 3)
    return None if units_per_watt is None else value / units_per_watt


def parse_capabilities(text: str, command: str = "nvme id-ctrl") -> Capabilities:
    """From `nvme id-ctrl -o json`, which every nvme-cli prints with these fields; a field
    left out counts as 0, as a simulated drive's Identify prints only the fields it has."""
    doc = Json.parse(text, command)

    def field(key: str) -> int:
        return doc.optional_integer(key) or 0

    sanicap = field("sanicap")
    return build(Capabilities, command, volatile_write_cache=bool(field("vwc") & 1),
                 sanitize_crypto_erase=bool(sanicap & 1), sanitize_block_erase=bool(sanicap >> 1 & 1),
                 sanitize_overwrite=bool(sanicap >> 2 & 1), max_namespaces=field("nn"),
                 namespace_management=bool(field("oacs") >> 3 & 1), multi_controller=bool(field("cmic") >> 1 & 1))


def parse_sanitize_log(text: str, command: str = "nvme sanitize-log") -> SanitizeLog:
    """`nvme sanitize-log DEV -o json`: the log under the device's name (`{"nvme0": {...}}`)
    or at the top; SSTAT an object whose status reads "(2) Sanitize in Progress." (one
    release printed that text as the key too), or the register itself."""
    doc = Json.parse(text, command)
    if not doc.has("sstat"):
        inner = [key for key in doc.data if doc.has_object(key)]
        if len(inner) != 1:
            raise doc.error("sstat", "is missing")
        doc = doc.child(inner[0])
    return build(SanitizeLog, command, status=_sanitize_status(doc),
                 block_erase_s=_sanitize_estimate(doc, "time_block_erase"),
                 crypto_erase_s=_sanitize_estimate(doc, "time_crypto_erase"))


def _sanitize_status(doc: Json) -> int:
    if not doc.has_object("sstat"):
        return doc.integer("sstat") & 7
    sstat = doc.child("sstat")
    named = sstat.data.get("status")
    texts = [named] if named is not None else list(sstat.data.values())
    for text in texts:
        if isinstance(text, str) and (match := _SANITIZE_STATUS.match(text)):
            return int(match.group(1))
    raise sstat.error("status", "is missing, or does not begin with the status number in brackets")


def _sanitize_estimate(doc: Json, key: str) -> int | None:
    seconds = doc.optional_integer(key)
    return None if seconds is None or seconds in (-1, NO_ESTIMATE) else seconds


def parse_smart_log(text: str, command: str = "nvme smart-log") -> HealthLog:
    doc = Json.parse(text, command)
    sensors = ((n, doc.optional_integer(f"temperature_sensor_{n}")) for n in range(1, 9))
    return build(HealthLog, command,
                 temperature_c=celsius(doc.integer("temperature")),
                 sensor_temperatures_c=tuple((n, k - 273) for n, k in sensors if k),
                 critical_warning=_critical_warning(doc),
                 available_spare_pct=doc.integer("avail_spare"),
                 spare_threshold_pct=doc.integer("spare_thresh"),
                 percentage_used=doc.integer("percent_used"),
                 host_read_bytes=doc.integer("data_units_read") * DATA_UNIT_BYTES,
                 host_written_bytes=doc.integer("data_units_written") * DATA_UNIT_BYTES,
                 host_read_commands=doc.integer("host_read_commands"),
                 host_write_commands=doc.integer("host_write_commands"),
                 controller_busy_minutes=doc.integer("controller_busy_time"),
                 power_cycles=doc.integer("power_cycles"),
                 power_on_hours=doc.integer("power_on_hours"),
                 unsafe_shutdowns=doc.integer("unsafe_shutdowns"),
                 media_errors=doc.integer("media_errors"),
                 error_log_entries=doc.integer("num_err_log_entries"),
                 warning_temp_minutes=doc.integer("warning_temp_time"),
                 critical_temp_minutes=doc.integer("critical_comp_time"),
                 tmt1_transitions=doc.optional_integer("thm_temp1_trans_count"),
                 tmt2_transitions=doc.optional_integer("thm_temp2_trans_count"),
                 tmt1_time_s=doc.optional_integer("thm_temp1_total_time"),
                 tmt2_time_s=doc.optional_integer("thm_temp2_total_time"))


def _critical_warning(doc: Json) -> int:
    """A number, or (nvme-cli 2.11, 2.12) an object: its value, else its named bits."""
    if not doc.has_object("critical_warning"):
        return doc.integer("critical_warning")
    warning = doc.child("critical_warning")
    named = {bit: warning.integer(name) for name, bit in _WARNING_BITS.items() if warning.has(name)}
    from_names = sum(1 << bit for bit, set_ in named.items() if set_)
    if not warning.has("value"):
        if not named:
            raise warning.error("value", "is missing, and so is every named bit")
        return from_names
    value = warning.integer("value")
    if any(value >> bit & 1 != bool(set_) for bit, set_ in named.items()):
        raise warning.error("value", f"is {value}, which its named bits contradict")
    return value


def parse_feature(fid: int, text: str, command: str = "nvme get-feature") -> Feature:
    """What `nvme get-feature DEV -f FID -H` prints, the same in nvme-cli 1.x and 2.x:
    `get-feature:0x0c (Autonomous Power State Transition), Current value:0x00000001`,
    and for APST the 32 entries of its table (for 0x06 a line `Volatile Write Cache
    Enable (WCE): Enabled`, which the value's bit 0 already says)."""
    if fid not in FEATURES:
        raise ValueError(f"feature 0x{fid:02x} is not one ssdlab decodes")
    match = _FEATURE_LINE.search(text)
    if match is None:
        raise SsdlabError(f"`{command}` printed no `get-feature:... value:...` line")
    if int(match.group(1), 16) != fid:
        raise SsdlabError(f"`{command}` answered for feature 0x{match.group(1)}, not 0x{fid:02x}")
    value = int(match.group(2), 16)
    if fid == POWER_MANAGEMENT:
        return PowerStateFeature(power_state=value & 0x1F)
    if fid == APST:
        return ApstFeature(enabled=bool(value & 1), entries=_apst_entries(text, command))
    if fid == VOLATILE_WRITE_CACHE:
        return VolatileWriteCache(enabled=bool(value & 1))
    if fid == HOST_THERMAL_MANAGEMENT:
        return ThermalManagement(tmt1_c=celsius(value >> 16), tmt2_c=celsius(value & 0xFFFF))
    # threshold in kelvin in bits 15:0, sensor in 19:16, 1 in bits 21:20 for an under-threshold
    return TemperatureThreshold(threshold_c=(value & 0xFFFF) - 273, sensor=value >> 16 & 0xF,
                                under=(value >> 20 & 3) == 1)


def _apst_entries(text: str, command: str) -> tuple[ApstEntry, ...]:
    rows = [tuple(map(int, row)) for row in _APST_ENTRY.findall(text)]
    if [row[0] for row in rows] != list(range(APST_ENTRIES)):
        raise SsdlabError(f"`{command}` did not print the {APST_ENTRIES} entries of the APST table")
    return tuple(build(ApstEntry, command, from_state=state, idle_ms=idle_ms, target_state=target)
                 for state, idle_ms, target in rows if idle_ms)


def latency_tolerance_file(controller: str, sys_root: Path = SYSFS) -> Path:
    """The live APST switch of a controller (/dev/nvme0 or nvme0): writing it makes the
    kernel rebuild the APST table at once; 0 turns APST off, `any` lifts the limit."""
    return sys_root / "class" / "nvme" / Path(controller).name / "power" / "pm_qos_latency_tolerance_us"


def read_latency_tolerance(switch: Path) -> str:
    """`auto` (no constraint set), `any`, or the tolerated wake-up latency in µs."""
    try:
        return switch.read_text().strip()
    except OSError as exc:
        raise SsdlabError(f"cannot read {switch} ({exc.strerror}): the kernel does not manage APST "
                          "for this controller") from None


def write_latency_tolerance(switch: Path, value: str) -> None:
    if re.fullmatch(r"\d+|any|auto", value) is None:
        raise ValueError(f"a latency tolerance is a number of µs, `any` or `auto`, not {value!r}")
    try:
        switch.write_text(value + "\n")
    except OSError as exc:
        hint = ": switching APST needs root" if isinstance(exc, PermissionError) else ""
        raise SsdlabError(f"cannot write {value} to {switch} ({exc.strerror}){hint}") from None
