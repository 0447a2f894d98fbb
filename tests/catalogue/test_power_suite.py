"""The power suite executed in process on a file target, with a backend standing in for fio
(its timed reads answer from recorded latency logs): the tests the target cannot run are
skipped with their reasons, shown as such; idle-wake runs with the host's APST policy only;
no sensor is read inside its idle windows."""

from __future__ import annotations

import json
import time
from pathlib import Path

from ssdlab.backends import StepOutcome
from ssdlab.catalogue import Scale, compile_tests
from ssdlab.catalogue.power import IDLE_LENGTHS_S
from ssdlab.execution import SilentReporter, execute
from ssdlab.external import Commands
from ssdlab.model import RunStatus, TestStatus
from ssdlab.store import Store
from ssdlab.suites import load_suite
from ssdlab.targets import Target, TargetKind
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.probe import Telemetry, probe
from ssdlab.units import GiB
from tests.catalogue.test_power import AFTER_IDLE, WARM
from tests.conftest import run_cli
from tests.factories import result

SCALE = Scale(0.01)


class FioStandIn:
    """Steps take `step_s` of wall time; timed reads idle as fio would, noting each idle window."""

    name = "fio"

    def __init__(self, step_s: float = 0.0):
        self.step_s, self.idle_windows = step_s, []

    def describe(self) -> dict:
        return {"engine": "fio"}

    def run_step(self, step, progress=None) -> StepOutcome:
        time.sleep(self.step_s)
        return StepOutcome(result(bs=step.bs), ("fio job",))

    def run_timed_reads(self, step, thinktime_s, randseed):
        if thinktime_s:
            start = time.monotonic()
            time.sleep(0.002)  # the idle lengths are the catalogue's; a stand-in idles briefly
            self.idle_windows.append((start, time.monotonic()))
        reads = WARM if thinktime_s == 0 else AFTER_IDLE[:step.io_size // step.bs]
        return StepOutcome(result(bs=step.bs), (f"fio job, thinktime {thinktime_s:g} s",)), reads


class Notes(SilentReporter):
    def __init__(self):
        self.notes = []

    def telemetry_notes(self, notes):
        self.notes += notes


def power_run(db: Path, tests: list[str], backend, telemetry: RunTelemetry) -> tuple[Store, int, Notes]:
    store = Store(db)
    run_id = store.create_run(name=None, target="/var/tmp/power.img", target_kind="file", suite="power",
                              suite_toml=load_suite("power")[1], scale=SCALE.factor,
                              tests=compile_tests(tests, SCALE, GiB), identity={}, host={},
                              engine={"engine": "fio"}, options={})
    reporter = Notes()
    execute(store, run_id, backend, reporter, telemetry, SCALE)
    return store, run_id, reporter


def test_on_a_file_the_suite_runs_what_it_can_and_says_what_it_cannot(tmp_path):
    telemetry = RunTelemetry(probe(Target("/var/tmp/power.img", TargetKind.FILE, Path("/var/tmp/power.img"), GiB),
                                   Commands()))
    store, run_id, reporter = power_run(tmp_path / "db", list(load_suite("power")[0].tests), FioStandIn(), telemetry)
    with store:
        records = {r.test.id: r for r in store.tests(run_id)}
        assert store.run(run_id).status is RunStatus.DONE
        assert {t: r.status for t, r in records.items()} == {
            "power-states": TestStatus.SKIPPED, "idle-wake": TestStatus.DONE, "idle-power": TestStatus.SKIPPED,
            "thermal-soak": TestStatus.SKIPPED, "health": TestStatus.SKIPPED}
        assert "nvme-cli" in records["power-states"].error and "file target" in records["power-states"].error
        assert "--power-meter" in records["idle-power"].error
        assert "temperature" in records["thermal-soak"].error and "health log" in records["health"].error
        assert records["idle-wake"].score["unit"] == "µs" and "apst_off" not in records["idle-wake"].score
        commands = [c for s in store.steps(run_id, records["idle-wake"].seq) for c in s.commands]
        assert commands.count("fio job, thinktime 30 s") == 1  # every timed fio run stored as a step
    assert any(n.startswith("idle-power cannot run on this target: ") for n in reporter.notes)
    assert any("host's APST policy only" in n for n in reporter.notes)
    shown = run_cli("show", str(run_id), db=tmp_path / "db").stdout
    assert shown.count("skipped") == 4 and "give one with --power-meter" in shown
    assert "wake-up latency (first read minus a warm read), median / max µs" in " ".join(shown.split())
    assert "│ 30        │ 16.1 / 16.1 │" in shown  # 3 repetitions at this scale
    run_cli("report", str(run_id), "-o", tmp_path / "report.html", db=tmp_path / "db")
    assert "skipped it: it cannot run without a power meter" in (tmp_path / "report.html").read_text()


def test_no_sensor_read_inside_an_idle_window(tmp_path, monkeypatch):
    """The sampler reads the temperature beside each step (a fake source notes when); none of
    its readings falls inside an idle window of idle-wake's timed reads."""
    readings: list[float] = []
    monkeypatch.setattr(Telemetry, "temperature_c", lambda self: readings.append(time.monotonic()) or 40.0)
    telemetry = RunTelemetry(Telemetry(hwmon_chip=tmp_path, reasons=("no nvme-cli",)))
    backend = FioStandIn(step_s=0.05)
    power_run(tmp_path / "db", ["idle-wake"], backend, telemetry)[0].close()
    assert readings and len(backend.idle_windows) == len(IDLE_LENGTHS_S)  # the host's policy only
    assert not [t for t in readings for start, end in backend.idle_windows if start <= t <= end]


def test_a_dry_run_says_which_tests_the_target_will_skip_and_leaves_them_out_of_its_estimate(tmp_path):
    target = tmp_path / "never.img"
    plan = json.loads(run_cli("run", target, "--size", "64GiB", "--suite", "power", "--dry-run", "--json").stdout)
    skipped = {t["id"]: t.get("skipped", "") for t in plan["tests"]}
    assert [test for test, why in skipped.items() if not why] == ["idle-wake"]  # fio's latency log is enough
    assert skipped["idle-power"] == "it cannot run without a power meter: give one with --power-meter"
    assert skipped["health"].startswith("it needs the drive's health log")
    idle_wake = run_cli("run", target, "--size", "64GiB", "--tests", "idle-wake", "--dry-run", "--json").stdout
    assert plan["estimated_seconds"] == json.loads(idle_wake)["estimated_seconds"]
    assert "health: skipped: it needs the drive's health log" in " ".join(
        run_cli("run", target, "--size", "64GiB", "--suite", "power", "--dry-run").stdout.split())
    assert not target.exists()
    simulated = json.loads(run_cli("run", "sim:wd-sn850-1tb", "--suite", "power", "--dry-run", "--json").stdout)
    assert not any("skipped" in t for t in simulated["tests"])  # the simulated drive has all it needs
