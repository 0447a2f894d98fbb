"""Which telemetry a target has, on a fake sysfs tree with replayed tools; and the reasons
when it has none."""

import json
from pathlib import Path

import pytest

from ssdlab.external import Commands, Completed, ReplayCommands
from ssdlab.targets import Target, TargetKind
from ssdlab.telemetry.needs import Need, missing
from ssdlab.telemetry.probe import probe
from tests.fake_sysfs import FakeSysfs
from tests.telemetry_data import CHIP, ID_CTRL, SMART_LOG, SMARTCTL_NVME, SN850, SN850_HEALTH, golden, ok

NVME_CLI_MISSING = "nvme-cli is not installed: install nvme-cli with `apt-get install nvme-cli`"
SMARTCTL_MISSING = "smartctl is not installed: install smartmontools with `apt-get install smartmontools`"
NO_HWMON = "/dev/nvme0 has no hwmon temperature sensor (Linux 5.5 or later has one)"
NVME_CLI = {ID_CTRL: ok(golden("nvme-2.3-id-ctrl-sn850.json")), SMART_LOG: ok(golden("nvme-2.3-smart-log-sn850.json"))}


def device(path: str) -> Target:
    return Target(path, TargetKind.DEVICE, Path(path), 10**12)


@pytest.fixture
def sysfs(tmp_path):
    fake = FakeSysfs(tmp_path / "sys")
    fake.disk("nvme0n1", "259:0", 1953525168, controller="nvme0", bus="nvme")
    fake.partition("nvme0n1", "nvme0n1p1", "259:1", 1048576)
    fake.disk("sda", "8:0", 1953525168, controller="0:0:0:0", bus="scsi")
    fake.loop("loop0", "7:0", tmp_path / "disk.img", 131072)
    return fake


def test_nvme_with_nvme_cli_and_hwmon(sysfs):
    sysfs.nvme_controller("nvme0", hwmon=CHIP)
    commands = ReplayCommands(dict(NVME_CLI))
    telemetry = probe(device("/dev/nvme0n1p1"), commands, sysfs.root)
    assert telemetry.available and telemetry.reasons == () and telemetry.smartctl is None
    assert telemetry.controller() == SN850
    assert telemetry.temperature_c() == 37.85  # from hwmon: no program started
    endurance_log = ("nvme", "endurance-log", "/dev/nvme0", "--group-id=1", "-o", "json")  # refused: not recorded
    assert commands.calls == [("nvme", "version"), tuple(ID_CTRL.split()), tuple(SMART_LOG.split()), endurance_log]
    assert telemetry.health() == SN850_HEALTH and telemetry.health_source == "nvme-cli"


def test_without_hwmon_the_temperature_comes_from_the_health_log(sysfs):
    sysfs.nvme_controller("nvme0")
    commands = ReplayCommands(dict(NVME_CLI))
    telemetry = probe(device("/dev/nvme0n1"), commands, sysfs.root)
    assert telemetry.reasons == (NO_HWMON,)
    assert telemetry.temperature_c() == 38.0 and commands.calls[-1] == tuple(SMART_LOG.split())


def test_nvme_with_no_tools_and_no_hwmon_says_why(sysfs):
    telemetry = probe(device("/dev/nvme0n1"), ReplayCommands(), sysfs.root)
    assert not telemetry.available
    assert telemetry.reasons == (NO_HWMON, NVME_CLI_MISSING, SMARTCTL_MISSING)
    assert (telemetry.health(), telemetry.temperature_c(), telemetry.controller()) == (None, None, None)


def test_nvme_cli_without_root_falls_back_to_smartctl(sysfs):
    commands = ReplayCommands({ID_CTRL: Completed((), 1, "", "open: Permission denied"),
                               SMARTCTL_NVME: ok(golden("smartctl-7.5-nvme-sn850.json"))})
    telemetry = probe(device("/dev/nvme0n1"), commands, sysfs.root)
    assert telemetry.nvme is None and telemetry.smartctl is not None
    assert telemetry.reasons == (NO_HWMON, f"`{ID_CTRL}` failed (exit status 1): open: Permission denied")
    assert telemetry.controller().power_states == SN850.power_states
    assert telemetry.temperature_c() == 38.0


def test_sata_through_smartctl(sysfs):
    commands = ReplayCommands({"smartctl -j -a /dev/sda": ok(golden("smartctl-7.3-sata-mx500.json"))})
    telemetry = probe(device("/dev/sda"), commands, sysfs.root)
    assert telemetry.available and telemetry.controller() is None
    assert telemetry.health().power_on_hours == 9123 and telemetry.temperature_c() == 33.0


@pytest.mark.parametrize("target, reason", [
    (Target("/var/tmp/ssdlab.img", TargetKind.FILE, Path("/var/tmp/ssdlab.img"), 10**9),
     "a file target has no health log"),
    (device("/dev/loop0"), "/dev/loop0 is not an NVMe or SATA device"),
])
def test_targets_without_telemetry(sysfs, target, reason):
    commands = ReplayCommands(dict(NVME_CLI))
    telemetry = probe(target, commands, sysfs.root)
    assert not telemetry.available and telemetry.reasons == (reason,) and commands.calls == []


def test_sata_without_smartctl(sysfs):
    telemetry = probe(device("/dev/sda"), ReplayCommands(), sysfs.root)
    assert telemetry.reasons == (SMARTCTL_MISSING,)


GROUPED_LOG = golden("nvme-2.3-smart-log-sn850.json").replace('"23456789"', '"23,456,789"')
NO_HEALTH_LOG = "no health log, so no alarm for media errors, critical warnings or spare"


def test_a_health_log_nvme_cli_cannot_give_comes_from_smartctl(sysfs):
    """nvme-cli answers Identify but its health log cannot be read: smartctl's is, before the run."""
    sysfs.nvme_controller("nvme0", hwmon=CHIP)
    commands = ReplayCommands({ID_CTRL: ok(golden("nvme-2.3-id-ctrl-sn850.json")), SMART_LOG: ok(GROUPED_LOG),
                               SMARTCTL_NVME: ok(golden("smartctl-7.3-nvme-sn850.json"))})
    telemetry = probe(device("/dev/nvme0n1"), commands, sysfs.root)
    assert telemetry.nvme is not None and telemetry.controller() == SN850  # features still through nvme-cli
    assert telemetry.health_source == "smartctl" and telemetry.health().media_errors == 0
    (reason,) = telemetry.reasons
    assert reason.startswith(f"`{SMART_LOG}`: field `data_units_read` is '23,456,789': digits grouped")
    assert missing([Need.HEALTH], telemetry, False, "fio") is None


def test_no_health_log_is_said_before_the_run_and_the_health_test_cannot_run(sysfs):
    sysfs.nvme_controller("nvme0", hwmon=CHIP)
    commands = ReplayCommands({ID_CTRL: ok(golden("nvme-2.3-id-ctrl-sn850.json")), SMART_LOG: ok(GROUPED_LOG)})
    telemetry = probe(device("/dev/nvme0n1"), commands, sysfs.root)
    assert telemetry.available and telemetry.health_source is None and telemetry.health() is None
    assert telemetry.reasons[1:] == (SMARTCTL_MISSING, NO_HEALTH_LOG)
    assert missing([Need.HEALTH], telemetry, False, "fio").startswith("it needs the drive's health log")
    assert telemetry.temperature_source == "hwmon"  # the temperature does not need the log


def test_a_sata_drive_smartctl_does_not_know_reads_no_host_bytes(sysfs):
    doc = json.loads(golden("smartctl-7.3-sata-mx500.json")) | {"in_smartctl_database": False}
    for row in doc["ata_smart_attributes"]["table"]:
        if row["id"] == 246:
            row |= {"id": 241, "name": "Total_LBAs_Written"}
    commands = ReplayCommands({"smartctl -j -a /dev/sda": ok(json.dumps(doc))})
    telemetry = probe(device("/dev/sda"), commands, sysfs.root)
    assert telemetry.health_source == "smartctl" and telemetry.health().host_written_bytes is None
    assert telemetry.reasons == ("smartctl's drive database does not know CT1000MX500SSD1, so the unit of its "
                                 "attributes 241 Total_LBAs_Written is unknown: host data read and written are left "
                                 "out (`update-smart-drivedb` brings the newest database)",)


def test_every_program_runs_in_the_c_locale(monkeypatch):
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    done = Commands().run(["sh", "-c", 'echo "$LC_ALL $LANG"'])
    assert done.stdout == "C de_DE.UTF-8\n"  # LC_ALL overrides every other locale variable
