"""The power suite's tests (catalogue/power.py) on recorded outputs: idle-wake's fio job as a
real drive needs it, wake-up latencies from recorded fio latency logs, the power-states
table from golden nvme-cli outputs, no sensor read inside an idle window."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from ssdlab.analysis.wake import wake_table
from ssdlab.backends.fio.jobfile import Invocation, job_text
from ssdlab.backends.fio.logs import read_latencies
from ssdlab.catalogue import Scale, lookup
from ssdlab.catalogue.power import IDLE_LENGTHS_S
from ssdlab.external import ReplayCommands
from ssdlab.power_tables import power_tables
from ssdlab.telemetry.apst import ApstUnavailable
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.nvme import NvmeCli, parse_id_ctrl
from ssdlab.telemetry.probe import Telemetry
from tests.factories import result
from tests.paths import GOLDEN_FIO as FIO
from tests.telemetry_data import SN850_STATES, golden, ok

WARM = read_latencies(FIO / "idle-wake-warm_clat.1.log")      # 100 back-to-back reads, recorded
AFTER_IDLE = read_latencies(FIO / "idle-wake-0.05s_clat.1.log")  # 11 reads, 50 ms idle before each but the first


class FakeRun:
    """What execution gives a power test's `run`: timed reads answered from the recorded logs."""

    def __init__(self, telemetry: RunTelemetry, scale: float = 1.0, apst: bool = True, device=lambda idle_s: {}):
        self.scale, self.telemetry, self.apst, self.device = Scale(scale), telemetry, apst, device
        self.reads: list[tuple] = []
        self.apst_now = "host"

    def timed_reads(self, step, thinktime_s, randseed):
        self.reads.append((step, thinktime_s, randseed, self.apst_now))
        reads = WARM if thinktime_s == 0 else AFTER_IDLE[:step.io_size // step.bs]
        return reads, result(bs=step.bs).model_copy(update={"device": self.device(thinktime_s)})

    @contextmanager
    def apst_off(self):
        if not self.apst:
            raise ApstUnavailable("cannot write 0 to .../pm_qos_latency_tolerance_us (Permission denied)")
        self.apst_now = "off"
        try:
            yield
        finally:
            self.apst_now = "host"

    def run_health_before(self):
        return None


def test_latency_log_gives_each_read_in_order():
    assert len(WARM) == 100 and AFTER_IDLE[:3] == (12859, 16494, 17145)


def test_wake_latency_is_the_first_read_minus_a_warm_read():
    table = wake_table(WARM, {0.05: AFTER_IDLE[1:]})  # the first read follows fio's start-up
    assert table == {"warm_read_us": 1.1, "by_idle_s": {"0.05": {
        "wake_us": 16.2, "max_wake_us": 16.7, "first_read_us": 17.3, "repetitions": 10}}}


def test_idle_wake_runs_every_idle_length_with_the_host_policy_then_apst_off():
    run = FakeRun(RunTelemetry(Telemetry()))
    found = lookup("idle-wake").run(run)
    idles = [(thinktime, apst) for _, thinktime, _, apst in run.reads]
    assert idles == [(0.0, "host"), *((t, "host") for t in IDLE_LENGTHS_S),
                     (0.0, "off"), *((t, "off") for t in IDLE_LENGTHS_S)]
    assert len({seed for _, _, seed, _ in run.reads}) == len(run.reads)  # fresh blocks in every run
    assert {step.io_size // step.bs for step, thinktime, _, _ in run.reads if thinktime} == {11}
    assert found["host_policy"]["by_idle_s"]["30"]["wake_us"] == 16.2 and "apst_off" in found
    score = lookup("idle-wake").result(found, [], {})
    assert (score["value"], score["unit"]) == (16.2, "µs")


def test_idle_wake_without_permission_measures_the_host_policy_only_and_says_so():
    telemetry = RunTelemetry(Telemetry())
    run = FakeRun(telemetry, scale=0.01, apst=False)
    found = lookup("idle-wake").run(run)
    assert set(found) == {"host_policy"}
    assert found["host_policy"]["by_idle_s"]["0.01"]["repetitions"] == 3  # the floor at a small scale
    assert any("host's APST policy only" in n and "Permission denied" in n for n in telemetry.take_notes())


def test_idle_wake_job_is_what_a_real_drive_needs():
    run = FakeRun(RunTelemetry(Telemetry()))
    lookup("idle-wake").run(run)
    step, thinktime, seed, _ = next(r for r in run.reads if r[1] == 0.2)
    text = job_text(step, Path("/dev/nvme0n1"), "libaio", Invocation(step.offset, step.io_size, seed),
                    Path("/tmp/ssdlab-fio-x/reads"), thinktime)
    assert text == (FIO / "idle-wake-0.2s.fio").read_text()


def nvme_telemetry() -> Telemetry:
    commands = ReplayCommands(outputs={
        "nvme get-feature /dev/nvme0 -f 0x02 -H": ok(golden("nvme-2.3-get-feature-0x02.txt")),
        "nvme get-feature /dev/nvme0 -f 0x0c -H": ok(golden("nvme-2.3-get-feature-0x0c-sn850.txt")),
        "nvme get-feature /dev/nvme0 -f 0x10 -H": ok(golden("nvme-2.3-get-feature-0x10-sn850.txt")),
    })
    return Telemetry(nvme=NvmeCli("/dev/nvme0", commands),
                     controller_info=parse_id_ctrl(golden("nvme-2.3-id-ctrl-sn850.json")))


def test_power_states_table_from_golden_id_ctrl_and_features():
    test = lookup("power-states")
    score = test.result(test.run(FakeRun(RunTelemetry(nvme_telemetry()))), [], {})
    assert (score["value"], score["unit"]) == (5, "power states")
    assert score["states"] == [s.model_dump() for s in SN850_STATES]
    assert (score["current_state"], score["apst_supported"], score["apst_enabled"]) == (0, True, True)
    assert score["apst_table"][0] == {"from_state": 0, "idle_ms": 100, "target_state": 3}
    assert (score["wctemp_c"], score["cctemp_c"], score["tmt1_c"], score["tmt2_c"]) == (84, 88, 80, 82)
    states, limits, apst = power_tables("power-states", score)
    assert states[2][3] == ("3", "0.025 W", "", "", "5000", "10000", "no")
    assert ("TMT1 (°C)", "80") in limits[2] and apst[2][0] == ("0", "100", "3")


@pytest.mark.parametrize("test_id", ["idle-power", "thermal-soak", "health", "power-states"])
def test_the_tests_say_what_they_need(test_id):
    telemetry = RunTelemetry(Telemetry(reasons=("a file target has no health log",)))
    reason = telemetry.missing(lookup(test_id).needs(), "fio")
    assert reason and ("power meter" in reason or "a file target has no health log" in reason)
    assert RunTelemetry(Telemetry()).missing(lookup("idle-wake").needs(), "sim") is None  # in drive time
    assert RunTelemetry(Telemetry()).missing(lookup("idle-power").needs(), "sim") is None  # its own power model
