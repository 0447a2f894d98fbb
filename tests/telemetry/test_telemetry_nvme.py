"""nvme-cli through ReplayCommands: every version's JSON gives the same records, in the
right units; features; the controller node; the sysfs APST switch on a fake tree."""

import json
import re
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.external import Completed, ReplayCommands
from ssdlab.telemetry import nvme
from ssdlab.telemetry.nvme import (
    NvmeCli,
    controller_node,
    parse_capabilities,
    parse_feature,
    parse_id_ctrl,
    parse_sanitize_log,
    parse_smart_log,
)
from ssdlab.telemetry.records import (
    ApstEntry,
    ApstFeature,
    Capabilities,
    PowerStateFeature,
    SanitizeLog,
    TemperatureThreshold,
    ThermalManagement,
    VolatileWriteCache,
)
from tests.fake_sysfs import FakeSysfs
from tests.telemetry_data import ID_CTRL, SMART_LOG, SN850, SN850_HEALTH, golden, ok


@pytest.mark.parametrize("version", ["1", "2.3", "2.6"])
def test_every_nvme_cli_version_gives_the_same_controller(version):
    assert parse_id_ctrl(golden(f"nvme-{version}-id-ctrl-sn850.json")) == SN850


@pytest.mark.parametrize("version", ["1", "2.1", "2.3", "2.6"])
def test_every_nvme_cli_version_gives_the_same_health_log(version):
    assert parse_smart_log(golden(f"nvme-{version}-smart-log-sn850.json")) == SN850_HEALTH


# CALIBRATION.md, "Spec sheets and declared power states": PS0-PS2 W, PS3 and PS4
# (W, entry µs, exit µs), WCTEMP/CCTEMP °C; and the 980 PRO's PS1/PS2 exit latencies.
@pytest.mark.parametrize("name, active_w, idle_states, limits_c", [
    ("2.3-id-ctrl-sn850", (9.00, 4.10, 3.50), ((0.025, 5000, 10000), (0.005, 5000, 45000)), (84, 88)),
    ("2.3-id-ctrl-980pro", (8.49, 4.48, 3.18), ((0.040, 2000, 1200), (0.005, 500, 9500)), (82, 85)),
    ("2.6-id-ctrl-p5plus", (8.25, 4.00, 2.00), ((0.100, 5000, 6000), (0.005, 12000, 35000)), (80, 82)),
])
def test_power_state_tables_are_the_drives_declared_ones(name, active_w, idle_states, limits_c):
    ctrl = parse_id_ctrl(golden(f"nvme-{name}.json"))
    states = ctrl.power_states
    assert tuple(s.max_power_w for s in states[:3]) == active_w and all(s.operational for s in states[:3])
    assert tuple((s.max_power_w, s.entry_latency_us, s.exit_latency_us) for s in states[3:]) == idle_states
    assert not any(s.operational for s in states[3:])
    assert (ctrl.wctemp_c, ctrl.cctemp_c) == limits_c
    if "980pro" in name:
        assert [s.exit_latency_us for s in states[:3]] == [0, 200, 1000]


def test_power_scales_of_each_version():
    """Max power in 0.01 W (scale 0) or 0.0001 W (scale 1); idle and active power in 0.0001 W
    (scale 1) or 0.01 W (scale 2), raw bytes with the scale in bits 7:6 in 1.x."""
    doc = json.loads(golden("nvme-2.6-id-ctrl-sn850.json"))
    doc["psds"][0] |= {"max_power": 12345, "max_power_scale": 1, "idle_power": 7, "idle_scale": 2,
                       "active_power": 0, "active_scale": 0}
    state = parse_id_ctrl(json.dumps(doc)).power_states[0]
    assert (state.max_power_w, state.idle_power_w, state.active_power_w) == (1.2345, 0.07, None)
    doc = json.loads(golden("nvme-1-id-ctrl-sn850.json"))
    doc["psds"][1] |= {"idle_scale": 128, "idle_power": 63, "active_work_scale": 64 | 3, "active_power": 41000}
    state = parse_id_ctrl(json.dumps(doc)).power_states[1]
    assert (state.idle_power_w, state.active_power_w) == (0.63, 4.1)


def test_kelvin_to_celsius_is_k_minus_273_and_zero_means_not_reported():
    doc = json.loads(golden("nvme-2.6-id-ctrl-sn850.json")) | {"wctemp": 0, "mxtmt": 0, "rtd3r": 0}
    ctrl = parse_id_ctrl(json.dumps(doc))
    assert (ctrl.wctemp_c, ctrl.cctemp_c, ctrl.mxtmt_c, ctrl.mntmt_c, ctrl.rtd3_resume_us) == (None, 88, None, 0, None)
    log = json.loads(golden("nvme-2.6-smart-log-sn850.json")) | {"temperature": 0}
    assert parse_smart_log(json.dumps(log)).temperature_c is None


def test_counters_past_64_bits_and_bytes_from_data_units():
    log = json.loads(golden("nvme-2.3-smart-log-sn850.json"))
    log |= {"data_units_written": str(1 << 100), "data_units_read": "1", "critical_warning": 0x05}
    health = parse_smart_log(json.dumps(log))
    assert health.host_written_bytes == (1 << 100) * 512_000 and health.host_read_bytes == 512_000
    assert health.critical_warnings == ("spare_below_threshold", "reliability_degraded")


def test_older_nvme_cli_without_thermal_counters_leaves_them_none():
    log = {k: v for k, v in json.loads(golden("nvme-1-smart-log-sn850.json")).items() if not k.startswith("thm_")}
    health = parse_smart_log(json.dumps(log))
    assert (health.tmt1_transitions, health.tmt2_time_s) == (None, None)


@pytest.mark.parametrize("change, field", [
    ({"avail_spare": None}, "avail_spare"),
    ({"temperature": "hot"}, "temperature"),
    ({"data_units_written": "12.5"}, "data_units_written"),
    ({"media_errors": True}, "media_errors"),
    ({"avail_spare": 101}, "available_spare_pct"),
])
def test_bad_health_log_names_command_and_field(change, field):
    log = json.loads(golden("nvme-2.6-smart-log-sn850.json")) | change
    with pytest.raises(SsdlabError, match=rf"`{SMART_LOG}`.*{field}"):
        parse_smart_log(json.dumps(log), SMART_LOG)


def test_bad_power_state_names_its_place():
    doc = json.loads(golden("nvme-2.6-id-ctrl-sn850.json"))
    del doc["psds"][3]["exit_lat"]
    with pytest.raises(SsdlabError, match=r"psds\[3\]\.exit_lat` is missing"):
        parse_id_ctrl(json.dumps(doc))


def test_reader_runs_read_only_commands_on_the_controller_node():
    commands = ReplayCommands({ID_CTRL: ok(golden("nvme-2.6-id-ctrl-sn850.json")),
                               SMART_LOG: ok(golden("nvme-2.6-smart-log-sn850.json")),
                               "nvme get-feature /dev/nvme0 -f 0x0c -H": ok(golden(
                                   "nvme-2.3-get-feature-0x0c-sn850.txt"))})
    reader = NvmeCli(Path("/dev/nvme0n1"), commands)
    assert reader.id_ctrl() == SN850 and reader.smart_log() == SN850_HEALTH
    assert reader.get_feature(0x0C).enabled
    reader.smart_log()  # a drive that refused the Endurance Group log is not asked again
    endurance_log = ("nvme", "endurance-log", "/dev/nvme0", "--group-id=1", "-o", "json")
    assert commands.calls == [tuple(ID_CTRL.split()), tuple(SMART_LOG.split()), endurance_log,
                              ("nvme", "get-feature", "/dev/nvme0", "-f", "0x0c", "-H"), tuple(SMART_LOG.split())]


def test_a_failing_nvme_cli_says_which_command_and_why():
    commands = ReplayCommands({SMART_LOG: Completed((), 1, "", "open: Permission denied\n")})
    with pytest.raises(SsdlabError, match=rf"`{SMART_LOG}` failed \(exit status 1\): open: Permission denied"):
        NvmeCli("/dev/nvme0n1", commands).smart_log()


@pytest.mark.parametrize("device, node", [("/dev/nvme0n1", "/dev/nvme0"), ("nvme1n1p3", "/dev/nvme1"),
                                          ("/dev/nvme12", "/dev/nvme12"), ("/dev/nvme0c2n1", "/dev/nvme2")])
def test_controller_node(device, node):
    assert controller_node(device) == node


def test_controller_node_follows_links_and_refuses_others(tmp_path):
    (tmp_path / "nvme-WDS100T1X0E_21050A800123").symlink_to(tmp_path / "nvme3n1")
    assert controller_node(tmp_path / "nvme-WDS100T1X0E_21050A800123") == "/dev/nvme3"
    for other in ("/dev/sda", "/dev/nvme0n1x", "/dev/loop0"):
        with pytest.raises(SsdlabError, match="not an NVMe device"):
            controller_node(other)


@pytest.mark.parametrize("name, fid, record", [
    ("nvme-2.3-get-feature-0x02.txt", 0x02, PowerStateFeature(power_state=0)),
    ("nvme-2.3-get-feature-0x04-sn850.txt", 0x04, TemperatureThreshold(threshold_c=84, sensor=0, under=False)),
    ("nvme-2.3-get-feature-0x10-sn850.txt", 0x10, ThermalManagement(tmt1_c=80, tmt2_c=82)),
    ("nvme-2.10-get-feature-0x10-p5plus.txt", 0x10, ThermalManagement(tmt1_c=76, tmt2_c=79)),
    ("nvme-2.3-get-feature-0x0c-off.txt", 0x0C, ApstFeature(enabled=False)),
    ("nvme-2.3-get-feature-0x06-sn850.txt", 0x06, VolatileWriteCache(enabled=True)),
    ("nvme-2.3-get-feature-0x06-off.txt", 0x06, VolatileWriteCache(enabled=False)),
    ("nvme-2.3-get-feature-0x0c-sn850.txt", 0x0C, ApstFeature(enabled=True, entries=(
        ApstEntry(from_state=0, idle_ms=100, target_state=3), ApstEntry(from_state=1, idle_ms=100, target_state=3),
        ApstEntry(from_state=2, idle_ms=100, target_state=3), ApstEntry(from_state=3, idle_ms=2000, target_state=4)))),
])
def test_features(name, fid, record):
    assert parse_feature(fid, golden(name)) == record


def test_apst_table_targets_the_drives_non_operational_states():
    """Linux's table for the SN850 (CALIBRATION.md): PS3 after 100 ms, PS4 after 2 s."""
    states = {s.index: s for s in SN850.power_states}
    apst = parse_feature(0x0C, golden("nvme-2.3-get-feature-0x0c-sn850.txt"))
    assert {(e.idle_ms, e.target_state) for e in apst.entries} == {(100, 3), (2000, 4)}
    assert not any(states[e.target_state].operational for e in apst.entries)


@pytest.mark.parametrize("value, record", [
    ("0x00000001", PowerStateFeature(power_state=1)), ("0x000000e4", PowerStateFeature(power_state=4))])
def test_power_state_is_bits_4_to_0(value, record):
    assert parse_feature(0x02, f"get-feature:0x02 (Power Management), Current value:{value}\n") == record


def test_temperature_threshold_bits():
    value = 1 << 20 | 2 << 16 | 268  # under-threshold of sensor 2 at 268 K
    line = f"get-feature:0x04 (Temperature Threshold), Current value:{value:#010x}\n"
    assert parse_feature(0x04, line) == TemperatureThreshold(threshold_c=-5, sensor=2, under=True)


@pytest.mark.parametrize("text, problem", [
    ("", "printed no `get-feature"),
    ("get-feature:0x10 (Host Controlled Thermal Management), Current value:0x01610163\n", "for feature 0x10"),
    ("\n".join(golden("nvme-2.3-get-feature-0x0c-sn850.txt").splitlines()[:40]), "32 entries"),
])
def test_bad_feature_output(text, problem):
    with pytest.raises(SsdlabError, match=problem):
        parse_feature(0x0C, text, "nvme get-feature /dev/nvme0 -f 0x0c -H")


@pytest.mark.parametrize("version", ["1", "2.3", "2.6"])
def test_capabilities_of_every_nvme_cli_version(version):
    """The SN850: a volatile write cache (VWC 7), no sanitize, one namespace at most."""
    assert parse_capabilities(golden(f"nvme-{version}-id-ctrl-sn850.json")) == Capabilities(
        volatile_write_cache=True, sanitize_crypto_erase=False, sanitize_block_erase=False, sanitize_overwrite=False,
        max_namespaces=1, namespace_management=False, multi_controller=False)


def test_capability_bits():
    doc = json.loads(golden("nvme-2.6-id-ctrl-sn850.json")) | {"vwc": 6, "sanicap": 0x60000003, "nn": 32,
                                                                 "oacs": 0x1e, "cmic": 2}
    caps = parse_capabilities(json.dumps(doc))
    assert not caps.volatile_write_cache and caps.sanitize_crypto_erase and caps.sanitize_block_erase
    assert (caps.sanitize_overwrite, caps.max_namespaces, caps.namespace_management, caps.multi_controller) == (
        False, 32, True, True)
    # a simulated drive prints only the fields it has: the others are 0
    assert parse_capabilities('{"vwc": 1}') == Capabilities(
        volatile_write_cache=True, sanitize_crypto_erase=False, sanitize_block_erase=False, sanitize_overwrite=False,
        max_namespaces=0, namespace_management=False, multi_controller=False)


def sanitize_json(sstat, block=200, crypto=-1, wrap=True) -> str:
    """`nvme sanitize-log /dev/nvme0 -o json` as nvme-cli 1.16 to 2.11 print it (2.0-2.3 print an
    unreported time, 0xffffffff, as -1; the others as 4294967295)."""
    log = {"sprog": 65535, "sstat": sstat, "cdw10_info": 2, "time_over_write": 4294967295,
           "time_block_erase": block, "time_crypto_erase": crypto}
    return json.dumps({"nvme0": log} if wrap else log)


IN_PROGRESS = {"global_erased": 0, "no_cmplted_passes": 0, "status": "(2) Sanitize in Progress."}


@pytest.mark.parametrize("text, record", [
    (sanitize_json(IN_PROGRESS), SanitizeLog(status=2, block_erase_s=200)),
    (sanitize_json({"global_erased": 1, "no_cmplted_passes": 0,
                    "status": "(1) Most Recent Sanitize Command Completed Successfully."}, 0, 4294967295),
     SanitizeLog(status=1, block_erase_s=0)),
    # a release printed the status text as the key of its own line
    (sanitize_json({"global_erased": 0, "Sanitize in Progress.": "(2) Sanitize in Progress."}),
     SanitizeLog(status=2, block_erase_s=200)),
    (sanitize_json(0x103, crypto=30, wrap=False), SanitizeLog(status=3, block_erase_s=200, crypto_erase_s=30)),
])
def test_sanitize_log(text, record):
    assert parse_sanitize_log(text) == record


@pytest.mark.parametrize("text, problem", [
    ("{}", "`sstat` is missing"),
    (json.dumps({"nvme0": {"sstat": 1}, "nvme1": {"sstat": 1}}), "`sstat` is missing"),
    (sanitize_json({"status": "in progress"}), "status number in brackets"),
    (sanitize_json(IN_PROGRESS, block="soon"), "not a whole number"),
])
def test_bad_sanitize_log(text, problem):
    with pytest.raises(SsdlabError, match=problem):
        parse_sanitize_log(text, "nvme sanitize-log /dev/nvme0 -o json")


@pytest.fixture
def apst_switch(tmp_path):
    sysfs = FakeSysfs(tmp_path / "sys")
    sysfs.nvme_controller("nvme0", attrs={"power/pm_qos_latency_tolerance_us": "100000"})
    return sysfs.root


def test_apst_switch_through_sysfs(apst_switch):
    path = nvme.latency_tolerance_file("/dev/nvme0", apst_switch)
    assert path == apst_switch / "class/nvme/nvme0/power/pm_qos_latency_tolerance_us"
    assert nvme.read_latency_tolerance(path) == "100000"
    nvme.write_latency_tolerance(path, "0")
    assert path.read_text() == "0\n"


def test_apst_switch_errors(apst_switch, monkeypatch):
    path = nvme.latency_tolerance_file("nvme0", apst_switch)
    with pytest.raises(ValueError, match="not 'off'"):
        nvme.write_latency_tolerance(path, "off")
    with pytest.raises(SsdlabError, match="does not manage APST"):
        nvme.read_latency_tolerance(nvme.latency_tolerance_file("nvme1", apst_switch))

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(Path, "write_text", refuse)
    with pytest.raises(SsdlabError, match="switching APST needs root"):
        nvme.write_latency_tolerance(path, "0")


@pytest.mark.parametrize("grouped, locale", [
    ("178,037,231", "en_US.UTF-8"), ("178.037.231", "de_DE.UTF-8"), ("2.000", "de_DE.UTF-8"),
    ("178\u202f037\u202f231", "fr_FR.UTF-8"), ("1'000", "de_CH.UTF-8"),
])
def test_digit_groups_of_a_locale_are_refused_naming_the_locale(grouped, locale, monkeypatch):
    """nvme-cli 2.3 prints its 128-bit counters in the locale it runs in: "2.000" is 2000, never 2."""
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.setenv("LANG", locale)
    log = json.loads(golden("nvme-2.3-smart-log-sn850.json")) | {"data_units_read": grouped}
    with pytest.raises(SsdlabError, match=rf"`data_units_read` is {re.escape(repr(grouped))}: digits grouped by a "
                                          rf"locale's thousands separator.*\(here LANG={locale}\)\. .*LC_ALL=C"):
        parse_smart_log(json.dumps(log), SMART_LOG)


@pytest.mark.parametrize("printed", ["2000.000000", "2000,000000", "2000", " 2000 "])
def test_nvme_cli_21_floats_in_either_decimal_point_are_whole_numbers(printed):
    log = json.loads(golden("nvme-2.3-smart-log-sn850.json")) | {"data_units_written": printed}
    assert parse_smart_log(json.dumps(log)).host_written_bytes == 2000 * 512_000


@pytest.mark.parametrize("warning, bits", [
    ({"value": 5, "available_spare": 1, "temp_threshold": 0, "reliability_degraded": 1, "ro": 0,
      "vmbu_failed": 0, "pmr_ro": 0}, 5),
    ({"value": 0}, 0),
    ({"available_spare": 0, "temp_threshold": 1, "ro": 1}, 0x0A),  # no value: its named bits
])
def test_critical_warning_as_nvme_cli_211_prints_it(warning, bits):
    log = json.loads(golden("nvme-2.6-smart-log-sn850.json")) | {"critical_warning": warning}
    assert parse_smart_log(json.dumps(log)).critical_warning == bits


@pytest.mark.parametrize("warning, problem", [
    ({"value": 4, "available_spare": 1}, "`critical_warning.value` is 4, which its named bits contradict"),
    ({}, "`critical_warning.value` is missing, and so is every named bit"),
    ({"value": "x"}, "`critical_warning.value` is 'x', not a whole number"),
])
def test_a_critical_warning_object_that_does_not_add_up_is_refused(warning, problem):
    log = json.loads(golden("nvme-2.6-smart-log-sn850.json")) | {"critical_warning": warning}
    with pytest.raises(SsdlabError, match=re.escape(problem)):
        parse_smart_log(json.dumps(log), SMART_LOG)


@pytest.mark.parametrize("printed, version", [
    ("nvme version 2.3 (git 2.3)\nlibnvme version 1.3 (git 1.3)\n", (2, 3)),
    ("nvme version 1.16\n", (1, 16)),
    ("nvme version 2.11 (git 2.11)\nlibnvme version 1.11 (git 1.11)\n", (2, 11)),
    ("something else\n", None),
])
def test_the_version_nvme_cli_names(printed, version):
    assert nvme.read_version(ReplayCommands({"nvme version": ok(printed)})) == version


def test_nvme_cli_20_decodes_the_active_scale_but_not_the_idle_one():
    """2.0 prints `active_work_scale` already shifted (0-3) and `idle_scale` raw, as 1.x both."""
    doc = json.loads(golden("nvme-1-id-ctrl-sn850.json"))
    doc["psds"][1] |= {"idle_scale": 128, "idle_power": 63, "active_work_scale": 2, "active_power": 410}
    state = parse_id_ctrl(json.dumps(doc), version=(2, 0)).power_states[1]
    assert (state.idle_power_w, state.active_power_w) == (0.63, 4.1)
    assert parse_id_ctrl(json.dumps(doc), version=(1, 16)).power_states[1].active_power_w is None
