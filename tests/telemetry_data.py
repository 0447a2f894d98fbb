"""The golden telemetry outputs (tests/golden/telemetry, see its README) and the records they
must give, and a fake hwmon chip: shared by the tests of the readers and of the probe."""

from __future__ import annotations

import json

from ssdlab.external import Completed
from ssdlab.telemetry.records import ControllerInfo, HealthLog, PowerState
from tests import paths

GOLDEN = paths.GOLDEN / "telemetry"
DATA_UNIT = 512_000

ID_CTRL = "nvme id-ctrl /dev/nvme0 -o json"
SMART_LOG = "nvme smart-log /dev/nvme0 -o json"
SMARTCTL_NVME = "smartctl -j -a /dev/nvme0"


def golden(name: str) -> str:
    return (GOLDEN / name).read_text()


def ok(stdout: str, returncode: int = 0) -> Completed:
    return Completed((), returncode, stdout, "")


def ps(index, max_w, entry=0, exit_=0, *, idle=None, active=None, operational=True) -> PowerState:
    return PowerState(index=index, max_power_w=max_w, entry_latency_us=entry, exit_latency_us=exit_,
                      idle_power_w=idle, active_power_w=active, operational=operational)


SN850_STATES = (ps(0, 9.00, idle=0.63, active=9.00), ps(1, 4.10, idle=0.63, active=4.10),
                ps(2, 3.50, idle=0.63, active=3.50), ps(3, 0.025, 5000, 10000, operational=False),
                ps(4, 0.005, 5000, 45000, operational=False))

SN850 = ControllerInfo(model="WDS100T1X0E-00AFY0", serial="21050A800123", firmware="614900WD",
                       wctemp_c=84, cctemp_c=88, mntmt_c=0, mxtmt_c=84, hctma=True, apsta=True,
                       rtd3_resume_us=500_000, rtd3_entry_us=1_000_000, power_states=SN850_STATES)

SN850_HEALTH = HealthLog(
    temperature_c=38, sensor_temperatures_c=((1, 45), (2, 38)), critical_warning=0,
    available_spare_pct=100, spare_threshold_pct=10, percentage_used=1,
    host_read_bytes=23456789 * DATA_UNIT, host_written_bytes=34567890 * DATA_UNIT,
    host_read_commands=412345678, host_write_commands=567891234, controller_busy_minutes=1234,
    power_cycles=312, power_on_hours=1893, unsafe_shutdowns=27, media_errors=0, error_log_entries=3,
    warning_temp_minutes=0, critical_temp_minutes=0,
    tmt1_transitions=4, tmt2_transitions=1, tmt1_time_s=212, tmt2_time_s=9)

# 311 K composite, sensors at 318 K and 311 K, thresholds WCTEMP and CCTEMP (357 K, 361 K) and an
# under-threshold of 273 K, as a current kernel shows them: millidegrees, K - 273.15.
CHIP = {"temp1_input": "37850", "temp1_label": "Composite", "temp1_max": "83850", "temp1_min": "-150",
        "temp1_crit": "87850", "temp1_alarm": "0", "temp2_input": "44850", "temp2_label": "Sensor 1",
        "temp3_input": "37850", "temp3_label": "Sensor 2"}


def smart_log(**changes: int) -> str:
    """The nvme-cli 2.3 health log of the SN850 with some counters changed, as nvme-cli prints it."""
    doc = json.loads(golden("nvme-2.3-smart-log-sn850.json"))
    assert set(changes) <= set(doc), "only fields nvme-cli prints"
    return json.dumps({**doc, **changes}, separators=(",", ":"))
