"""What a drive reports about itself, converted once into the units its field names say.

Temperatures are whole degrees Celsius. Drives report whole kelvin, and °C = K − 273
(not 273.15), as the NVMe specification, nvme-cli and smartctl convert, so the numbers
here are the ones those tools print. Powers are watts, latencies microseconds, data
bytes. A field a source cannot give (a SATA drive has no NVMe spare threshold,
smartctl leaves out the thermal-transition counters) is None, never a made-up zero.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MIN_CELSIUS = -273

# NVMe SMART / Health log, Critical Warning (byte 0): bit -> (name, what it means)
CRITICAL_WARNINGS = {
    0: ("spare_below_threshold", "the available spare is below its threshold"),
    1: ("temperature_threshold", "a temperature is beyond its over- or under-temperature threshold"),
    2: ("reliability_degraded", "reliability is degraded by media errors or an internal error"),
    3: ("read_only", "the media has been made read-only"),
    4: ("volatile_backup_failed", "the volatile memory backup device has failed"),
    5: ("pmr_read_only", "the persistent memory region is read-only or unreliable"),
}


def critical_warnings(bits: int | None) -> tuple[tuple[str, str], ...]:
    """(name, meaning) of each critical-warning bit set."""
    return tuple(CRITICAL_WARNINGS.get(bit, (f"bit_{bit}", f"reserved bit {bit} is set"))
                 for bit in range(8) if (bits or 0) >> bit & 1)


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PowerState(_Record):
    """One power state as the drive declares it (declared maxima, not measurements)."""

    index: int = Field(ge=0, le=31)
    max_power_w: float = Field(ge=0)
    entry_latency_us: int = Field(ge=0)
    exit_latency_us: int = Field(ge=0)
    idle_power_w: float | None = Field(default=None, ge=0, description="typical over 30 s; None: not reported")
    active_power_w: float | None = Field(default=None, ge=0, description="largest 10 s average; None: not reported")
    operational: bool = Field(description="False: a non-operational (idle) state, left on the next command")


class ControllerInfo(_Record):
    """Identify Controller: thermal limits and power states. A threshold of 0 K (not
    reported) is None; smartctl gives no hctma, apsta nor RTD3 latencies (None)."""

    model: str
    serial: str
    firmware: str
    wctemp_c: int | None = Field(default=None, ge=MIN_CELSIUS, description="warning composite temperature")
    cctemp_c: int | None = Field(default=None, ge=MIN_CELSIUS, description="critical composite temperature")
    mntmt_c: int | None = Field(default=None, ge=MIN_CELSIUS, description="lowest TMT1/TMT2 the host may set")
    mxtmt_c: int | None = Field(default=None, ge=MIN_CELSIUS, description="highest TMT1/TMT2 the host may set")
    hctma: bool | None = Field(default=None, description="host-controlled thermal management supported")
    apsta: bool | None = Field(default=None, description="autonomous power state transitions supported")
    rtd3_resume_us: int | None = Field(default=None, ge=0)
    rtd3_entry_us: int | None = Field(default=None, ge=0)
    power_states: tuple[PowerState, ...] = ()


class HealthLog(_Record):
    """SMART / Health Information, NVMe log page 02h (or what smartctl maps of a SATA drive).

    Bytes read and written are the drive's data units (1000 x 512 bytes, rounded up by
    the drive) times 512000: exact to within one unit. `nand_written_bytes` is what the
    drive itself wrote to flash; the standard log does not say it, so it stays None
    unless a vendor log is read.
    """

    temperature_c: int | None = Field(default=None, ge=MIN_CELSIUS, description="composite temperature")
    sensor_temperatures_c: tuple[tuple[int, int], ...] = Field(
        default=(), description="(sensor number 1-8, °C) for each sensor the drive reports")
    critical_warning: int | None = Field(default=None, ge=0, le=255, description="bit field, see CRITICAL_WARNINGS")
    available_spare_pct: int | None = Field(default=None, ge=0, le=100)
    spare_threshold_pct: int | None = Field(default=None, ge=0, le=100)
    percentage_used: int | None = Field(default=None, ge=0, le=255, description="of rated endurance; may pass 100")
    host_read_bytes: int | None = Field(default=None, ge=0)
    host_written_bytes: int | None = Field(default=None, ge=0)
    nand_written_bytes: int | None = Field(default=None, ge=0)
    host_read_commands: int | None = Field(default=None, ge=0)
    host_write_commands: int | None = Field(default=None, ge=0)
    controller_busy_minutes: int | None = Field(default=None, ge=0)
    power_cycles: int | None = Field(default=None, ge=0)
    power_on_hours: int | None = Field(default=None, ge=0)
    unsafe_shutdowns: int | None = Field(default=None, ge=0)
    media_errors: int | None = Field(default=None, ge=0, description="unrecovered data integrity errors")
    error_log_entries: int | None = Field(default=None, ge=0)
    warning_temp_minutes: int | None = Field(default=None, ge=0, description="time above WCTEMP")
    critical_temp_minutes: int | None = Field(default=None, ge=0, description="time above CCTEMP")
    tmt1_transitions: int | None = Field(default=None, ge=0, description="entries into light throttling (TMT1)")
    tmt2_transitions: int | None = Field(default=None, ge=0, description="entries into heavy throttling (TMT2)")
    tmt1_time_s: int | None = Field(default=None, ge=0)
    tmt2_time_s: int | None = Field(default=None, ge=0)

    @property
    def critical_warnings(self) -> tuple[str, ...]:
        """Names of the critical-warning bits set (CRITICAL_WARNINGS; a reserved bit is `bit_N`)."""
        return tuple(name for name, _ in critical_warnings(self.critical_warning))


class ApstEntry(_Record):
    """In power state `from_state`, after `idle_ms` without commands, go to `target_state`."""

    from_state: int = Field(ge=0, le=31)
    idle_ms: int = Field(gt=0, lt=1 << 24)
    target_state: int = Field(ge=0, le=31)


class ApstFeature(_Record):
    """Feature 0Ch, Autonomous Power State Transition. Entries whose idle time is 0
    (no transition from that state) are left out."""

    enabled: bool
    entries: tuple[ApstEntry, ...] = ()


class VolatileWriteCache(_Record):
    """Feature 06h, Volatile Write Cache: WCE, bit 0 of the value."""

    enabled: bool


class PowerStateFeature(_Record):
    """Feature 02h, Power Management: the power state the host last set."""

    power_state: int = Field(ge=0, le=31)


class ThermalManagement(_Record):
    """Feature 10h, Host Controlled Thermal Management; None where the threshold is 0 (off)."""

    tmt1_c: int | None = Field(default=None, ge=MIN_CELSIUS, description="light throttling from here")
    tmt2_c: int | None = Field(default=None, ge=MIN_CELSIUS, description="heavy throttling from here")


class TemperatureThreshold(_Record):
    """Feature 04h, Temperature Threshold, as read without a sensor selection."""

    threshold_c: int = Field(ge=MIN_CELSIUS)
    sensor: int = Field(ge=0, le=15, description="0: the composite temperature, N: sensor N")
    under: bool = Field(description="an under-temperature threshold (else over)")


Feature = PowerStateFeature | ApstFeature | ThermalManagement | TemperatureThreshold | VolatileWriteCache


class Capabilities(_Record):
    """What Identify Controller says of the controller where ssdlab changes the drive: the
    volatile write cache (PTS enterprise turns it off) and sanitize (a purge), and whether the
    NVM subsystem, which a sanitize erases whole, can hold more than one namespace."""

    volatile_write_cache: bool = Field(description="VWC bit 0: a volatile write cache is present")
    sanitize_crypto_erase: bool = Field(description="SANICAP bit 0")
    sanitize_block_erase: bool = Field(description="SANICAP bit 1")
    sanitize_overwrite: bool = Field(description="SANICAP bit 2")
    max_namespaces: int = Field(ge=0, description="NN: the largest namespace id the subsystem may have")
    namespace_management: bool = Field(description="OACS bit 3: namespaces can be made and detached")
    multi_controller: bool = Field(description="CMIC bit 1: the subsystem may have other controllers")


class SanitizeLog(_Record):
    """Log page 81h, Sanitize Status: the state of the most recent sanitize (SSTAT bits 2:0,
    sanitize.py names them) and the drive's estimate of each action's time, seconds (None:
    not reported)."""

    status: int = Field(ge=0, le=7)
    block_erase_s: int | None = Field(default=None, ge=0)
    crypto_erase_s: int | None = Field(default=None, ge=0)


class HwmonTemperatures(_Record):
    """The kernel's nvme hwmon chip, in °C (it reports millidegrees)."""

    composite_c: float | None
    sensors_c: tuple[tuple[int, float], ...] = Field(default=(), description="(sensor number 1-8, °C)")
    max_c: float | None = Field(default=None, description="over-temperature threshold (feature 04h)")
    min_c: float | None = Field(default=None, description="under-temperature threshold (feature 04h)")
    crit_c: float | None = Field(default=None, description="CCTEMP")
    alarm: bool | None = Field(default=None, description="the temperature critical-warning bit")
