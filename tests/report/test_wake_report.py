"""idle-wake's power state after each idle length (reached on a simulated drive, allowed by
APST on a real one), its wake-up latency chart and table in `show` and the report, and the
power suite's time in the estimate."""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest

from ssdlab.analysis.power_states import apst_allowed_state, deepest_state
from ssdlab.backends.sim import SimBackend
from ssdlab.catalogue import Scale, compile_tests, estimated_seconds, lookup
from ssdlab.catalogue.power import IDLE_LENGTHS_S
from ssdlab.external import ReplayCommands
from ssdlab.model import Op, Step
from ssdlab.power_tables import power_tables
from ssdlab.presets import load_preset
from ssdlab.session import RunRequest, dry_run_document
from ssdlab.suites import load_suite
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.nvme import APST, NvmeCli
from ssdlab.telemetry.probe import Telemetry
from ssdlab.telemetry.records import ApstEntry
from ssdlab.units import GiB, KiB, MiB
from tests.catalogue.test_power import FakeRun
from tests.conftest import run_cli
from tests.factories import result
from tests.report.test_report import chart_specs, structure
from tests.report_runs import wake_run
from tests.telemetry_data import golden, ok

# Linux's table for the SN850 (golden 0x0c): PS0 -> PS3 after 100 ms, PS3 -> PS4 after 2000 ms
SN850_ALLOWED = (0, 0, 3, 3, 3, 3, 4, 4, 4)  # after each of IDLE_LENGTHS_S


def nvme(apst_golden: str = "nvme-2.3-get-feature-0x0c-sn850.txt", fails: bool = False) -> NvmeCli:
    commands = ReplayCommands(outputs={
        "nvme get-feature /dev/nvme0 -f 0x02 -H": ok(golden("nvme-2.3-get-feature-0x02.txt")),
        "nvme get-feature /dev/nvme0 -f 0x0c -H": ok("", 1) if fails else ok(golden(apst_golden)),
    })
    return NvmeCli("/dev/nvme0", commands)


def states(policy: dict) -> tuple[int, ...]:
    return tuple(row["power_state"] for row in policy["by_idle_s"].values())


def test_the_deepest_state_with_time_in_it_is_the_one_reached():
    assert deepest_state({"ps0_s": 1.5, "ps3_s": 0.2, "ps4_s": 0.0, "idle_energy_j": 3.0}) == 3
    assert deepest_state({"ps0_s": 0.0, "ps1_s": 0.4}) == 1
    assert deepest_state({"waf": 1.1}) is None and deepest_state(None) is None  # fio: no counters


def test_a_simulated_sn850_reaches_after_each_idle_what_linux_apst_allows_it():
    """The simulator's own counters of an idle (a read, then the idle after it) name the state
    the APST table of the real drive allows: both paths of idle-wake agree."""
    drive = SimBackend(load_preset("wd-sn850-1tb"))
    span = 256 * MiB
    drive.run_step(Step(label="data", rw=Op.WRITE, bs=128 * KiB, iodepth=32, size=span))
    reached = tuple(deepest_state(drive.run_step(Step(label="read, then idle", rw=Op.RANDREAD, bs=4 * KiB, size=span,
                                                      io_size=4 * KiB, idle_after=idle_s)).result.device)
                    for idle_s in IDLE_LENGTHS_S)
    assert reached == SN850_ALLOWED


def test_apst_allows_the_states_its_entries_chain_to_within_the_idle():
    entries = nvme().get_feature(APST).entries
    assert tuple(apst_allowed_state(entries, 0, idle_s) for idle_s in IDLE_LENGTHS_S) == SN850_ALLOWED
    assert apst_allowed_state(entries, 0, 2.09) == 3 and apst_allowed_state(entries, 0, 2.11) == 4
    assert apst_allowed_state((), 0, 30.0) == 0  # APST off: no transition
    loop = (ApstEntry(from_state=0, idle_ms=10, target_state=3), ApstEntry(from_state=3, idle_ms=10, target_state=0))
    assert apst_allowed_state(loop, 0, 30.0) == 3  # a table that points back ends


def test_on_a_real_drive_idle_wake_stores_what_apst_allows_for_each_policy():
    run = FakeRun(RunTelemetry(Telemetry(nvme=nvme())))
    score = lookup("idle-wake").result(lookup("idle-wake").run(run), [], {})
    host, off = score["host_policy"], score["apst_off"]
    assert host["power_state_is"] == off["power_state_is"] == "allowed by APST"
    assert states(host) == SN850_ALLOWED and states(off) == (0,) * len(IDLE_LENGTHS_S)
    (_, header, rows), = power_tables("idle-wake", score)
    assert header == ("idle s", "host policy", "host policy: power state allowed by APST",
                      "APST off", "APST off: power state allowed by APST")
    assert rows[-1] == ("30", "16.2 / 16.7", "PS4", "16.2 / 16.7", "PS0")


def test_with_apst_disabled_by_the_host_the_drive_is_allowed_no_transition():
    run = FakeRun(RunTelemetry(Telemetry(nvme=nvme("nvme-2.3-get-feature-0x0c-off.txt"))))
    assert states(lookup("idle-wake").run(run)["host_policy"]) == (0,) * len(IDLE_LENGTHS_S)


def test_an_apst_table_that_cannot_be_read_leaves_the_state_unknown_and_says_why():
    telemetry = RunTelemetry(Telemetry(nvme=nvme(fails=True)))
    found = lookup("idle-wake").run(FakeRun(telemetry))
    assert "power_state_is" not in found["host_policy"]
    assert "power_state" not in found["host_policy"]["by_idle_s"]["30"]
    assert any(n.startswith("idle-wake cannot say which power state APST allows: ") for n in telemetry.take_notes())
    (_, header, _), = power_tables("idle-wake", lookup("idle-wake").result(found, [], {}))
    assert header == ("idle s", "host policy", "APST off")


def test_the_state_a_simulated_drive_reached_wins_over_its_apst_table():
    counters = {0.01: {"ps0_s": 0.1}, 0.05: {"ps0_s": 0.5}}  # the others reach PS3
    run = FakeRun(RunTelemetry(Telemetry(nvme=nvme())),
                  device=lambda idle_s: counters.get(idle_s, {"ps0_s": 1.0, "ps3_s": idle_s}))
    found = lookup("idle-wake").run(run)
    assert found["host_policy"]["power_state_is"] == "reached"
    assert states(found["host_policy"]) == (0, 0, 3, 3, 3, 3, 3, 3, 3)


@pytest.fixture(scope="module")
def wake_db(tmp_path_factory):
    """Runs 1 and 2: idle-wake on two drives that wake from PS3 in 2 and 1.5 ms, from PS4 in 9
    and 6 ms."""
    db = tmp_path_factory.mktemp("wake") / "ssdlab.db"
    wake_run(db, "drive a")
    wake_run(db, "drive b", exits_us=(1500, 6000))
    return db


def test_show_and_export_give_the_state_reached_after_each_idle(wake_db):
    shown = " ".join(run_cli("show", "1", db=wake_db).stdout.split())
    assert "host policy: power state reached" in shown and "APST off: power state reached" in shown
    assert "│ 30 │ 9000.0 / 9001.0 │ PS4 │ 0.0 / 1.0 │ PS0 │" in shown
    doc = json.loads(run_cli("export", "1", db=wake_db).stdout)
    score = doc["tests"][0]["primary_score"]
    assert states(score["host_policy"]) == SN850_ALLOWED and score["host_policy"]["power_state_is"] == "reached"


def test_report_charts_wake_up_latency_per_idle_length_per_drive_and_compared(wake_db, tmp_path):
    out = tmp_path / "report.html"
    run_cli("report", "1", "2", "-o", out, db=wake_db)
    page = out.read_text()
    section, = [s for s in structure(page).sections if s["id"] == "test-idle-wake"]
    assert section["charts"][:3] == ["chart-idle-wake-wake-latency-compared", "chart-idle-wake-wake-latency-run-1",
                                     "chart-idle-wake-wake-latency-run-2"]
    specs = chart_specs(page)
    compared, single = specs["chart-idle-wake-wake-latency-compared"], specs["chart-idle-wake-wake-latency-run-2"]
    assert [layer["mark"]["type"] for layer in compared["layer"]] == ["rule", "line", "point"]  # spread, medians
    x, y = compared["layer"][1]["encoding"]["x"], compared["layer"][1]["encoding"]["y"]
    assert (x["field"], x["scale"]["type"], y["field"]) == ("idle_s", "log", "wake_us")
    assert compared["layer"][1]["encoding"]["strokeDash"]["field"] == "policy"
    rows = single["datasets"]["rows"]
    assert len(rows) == 2 * len(IDLE_LENGTHS_S) and {r["run"] for r in rows} == {"#2 drive b"}
    assert {(r["policy"], r["idle_s"], r["wake_us"], r["max_wake_us"], r["power_state"]) for r in rows
            if r["idle_s"] == 30} == {("host policy", 30.0, 6000.0, 6001.0, "PS4 (reached)"),
                                      ("APST off", 30.0, 0.0, 1.0, "PS0 (reached)")}
    assert len(compared["datasets"]["rows"]) == 2 * len(rows)
    assert "<th>host policy: power state reached</th>" in page and "<td>PS4</td>" in page


class Timekeeper:
    """What a power test's `run` sees, counting the seconds it asks the drive to spend: the
    idle after every timed read and idle-power's idles (the reads themselves take µs)."""

    def __init__(self):
        self.scale, self.seconds, self.probed = Scale(1.0), 0.0, Telemetry()
        self.telemetry = self

    def timed_reads(self, step, thinktime_s, randseed):
        reads = step.io_size // step.bs
        self.seconds += thinktime_s * reads
        return (90_000,) * reads, result(bs=step.bs)

    @contextmanager
    def apst_off(self):
        yield

    def idle_power_w(self, seconds, label):
        self.seconds += seconds
        return 0.005

    def note(self, text):
        pass


def power_suite_seconds(capacity: int) -> float:
    """What the power suite at scale 1 asks the drive to spend: idle-wake's 9 idle lengths x 11
    reads x 2 policies, idle-power's 2 x 2 minutes, thermal-soak's 20 minutes of writing."""
    tests = compile_tests(list(load_suite("power")[0].tests), Scale(1.0), capacity)
    keeper = Timekeeper()
    for test_id in ("idle-wake", "idle-power"):
        lookup(test_id).run(keeper)
    return keeper.seconds + sum(s.runtime for t in tests for s in t.steps if s.time_based)


def test_the_estimate_of_the_power_suite_counts_its_idle_time():
    assert power_suite_seconds(1000 * GiB) == pytest.approx(48.76 * 11 * 2 + 240 + 1200)
    tests = compile_tests(list(load_suite("power")[0].tests), Scale(1.0), 1000 * GiB)
    assert sum(estimated_seconds(t, Scale(1.0)) for t in tests) == pytest.approx(power_suite_seconds(1000 * GiB),
                                                                                 rel=0.03)


def test_the_dry_run_estimate_counts_it_too():
    doc = dry_run_document(RunRequest("sim:wd-sn850-1tb", suite="power"))
    assert doc["estimated_seconds"] == pytest.approx(power_suite_seconds(doc["capacity"]), rel=0.03)
