"""The readers against what the real programs print (tests/golden/telemetry/real, recorded by
scripts/record_telemetry_outputs.py and record_sata_outputs.py): nvme-cli 1.16, 2.0, 2.3
(Debian 12's, also under en_US and de_DE), 2.6, 2.10 and 2.11, and smartctl 7.3, each rendering
the same drive pages through tests/nvme_shim (SATA drives through tests/ata_shim). What each
output must give is derived here from those pages (the values put into the drive), so every
version is held to the drive, not to another version's output. Then real drives' outputs from
other projects' test data (tests/golden/telemetry/public)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.external import ReplayCommands
from ssdlab.telemetry.nvme import (
    APST,
    HOST_THERMAL_MANAGEMENT,
    parse_feature,
    parse_id_ctrl,
    parse_smart_log,
    read_version,
)
from ssdlab.telemetry.records import ApstEntry, ApstFeature, ControllerInfo, HealthLog, PowerState, ThermalManagement
from ssdlab.telemetry.smartctl import parse_report
from tests.ata_shim import DRIVES as SATA_DRIVES
from tests.nvme_shim import DRIVES, IdCtrl, SmartLog
from tests.telemetry_data import GOLDEN, ok

REAL = GOLDEN / "real"
DATA_UNIT = 512_000
# nvme-cli 1.x and 2.0 print the 128-bit counters as doubles (json-c) or through a long double
# (their own printer): what a person reads off them is the nearest double, 2^70 + 5 -> 2^70
FLOAT_COUNTERS = ("1.16", "1.16-nojsonc", "2.0")
VERSIONS = {"1.16": (1, 16), "1.16-nojsonc": (1, 16), "2.0": (2, 0), "2.3": (2, 3), "2.6": (2, 6),
            "2.10": (2, 10), "2.11": (2, 11)}
_NAME = re.compile(r"nvme-(?P<version>[\d.]+(?:-nojsonc)?)(?:-(?P<locale>en_US|de_DE))?-(?P<what>id-ctrl|smart-log)-"
                   r"(?P<drive>[\w-]+)\.json")


def outputs(pattern: str) -> list[Path]:
    found = sorted(REAL.glob(pattern))
    assert found, f"no recorded output matches {pattern}"
    return found


def celsius(kelvin: int) -> int | None:
    return kelvin - 273 if kelvin else None


def counter(value: int, version: str) -> int:
    return int(float(value)) if version in FLOAT_COUNTERS else value


def drive_health(log: SmartLog, version: str) -> HealthLog:
    """The health log a person reads off nvme-cli's JSON of `log`."""
    c = lambda value: counter(value, version)  # noqa: E731
    return HealthLog(
        temperature_c=celsius(log.temperature),
        sensor_temperatures_c=tuple((n, k - 273) for n, k in enumerate(log.temp_sensors, start=1) if k),
        critical_warning=log.critical_warning, available_spare_pct=log.avail_spare,
        spare_threshold_pct=log.spare_thresh, percentage_used=log.percent_used,
        host_read_bytes=c(log.data_units_read) * DATA_UNIT, host_written_bytes=c(log.data_units_written) * DATA_UNIT,
        host_read_commands=c(log.host_read_commands), host_write_commands=c(log.host_write_commands),
        controller_busy_minutes=c(log.controller_busy_time), power_cycles=c(log.power_cycles),
        power_on_hours=c(log.power_on_hours), unsafe_shutdowns=c(log.unsafe_shutdowns),
        media_errors=c(log.media_errors), error_log_entries=c(log.num_err_log_entries),
        warning_temp_minutes=log.warning_temp_time, critical_temp_minutes=log.critical_comp_time,
        tmt1_transitions=log.thm_temp1_trans_count, tmt2_transitions=log.thm_temp2_trans_count,
        tmt1_time_s=log.thm_temp1_total_time, tmt2_time_s=log.thm_temp2_total_time)


def _watts(value: int, scale: int) -> float | None:
    return {1: value / 10000, 2: value / 100}.get(scale)


def drive_controller(ctrl: IdCtrl) -> ControllerInfo:
    """Identify Controller as the drive declares it."""
    return ControllerInfo(
        model=ctrl.mn, serial=ctrl.sn, firmware=ctrl.fr,
        wctemp_c=celsius(ctrl.wctemp), cctemp_c=celsius(ctrl.cctemp), mntmt_c=celsius(ctrl.mntmt),
        mxtmt_c=celsius(ctrl.mxtmt), hctma=bool(ctrl.hctma & 1), apsta=bool(ctrl.apsta & 1),
        rtd3_resume_us=ctrl.rtd3r or None, rtd3_entry_us=ctrl.rtd3e or None,
        power_states=tuple(PowerState(
            index=i, max_power_w=ps.mp / (10000 if ps.mxps else 100), entry_latency_us=ps.enlat,
            exit_latency_us=ps.exlat, idle_power_w=_watts(ps.idlp, ps.ips),
            active_power_w=_watts(ps.actp, ps.aps), operational=not ps.nops)
            for i, ps in enumerate(ctrl.psds)))


def _parts(path: Path) -> dict[str, str]:
    match = _NAME.fullmatch(path.name)
    assert match, f"{path.name} is not named as record_telemetry_outputs.py names its outputs"
    return match.groupdict()


def _version(name: str) -> tuple[int, int] | None:
    return read_version(ReplayCommands({"nvme version": ok((REAL / f"nvme-{name}-version.txt").read_text())}))


@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_nvme_version_names_each_build(name):
    assert _version(name) == VERSIONS[name]


@pytest.mark.parametrize("path", outputs("nvme-*-id-ctrl-*.json"), ids=lambda p: p.name)
def test_every_nvme_cli_id_ctrl_gives_the_drives_declared_controller(path):
    parts = _parts(path)
    info = parse_id_ctrl(path.read_text(), path.name, _version(parts["version"]))
    assert info == drive_controller(DRIVES[parts["drive"]].id_ctrl)


@pytest.mark.parametrize("path", outputs("nvme-*-smart-log-*.json"), ids=lambda p: p.name)
def test_every_nvme_cli_health_log_gives_the_drives_values_or_refuses_digit_groups(path):
    parts = _parts(path)
    log = DRIVES[parts["drive"]].smart_log
    if parts["locale"] is None:
        assert parse_smart_log(path.read_text(), path.name) == drive_health(log, parts["version"])
        return
    # nvme-cli 2.3 in the user's locale: grouped digits are refused, never read (ssdlab runs it
    # with LC_ALL=C, so it prints the plain numbers above)
    assert parts["version"] == "2.3"
    separator = {"en_US": ",", "de_DE": "."}[parts["locale"]]
    assert f"{log.data_units_read:,}".replace(",", separator) in path.read_text()
    with pytest.raises(SsdlabError, match=r"field `data_units_read` is '[\d.,]+': digits grouped by a locale's"):
        parse_smart_log(path.read_text(), path.name)


def test_the_de_de_output_shows_why_grouped_digits_must_not_be_read():
    """Under de_DE, 2000 data units print as "2.000": read as a decimal, 2 units."""
    text = (REAL / "nvme-2.3-de_DE-smart-log-sn850.json").read_text()
    assert json.loads(text)["data_units_written"] == "2.000" and DRIVES["sn850"].smart_log.data_units_written == 2000
    doc = json.loads(text) | {"data_units_read": "178037231"}  # only the written counter is left grouped
    with pytest.raises(SsdlabError, match="`data_units_written` is '2.000': digits grouped"):
        parse_smart_log(json.dumps(doc))


def test_the_critical_warning_object_of_nvme_cli_211_is_the_drives_warning():
    text = (REAL / "nvme-2.11-smart-log-sn850-worn.json").read_text()
    assert isinstance(json.loads(text)["critical_warning"], dict)
    health = parse_smart_log(text)
    assert health.critical_warnings == ("spare_below_threshold", "reliability_degraded")


def test_nvme_cli_20_active_power_needs_its_version():
    """2.0 prints `active_work_scale` decoded where 1.x prints it raw: read as 1.x, it is lost."""
    text = (REAL / "nvme-2.0-id-ctrl-sn850.json").read_text()
    assert parse_id_ctrl(text, version=(2, 0)).power_states[0].active_power_w == 9.0
    assert parse_id_ctrl(text, version=(1, 16)).power_states[0].active_power_w is None


@pytest.mark.parametrize("path", outputs("nvme-*-get-feature-0x10-*.txt"), ids=lambda p: p.name)
def test_every_nvme_cli_gives_the_thermal_management_temperatures(path):
    value = DRIVES[path.stem.rsplit("-", 1)[1]].features[HOST_THERMAL_MANAGEMENT]
    assert parse_feature(HOST_THERMAL_MANAGEMENT, path.read_text(), path.name) == \
        ThermalManagement(tmt1_c=celsius(value >> 16), tmt2_c=celsius(value & 0xFFFF))


@pytest.mark.parametrize("path", outputs("nvme-*-get-feature-0x0c-*.txt"), ids=lambda p: p.name)
def test_every_nvme_cli_gives_the_apst_table(path):
    drive = DRIVES[path.stem.rsplit("-", 1)[1]]
    entries = tuple(ApstEntry(from_state=state, idle_ms=idle_ms, target_state=target)
                    for state, (idle_ms, target) in enumerate(drive.apst))
    assert parse_feature(APST, path.read_text(), path.name) == \
        ApstFeature(enabled=bool(drive.features[APST] & 1), entries=entries)


@pytest.mark.parametrize("path", outputs("smartctl-7.3-nvme-*.json"), ids=lambda p: p.name)
def test_smartctl_73_gives_the_drives_health_log_in_its_own_terms(path):
    """smartctl converts to °C itself, leaves out the thermal-transition counters, and in 7.3
    gives neither power states nor the composite thresholds."""
    drive = DRIVES[path.stem.removeprefix("smartctl-7.3-nvme-")]
    report = parse_report(path.read_text(), path.name)
    expected = drive_health(drive.smart_log, "smartctl").model_copy(update=dict.fromkeys(
        ("tmt1_transitions", "tmt2_transitions", "tmt1_time_s", "tmt2_time_s")))
    assert report.protocol == "NVMe" and report.health == expected
    ctrl = drive.id_ctrl
    assert report.controller == ControllerInfo(model=ctrl.mn, serial=ctrl.sn, firmware=ctrl.fr)


PUBLIC = GOLDEN / "public"
PUBLIC_EXPECTED = json.loads((PUBLIC / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(PUBLIC_EXPECTED))
def test_real_drives_outputs_from_other_projects_give_what_a_person_reads_off_them(name):
    """tests/golden/telemetry/public: smartctl 7.0-7.4 and nvme-cli outputs of real drives from
    other projects' test data (README.md there: sources and licences). Outputs without a
    health log (SCSI, `smartctl -i`) are refused with a message."""
    expected, text = PUBLIC_EXPECTED[name], (PUBLIC / name).read_text()
    read = (lambda: parse_smart_log(text, name)) if expected["tool"] == "nvme smart-log" else \
        (lambda: parse_report(text, name))
    if expected["refused"]:
        with pytest.raises(SsdlabError, match=re.escape(f"`{name}`")):
            read()
        return
    found = read()
    health = found if isinstance(found, HealthLog) else found.health
    assert {field: getattr(health, field) for field in expected["health"]} == expected["health"]
    if controller := expected.get("controller"):
        assert {field: getattr(found.controller, field) for field in controller} == controller


# tests/ata_shim: smartctl 7.3's own drive database (2022) decides the attribute names. Host
# bytes are read only where the name says their unit: the WD Red SA500 4 TB, the SE5110 and the
# ACME drive are unknown to it (their 241 counts GiB, GiB of NAND writes, and logical blocks).
SATA_HOST_BYTES = {
    "wd-red-sa500-4t": (None, None), "skhynix-se5110-960g": (None, None), "acme-1t": (None, None),
    "skhynix-sc311-512g": (SATA_DRIVES["skhynix-sc311-512g"].written_bytes,
                           SATA_DRIVES["skhynix-sc311-512g"].read_bytes),  # in GB, as its database entry says
    "crucial-mx500-1t": (SATA_DRIVES["crucial-mx500-1t"].written_bytes, None),  # no read counter
    "samsung-870evo-1t": (SATA_DRIVES["samsung-870evo-1t"].written_bytes, None),
}


@pytest.mark.parametrize("name", sorted(SATA_HOST_BYTES))
def test_smartctl_73_sata_drives_in_and_out_of_its_database(name):
    drive, path = SATA_DRIVES[name], REAL / f"smartctl-7.3-sata-{name}.json"
    report = parse_report(path.read_text(), path.name)
    health = report.health
    assert report.protocol == "ATA" and report.controller is None
    assert (health.host_written_bytes, health.host_read_bytes) == SATA_HOST_BYTES[name]
    assert (health.power_on_hours, health.power_cycles) == (drive.power_on_hours, drive.power_cycles)
    assert health.temperature_c == json.loads(path.read_text())["temperature"]["current"]
    known = json.loads(path.read_text())["in_smartctl_database"]
    assert bool(report.notes) == (not known)
    if not known:
        assert f"does not know {drive.model}" in report.notes[0] and "241 Total_LBAs_Written" in report.notes[0]
