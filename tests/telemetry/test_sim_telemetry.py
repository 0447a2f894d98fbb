"""A simulated drive read by the telemetry code written for real drives, unchanged: NvmeCli
over SimulatedNvme gives the records the golden nvme-cli outputs of the real drive give, the
probe finds it, and a step's temperature comes from the drive, in drive time."""

from __future__ import annotations

import pytest

from ssdlab import _ssdsim
from ssdlab.backends.sim import SimBackend
from ssdlab.backends.sim_host import SimHost
from ssdlab.errors import SsdlabError
from ssdlab.external import Commands, ReplayCommands
from ssdlab.model import Op, SecondPoint, Step
from ssdlab.presets import Preset
from ssdlab.targets import Target, TargetKind
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.nvme import (
    APST,
    HOST_THERMAL_MANAGEMENT,
    POWER_MANAGEMENT,
    VOLATILE_WRITE_CACHE,
    NvmeCli,
    parse_feature,
)
from ssdlab.telemetry.probe import Telemetry, probe
from ssdlab.telemetry.records import ControllerInfo, ThermalManagement
from ssdlab.telemetry.results import TestHealth
from ssdlab.telemetry.simulated import CONTROLLER, SimulatedNvme
from ssdlab.units import MiB
from tests.factories import result
from tests.paths import SMALL_PRESET as SMALL
from tests.telemetry_data import SN850_STATES, golden, ok

THERMAL = "[drive.thermal]\ntmt1_c = 80.0"


def without_thermal_model() -> Preset:
    """The test drive without its [drive.thermal] table: what the drive says of itself
    when it knows no temperature."""
    text = SMALL.read_text()
    start = text.index(THERMAL)
    text = text[:start] + text[text.index("[drive.power]", start):]
    return Preset("small-cold", SMALL, text)


def backend(**host) -> SimBackend:
    return SimBackend(without_thermal_model(), host=SimHost(**host))


def nvme(sim: SimBackend) -> NvmeCli:
    return NvmeCli(CONTROLLER, SimulatedNvme(sim.drive))


def declared(states):
    """What a drive declares of its power states and the simulator models (no idle or
    active power: the presets do not have them)."""
    return [(s.index, s.max_power_w, s.entry_latency_us, s.exit_latency_us, s.operational) for s in states]


def test_identify_gives_the_records_of_the_real_drive():
    info = nvme(backend()).id_ctrl()
    assert declared(info.power_states) == declared(SN850_STATES)
    assert info.apsta is True and info.model == "Small TLC drive (tests)"
    assert nvme(backend()).capabilities().volatile_write_cache  # Identify's VWC bit 0
    assert info.firmware == f"ssdsim-{_ssdsim.version()}"
    assert info.serial.startswith("SIM") and info.serial == nvme(backend()).id_ctrl().serial
    # no thermal model yet: thresholds not reported (0 K), rather than invented
    assert (info.wctemp_c, info.cctemp_c, info.hctma) == (None, None, False)


@pytest.mark.parametrize(("fid", "golden_file", "host"), [
    (APST, "nvme-2.3-get-feature-0x0c-sn850.txt", {}),
    (APST, "nvme-2.3-get-feature-0x0c-off.txt", {"apst_latency_us": 0}),
    (POWER_MANAGEMENT, "nvme-2.3-get-feature-0x02.txt", {}),
    (VOLATILE_WRITE_CACHE, "nvme-2.3-get-feature-0x06-sn850.txt", {}),
])
def test_features_decode_as_the_real_drives_do(fid, golden_file, host):
    assert nvme(backend(**host)).get_feature(fid) == parse_feature(fid, golden(golden_file))


def test_the_write_cache_feature_follows_the_hosts_setting():
    sim = backend()
    with sim.write_cache(False):
        off = SimulatedNvme(sim.drive).run(["nvme", "get-feature", CONTROLLER, "-f", "0x06", "-H"]).stdout
        assert off == golden("nvme-2.3-get-feature-0x06-off.txt")
    assert nvme(sim).get_feature(VOLATILE_WRITE_CACHE).enabled


def test_thermal_management_is_off_without_a_thermal_model():
    assert nvme(backend()).get_feature(HOST_THERMAL_MANAGEMENT) == ThermalManagement()


def test_the_health_log_counts_the_hosts_io():
    sim = backend()
    before = nvme(sim).smart_log()
    sim.run_step(Step(label="w", rw=Op.WRITE, bs=128 * 1024, size=8 * MiB))
    sim.run_step(Step(label="r", rw=Op.RANDREAD, bs=4096, size=8 * MiB, io_size=100 * 4096))
    after = nvme(sim).smart_log()
    assert before.host_written_bytes == before.host_read_bytes == 0
    assert after.host_written_bytes == 17 * 512_000  # 8 MiB in data units, rounded up
    assert after.host_write_commands == 64 and after.host_read_commands == 100
    assert after.temperature_c is None and after.critical_warning == 0 and after.media_errors == 0
    assert TestHealth(before=before, after=after).alarms() == []


@pytest.mark.parametrize("argv", [
    ["nvme", "format", CONTROLLER],
    ["nvme", "set-feature", CONTROLLER, "-f", "0x0c", "-v", "0"],
    ["nvme", "smart-log", CONTROLLER, "-o", "json", "--raw-binary"],
    ["smartctl", "-j", "-a", CONTROLLER],
    [],
])
def test_anything_but_the_three_queries_is_refused(argv):
    with pytest.raises(SsdlabError, match="answers only"):
        SimulatedNvme(backend().drive).run(argv)


@pytest.mark.parametrize("fid", ["0x05", "0x100", "-1", "zz", "0x" + "f" * 40, "1e3", ""])
def test_an_unsupported_feature_fails_as_on_a_real_drive(fid):
    done = SimulatedNvme(backend().drive).run(["nvme", "get-feature", CONTROLLER, "-f", fid, "-H"])
    assert done.returncode == 1 and done.stdout == "" and done.stderr


def test_the_probe_reads_a_simulated_drive_through_its_nvme_cli():
    sim = backend()
    found = probe(Target("sim:small", TargetKind.SIM, None, sim.capacity), SimulatedNvme(sim.drive))
    assert found.simulated and found.nvme is not None and found.controller_info is not None
    assert found.temperature_source is None  # no thermal model
    assert found.reasons == ("the preset has no thermal model: no temperature",)
    with pytest.raises(TypeError):
        probe(Target("sim:small", TargetKind.SIM, None, sim.capacity), Commands())


def hot_drive() -> Telemetry:
    """A simulated drive whose Identify declares WCTEMP 70 °C: a thermal model."""
    return Telemetry(simulated=True, controller_info=ControllerInfo(model="m", serial="s", firmware="f",
                                                                    wctemp_c=70, cctemp_c=80))


def test_a_simulated_steps_temperature_is_the_drives_own(monkeypatch):
    monkeypatch.setattr(Telemetry, "temperature_c", lambda self: pytest.fail("no wall-clock reading"))
    telemetry = RunTelemetry(hot_drive())
    mbps = [1000.0] * 6 + [500.0] * 4
    step = result().model_copy(update={"busy_s": 10.0, "per_second": tuple(
        SecondPoint(t_s=k + 1, mbps=m, iops=m) for k, m in enumerate(mbps))})
    series = (60.0, 62, 64, 66, 68, 69, 71, 72, 72, 71, 65, 60)  # two seconds of idle after the I/O
    with telemetry.watching_step():
        pass
    stored, beside = telemetry.step_result(step, series)
    assert beside.temperature.source == "simulator" and beside.temperature.celsius == series[:10]
    events = telemetry.throttles(TestHealth(), [(0, stored, beside)])
    assert [(e.start_s, e.length_s, e.threshold) for e in events[0]] == [(6, 4, "WCTEMP")]
    assert telemetry.step_result(step, ())[1].temperature is None  # a step without one stores none
    purge = step.model_copy(update={"per_second": ()})
    assert telemetry.step_result(purge, series)[1].temperature is None  # nor one without seconds of I/O



def test_the_health_log_carries_the_nands_writes_from_the_endurance_log():
    """The NAND's writes come from the Endurance Group log (as on drives that keep one),
    so a drive's write amplification shows through the health log's reader."""
    sim = backend()
    span = sim.capacity // (128 * 1024) * (128 * 1024)
    fill = sim.run_step(Step(label="fill", rw=Op.WRITE, bs=128 * 1024, iodepth=32, size=span))
    random = sim.run_step(Step(label="random", rw=Op.RANDWRITE, bs=4096, iodepth=32, size=span, io_size=span))
    health = nvme(sim).smart_log()
    nand = sum(step.result.device["nand_write_bytes"] for step in (fill, random))
    # the drive's own count, in data units of 512 000 bytes rounded up
    assert nand <= health.nand_written_bytes < nand + 512_000
    assert health.nand_written_bytes > 1.1 * health.host_written_bytes  # garbage collection's writes


def test_a_drive_without_an_endurance_log_leaves_the_nands_writes_unknown():
    replies = ReplayCommands({"nvme smart-log /dev/nvme0 -o json": ok(golden("nvme-2.6-smart-log-sn850.json"))})
    assert NvmeCli(CONTROLLER, replies).smart_log().nand_written_bytes is None
    assert ("nvme", "endurance-log", "/dev/nvme0", "--group-id=1", "-o", "json") in replies.calls
