"""smartctl -j -a through ReplayCommands: NVMe (7.3, and 7.5 with power states) gives what
nvme-cli gives for the same drive; SATA maps what maps; exit status bits."""

import json

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.external import ReplayCommands
from ssdlab.telemetry.records import HealthLog
from ssdlab.telemetry.smartctl import Smartctl, parse_report
from tests.telemetry_data import SMARTCTL_NVME, SN850, SN850_HEALTH, golden, ok

# smartctl leaves the thermal-transition counters out of its JSON
SN850_SMARTCTL = SN850_HEALTH.model_copy(update=dict.fromkeys(
    ("tmt1_transitions", "tmt2_transitions", "tmt1_time_s", "tmt2_time_s")))


@pytest.mark.parametrize("version", ["7.3", "7.5"])
def test_nvme_health_matches_nvme_cli(version):
    report = parse_report(golden(f"smartctl-{version}-nvme-sn850.json"))
    assert report.protocol == "NVMe" and report.health == SN850_SMARTCTL


def test_smartctl_75_gives_the_power_states_nvme_cli_gives():
    ctrl = parse_report(golden("smartctl-7.5-nvme-sn850.json")).controller
    assert ctrl.power_states == SN850.power_states
    assert (ctrl.model, ctrl.serial, ctrl.firmware) == (SN850.model, SN850.serial, SN850.firmware)
    assert (ctrl.wctemp_c, ctrl.cctemp_c) == (84, 88)
    assert (ctrl.hctma, ctrl.apsta, ctrl.rtd3_resume_us) == (None, None, None)  # not in smartctl's JSON


def test_smartctl_73_has_no_power_states_nor_thresholds():
    ctrl = parse_report(golden("smartctl-7.3-nvme-sn850.json")).controller
    assert ctrl.power_states == () and ctrl.wctemp_c is None and ctrl.model == SN850.model


def test_counters_past_2_to_the_53_come_from_their_strings():
    doc = json.loads(golden("smartctl-7.5-nvme-sn850.json"))
    big = (1 << 60) + 1
    doc["nvme_smart_health_information_log"] |= {"data_units_written": float(big), "data_units_written_s": str(big)}
    assert parse_report(json.dumps(doc)).health.host_written_bytes == big * 512_000


def test_sensor_gaps_and_missing_temperature():
    doc = json.loads(golden("smartctl-7.3-nvme-sn850.json"))
    log = doc["nvme_smart_health_information_log"]
    del log["temperature"]
    log["temperature_sensors"] = [None, 51]
    health = parse_report(json.dumps(doc)).health
    assert health.temperature_c is None and health.sensor_temperatures_c == ((2, 51),)


def test_sata_maps_what_its_attribute_names_say():
    report = parse_report(golden("smartctl-7.3-sata-mx500.json"))
    assert report.protocol == "ATA" and report.controller is None
    assert report.health == HealthLog(temperature_c=33, power_on_hours=9123, power_cycles=845, unsafe_shutdowns=41,
                                      media_errors=2, host_written_bytes=31457280000 * 512)


def test_sata_without_attributes_still_gives_temperature():
    doc = json.loads(golden("smartctl-7.3-sata-mx500.json"))
    del doc["ata_smart_attributes"]
    assert parse_report(json.dumps(doc)).health == HealthLog(temperature_c=33, power_on_hours=9123, power_cycles=845)


def test_exit_status_bits_above_1_still_give_a_report():
    """64: the error log has entries; the JSON is whole."""
    commands = ReplayCommands({SMARTCTL_NVME: ok(golden("smartctl-7.3-nvme-sn850.json"), returncode=64)})
    assert Smartctl("/dev/nvme0", commands).report().health == SN850_SMARTCTL
    assert commands.calls == [("smartctl", "-j", "-a", "/dev/nvme0")]


def test_failed_open_says_smartctls_message():
    out = json.dumps({"smartctl": {"version": [7, 3], "exit_status": 2, "messages": [
        {"string": "Smartctl open device: /dev/nvme0 failed: Permission denied", "severity": "error"}]}})
    commands = ReplayCommands({SMARTCTL_NVME: ok(out, returncode=2)})
    with pytest.raises(SsdlabError, match=r"`smartctl -j -a /dev/nvme0` failed \(exit status 2\): Smartctl open "
                                          r"device: /dev/nvme0 failed: Permission denied"):
        Smartctl("/dev/nvme0", commands).report()


def test_scsi_devices_are_refused_with_a_reason():
    doc = json.loads(golden("smartctl-7.3-sata-mx500.json"))
    doc["device"]["protocol"] = "SCSI"
    with pytest.raises(SsdlabError, match="reports a SCSI device"):
        parse_report(json.dumps(doc), "smartctl -j -a /dev/sdb")


@pytest.mark.parametrize("path, value, field", [
    (("nvme_smart_health_information_log", "available_spare"), "full",
     "nvme_smart_health_information_log.available_spare"),
    (("nvme_power_states",), {"max": 1}, "nvme_power_states"),
    (("device",), None, "device"),
    (("nvme_power_states", 3, "non_operational_state"), 1, r"nvme_power_states\[3\].non_operational_state"),
])
def test_bad_fields_are_named(path, value, field):
    doc = json.loads(golden("smartctl-7.5-nvme-sn850.json"))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(SsdlabError, match=rf"`{SMARTCTL_NVME}`: field `{field}`"):
        parse_report(json.dumps(doc), SMARTCTL_NVME)
